"""Additive models: steps on bin codes, against the linear model on the
explicit 0/1 step indicators (the same function, computed without the
kernels' tables and histograms)."""

import numpy as np
import pytest
import scipy.sparse as sp

from rsrank import _kernels as K
from rsrank.binning import StepEncoding
from rsrank.objective import Objective, workspace
from rsrank.penalty import L1Penalty
from rsrank.querydata import QueryData
from rsrank.solver import Solver, SolverState


def queries(seed=0, n_queries=12, sparse=False):
    """Rows with few distinct values in some features and zeros in all."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 40, n_queries)
    n = int(sizes.sum())
    X = np.column_stack([rng.normal(size=n), rng.integers(0, 4, n).astype(float),
                         rng.exponential(size=n), rng.uniform(size=n)])
    X[rng.uniform(size=X.shape) < 0.3] = 0.0
    y = rng.integers(0, 3, n)
    qid = np.repeat(np.arange(n_queries), sizes)
    return (sp.csr_matrix(X) if sparse else X), y, qid


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("pair_weight", ["delta_ndcg", "unit"])
def test_loss_and_gradient_equal_the_linear_model_on_step_indicators(sparse, pair_weight):
    X, y, qid = queries(1, sparse=sparse)
    encoding = StepEncoding.fit(X, 8)
    data = QueryData(X, y, qid)
    steps = QueryData(encoding.indicators(X), y, qid)
    objective = Objective(pair_weight=pair_weight)
    w = np.random.default_rng(2).normal(size=encoding.n_steps)
    coded = objective.loss_and_gradient(data, w, normalize=encoding)
    linear = objective.loss_and_gradient(steps, w)
    assert coded[0] == pytest.approx(linear[0], rel=1e-12)
    np.testing.assert_allclose(coded[1], linear[1], rtol=1e-10, atol=1e-12)
    # the scores are the step sums
    rows = data.rows(encoding)
    out = K.coded_scores_all(rows, w, np.zeros(encoding.n_steps + 4), np.zeros(data.n_rows))
    np.testing.assert_allclose(out, steps.X @ w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("threads", [1, 2])
def test_epochs_with_both_penalties_equal_the_linear_models(sparse, threads):
    X, y, qid = queries(3, sparse=sparse)
    encoding = StepEncoding.fit(X, 6)
    data = QueryData(X, y, qid)
    steps = QueryData(encoding.indicators(X), y, qid)
    sizes = np.diff(encoding.bins)
    penalty = L1Penalty(0.002, group=0.01, groups=encoding.bins, group_factors=np.sqrt(sizes))
    solver = Solver(Objective(), penalty, learning_rate=0.5, max_iter=30, n_jobs=threads)
    rng = np.random.default_rng(0)
    coded = solver.fit(data, SolverState(np.zeros(encoding.n_steps)), rng, normalize=encoding)
    rng = np.random.default_rng(0)
    linear = solver.fit(steps, SolverState(np.zeros(encoding.n_steps)), rng)
    np.testing.assert_allclose(coded.coef, linear.coef, rtol=1e-9, atol=1e-12)
    assert np.count_nonzero(coded.coef) > 0
    # every group is in or out as a whole or has zeros inside from the L1
    assert coded.history["loss"] == pytest.approx(linear.history["loss"], rel=1e-10)


def test_group_shrink_is_the_group_lasso_proximal_step():
    rng = np.random.default_rng(4)
    groups = np.array([0, 3, 4, 8], dtype=np.int64)
    factors = np.sqrt(np.diff(groups)).astype(float)
    for _ in range(50):
        v = rng.normal(size=8) * rng.uniform(0, 2)
        alpha = rng.uniform(0, 1)
        w = v.copy()
        K.group_shrink(w, groups, factors, alpha)
        for g in range(3):
            part, lo, hi = v[groups[g]:groups[g + 1]], groups[g], groups[g + 1]
            # the minimiser of |u - v|^2 / 2 + alpha * factor * |u|, by its optimality
            # conditions: u = 0 when |v| <= alpha * factor, else u = v (1 - t / |v|)
            norm = np.linalg.norm(part)
            expected = np.zeros_like(part) if norm <= alpha * factors[g] else \
                part * (1 - alpha * factors[g] / norm)
            np.testing.assert_allclose(w[lo:hi], expected, rtol=1e-12, atol=1e-15)
            if np.any(expected):  # and its objective beats nearby points
                def objective(u):
                    return 0.5 * np.sum((u - part) ** 2) + alpha * factors[g] * np.linalg.norm(u)
                for _ in range(5):
                    nearby = expected + rng.normal(size=len(part)) * 1e-3
                    assert objective(expected) <= objective(nearby) + 1e-15


def test_workspace_has_one_weight_per_step():
    X, y, qid = queries(5)
    encoding = StepEncoding.fit(X, 4)
    work = workspace(QueryData(X, y, qid), 1, encoding)
    assert work.partial.shape[1] == work.w_scaled.shape[0] == encoding.n_steps
    assert work.table.shape[0] == encoding.n_steps + X.shape[1]
