"""rsrank.learning.objective: preferences, pairs of rows with weights, learned from in place of the
pairs the labels order (what click logs train on)."""

import numpy as np
import pytest

from conftest import weights_and_view
from rsrank import QueryData, RSRank
from rsrank.evaluation.metrics import discount_values, gain_values
from rsrank.learning.objective import PAIR_CURVATURE, Objective


def label_preferences(y, qid, pair_weight, ndcg_k=None):
    """The pairs the labels order, as preferences weighing what the label
    objective gives them: with swap weights ``|g_i - g_j| d_1 / ideal DCG``
    (so that the preference factor ``1 / d_1`` restores it), else 1. By
    brute force over every pair of rows."""
    gains = gain_values(y, "exp2")
    better, worse, weight = [], [], []
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        ideal_gains = np.sort(gains[rows])[::-1][:ndcg_k]
        ideal = np.sum(ideal_gains / np.log2(np.arange(2, len(ideal_gains) + 2)))
        for i in rows:
            for j in rows:
                if y[i] > y[j]:
                    better.append(i)
                    worse.append(j)
                    weight.append(1.0 if pair_weight == "unit" else (gains[i] - gains[j]) / ideal)
    return np.array(better), np.array(worse), np.array(weight)


@pytest.mark.parametrize("pair_weight", ["delta_ndcg", "unit"])
@pytest.mark.parametrize("additive", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_label_pairs_as_preferences_give_the_label_objective(pair_weight, additive, seed):
    rng = np.random.default_rng(seed)
    sizes = [5, 9, 1, 12, 3]
    qid = rng.permutation(np.repeat([4, 1, 3, 2, 7], sizes))  # rows of a query apart
    X = rng.normal(size=(len(qid), 3))
    y = rng.integers(0, 4, len(qid))
    y[qid == 7] = 0  # a query without a pair
    w, view = weights_and_view(X, y, qid, rng, additive)
    labelled = QueryData(X, y, qid)
    preferred = QueryData(X, y, qid, preferences=label_preferences(y, qid, pair_weight))
    objective = Objective(pair_weight=pair_weight)
    loss, grad = objective.loss_and_gradient(preferred, w, view=view)
    expected_loss, expected_grad = objective.loss_and_gradient(labelled, w, view=view)
    np.testing.assert_allclose(loss, expected_loss, rtol=1e-10)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(objective.row_lambdas(preferred, w, view=view),
                               objective.row_lambdas(labelled, w, view=view), atol=1e-12)
    np.testing.assert_allclose(objective.hessian_diagonal(preferred, view=view),
                               objective.hessian_diagonal(labelled, view=view),
                               rtol=1e-10, atol=1e-12)
    assert preferred.n_mixed_queries == labelled.n_mixed_queries == 3
    # a subset keeps each query's own preferences
    part = [0, 2, 3]
    np.testing.assert_allclose(objective.loss_and_gradient(preferred.subset(part), w, view=view)[1],
                               objective.loss_and_gradient(labelled.subset(part), w, view=view)[1],
                               rtol=1e-10, atol=1e-12)


def test_a_fit_on_the_label_pairs_as_preferences_is_the_fit_on_the_labels():
    rng = np.random.default_rng(3)
    qid = np.repeat(np.arange(30), 8)
    X = rng.normal(size=(len(qid), 6))
    y = np.clip(np.round(X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=len(qid))), 0, 3).astype(int)
    for pair_weight in ("delta_ndcg", "unit"):
        model = RSRank(pair_weight=pair_weight, max_iter=20, random_state=0)
        on_labels = model.fit(QueryData(X, y, qid)).coef_.copy()
        on_preferences = model.fit(QueryData(
            X, y, qid, preferences=label_preferences(y, qid, pair_weight))).coef_
        np.testing.assert_allclose(on_preferences, on_labels, rtol=1e-7, atol=1e-9)


