"""rsrank._kernels.ranking: swap weights by brute force, and the rankings
(stable, partial, from the previous one) as numpy's sorts give them."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from kernel_reference import discount_table, inv_ideal_of
from rsrank._kernels import ranking
from rsrank.evaluation import metrics as M


SPECIAL_SCORES = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 5e-324, -5e-324, 1.0, -1.0,
                  1e308, -1e308, 2.0]


@pytest.mark.parametrize("gain", ["exp2", "linear"])
@pytest.mark.parametrize("discount", ["log2", "letor", "zipf", 0.5])
@pytest.mark.parametrize("k", [None, 1, 3, 6])
def test_swap_weights_equal_brute_force_swaps(gain, discount, k):
    rng = np.random.default_rng(hash((gain, str(discount), k)) % 2**32)
    for _ in range(5):
        n = int(rng.integers(2, 12))
        y = rng.integers(0, 4, n)
        s = rng.normal(size=n)
        gains = M.gain_values(y, gain)
        table, _ = discount_table(n, discount, k)
        W = ranking.swap_weight_matrix(s, gains, table, inv_ideal_of(gains, table))
        base = M.ndcg(y, s, k, gain=gain, discount=discount)
        for i in range(n):
            for j in range(n):
                swapped = s.copy()
                swapped[[i, j]] = swapped[[j, i]]
                brute = abs(M.ndcg(y, swapped, k, gain=gain, discount=discount) - base)
                assert W[i, j] == pytest.approx(brute, abs=1e-12)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.floats(width=64), st.sampled_from(SPECIAL_SCORES),
                          st.integers(-2, 2).map(float)), max_size=70))
def test_ranked_order_is_numpys_stable_argsort_of_minus_scores(values):
    # ties, signed zeros, NaNs, infinities and subnormals; lengths across the run size
    scores = np.array(values, dtype=np.float64)
    np.testing.assert_array_equal(ranking.ranked_order(scores), np.argsort(-scores, kind="stable"))
    strided = np.repeat(scores, 2)[::2]  # not contiguous
    np.testing.assert_array_equal(ranking.ranked_order(strided), np.argsort(-scores, kind="stable"))


def test_ranked_order_on_long_random_queries():
    rng = np.random.default_rng(11)
    for n in (9, 16, 17, 100, 1000, 4097):
        for scores in (rng.normal(size=n), rng.integers(0, 5, n).astype(float)):
            np.testing.assert_array_equal(ranking.ranked_order(scores),
                                          np.argsort(-scores, kind="stable"))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=1, max_size=40), st.integers(1, 45))
def test_top_order_is_a_stable_partial_ranking(values, k):
    scores = np.array(values, dtype=np.float64)  # small integers: many ties
    full = ranking.ranked_order(scores)
    partial = ranking.top_order(scores, k)
    top = min(k, len(scores))
    np.testing.assert_array_equal(partial[:top], full[:top])
    np.testing.assert_array_equal(np.sort(partial[top:]), np.sort(full[top:]))
    # the rest keeps row order
    assert np.all(np.diff(partial[top:]) > 0)


def test_ranking_from_the_previous_ranking_equals_a_fresh_sort():
    # whatever the hint (none, stale, shuffled, exact) the result is the
    # stable ranking by decreasing score, ties by row, NaN last
    rng = np.random.default_rng(7)
    for trial in range(2000):
        n = int(rng.integers(1, 120))
        s = rng.integers(-4, 5, n) * 0.5 if trial % 3 == 0 else rng.normal(size=n)
        if trial % 11 == 0:
            s[rng.integers(n)] = np.nan
        kind = trial % 4
        if kind == 0:
            hint = np.full(n, -1, dtype=np.int64)
        elif kind == 1:
            hint = rng.permutation(n).astype(np.int64)
        else:
            noise = 0.01 if kind == 2 else 0.0
            hint = ranking.ranked_order(s + noise * rng.normal(size=n))
        expected = ranking.ranked_order(s)
        got = ranking.ranked_order_from(s, hint)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(hint, expected)  # kept for the next call
