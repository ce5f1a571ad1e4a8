"""The step size from the data (learning_rate="curvature") and the path
recipe rsrank train runs by default."""

import numpy as np
import pytest
import scipy.sparse as sp

from rsrank import QueryData, RSRank, load_letor_fold
from rsrank.learning.binning import PairEncoding, StepEncoding
from rsrank.estimator import CURVATURE_STEP
from rsrank.evaluation.experiments import run_letor_folds
from rsrank.evaluation.metrics import discount_values, gain_values, mean_ndcg
from rsrank.learning.objective import PAIR_CURVATURE, Objective


def brute_force_diagonal(X, y, qid, scale, pair_weight, ndcg_k, pair_loss):
    """c / Q * sum_q sum_{i<j, y_i != y_j} W_ij (z_i - z_j)^2 per column,
    pair by pair, ranks by row order (the all-zero model's ties)."""
    Z = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=float) * scale
    queries = list(dict.fromkeys(qid.tolist()))
    total = 0.0
    for q in queries:
        rows = np.flatnonzero(qid == q)
        gains = gain_values(y[rows].astype(float), "exp2")
        n = len(rows)
        cutoff = n if ndcg_k is None else min(ndcg_k, n)
        discount = np.zeros(n)
        discount[:cutoff] = discount_values(np.arange(1, cutoff + 1), "log2")
        ideal = np.sort(gains)[::-1] @ discount
        for a in range(n):
            for b in range(a + 1, n):
                if y[rows[a]] == y[rows[b]]:
                    continue
                if pair_weight == "unit":
                    weight = 1.0
                elif ideal == 0:
                    continue
                else:
                    weight = abs(gains[a] - gains[b]) * abs(discount[a] - discount[b]) / ideal
                diff = Z[rows[a]] - Z[rows[b]]
                total = total + weight * diff * diff
    return PAIR_CURVATURE[pair_loss] * total / len(queries)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("pair_weight", ["delta_ndcg", "unit"])
@pytest.mark.parametrize("ndcg_k", [None, 3])
def test_curvature_is_the_trace_summed_pair_by_pair(seed, pair_weight, ndcg_k):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 12, 6)
    qid = np.repeat(rng.permutation(100)[:6], sizes)  # qids in any order, one-row queries too
    X = rng.normal(size=(len(qid), 5)) * rng.choice([0.0, 1.0], size=(len(qid), 5), p=[.3, .7])
    y = rng.integers(0, 4, len(qid))
    scale = rng.uniform(0.5, 2.0, 5)
    loss = ["modified_huber", "logistic"][seed % 2]
    expected = brute_force_diagonal(X, y, qid, scale, pair_weight, ndcg_k, loss)
    support = rng.random(5) < 0.5
    for matrix in (X, sp.csr_matrix(X)):
        objective = Objective(pair_weight=pair_weight, ndcg_k=ndcg_k, pair_loss=loss)
        data = QueryData(matrix, y, qid)
        assert objective.hessian_diagonal(data, scale=scale) == pytest.approx(expected,
                                                                              rel=1e-10)
        assert objective.curvature(data, scale=scale) == pytest.approx(expected.sum(), rel=1e-10)
        assert objective.curvature(data, scale=scale, support=support) == pytest.approx(
            expected[support].sum(), rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("pair_weight", ["delta_ndcg", "unit"])
@pytest.mark.parametrize("paired", [False, True])
def test_the_curvature_of_steps_is_that_of_their_0_1_columns(seed, pair_weight, paired):
    # an additive model's steps (and a pair's cells) are a linear model on the
    # 0/1 indicators [x > t]; the kernel sums them without building them
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 15, 7)
    qid = np.repeat(np.arange(7), sizes)
    X = np.round(rng.normal(size=(len(qid), 4)), 1)
    X[rng.random(X.shape) < 0.15] = np.nan  # a missing value's bin
    X[:, 3] *= rng.random(len(qid)) < 0.5  # a feature mostly 0
    y = rng.integers(0, 3, len(qid))
    encoding = (PairEncoding.fit(X, [(0, 1), (2, 3)], max_bins=6, pair_bins=3) if paired
                else StepEncoding.fit(X, max_bins=6))
    scale = rng.uniform(0.5, 2.0, encoding.n_steps)
    expected = brute_force_diagonal(encoding.indicators(X), y, qid, scale, pair_weight, 5,
                                    "modified_huber")
    for matrix in (X, sp.csr_matrix(np.nan_to_num(X, nan=0.0) + 0.0 * X)):
        objective = Objective(pair_weight=pair_weight, ndcg_k=5)
        diagonal = objective.hessian_diagonal(QueryData(matrix, y, qid), view=encoding,
                                              scale=scale)
        assert diagonal == pytest.approx(expected, rel=1e-10, abs=1e-14)