def test_bad_preferences_are_refused_with_what_is_wrong():
    X, y, qid = np.zeros((4, 1)), np.zeros(4, dtype=int), np.array([1, 1, 2, 2])
    cases = [((0, 1), "must be \\(better, worse, weight\\[, relevant\\]\\)"),
             (([0], [1], [1.0], [1], [1]), "must be \\(better, worse, weight"),
             (([0], [1], [1.0], [0]), "relevant must hold one integer >= 1 per pair"),
             (([0], [1], [1.0], [1.5]), "relevant must hold one integer >= 1 per pair"),
             (([0], [1], [1.0], [1, 2]), "relevant must hold one integer >= 1 per pair"),
             (([0], [1, 2], [1.0]), "same length"),
             (([0], [4], [1.0]), "worse must hold row numbers from 0 to 3"),
             (([0.5], [1], [1.0]), "better must hold row numbers"),
             (([0], [1], [-1.0]), "finite values >= 0"),
             (([0], [1], [np.nan]), "finite values >= 0"),
             (([1], [1], [1.0]), "pair 0 prefers row 1 to itself"),
             (([0, 1], [1, 2], [1.0, 1.0]), "pair 1 joins rows 1 and 2 of different queries")]
    for preferences, message in cases:
        with pytest.raises(ValueError, match=message):
            QueryData(X, y, qid, preferences=preferences)
    data = QueryData(X, y, qid, preferences=([0], [1], [2.0]))
    assert data.n_mixed_queries == 1
    assert data.fingerprint != QueryData(X, y, qid, preferences=([1], [0], [2.0])).fingerprint
    assert data.fingerprint != QueryData(X, y, qid, preferences=([0], [1], [2.0], [2])).fingerprint


@pytest.mark.parametrize("pair_weight", ["unit", "delta_ndcg"])
def test_the_curvature_of_dense_and_stored_rows_in_one_call_is_the_per_query_sum(pair_weight):
    import scipy.sparse as sp

    from rsrank import _kernels

    rng = np.random.default_rng(5)
    qid = np.repeat(np.arange(40), rng.integers(1, 12, 40))
    X = rng.normal(size=(len(qid), 6)).astype(np.float32)
    X[rng.random(X.shape) < 0.3] = 0.0
    y = rng.integers(0, 4, len(qid))
    y[qid == 3] = 2  # a query without a pair
    dense, stored = QueryData(X, y, qid), QueryData(sp.csr_matrix(X), y, qid)
    objective = Objective(pair_weight=pair_weight)
    gains = gain_values(y, "exp2")
    factors = objective.query_factors(dense)
    discount = discount_values(np.arange(1, 12), "log2")  # queries of at most 11 rows
    for scale in (None, rng.uniform(0.5, 2.0, 6)):
        one_call = objective.hessian_diagonal(dense, scale=scale)
        np.testing.assert_array_equal(one_call, objective.hessian_diagonal(stored, scale=scale))
        assert np.all(one_call > 0)
        per_query = np.zeros(6)  # row_curvature on each query's rows, one at a time
        for q in range(40):
            rows = np.flatnonzero(qid == q)
            values, level = np.unique(gains[rows], return_inverse=True)
            z = X[rows].astype(np.float64) * (1.0 if scale is None else scale)
            _kernels.row_curvature(z, level, values, discount[:len(rows)], factors[q],
                                   pair_weight == "unit", per_query)
        np.testing.assert_allclose(one_call, PAIR_CURVATURE["modified_huber"] * per_query / 40,
                                   rtol=1e-12)
    # with unit weights, by brute force over every pair of different gains
    if pair_weight == "unit":
        expected = np.zeros(6)
        for q in np.unique(qid):
            rows = np.flatnonzero(qid == q)
            for i in rows:
                for j in rows:
                    if gains[i] > gains[j]:
                        expected += (X[i].astype(float) - X[j]) ** 2
        np.testing.assert_allclose(objective.hessian_diagonal(dense),
                                   PAIR_CURVATURE["modified_huber"] * expected / 40, rtol=1e-9)


def _two_point_bound(objective, data, view, iterations=12):
    """The power method of the level steps' bound with every Hessian
    product from the gradients at two points along the direction."""
    from rsrank import _kernels

    bins = np.asarray(data.rows(view).bins, dtype=np.int64)
    curvature = objective.level_curvature(data, view=view)
    inverse = np.divide(1.0, curvature, out=np.zeros_like(curvature), where=curvature > 0)
    direction = np.random.default_rng(0).standard_normal(int(bins[-1]))
    largest = 0.0
    for _ in range(iterations):
        direction /= np.linalg.norm(direction)
        small = 1e-4 / max(1.0, float(np.abs(direction).sum()))
        far = objective.loss_and_gradient(data, 2 * small * direction, view=view)[1]
        near = objective.loss_and_gradient(data, small * direction, view=view)[1]
        moved = _kernels.level_moves((far - near) / (small * max(data.n_queries, 1)), bins,
                                     inverse)
        if np.linalg.norm(moved) == 0.0:
            break
        largest = max(largest, float(np.linalg.norm(moved)))
        direction = moved
    return largest


