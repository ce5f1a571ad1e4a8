import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rsrank import _kernels as K
from rsrank.evaluation import metrics as M


def discount_table(n, discount, k):
    table = np.zeros(n)
    cut = n if k is None else min(k, n)
    table[:cut] = M.discount_values(np.arange(1, cut + 1), discount)
    return table, cut


def inv_ideal_of(gains, table):
    ideal = K.ideal_dcg(gains, np.array([0, len(gains)]), table)[0]
    return 1.0 / ideal if ideal > 0 else 0.0


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
        W = K.swap_weight_matrix(s, gains, table, inv_ideal_of(gains, table))
        base = M.ndcg(y, s, k, gain=gain, discount=discount)
        for i in range(n):
            for j in range(n):
                swapped = s.copy()
                swapped[[i, j]] = swapped[[j, i]]
                brute = abs(M.ndcg(y, swapped, k, gain=gain, discount=discount) - base)
                assert W[i, j] == pytest.approx(brute, abs=1e-12)


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
    total = K.query_lambdas(s, gains, y, table, cut, inv, K.PAIR_LOSSES[loss], False, lam)
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
        fd = (reference_lambdas(up, y, W, loss)[0] - reference_lambdas(down, y, W, loss)[0]) / (2 * h)
        assert lam[i] == pytest.approx(fd, rel=1e-5, abs=1e-8)


def test_cutoff_skips_pairs_below_k():
    n = 30
    rng = np.random.default_rng(8)
    y = rng.integers(0, 3, n)
    s = rng.normal(size=n)
    gains = M.gain_values(y)
    table, cut = discount_table(n, "log2", 5)
    lam = np.empty(n)
    K.query_lambdas(s, gains, y, table, cut, inv_ideal_of(gains, table), 0, False, lam)
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
    total = K.query_lambdas(s, M.gain_values(y), y, np.ones(3), 3, 1.0, 0, True, lam)
    assert total == pytest.approx(3.0)  # three pairs at margin 0, phi(0) = 1
    np.testing.assert_allclose(lam, [4.0, 0.0, -4.0])  # dphi(0) = -2


def test_ideal_dcg_matches_metrics():
    rng = np.random.default_rng(9)
    sizes = [3, 7, 1, 12]
    offsets = np.r_[0, np.cumsum(sizes)]
    y = rng.integers(0, 4, offsets[-1])
    table, _ = discount_table(12, "log2", 5)
    got = K.ideal_dcg(M.gain_values(y), offsets, table)
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
        got = K.ideal_dcg(gains, offsets, table)
        expected = [np.sort(gains[a:b])[::-1][:k] @ table[:min(b - a, k)]
                    for a, b in zip(offsets[:-1], offsets[1:])]
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-10, 10, allow_nan=False), min_size=1, max_size=20),
       st.floats(0, 5), st.one_of(st.just(np.inf), st.floats(0, 10)))
def test_truncate_properties(values, alpha, theta):
    w = np.array(values)
    out = w.copy()
    nonzero = K.truncate(out, alpha, theta)
    assert nonzero == np.count_nonzero(out)
    assert np.all(out * w >= 0)  # never flips a sign
    inside = np.abs(w) <= theta
    np.testing.assert_array_equal(out[~inside], w[~inside])  # large weights untouched
    expected = np.sign(w[inside]) * np.maximum(np.abs(w[inside]) - alpha, 0.0)
    np.testing.assert_allclose(out[inside], expected)
    assert np.all(out[inside][np.abs(w[inside]) <= alpha] == 0.0)  # exact zeros


