"""rsrank._kernels.lambdas: pair lambdas against a reference and finite
differences, cut-offs, unit weights, and the prefix sums against the pair
loop."""

import numpy as np
import pytest

from kernel_reference import discount_table, inv_ideal_of
from rsrank import _kernels as K
from rsrank._kernels import lambdas
from rsrank.evaluation import metrics as M


def reference_lambdas(s, y, W, loss):
    """Plain-Python loss and lambdas of one query with fixed pair weights."""
    total, lam = 0.0, np.zeros(len(s))
    for i in range(len(s)):
        for j in range(len(s)):
            if y[i] > y[j]:
                v = s[i] - s[j]
                if loss == "modified_huber":
                    phi = 0.0 if v >= 1 else (1 - v) ** 2 if v >= -1 else -4 * v
                    dphi = 0.0 if v >= 1 else -2 * (1 - v) if v >= -1 else -4.0
                elif loss == "hinge":
                    phi, dphi = max(0.0, 1 - v), (-1.0 if v < 1 else 0.0)
                else:
                    phi, dphi = np.log1p(np.exp(-v)), -1 / (1 + np.exp(v))
                total += W[i, j] * phi
                lam[i] += W[i, j] * dphi
                lam[j] -= W[i, j] * dphi
    return total, lam


@pytest.mark.parametrize("loss", ["modified_huber", "hinge", "logistic"])
@pytest.mark.parametrize("k", [None, 4])
def test_lambdas_match_reference_and_finite_differences(loss, k):
    rng = np.random.default_rng(7)
    n = 15
    y = rng.integers(0, 3, n)
    s = rng.normal(scale=1.5, size=n)  # margins on every branch of the loss
    gains = M.gain_values(y, "exp2")
    table, cut = discount_table(n, "log2", k)
    inv = inv_ideal_of(gains, table)
    lam = np.empty(n)
    total = lambdas.query_lambdas(s, gains, y, table, cut, inv, K.PAIR_LOSSES[loss], False, lam)
    W = K.swap_weight_matrix(s, gains, table, inv)
    ref_total, ref_lam = reference_lambdas(s, y, W, loss)
    assert total == pytest.approx(ref_total, rel=1e-12)
    np.testing.assert_allclose(lam, ref_lam, rtol=1e-10, atol=1e-14)
    # central differences of the loss with the weights W held fixed
    h = 1e-6
    for i in range(n):
        up, down = s.copy(), s.copy()
        up[i] += h
        down[i] -= h
        fd = (reference_lambdas(up, y, W, loss)[0]
              - reference_lambdas(down, y, W, loss)[0]) / (2 * h)
        assert lam[i] == pytest.approx(fd, rel=1e-5, abs=1e-8)


def test_cutoff_skips_pairs_below_k():
    n = 30
    rng = np.random.default_rng(8)
    y = rng.integers(0, 3, n)
    s = rng.normal(size=n)
    gains = M.gain_values(y)
    table, cut = discount_table(n, "log2", 5)
    lam = np.empty(n)
    lambdas.query_lambdas(s, gains, y, table, cut, inv_ideal_of(gains, table), 0, False, lam)
    order = np.argsort(-s)
    # documents ranked below k only receive lambdas from pairs with a top-k partner
    W = K.swap_weight_matrix(s, gains, table, inv_ideal_of(gains, table))
    below = order[5:]
    assert np.all(W[np.ix_(below, below)] == 0)
    assert np.any(lam[below] != 0)


def test_unit_weights_count_every_misordered_pair():
    y = np.array([0, 1, 2])
    s = np.zeros(3)
    lam = np.empty(3)
    total = lambdas.query_lambdas(s, M.gain_values(y), y, np.ones(3), 3, 1.0, 0, True, lam)
    assert total == pytest.approx(3.0)  # three pairs at margin 0, phi(0) = 1
    np.testing.assert_allclose(lam, [4.0, 0.0, -4.0])  # dphi(0) = -2


