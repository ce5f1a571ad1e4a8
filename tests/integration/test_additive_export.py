"""Additive models out to the engines: what each format holds (the scoring of
every export by each engine's rules is in test_engine_parity.py), the
pictures, and what cannot be exported."""


import numpy as np
import pytest

from rsrank import RSRank
from rsrank.deployment.export import to_solr
from rsrank.reading.synthetic import make_nonlinear

F32 = np.float32


@pytest.fixture(scope="module")
def fitted():
    data = make_nonlinear(n_queries=80, random_state=3)
    train = data.qid <= 60
    model = RSRank(additive=True, max_bins=16, max_iter=30, learning_rate=0.1)
    model.fit(data.X[train], data.y[train], qid=data.qid[train])
    model.set_feature_names(data.feature_names)
    return model, data.X[~train]


def test_solr_thresholds_land_on_the_model_threshold_after_the_slack():
    from rsrank.deployment.trees import solr_scale_exponent, solr_threshold

    rng = np.random.default_rng(0)
    values = np.concatenate([rng.normal(size=300), rng.exponential(size=100) * 1e4,
                             [0.0, -0.0, 1.0, 0.5, 1e-3, 3e38]]).astype(np.float32)
    for t in values:  # away from zero the sum lands on t itself
        c = solr_threshold(t)
        assert c is not None and F32(c + F32(1e-6)) == t, t
    # near zero and at -1 no threshold lands: a power of
    # two scales the feature until every one does
    hard = np.array([1e-9, 1.234e-7, 5e-8, -1.0, 1e-42], dtype=np.float32)
    assert [solr_threshold(t) for t in hard] == [None] * 5
    e = solr_scale_exponent(hard)
    assert e is not None and e > 0
    assert all(solr_threshold(F32(t * F32(2.0 ** e))) is not None for t in hard)
    # cuts that no power of two can bring within range at once are refused
    assert solr_scale_exponent(np.array([1e-44, 3e38], dtype=np.float32)) is None


def test_an_additive_model_in_a_scaling_pipeline_is_refused(fitted):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model, held_out = fitted
    pipeline = make_pipeline(StandardScaler().fit(held_out), model)
    with pytest.raises(ValueError, match="train it on the raw features"):
        to_solr(pipeline)