@pytest.mark.parametrize("dense", [True, False])
def test_objective_gradient_is_x_transpose_lambda_and_matches_finite_differences(dense):
    import scipy.sparse as sp

    rng = np.random.default_rng(11)
    sizes = np.array([6, 9, 4])
    offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    n, d = offsets[-1], 4
    X = rng.uniform(size=(n, d))
    X[X < 0.3] = 0.0
    y = rng.integers(0, 3, n)
    gains = M.gain_values(y)
    table, cut = discount_table(sizes.max(), "log2", 5)
    inv = 1.0 / K.ideal_dcg(gains, offsets, table)
    w = rng.normal(size=d)
    levels = np.zeros(n, dtype=np.int64)
    pairs = K.Pairs(gains, y, inv, table, cut, 0, False, levels, np.full(3, -1))

    def rows_of(X):
        csr = sp.csr_matrix(X)
        if dense:
            return K.Rows(np.zeros(0), np.zeros(0, np.int32), np.zeros(0, np.int32), X, offsets)
        return K.Rows(csr.data, csr.indices, csr.indptr, np.zeros((0, 0)), offsets)

    def work():
        return K.Work(np.zeros(n), np.zeros(n), np.zeros((1, d)), np.full(n, -1), np.zeros(d))

    def objective(v, scale=np.zeros(0), X=X, parallel=False):
        grad = np.zeros(d)
        rows = rows_of(X)
        value = K.objective(rows, pairs, scale, v, work(), grad,
                            K.epoch_kernels(rows)[int(parallel)])
        return value, grad

    value, grad = objective(w)
    # the gradient is X^T lambda with the per-query lambdas
    lam = np.zeros(n)
    for q in range(3):
        lo, hi = offsets[q], offsets[q + 1]
        K.query_lambdas(X[lo:hi] @ w, gains[lo:hi], y[lo:hi], table, cut, inv[q], 0, False,
                        lam[lo:hi])
    np.testing.assert_allclose(grad, X.T @ lam, rtol=1e-12)
    h = 1e-6  # small enough that no two documents change order
    for c in range(d):
        step = np.zeros(d)
        step[c] = h
        fd = (objective(w + step)[0] - objective(w - step)[0]) / (2 * h)
        assert grad[c] == pytest.approx(fd, rel=1e-5, abs=1e-8)
    parallel = objective(w, parallel=True)[1]
    np.testing.assert_allclose(parallel, grad, rtol=1e-12)
    # a per-feature scale is the objective of the scaled columns X * scale
    scale = rng.uniform(0.1, 10, size=d)
    value_scaled, grad_scaled = objective(w, scale)
    value_copy, grad_copy = objective(w, X=np.ascontiguousarray(X * scale))
    assert value_scaled == pytest.approx(value_copy, rel=1e-12)
    np.testing.assert_allclose(grad_scaled, grad_copy, rtol=1e-11)


@pytest.mark.parametrize("batch_size", [None, 3, 7])
def test_threads_share_the_gradient_rows_and_change_no_bit(batch_size):
    """The batch's t-th query goes to gradient row t % rows; however many
    threads share the 8 rows, each row adds its queries in batch order, so
    every split gives the serial build's weights bit for bit, and every
    query is counted once (the loss is the sum of the queries')."""
    import numba

    from rsrank import QueryData
    from rsrank.learning.objective import Objective, workspace

    rng = np.random.default_rng(5)
    sizes = rng.integers(2, 30, 41)
    qid = np.repeat(np.arange(len(sizes)), sizes)
    X = rng.normal(size=(len(qid), 5))
    data = QueryData(X, rng.integers(0, 4, len(qid)), qid)
    pairs, rows = Objective().pairs(data), data.rows()
    order = rng.permutation(data.n_queries).astype(np.int64)
    batch = data.n_queries if batch_size is None else batch_size
    steps = K.Steps(0.05, 0.0, 0.01, 1, 0.5, False)

    def epoch(kernel, threads):
        w = rng.normal(size=5) if threads is None else start.copy()
        loss, _ = kernel(rows, pairs, steps, np.zeros(0), order, batch, w, np.zeros(6), 0,
                         workspace(data, threads or 1))
        return loss, w

    start = epoch(K.epoch_serial, None)[1]
    loss, w = epoch(K.epoch_serial, 1)
    lam = np.zeros(data.n_rows)
    if batch_size is None:  # one step: the loss is the queries' at the start
        scores = X[data.order] @ start
        factors = Objective().query_factors(data)
        expected = sum(K.query_lambdas(scores[lo:hi], pairs.gains[lo:hi], pairs.labels[lo:hi],
                                       pairs.discount, pairs.cutoff, factors[q], pairs.loss,
                                       False, lam[lo:hi])
                       for q, (lo, hi) in enumerate(zip(data.offsets[:-1], data.offsets[1:])))
        assert loss == pytest.approx(expected, rel=1e-12)
    was = numba.get_num_threads()
    try:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        for threads in (1, 2, 3, 5, 8):  # up to the 8 rows: beyond, a row per thread
            got_loss, got = epoch(K.epoch_parallel, threads)
            np.testing.assert_array_equal(got, w)
            assert got_loss == loss
    finally:
        numba.set_num_threads(was)


