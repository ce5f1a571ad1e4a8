"""rsrank.deployment.persistence: model files, the model value written and
read back, and bad files refused with a ModelFileError."""

import pickle

import numpy as np
import pytest

from conftest import small_queries
from rsrank import RSRank
from rsrank.deployment.persistence import ModelFileError

queries = small_queries


def fitted_model():
    X, y, qid = queries()
    return RSRank(learning_rate=0.05, l1=0.2, max_iter=3, random_state=0,
                  truncation_threshold=np.inf).fit(X, y, qid=qid), X


def test_model_file_round_trip(tmp_path):
    model, X = fitted_model()
    model.save(tmp_path / "m.json")
    loaded = RSRank.load(tmp_path / "m.json")
    np.testing.assert_array_equal(loaded.coef_, model.coef_)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert loaded.get_params() == model.get_params()
    assert loaded.normalize == "zscore"
    np.testing.assert_array_equal(loaded.feature_scale_, model.feature_scale_)
    assert loaded.history_ == {} and model.history_["loss"]  # the history is not a model
    text = (tmp_path / "m.json").read_text()
    assert '"format": "rsrank-model"' in text and '"truncation_threshold": "inf"' in text
    assert '"labels_and_sizes_sha256"' in text
    assert pickle.loads(pickle.dumps(model)).predict(X) == pytest.approx(model.predict(X))


@pytest.mark.parametrize("edit, message", [
    (lambda t: t[: len(t) // 2], "not a valid RSRank model file"),
    (lambda t: t.replace('"rsrank-model"', '"other"'), "not an RSRank model file"),
    (lambda t: t.replace('"format_version": 2', '"format_version": 99'), "newer"),
    (lambda t: t.replace('"n_features": 5', '"n_features": 6'), "list of 6 numbers"),
    (lambda t: t.replace('"format_version": 2', '"format_version": "1"'), "positive integer"),
    (lambda t: t.replace('"n_jobs": null', '"n_jobs": "abc"'), "invalid parameter: n_jobs"),
    (lambda t: t.replace('"l1": 0.2', '"l1": "nan"'), "invalid parameter: l1"),
    (lambda t: t.replace('"fitted": {', '"fitted": [').replace('"n_nonzero"', '"x"'),
     "not a valid RSRank model file"),
    (lambda t: t.replace('"params": {', '"params": [{'), "not a valid"),
    (lambda t: '{"a":' * 100_000 + "1" + "}" * 100_000, "not an RSRank model file|nested"),
    (lambda t: t.replace('"l1": 0.2', '"l2": 0.2'), "unknown parameters"),
])
def test_model_file_errors(tmp_path, edit, message):
    model, _ = fitted_model()
    model.save(tmp_path / "m.json")
    (tmp_path / "m.json").write_text(edit((tmp_path / "m.json").read_text()))
    with pytest.raises(ModelFileError, match=message):
        RSRank.load(tmp_path / "m.json")


def test_model_with_callable_gain_cannot_be_saved_as_json(tmp_path):
    X, y, qid = queries()
    model = RSRank(gain=lambda r: r, max_iter=1).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="use pickle"):
        model.save(tmp_path / "m.json")
    assert not (tmp_path / "m.json").exists()
