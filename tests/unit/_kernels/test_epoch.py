"""rsrank._kernels.epoch: the objective's gradient is X transpose lambda and
matches finite differences; threads change no bit; an additive model's
coded column steps on the score of each code (its level) by the lambdas'
histogram per code over the level's curvature, and the group penalty keeps
a group at zero exactly when its gradient's norm is at most the strength,
as on plain steps."""

import numpy as np
import pytest

from kernel_reference import discount_table
from rsrank import _kernels as K
from rsrank._kernels import epoch
from rsrank.evaluation import metrics as M


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
    pairs = epoch.Pairs(gains, K.read_only(y), inv, table, cut, 0, False, levels, np.full(3, -1))

    def rows_of(X):  # read-only arrays, as a fit passes them: the fit's builds, from the cache
        csr = sp.csr_matrix(X)
        if dense:
            arrays = np.zeros(0), np.zeros(0, np.int32), np.zeros(0, np.int32), X
        else:
            arrays = csr.data, csr.indices, csr.indptr, np.zeros((0, 0))
        return epoch.Rows(*map(K.read_only, arrays), offsets)

    def work():
        return epoch.Work(np.zeros(n), np.zeros(n), np.zeros((1, d)), np.full(n, -1), np.zeros(d))

    def objective(v, scale=np.zeros(0), X=X, parallel=False):
        grad = np.zeros(d)
        rows = rows_of(X)
        value = epoch.objective(rows, pairs, scale, v, work(), grad,
                                epoch.epoch_kernels(rows)[int(parallel)])
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
    steps = epoch.Steps(0.05, 0.0, 0.01, 1, 0.5, False)

    def run_epoch(kernel, threads):
        w = rng.normal(size=5) if threads is None else start.copy()
        loss, _ = kernel(rows, pairs, steps, np.zeros(0), order, batch, w, np.zeros(6), 0,
                         workspace(data, threads or 1))
        return loss, w

    start = run_epoch(epoch.epoch_serial, None)[1]
    loss, w = run_epoch(epoch.epoch_serial, 1)
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
            got_loss, got = run_epoch(epoch.epoch_parallel, threads)
            np.testing.assert_array_equal(got, w)
            assert got_loss == loss
    finally:
        numba.set_num_threads(was)


def _column(rng, n_codes, n_rows):
    """Rows' codes of one column and lambdas that sum to 0 (a pair loss's)."""
    codes = rng.integers(0, n_codes, n_rows)
    lam = rng.normal(size=n_rows)
    return codes, lam - lam.mean()


@pytest.mark.parametrize("seed", range(5))
def test_level_moves_are_the_differences_of_each_codes_histogram_over_its_curvature(seed):
    rng = np.random.default_rng(seed)
    widths = rng.integers(1, 9, 3)  # steps per column
    bins = np.r_[0, np.cumsum(widths)].astype(np.int64)
    levels = rng.uniform(0.1, 2.0, int(bins[-1]) + len(widths))
    levels[rng.random(len(levels)) < 0.2] = 0.0  # a code without curvature does not move
    grad, expected = np.zeros(int(bins[-1])), np.zeros(int(bins[-1]))
    for j, width in enumerate(widths):
        codes, lam = _column(rng, width + 1, 40)
        histogram = np.bincount(codes, weights=lam, minlength=width + 1)  # per level
        for b in range(width):  # a step's gradient: the rows above it
            grad[bins[j] + b] = lam[codes > b].sum()
        moved = histogram * levels[bins[j] + j: bins[j + 1] + j + 1]
        expected[bins[j]:bins[j + 1]] = np.diff(moved)
    np.testing.assert_allclose(epoch.level_moves(grad, bins, levels), expected, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_a_group_at_zero_stays_there_exactly_when_its_gradient_is_within_the_strength(seed):
    rng = np.random.default_rng(seed)
    bins = np.array([0, 5, 9], dtype=np.int64)
    levels = rng.uniform(0.2, 3.0, 11)
    grad = rng.normal(size=9)
    norms = [np.linalg.norm(grad[:5]), np.linalg.norm(grad[5:])]
    eta = 0.3
    for strength, zero in ((0.999 * norms[0], [False, norms[1] <= 0.999 * norms[0]]),
                           (1.001 * norms[0], [True, norms[1] <= 1.001 * norms[0]])):
        w = np.zeros(9)
        steps = epoch.Steps(eta, 0.0, 0.0, 1, 0.0, False, strength, bins, np.ones(2),
                            level_bins=bins, levels=levels)
        K.take_step(w, grad[None], 1, np.zeros(0), steps, np.zeros(10), 0)
        assert [not w[:5].any(), not w[5:].any()] == zero