def test_all_query_levels_equal_each_querys_own():
    # one pass over every query against query_levels query by query: labels
    # with gaps, gains out of label order, a discount that rises, the
    # logistic loss (no levels), empty queries
    rng = np.random.default_rng(21)
    for trial in range(60):
        sizes = rng.integers(0, 40, int(rng.integers(1, 12)))
        offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
        y = rng.choice([0, 1, 3, 4, 9], size=offsets[-1]) + (trial % 3)
        g = np.exp2(y) - 1.0
        if trial % 4 == 1 and len(g):
            g[rng.integers(len(g))] = 1e6  # a gain above the next label's
        discount = 1 / np.log2(np.arange(max(offsets[-1], 1)) + 2)
        if trial % 5 == 2:
            discount[int(rng.integers(1, 30)):] *= 0  # ends at 0: still non-increasing
        if trial % 5 == 3:
            discount[min(int(rng.integers(1, 30)), len(discount) - 1)] = 5.0  # rises
        loss = K.LOGISTIC if trial % 7 == 6 else K.MODIFIED_HUBER
        levels = np.full(len(y), -7, dtype=np.int64)
        n_levels = np.full(len(sizes), -7, dtype=np.int64)
        lambdas.all_query_levels(g, y, offsets, discount, loss, levels, n_levels)
        for q in range(len(sizes)):
            lo, hi = offsets[q], offsets[q + 1]
            own = np.full(hi - lo, -7, dtype=np.int64)
            assert n_levels[q] == lambdas.query_levels(g[lo:hi], y[lo:hi], discount, loss, own)
            np.testing.assert_array_equal(levels[lo:hi], own)
            # by hand: levels where the loss, the discount over the query's
            # places and the gains in label order allow the prefix sums
            labels = np.unique(y[lo:hi])
            ordered = all(g[lo:hi][y[lo:hi] == a].max() <= g[lo:hi][y[lo:hi] == b].min()
                          for a, b in zip(labels, labels[1:]))
            places = discount[:min(hi - lo, len(discount))]
            applies = (hi > lo and loss != K.LOGISTIC and ordered
                       and bool(np.all(np.diff(places) <= 0)))
            assert n_levels[q] == (len(labels) if applies else 0)
            if applies:
                np.testing.assert_array_equal(levels[lo:hi], np.searchsorted(labels, y[lo:hi]))
            else:
                assert (levels[lo:hi] == -7).all()


@pytest.mark.parametrize("seed", range(6))
def test_prefix_sum_lambdas_equal_the_pair_loop(seed):
    from rsrank import _kernels as K
    from rsrank.evaluation.metrics import discount_values, gain_values

    rng = np.random.default_rng(seed)
    for trial in range(50):
        n = int(rng.integers(2, 150))
        y = rng.integers(0, int(rng.integers(2, 6)), n)
        kind = trial % 3
        if kind == 0:
            s = rng.normal(size=n) * 2
        elif kind == 1:  # ties, and differences of exactly 1 (the loss boundaries)
            s = rng.integers(-3, 4, n).astype(float)
        else:
            s = rng.integers(-6, 7, n) * 0.5
        g = gain_values(y, "exp2" if trial % 4 else "linear")
        cutoff = int(rng.integers(1, n + 1)) if trial % 2 else n
        discount = np.zeros(n)
        discount[:cutoff] = discount_values(np.arange(1, cutoff + 1),
                                            ["log2", "letor", "zipf", 0.5][trial % 4])
        ideal = np.sort(g)[::-1][:cutoff] @ discount[:cutoff]
        Z = 1 / ideal if ideal > 0 else 0.0
        for loss in (K.MODIFIED_HUBER, K.HINGE):
            for unit in (False, True):
                pairs, sums = np.zeros(n), np.zeros(n)
                expected = lambdas.pair_loop_lambdas(s, g, y, discount, cutoff, Z, loss, unit,
                                                     pairs, np.zeros(0, dtype=np.int64),
                                                     K.NOTHING_AHEAD)
                got = lambdas.sorted_query_lambdas(s, g, y, discount, cutoff, Z, loss, unit, sums)
                scale = max(1.0, np.abs(pairs).max())
                assert got == pytest.approx(expected, rel=1e-11, abs=1e-11)
                np.testing.assert_allclose(sums, pairs, rtol=0, atol=1e-11 * scale)
                dispatched = np.zeros(n)
                lambdas.query_lambdas(s, g, y, discount, cutoff, Z, loss, unit, dispatched)
                np.testing.assert_allclose(dispatched, pairs, rtol=0, atol=1e-11 * scale)


def test_prefix_sum_lambdas_stay_in_bounds_on_any_scores():
    # a bounds-checked build of the kernel: NaN, infinities, huge scores and
    # ties must never move a pointer out of the query
    from numba import njit

    from rsrank import _kernels as K

    checked = njit(boundscheck=True)(lambdas.ranked_lambdas.py_func)
    rng = np.random.default_rng(11)
    specials = np.array([np.nan, np.inf, -np.inf, 1e300, -1e300, 0.0, 1.0, -1.0])
    for trial in range(300):
        n = int(rng.integers(1, 60))
        s = rng.normal(size=n) * 3
        mask = rng.random(n) < 0.3
        s[mask] = rng.choice(specials, mask.sum())
        y = rng.integers(0, 4, n)
        g = np.exp2(y) - 1
        levels = np.empty(n, dtype=np.int64)
        n_levels = K.label_levels(y, levels)
        discount = 1 / np.log2(np.arange(n) + 2)
        for loss in (K.MODIFIED_HUBER, K.HINGE):
            for unit in (False, True):
                lam = np.full(n, -1.2345e-300)  # a value no lambda takes here
                checked(K.ranked_order(s), s, g, levels, n_levels, discount, n, 0.1, loss, unit,
                        lam, K.rows_span(g.reshape(-1, 1), 0, n))
                assert not np.any(lam == -1.2345e-300)  # every document got its lambda


