"""Exports to search engines, scored by evaluators that follow each engine's
documented semantics (written from the formats' documentation, not from
rsrank.deployment.export), compared with RSRank.predict on held-out rows."""

import json
import re

import numpy as np
import pytest

from rsrank import RSRank
from rsrank.deployment.export import export_model
from rsrank.reading.synthetic import make_raw_features


def solr_scores(text, rows):
    """Solr LTR LinearModel: sum of weight * normalised feature value."""
    model = json.loads(text)
    assert model["class"] == "org.apache.solr.ltr.model.LinearModel"
    total = np.zeros(len(rows))
    for feature in model["features"]:
        values = np.array([row[feature["name"]] for row in rows])
        norm = feature.get("norm")
        if norm and norm["class"].endswith("StandardNormalizer"):
            params = norm["params"]
            values = (values - float(params["avg"])) / float(params["std"])
        elif norm and norm["class"].endswith("MinMaxNormalizer"):
            params = norm["params"]
            low, high = float(params["min"]), float(params["max"])
            values = (values - low) / (high - low)
        else:
            assert norm is None
        total += model["params"]["weights"][feature["name"]] * values
    return total


def elasticsearch_scores(text, rows):
    """ES/OpenSearch LTR model/linear: the definition is a JSON string of
    weights; feature_normalizers 'standard' is (value - mean) / sd."""
    body = json.loads(text)["model"]["model"]
    assert body["type"] == "model/linear"
    weights = json.loads(body["definition"])
    total = np.zeros(len(rows))
    for name, weight in weights.items():
        values = np.array([row[name] for row in rows])
        normalizer = body.get("feature_normalizers", {}).get(name)
        if normalizer:
            standard = normalizer["standard"]
            values = (values - standard["mean"]) / standard["standard_deviation"]
        total += weight * values
    return total


def vespa_scores(text, rows):
    """A Vespa first-phase expression 'w * attribute(name) + ... + c', each
    attribute read as 'if(isNan(attribute(name)) == 1.0, 0.0, attribute(name))'
    (a missing attribute is NaN in Vespa, and isNan gives 1.0 for NaN)."""
    expression = re.search(r"expression \{(.*?)\}", text, re.S).group(1)
    total = np.zeros(len(rows))
    for term in re.split(r"\s\+\s", expression.strip()):  # '1e+20' stays one number
        term = term.strip()
        match = re.fullmatch(r"(\S+) \* if\(isNan\(attribute\((\w+)\)\) == 1\.0, 0\.0, "
                             r"attribute\((\w+)\)\)", term)
        if match:
            assert match.group(2) == match.group(3)
            values = np.array([row[match.group(2)] for row in rows])
            total += float(match.group(1)) * np.where(np.isnan(values), 0.0, values)
        else:
            total += float(term)
    return total


EVALUATORS = {"solr": solr_scores, "elasticsearch": elasticsearch_scores,
              "opensearch": elasticsearch_scores, "vespa": vespa_scores}


@pytest.fixture(scope="module")
def raw_data():
    return make_raw_features(80, random_state=0), make_raw_features(30, random_state=1)


@pytest.mark.parametrize("form", sorted(EVALUATORS))
@pytest.mark.parametrize("normalize", ["zscore", "minmax", "none"])
def test_exported_model_scores_like_predict(form, normalize, raw_data):
    train, test = raw_data
    params = dict(normalize=normalize, l1=0.3, max_iter=40, random_state=0)
    if normalize == "none":
        params["learning_rate"] = 1e-7  # raw features need a tiny step without scaling
    model = RSRank(**params).fit(train.X, train.y, qid=train.qid)
    model.set_feature_names(train.feature_names)
    text = export_model(model, form)
    rows = [dict(zip(train.feature_names, x)) for x in test.X]
    scores = EVALUATORS[form](text, rows)
    np.testing.assert_allclose(scores, model.predict(test.X), rtol=1e-9, atol=1e-9)
    used = {name for name, _ in model.selected_features()}
    for name in set(train.feature_names) - used:
        assert name not in text  # a zero weight is a feature the engine never computes


def test_sparse_model_exports_only_its_features(raw_data):
    train, _ = raw_data
    model = RSRank(l1=3.0, max_iter=60, random_state=0).fit(train.X, train.y, qid=train.qid)
    model.set_feature_names(train.feature_names)
    kept = [name for name, _ in model.selected_features()]
    assert 0 < len(kept) < len(train.feature_names)
    weights = json.loads(json.loads(export_model(model, "elasticsearch"))["model"]["model"]
                         ["definition"])
    assert sorted(weights) == sorted(kept)


@pytest.mark.parametrize("form", sorted(EVALUATORS))
def test_per_query_scaling_is_refused_with_the_reason(form, raw_data):
    train, _ = raw_data
    model = RSRank(normalize="query-minmax", max_iter=3).fit(train.X, train.y, qid=train.qid)
    with pytest.raises(ValueError, match="whole query.*normalize='zscore'"):
        export_model(model, form)


@pytest.mark.parametrize("form", sorted(EVALUATORS))
@pytest.mark.parametrize("scaler", ["standard", "minmax", "maxabs", "two"])
@pytest.mark.parametrize("normalize", ["zscore", "minmax", "none"])
def test_a_scaling_pipeline_exports_whole(form, scaler, normalize, raw_data):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, StandardScaler

    train, test = raw_data
    steps = {"standard": [StandardScaler()], "minmax": [MinMaxScaler()],
             "maxabs": [MaxAbsScaler()], "two": [MaxAbsScaler(), StandardScaler()]}[scaler]
    pipeline = make_pipeline(*steps, RSRank(normalize=normalize, l1=0.3, max_iter=30,
                                            random_state=0))
    pipeline.fit(train.X, train.y, rsrank__qid=train.qid)
    pipeline[-1].set_feature_names(train.feature_names)
    rows = [dict(zip(train.feature_names, x)) for x in test.X]
    scores = EVALUATORS[form](export_model(pipeline, form), rows)
    np.testing.assert_allclose(scores, pipeline.predict(test.X), rtol=1e-8, atol=1e-8)


def test_a_pipeline_step_an_engine_cannot_apply_is_refused(raw_data):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures

    train, _ = raw_data
    pipeline = make_pipeline(PolynomialFeatures(1, include_bias=False),
                             RSRank(max_iter=3)).fit(train.X, train.y, rsrank__qid=train.qid)
    with pytest.raises(ValueError, match="PolynomialFeatures is not a per-feature scaler"):
        export_model(pipeline, "solr")