@pytest.mark.parametrize("pair_weight,ndcg_k", [("unit", None), ("unit", 5),
                                                 ("delta_ndcg", None), ("delta_ndcg", 5)])
def test_the_level_step_bound_is_the_two_point_power_method(pair_weight, ndcg_k):
    """Unit pair weights, which do not follow the ranking, take each product
    from the gradient at 0 and one point: the same estimate to rounding.
    Swap weights take two points along the direction, as the reference."""
    rng = np.random.default_rng(5)
    qid = np.repeat(np.arange(30), 20)
    data = QueryData(rng.normal(size=(600, 5)), rng.integers(0, 4, 600), qid)
    view = data.pair_encoding(16, [[0, 3], [1, 2]], 4)
    objective = Objective(pair_weight=pair_weight, ndcg_k=ndcg_k)
    expected = _two_point_bound(objective, data, view)
    got = objective.level_step_bound(data, view=view)
    assert expected > 0
    if pair_weight == "unit":
        assert got == pytest.approx(expected, rel=1e-8)
    else:
        assert got == expected


@pytest.mark.parametrize("additive", [False, True])
def test_the_loss_gradient_and_row_lambdas_are_the_same_on_any_threads(additive):
    """Inside a block that holds threads (a fit's, as its steps are set
    up) the passes share the queries out, and add them in the same order:
    the same loss, gradient and pair gradients bit for bit as one thread."""
    from rsrank.learning._threads import numba_threads

    rng = np.random.default_rng(8)
    qid = np.repeat(np.arange(50), rng.integers(1, 40, 50))
    data = QueryData(rng.normal(size=(len(qid), 6)), rng.integers(0, 5, len(qid)), qid)
    view = data.pair_encoding(32, [[0, 3]], 4) if additive else "none"
    w = rng.normal(size=int(data.rows(view).bins[-1]) if additive else 6)
    objective = Objective(ndcg_k=10)
    runs = []
    for n in (1, 2):
        with numba_threads(n):
            runs.append((*objective.loss_and_gradient(data, w, view=view),
                         objective.row_lambdas(data, w, view=view)))
    (loss, grad, lam), (loss2, grad2, lam2) = runs
    assert loss == loss2 and np.any(grad != 0)
    np.testing.assert_array_equal(grad, grad2)
    np.testing.assert_array_equal(lam, lam2)


def test_the_level_step_bound_over_moving_steps_reads_their_columns_alone():
    """Over the steps a fit can move, the power method holds the direction
    at zero elsewhere and reads the codes of their columns alone: the
    estimate of the same method on every column with the others masked,
    and with every step moving, the bound of them all."""
    from rsrank import _kernels

    rng = np.random.default_rng(6)
    qid = np.repeat(np.arange(30), 20)
    data = QueryData(rng.normal(size=(600, 5)), rng.integers(0, 4, 600), qid)
    view = data.pair_encoding(16, [[0, 3], [1, 2]], 4)
    objective = Objective(pair_weight="unit")
    bins = np.asarray(data.rows(view).bins, dtype=np.int64)
    column = np.repeat(np.arange(len(bins) - 1), np.diff(bins))
    steps = np.isin(column, [0, 3, 6])  # features 0 and 3, the second pair
    curvature = objective.level_curvature(data, view=view)
    inverse = np.divide(1.0, curvature, out=np.zeros_like(curvature), where=curvature > 0)
    direction = np.random.default_rng(0).standard_normal(len(steps)) * steps
    largest = 0.0
    zero = objective.loss_and_gradient(data, np.zeros(len(steps)), view=view)[1]
    for _ in range(12):
        direction /= np.linalg.norm(direction)
        small = 1e-4 / max(1.0, float(np.abs(direction).sum()))
        near = objective.loss_and_gradient(data, small * direction, view=view)[1]
        moved = _kernels.level_moves((near - zero) / (small * 30), bins, inverse) * steps
        largest = max(largest, float(np.linalg.norm(moved)))
        direction = moved
    got = objective.level_step_bound(data, view=view, steps=steps)
    assert got == pytest.approx(largest, rel=1e-8)
    assert got != pytest.approx(objective.level_step_bound(data, view=view), rel=1e-3)
    assert objective.level_step_bound(data, view=view, steps=np.ones(len(steps), bool)) == (
        objective.level_step_bound(data, view=view))
