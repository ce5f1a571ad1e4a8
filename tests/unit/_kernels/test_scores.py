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