SPECIAL_SCORES = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 5e-324, -5e-324, 1.0, -1.0,
                  1e308, -1e308, 2.0]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.floats(width=64), st.sampled_from(SPECIAL_SCORES),
                          st.integers(-2, 2).map(float)), max_size=70))
def test_ranked_order_is_numpys_stable_argsort_of_minus_scores(values):
    # ties, signed zeros, NaNs, infinities and subnormals; lengths across the run size
    scores = np.array(values, dtype=np.float64)
    np.testing.assert_array_equal(K.ranked_order(scores), np.argsort(-scores, kind="stable"))
    strided = np.repeat(scores, 2)[::2]  # not contiguous
    np.testing.assert_array_equal(K.ranked_order(strided), np.argsort(-scores, kind="stable"))


def test_dense_scores_and_gradient_of_any_row_range_and_layout():
    # the scores prefetch rows ahead of the four they sum, up to the range's end
    rng = np.random.default_rng(12)
    X = rng.normal(size=(41, 7)).astype(np.float32)
    w, lam = rng.normal(size=7), rng.normal(size=41)
    for view in (X, np.asfortranarray(X), X[::2], X[:, ::2]):
        expected = view.astype(np.float64) @ w[:view.shape[1]]
        for lo, hi in ((0, view.shape[0]), (3, 4), (5, 17), (view.shape[0] - 6, view.shape[0])):
            out = np.full(view.shape[0], np.nan)
            K.dense_scores(view, lo, hi, w[:view.shape[1]], out)
            np.testing.assert_allclose(out[lo:hi], expected[lo:hi], rtol=1e-12)
            assert np.isnan(out[:lo]).all() and np.isnan(out[hi:]).all()
            grad = np.zeros(view.shape[1])
            K.dense_add_gradient(view, lo, hi, lam, 0.5, grad)
            np.testing.assert_allclose(grad, 0.5 * view[lo:hi].T.astype(np.float64) @ lam[lo:hi],
                                       rtol=1e-12, atol=1e-12)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 1 << 40), st.integers(0, 3 << 20), st.integers(1, 3000))
