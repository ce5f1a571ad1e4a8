"""A unit test of rsrank.learning.feature_keys: the parameters that name
features resolved on a set of features once, whatever number of models a
fit sequence lays out on it, to the values a direct reading gives."""

import numpy as np
import pytest

from conftest import small_queries
from rsrank import RSRank
from rsrank.learning import feature_keys
from rsrank.learning.feature_keys import Columns, FeatureKeys, check_feature_keys

NAMES = ("bm25", "pagerank", "clicks", "length", "age")


def test_keys_resolve_to_one_value_per_feature_by_name_or_index():
    keys = FeatureKeys(feature_costs={"pagerank": 4.0, 4: 0.5}, monotone={"bm25": 1, 3: -1},
                       exclude=["clicks", ("bm25", 3)])
    found = keys.resolved(Columns(5, NAMES))
    np.testing.assert_array_equal(found.costs, [1.0, 4.0, 1.0, 1.0, 0.5])
    np.testing.assert_array_equal(found.directions, [1, 0, 0, -1, 0])
    held, terms = found.exclude
    np.testing.assert_array_equal(held, [False, False, True, False, False])
    assert terms == {(0, 3)}
    # read-only: a caller cannot change what every later fit reads
    with pytest.raises(ValueError, match="read-only"):
        found.costs[0] = 2.0


def test_a_sequence_given_is_copied_not_frozen():
    costs = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    found = FeatureKeys(feature_costs=costs).resolved(Columns(5))
    costs[0] = 9.0  # the user's array stays theirs, and writable
    assert found.costs[0] == 1.0


@pytest.fixture
def calls(monkeypatch):
    """The features each resolution of feature keys is made on, in order."""
    made, resolve = [], feature_keys._resolve
    monkeypatch.setattr(feature_keys, "_resolve",
                        lambda keys, columns: made.append(columns) or resolve(keys, columns))
    return made


def test_the_same_features_are_resolved_once_and_other_features_again(calls):
    keys = FeatureKeys(feature_costs=[1.0, 2.0, 1.0, 1.0, 1.0])
    # the same features given as Columns without names and as LETOR's names
    assert keys.resolved(Columns(5)) is keys.resolved(Columns(5, ("f1", "f2", "f3", "f4", "f5")))
    assert len(calls) == 1
    with pytest.raises(ValueError, match="feature_costs has 5 values for 6 features"):
        keys.resolved(Columns(6))
    assert len(calls) == 2


@pytest.mark.parametrize("params", [
    {"l1": 1e-3, "relax": True, "learning_rate": "auto"},
    {"additive": True, "max_bins": 8, "l1_group": 1e-3, "relax": True,
     "learning_rate": "curvature"},
], ids=["linear, auto rate, relaxed", "additive, curvature, relaxed"])
def test_a_fit_sequence_resolves_its_training_features_once(calls, params):
    """The rates "auto" tries, each penalized fit and its relaxed refit lay
    out 6 models (or 2 and a pair search) on one training set: one
    resolution, where each model start resolved the keys again before."""
    X, y, qid = small_queries(n_queries=20, seed=2)
    vali = small_queries(n_queries=6, seed=3)
    model = RSRank(**params, max_iter=5, random_state=0,
                   feature_costs={"f1": 2.0}, monotone={"f1": 1},
                   exclude=["f3"]).fit(X, y, qid=qid, eval_set=vali)
    assert len(calls) == 1
    assert model.coef_.shape[0] >= 5


def test_a_wrong_key_is_refused_before_any_work_in_one_line():
    for keys, message in [
        (FeatureKeys(feature_costs={"title": 2.0}), "feature_costs: no feature is named 'title'"),
        (FeatureKeys(monotone={"bm25": 2}), "the direction of 'bm25' must be 1"),
        (FeatureKeys(exclude=[("bm25", "age", "clicks")]), "a term is a tuple of one feature"),
        (FeatureKeys(feature_costs={"bm25": 1.0, 0: 2.0}), "given twice"),
    ]:
        with pytest.raises(ValueError, match=message) as caught:
            check_feature_keys(keys, Columns(5, NAMES))
        assert "\n" not in str(caught.value)
