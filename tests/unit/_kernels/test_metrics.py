"""rsrank._kernels.metrics: each query's ideal DCG as sorting its gains gives
it."""

import numpy as np
from hypothesis import given, settings, strategies as st

from kernel_reference import discount_table
from rsrank._kernels import metrics
from rsrank.evaluation import metrics as M


def test_ideal_dcg_matches_metrics():
    rng = np.random.default_rng(9)
    sizes = [3, 7, 1, 12]
    offsets = np.r_[0, np.cumsum(sizes)]
    y = rng.integers(0, 4, offsets[-1])
    table, _ = discount_table(12, "log2", 5)
    got = metrics.ideal_dcg(M.gain_values(y), offsets, table)
    expected = [M.dcg(y[a:b], y[a:b], 5) for a, b in zip(offsets[:-1], offsets[1:])]
    np.testing.assert_allclose(got, expected)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=8), st.integers(1, 30),
       st.integers(0, 2**32 - 1))
def test_ideal_dcg_equals_sorted_gains(sizes, n_values, seed):
    # few distinct gains (counted) or many (sorted), in any order: the DCG of
    # the gains sorted in decreasing order, at any cut-off
    rng = np.random.default_rng(seed)
    offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    gains = rng.choice(rng.normal(size=n_values) ** 2, offsets[-1])
    for k in (1, 3, max(sizes) + 1):
        table, _ = discount_table(max(max(sizes), 1), "log2", k)
        got = metrics.ideal_dcg(gains, offsets, table)
        expected = [np.sort(gains[a:b])[::-1][:k] @ table[:min(b - a, k)]
                    for a, b in zip(offsets[:-1], offsets[1:])]
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0.0, 1.0, 3.0, 7.0, 15.0, 0.5]), min_size=0,
                         max_size=40), min_size=1, max_size=6),
       st.integers(1, 50), st.booleans())
def test_ideal_dcg_equals_sorting_each_query(queries, cutoff, many):
    from rsrank._kernels import ideal_dcg

    rng = np.random.default_rng(len(queries))
    if many:  # more distinct gains than the counting path takes: the sorting path
        queries = [list(rng.uniform(size=len(q) + 20)) for q in queries]
    gains = np.array([g for q in queries for g in q], dtype=np.float64)
    offsets = np.r_[0, np.cumsum([len(q) for q in queries])].astype(np.int64)
    discount = 1 / np.log2(np.arange(2, cutoff + 2))
    expected = [sum(g * d for g, d in zip(sorted(q, reverse=True), discount)) for q in queries]
    np.testing.assert_allclose(ideal_dcg(gains, offsets, discount), expected, rtol=1e-12,
                               atol=1e-12)