def test_levels_kept_from_epoch_to_epoch_give_the_same_lambdas():
    # query_lambdas_from with the levels computed once per fit (as the epoch
    # passes them) equals query_lambdas, which computes them itself; a query
    # whose discount rises again has no levels and keeps the pair loop
    from rsrank import _kernels as K

    rng = np.random.default_rng(5)
    for trial in range(100):
        n = int(rng.integers(40, 200))
        s = rng.normal(size=n) * 2
        y = rng.integers(0, 5, n)
        g = np.exp2(y) - 1
        discount = 1 / np.log2(np.arange(n) + 2)
        if trial % 5 == 0:
            discount[n // 2] = 2.0
        levels = np.zeros(n, dtype=np.int64)
        n_levels = lambdas.query_levels(g, y, discount, K.MODIFIED_HUBER, levels)
        assert (n_levels == 0) == (trial % 5 == 0)
        if n_levels:
            assert n_levels == len(np.unique(y))
            np.testing.assert_array_equal(levels, np.searchsorted(np.unique(y), y))
        expected, got = np.zeros(n), np.zeros(n)
        loss_expected = lambdas.query_lambdas(s, g, y, discount, n, 0.05, K.MODIFIED_HUBER,
                                              False, expected)
        hint = np.full(n, -1, dtype=np.int64)
        # with the span of another array to prefetch as it goes: a hint only
        ahead = K.rows_span(rng.normal(size=(n + 3, 7)), 1, n + 3)
        loss_got = lambdas.query_lambdas_from(s, g, y, discount, n, 0.05, K.MODIFIED_HUBER,
                                              False, got, hint, levels, n_levels, ahead)
        assert loss_got == loss_expected
        np.testing.assert_array_equal(got, expected)


def test_prefix_sums_are_refused_where_they_do_not_apply():
    from rsrank import _kernels as K

    y = np.array([0, 1, 2, 1])
    rising = np.array([1.0, 0.5, 0.8, 0.1])  # a discount that goes up again
    falling = np.array([1.0, 0.6, 0.5, 0.1])
    assert lambdas.prefix_sums_apply(np.exp2(y) - 1, y, falling, 4, K.MODIFIED_HUBER)
    assert not lambdas.prefix_sums_apply(np.exp2(y) - 1, y, rising, 4, K.MODIFIED_HUBER)
    assert not lambdas.prefix_sums_apply(np.exp2(y) - 1, y, falling, 4, K.LOGISTIC)
    assert not lambdas.prefix_sums_apply(np.array([3.0, 2.0, 1.0, 2.0]), y, falling, 4, K.HINGE)


def test_short_queries_rank_from_their_previous_ranking_to_the_same_lambdas():
    # the pair loop of a short query starts its ranking from the last one,
    # as the prefix sums do: the same lambdas and loss, bit for bit
    from rsrank import _kernels as K

    rng = np.random.default_rng(9)
    for trial in range(300):
        n = int(rng.integers(1, lambdas.PREFIX_MIN_SIZE + 1))
        y = rng.integers(0, 4, n)
        g = np.exp2(y) - 1
        discount = 1 / np.log2(np.arange(n) + 2)
        cutoff = n if trial % 3 else int(rng.integers(1, n + 1))
        unit = bool(trial % 2)
        hint = np.full(n, -1, dtype=np.int64)
        levels = np.zeros(n, dtype=np.int64)
        s = rng.normal(size=n)
        for _ in range(4):  # epochs: the scores move a little, or tie
            s = np.round(s + 0.3 * rng.normal(size=n), 1 if trial % 5 == 0 else 8)
            expected, got = np.zeros(n), np.zeros(n)
            loss_expected = lambdas.query_lambdas(s, g, y, discount, cutoff, 0.2,
                                                  K.MODIFIED_HUBER, unit, expected)
            loss_got = lambdas.query_lambdas_from(s, g, y, discount, cutoff, 0.2,
                                                  K.MODIFIED_HUBER, unit, got, hint, levels, -1,
                                                  K.NOTHING_AHEAD)
            assert loss_got == loss_expected
            np.testing.assert_array_equal(got, expected)
            if n >= 2 and (unit or cutoff >= n):
                np.testing.assert_array_equal(hint, np.argsort(-s, kind="stable"))
