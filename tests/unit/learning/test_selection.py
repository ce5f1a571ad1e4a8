"""A unit test of rsrank.learning.selection: the choice of a path's point
held to the properties that define it, over random paths, with the
standard error from SciPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from rsrank.learning.selection import choose_fit, sparsest_within

SCORES = st.floats(0.0, 1.0, allow_nan=False)
POINT = st.fixed_dictionaries({"n_nonzero": st.integers(0, 6), "vali_score": SCORES})
WITHIN = st.sampled_from([0.0, 0.005, 0.01, 0.05, 0.3])


def sparsity(point):
    return point.get("cost", point["n_nonzero"])


@settings(max_examples=150, deadline=None)
@given(st.lists(POINT, min_size=1, max_size=8), WITHIN, st.booleans())
def test_the_choice_is_within_reach_of_the_best_and_nothing_within_reach_is_sparser(
        points, within, costed):
    if costed:
        for j, point in enumerate(points):
            point["cost"] = float((j * 7) % 5) + point["n_nonzero"]
    chosen = sparsest_within(points, within)
    live = [p for p in points if p["n_nonzero"]] or points
    assert any(chosen is p for p in live)  # never the empty model when another has weights
    best = max(p["vali_score"] for p in live)
    assert chosen["vali_score"] >= (1 - within) * best
    reach = [p for p in live if p["vali_score"] >= (1 - within) * best]
    assert all(sparsity(p) >= sparsity(chosen) for p in reach)
    # ties in sparsity go to the higher score
    tied = [p for p in reach if (sparsity(p), p["n_nonzero"]) == (sparsity(chosen),
                                                                   chosen["n_nonzero"])]
    assert chosen["vali_score"] == max(p["vali_score"] for p in tied)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=2, max_size=6), st.integers(0, 10_000))
def test_the_one_standard_error_rule_keeps_what_scipy_s_standard_error_keeps(sizes, seed):
    rng = np.random.default_rng(seed)
    values = rng.uniform(size=(len(sizes), 12))
    values[:, rng.integers(12)] = np.nan  # a query the convention skips, for every point
    points = [{"n_nonzero": n, "vali_score": float(np.nanmean(v)), "per_query": v}
              for n, v in zip(sizes, values)]
    chosen = sparsest_within(points, "1se")
    best = points[max(range(len(points)), key=lambda i: (points[i]["vali_score"], -i))]

    def kept(point):
        diff = point["per_query"] - best["per_query"]
        return np.nanmean(diff) >= -stats.sem(diff, nan_policy="omit")

    assert kept(chosen)
    assert all(p["n_nonzero"] >= chosen["n_nonzero"] for p in points if kept(p))


def test_a_richer_kind_replaces_a_simpler_one_only_above_one_standard_error():
    base = np.array([0.5, 0.6, 0.4, 0.7, 0.5, 0.6])
    linear = {"kind": "linear", "n_nonzero": 3, "vali_score": base.mean(), "per_query": base}
    for lift, replaced in [(np.array([0.04, -0.03, 0.01, -0.02, 0.02, 0.0]), False),
                           (np.array([0.05, 0.04, 0.06, 0.05, 0.04, 0.06]), True)]:
        additive = {"kind": "additive", "n_nonzero": 3, "per_query": base + lift,
                    "vali_score": (base + lift).mean()}
        assert additive["vali_score"] > linear["vali_score"]
        above = lift.mean() > stats.sem(lift)
        assert above == replaced
        assert choose_fit([linear, additive], 0.01) == (1 if replaced else 0)


def test_a_within_outside_its_range_is_refused():
    for within in (1.0, -0.1, "2se"):
        with pytest.raises(ValueError, match="within must be in"):
            sparsest_within([{"n_nonzero": 1, "vali_score": 0.5}], within)