def test_prefetch_shares_cover_a_span_once_in_order(start, size, parts):
    plan = K.prefetch_plan((start, size), parts)
    lines = [line for part in range(parts) for line in range(*K.share_lines(plan, part))]
    if size == 0:
        assert lines == []
        return
    assert plan[0] % 64 == 0 and plan[0] <= start < plan[0] + 64
    # every line the span touches up to the limit, each once, in order
    size = min(size, K.PREFETCH_SPAN_BYTES)
    assert lines == list(range((start + size - 1) // 64 - start // 64 + 1))


def test_spans_of_rows_and_items():
    X = np.zeros((9, 5), dtype=np.float32)
    assert K.rows_span(X, 2, 7) == (X.ctypes.data + 2 * 20, 5 * 20)
    assert K.rows_span(X, 4, 4) == K.NOTHING_AHEAD
    assert K.rows_span(np.asfortranarray(X), 2, 7) == K.NOTHING_AHEAD  # rows not contiguous
    a = np.zeros(10, dtype=np.int32)
    assert K.items_span(a, 3, 8) == (a.ctypes.data + 12, 20)
    assert K.items_span(a[::2], 1, 3) == K.NOTHING_AHEAD


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
        K.all_query_levels(g, y, offsets, discount, loss, levels, n_levels)
        for q in range(len(sizes)):
            lo, hi = offsets[q], offsets[q + 1]
            own = np.full(hi - lo, -7, dtype=np.int64)
            assert n_levels[q] == K.query_levels(g[lo:hi], y[lo:hi], discount, loss, own)
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


def test_ranked_order_on_long_random_queries():
    rng = np.random.default_rng(11)
    for n in (9, 16, 17, 100, 1000, 4097):
        for scores in (rng.normal(size=n), rng.integers(0, 5, n).astype(float)):
            np.testing.assert_array_equal(K.ranked_order(scores),
                                          np.argsort(-scores, kind="stable"))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=1, max_size=40), st.integers(1, 45))
def test_top_order_is_a_stable_partial_ranking(values, k):
    scores = np.array(values, dtype=np.float64)  # small integers: many ties
    full = K.ranked_order(scores)
    partial = K.top_order(scores, k)
    top = min(k, len(scores))
    np.testing.assert_array_equal(partial[:top], full[:top])
    np.testing.assert_array_equal(np.sort(partial[top:]), np.sort(full[top:]))
    # the rest keeps row order
    assert np.all(np.diff(partial[top:]) > 0)


# -- whole-list lambdas by prefix sums -------------------------------------------------

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
                expected = K.pair_loop_lambdas(s, g, y, discount, cutoff, Z, loss, unit, pairs,
                                               np.zeros(0, dtype=np.int64), K.NOTHING_AHEAD)
                got = K.sorted_query_lambdas(s, g, y, discount, cutoff, Z, loss, unit, sums)
                scale = max(1.0, np.abs(pairs).max())
                assert got == pytest.approx(expected, rel=1e-11, abs=1e-11)
                np.testing.assert_allclose(sums, pairs, rtol=0, atol=1e-11 * scale)
                dispatched = np.zeros(n)
                K.query_lambdas(s, g, y, discount, cutoff, Z, loss, unit, dispatched)
                np.testing.assert_allclose(dispatched, pairs, rtol=0, atol=1e-11 * scale)


def test_prefix_sum_lambdas_stay_in_bounds_on_any_scores():
    # a bounds-checked build of the kernel: NaN, infinities, huge scores and
    # ties must never move a pointer out of the query
    from numba import njit

    from rsrank import _kernels as K

    checked = njit(boundscheck=True)(K.ranked_lambdas.py_func)
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
        n_levels = K.query_levels(g, y, discount, K.MODIFIED_HUBER, levels)
        assert (n_levels == 0) == (trial % 5 == 0)
        if n_levels:
            assert n_levels == len(np.unique(y))
            np.testing.assert_array_equal(levels, np.searchsorted(np.unique(y), y))
        expected, got = np.zeros(n), np.zeros(n)
        loss_expected = K.query_lambdas(s, g, y, discount, n, 0.05, K.MODIFIED_HUBER, False,
                                        expected)
        hint = np.full(n, -1, dtype=np.int64)
        # with the span of another array to prefetch as it goes: a hint only
        ahead = K.rows_span(rng.normal(size=(n + 3, 7)), 1, n + 3)
        loss_got = K.query_lambdas_from(s, g, y, discount, n, 0.05, K.MODIFIED_HUBER, False, got,
                                        hint, levels, n_levels, ahead)
        assert loss_got == loss_expected
        np.testing.assert_array_equal(got, expected)