@pytest.mark.parametrize("seed", range(3))
def test_step_curvature_equals_the_pair_sum_on_long_queries_of_many_steps(seed):
    # the kernel alone, swap weights, against the pairs of 0/1 columns
    # [code > b]: 80 rows on five levels, features of 1 to 40 steps, codes
    # past a feature's last step (all its columns 1), a discount cut at 10
    from rsrank._kernels import step_curvature

    rng = np.random.default_rng(seed)
    n, widths = 80, np.array([1, 2, 7, 40, 13])
    bins = np.r_[0, np.cumsum(widths)].astype(np.int64)
    codes = np.stack([rng.integers(0, w + 3, n) for w in widths], axis=1).astype(np.uint8)
    level = rng.integers(0, 5, n)
    gains = np.array([0.0, 1.0, 3.0, 7.0, 15.0])
    discount = np.zeros(n)
    discount[:10] = 1.0 / np.log2(np.arange(2, 12))
    out = np.zeros(bins[-1])
    step_curvature(codes, bins, level, gains, discount, 0.25, False, out)
    expected = np.zeros(bins[-1])
    columns = np.concatenate([(codes[:, [j]] > np.arange(w)) for j, w in enumerate(widths)],
                             axis=1).astype(float)
    for i in range(n):
        for j in range(i + 1, n):
            weight = 0.25 * abs(gains[level[i]] - gains[level[j]]) * (discount[i] - discount[j])
            expected += weight * (columns[i] - columns[j]) ** 2
    assert out == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_the_curvature_step_is_two_over_the_trace_of_the_scaled_features():
    rng = np.random.default_rng(0)
    qid = np.repeat(np.arange(30), 10)
    X = rng.normal(size=(300, 4)) * [1.0, 10.0, 1e3, 1e-3]
    y = (X[:, 0] + X[:, 1] / 10 + rng.normal(size=300) > 0.5).astype(int)
    for normalize in ("zscore", "none"):
        model = RSRank(learning_rate="curvature", normalize=normalize, max_iter=50,
                       restore_best=False).fit(X, y, qid=qid)
        data = QueryData(X, y, qid)
        scale = None if normalize == "none" else 1 / X.std(axis=0)
        trace = Objective().curvature(data, scale=scale)
        assert model.learning_rate_ == pytest.approx(CURVATURE_STEP / trace, rel=1e-9)
    # on scaled features the full-batch loss goes down from the first epoch on
    losses = RSRank(learning_rate="curvature", max_iter=50, restore_best=False).fit(
        X, y, qid=qid).history_["loss"]
    assert np.all(np.diff(losses[:5]) < 0) and losses[-1] < 0.5 * losses[0]


def test_a_path_starts_each_point_from_the_stronger_one(bundled_root):
    estimator = RSRank(learning_rate="curvature", max_iter=20, restore_best=False, n_jobs=1)
    grid = {"l1_ratio": [0.2, 0.05]}
    run = run_letor_folds(bundled_root, estimator, grid, folds=[1], path=True).folds[0]
    cold = run_letor_folds(bundled_root, estimator, grid, folds=[1]).folds[0]
    assert run.grid[0] == cold.grid[0]  # the first point starts from zero either way
    fold = load_letor_fold(bundled_root, 1)
    first = RSRank(**{**estimator.get_params(), "l1": run.grid[0]["params"]["l1"]}).fit(
        *fold.train[:2], qid=fold.train[2])
    second = RSRank(**{**estimator.get_params(), "l1": run.grid[1]["params"]["l1"]}).fit(
        *fold.train[:2], qid=fold.train[2], coef_init=first.coef_)
    assert run.grid[1]["n_nonzero"] == np.count_nonzero(second.coef_)
    vali = mean_ndcg(fold.vali[1], second.predict(fold.vali[0]), fold.vali[2], 10,
                     convention="letor")
    assert run.grid[1]["vali_score"] == pytest.approx(vali, rel=1e-12)
