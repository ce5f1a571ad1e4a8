"""rsrank._kernels.scores: scores and gradients of any row range and layout."""

import numpy as np

from rsrank._kernels import scores


def test_dense_scores_and_gradient_of_any_row_range_and_layout():
    # the scores prefetch rows ahead of the four they sum, up to the range's end
    rng = np.random.default_rng(12)
    X = rng.normal(size=(41, 7)).astype(np.float32)
    w, lam = rng.normal(size=7), rng.normal(size=41)
    for view in (X, np.asfortranarray(X), X[::2], X[:, ::2]):
        expected = view.astype(np.float64) @ w[:view.shape[1]]
        for lo, hi in ((0, view.shape[0]), (3, 4), (5, 17), (view.shape[0] - 6, view.shape[0])):
            out = np.full(view.shape[0], np.nan)
            scores.dense_scores(view, lo, hi, w[:view.shape[1]], out)
            np.testing.assert_allclose(out[lo:hi], expected[lo:hi], rtol=1e-12)
            assert np.isnan(out[:lo]).all() and np.isnan(out[hi:]).all()
            grad = np.zeros(view.shape[1])
            scores.dense_add_gradient(view, lo, hi, lam, 0.5, grad)
            np.testing.assert_allclose(grad, 0.5 * view[lo:hi].T.astype(np.float64) @ lam[lo:hi],
                                       rtol=1e-12, atol=1e-12)


def test_moving_rows_keep_the_codes_of_the_columns_a_fit_can_move():
    from rsrank._kernels import Rows, Steps, coded_add_histogram, coded_scores, moving_rows
    from rsrank._kernels import step_table, uniform_stride

    rng = np.random.default_rng(0)
    widths = np.array([3, 2, 4, 1])  # steps per coded column
    bins = np.r_[0, np.cumsum(widths)].astype(np.int64)
    slots = np.r_[0, np.cumsum(widths + 1)[:-1]].astype(np.int64)
    codes = np.column_stack([rng.integers(0, k + 1, 50) for k in widths]).astype(np.uint8)
    empty = np.zeros(0, np.int64)
    rows = Rows(np.zeros(0), empty, empty, np.zeros((0, 0)), np.array([0, 50]), codes,
                np.zeros(0, np.uint8), np.zeros(0, np.uint8), bins, slots)
    factors = np.array([1.0, np.inf, 1.0, np.inf])
    steps = Steps(0.1, 0.0, 0.0, 1, 0.0, False, 1.0, bins, factors)
    w = rng.normal(size=bins[-1])
    w[bins[1]:bins[2]] = w[bins[3]:bins[4]] = 0.0  # the held columns at zero
    moving = moving_rows(rows, steps, w)
    np.testing.assert_array_equal(moving.column_slots, slots[[0, 2]])  # columns 0 and 2
    np.testing.assert_array_equal(moving.dense_codes, codes[:, [0, 2]])
    table = step_table(w, bins, slots, np.zeros(int(slots[-1] + widths[-1] + 1)))
    whole, few = np.zeros(50), np.zeros(50)
    coded_scores(rows, 0, 50, table, whole, uniform_stride(slots))
    coded_scores(moving, 0, 50, table, few, uniform_stride(slots))
    np.testing.assert_allclose(few, whole, rtol=1e-12)
    lam = rng.normal(size=50)
    grad_whole, grad_few = np.zeros(table.shape[0]), np.zeros(table.shape[0])
    coded_add_histogram(rows, 0, 50, lam, 1.0, grad_whole, uniform_stride(slots))
    coded_add_histogram(moving, 0, 50, lam, 1.0, grad_few, uniform_stride(slots))
    for j in (0, 2):  # the moving columns' histograms, and nothing for the held
        top = slots[j] + widths[j] + 1
        np.testing.assert_allclose(grad_few[slots[j]:top], grad_whole[slots[j]:top])
    for j in (1, 3):
        assert not grad_few[slots[j]:slots[j] + widths[j] + 1].any()
    # every column held (the relaxed refit of an empty model, at a path's edge): no
    # codes read at all, where an empty column_slots once read every column of none
    nothing = moving_rows(rows, steps._replace(group_factors=np.full(4, np.inf)), 0 * w)
    assert nothing.dense_codes.shape == (50, 0) and nothing.column_slots.shape == (0,)
    zero_table = np.zeros_like(table)
    scores = np.full(50, np.nan)
    coded_scores(nothing, 0, 50, zero_table, scores, uniform_stride(slots))
    np.testing.assert_array_equal(scores, np.zeros(50))
    grad = np.zeros(table.shape[0])
    coded_add_histogram(nothing, 0, 50, lam, 1.0, grad, uniform_stride(slots))
    assert not grad.any()
    # nothing held, a held column away from zero, or CSR codes: the rows as they are
    assert moving_rows(rows, steps._replace(group_factors=np.ones(4)), w) is rows
    assert moving_rows(moving, steps, w) is moving  # already compact
    w[bins[1]] = 0.5
    assert moving_rows(rows, steps, w) is rows