def test_prefix_sums_are_refused_where_they_do_not_apply():
    from rsrank import _kernels as K

    y = np.array([0, 1, 2, 1])
    rising = np.array([1.0, 0.5, 0.8, 0.1])  # a discount that goes up again
    falling = np.array([1.0, 0.6, 0.5, 0.1])
    assert K.prefix_sums_apply(np.exp2(y) - 1, y, falling, 4, K.MODIFIED_HUBER)
    assert not K.prefix_sums_apply(np.exp2(y) - 1, y, rising, 4, K.MODIFIED_HUBER)
    assert not K.prefix_sums_apply(np.exp2(y) - 1, y, falling, 4, K.LOGISTIC)
    assert not K.prefix_sums_apply(np.array([3.0, 2.0, 1.0, 2.0]), y, falling, 4, K.HINGE)


def test_short_queries_rank_from_their_previous_ranking_to_the_same_lambdas():
    # the pair loop of a short query starts its ranking from the last one,
    # as the prefix sums do: the same lambdas and loss, bit for bit
    from rsrank import _kernels as K

    rng = np.random.default_rng(9)
    for trial in range(300):
        n = int(rng.integers(1, K.PREFIX_MIN_SIZE + 1))
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
            loss_expected = K.query_lambdas(s, g, y, discount, cutoff, 0.2, K.MODIFIED_HUBER,
                                            unit, expected)
            loss_got = K.query_lambdas_from(s, g, y, discount, cutoff, 0.2, K.MODIFIED_HUBER,
                                            unit, got, hint, levels, -1, K.NOTHING_AHEAD)
            assert loss_got == loss_expected
            np.testing.assert_array_equal(got, expected)
            if n >= 2 and (unit or cutoff >= n):
                np.testing.assert_array_equal(hint, np.argsort(-s, kind="stable"))


def test_ranking_from_the_previous_ranking_equals_a_fresh_sort():
    # whatever the hint (none, stale, shuffled, exact) the result is the
    # stable ranking by decreasing score, ties by row, NaN last
    from rsrank import _kernels as K

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
            hint = K.ranked_order(s + noise * rng.normal(size=n))
        expected = K.ranked_order(s)
        got = K.ranked_order_from(s, hint)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(hint, expected)  # kept for the next call


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


def test_builds_of_changed_kernel_sources_are_forgotten(tmp_path):
    """numba checks a cached kernel against its own file only: a change to
    a file of kernels it calls must remove the builds, and nothing else."""
    from rsrank._kernels.build import SOURCES_STAMP, forget_builds

    sources = [tmp_path / "src" / "epoch.py", tmp_path / "src" / "penalty.py"]
    sources[0].parent.mkdir()
    for source in sources:
        source.write_text("x = 1\n")
    cache = tmp_path / "cache"
    cache.mkdir()
    builds = [cache / "epoch.epoch_serial-1.py311.nbi", cache / "epoch.epoch_serial-1.py311.1.nbc",
              cache / "penalty.truncate-9.py311.nbi"]
    other = cache / "user_module.f-1.py311.nbi"  # not a kernel of these sources
    for path in builds + [other]:
        path.write_bytes(b"build")
    assert forget_builds(cache, sources)  # no stamp yet: builds of unknown sources go
    assert not any(p.exists() for p in builds) and other.exists()
    assert (cache / SOURCES_STAMP).is_file()
    for path in builds:
        path.write_bytes(b"build")
    assert not forget_builds(cache, sources)  # the same sources: builds kept
    assert all(p.exists() for p in builds)
    sources[1].write_text("x = 2\n")  # the callee's file changed, not the caller's
    assert forget_builds(cache, sources)
    assert not any(p.exists() for p in builds) and other.exists()
    assert sorted(p.name for p in cache.iterdir()) == [SOURCES_STAMP, other.name]
