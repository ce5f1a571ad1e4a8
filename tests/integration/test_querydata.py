"""The query data built once: its order, groups, moments and subsets, and
that one fold of ``rsrank train`` parses, validates and groups each split
once."""


import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import weights_and_view
from rsrank import QueryData, RSRank
from rsrank.evaluation import metrics as M
from rsrank.reading._queries import QueryGroups
from rsrank.learning.objective import Objective
from rsrank.learning.preprocessing import column_moments


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=40), st.integers(0, 2**31 - 1),
       st.booleans())
def test_rows_in_query_order_keep_their_input_order_and_map_back(qids, seed, sparse):
    rng = np.random.default_rng(seed)
    qid = np.asarray(qids)
    X = rng.normal(size=(len(qid), 3))
    X[X < 0] = 0.0
    y = rng.integers(0, 3, len(qid))
    data = QueryData(sp.csr_matrix(X) if sparse else X, y, qid)
    stored = data.X.toarray() if sparse else data.X
    # query by increasing qid, rows of a query in input order
    expected = np.argsort(qid, kind="stable")
    np.testing.assert_array_equal(data.order, expected)
    np.testing.assert_array_equal(stored, X[expected])
    np.testing.assert_array_equal(data.y, y[expected])
    np.testing.assert_array_equal(data.qids, np.unique(qid))
    np.testing.assert_array_equal(data.sizes, [np.sum(qid == q) for q in np.unique(qid)])
    np.testing.assert_array_equal(data.in_input_order(np.arange(data.n_rows)[data.order]),
                                  np.arange(data.n_rows)[expected][np.argsort(expected)])
    np.testing.assert_array_equal(data.in_input_order(data.y), y)
    # the stored rows' own grouping: in their order, at the queries' offsets
    # (shared with the order back to the input when that is the identity)
    np.testing.assert_array_equal(data.groups.order, np.arange(data.n_rows))
    np.testing.assert_array_equal(data.groups.offsets, np.r_[0, np.cumsum(data.sizes)])
    np.testing.assert_array_equal(data.groups.qids, data.qids)
    # the sums and the moments are those of the input
    for got, want in zip(data.moments[1:], column_moments(X)[1:]):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert len(data.sums) == 3 and data.sums[0] == len(qid)
    for got, want in zip(data.sums[1:], column_moments(X)[1:3]):
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("value, message", [(np.nan, None), (np.inf, "infinity"),
                                            (-np.inf, "infinity")])
def test_validation_finds_every_non_finite_value_in_the_moments_pass(dtype, sparse, value,
                                                                     message):
    """Infinite values are refused; NaN is a missing value, found in the same
    pass (the model kinds take or refuse it)."""
    rng = np.random.default_rng(0)
    y, qid = rng.integers(0, 3, 40), np.repeat(np.arange(4), 10)
    for row, column in [(0, 0), (39, 4), (17, 2)]:
        X = rng.uniform(size=(40, 5)).astype(dtype)
        X[row, column] = value
        X = sp.csr_matrix(X) if sparse else X
        if message is None:
            np.testing.assert_array_equal(QueryData(X, y, qid).missing_features, [column])
            continue
        with pytest.raises(ValueError, match=message):
            QueryData(X, y, qid)
    # huge finite values overflow the sum of squares, not the check
    X = rng.uniform(size=(40, 5)) * 1e200
    data = QueryData(sp.csr_matrix(X) if sparse else X, y, qid)
    assert data.moments[0] == 40 and not np.all(np.isfinite(data.moments[2]))


def test_dtypes_are_kept_and_bad_input_is_refused():
    X = np.arange(12, dtype=np.float32).reshape(6, 2)
    y, qid = np.array([0, 1, 2, 0, 1, 0]), np.array([3, 3, 1, 1, 2, 2])
    assert QueryData(X, y, qid).X.dtype == np.float32
    assert sp.issparse(QueryData(sp.csr_matrix(X), y, qid).X)
    assert not sp.issparse(QueryData(X.astype(np.float64), y, qid).X)
    bad = X.copy()
    bad[2, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        QueryData(bad, y, qid)
    with pytest.raises(ValueError, match="non-negative"):
        QueryData(X, -y - 1, qid)
    with pytest.raises(ValueError, match="one label per row"):
        QueryData(X, y[:3], qid)
    with pytest.raises(ValueError, match="qid has 2 entries"):
        QueryData(X, y, qid[:2])
    with pytest.raises(ValueError, match="3 feature names for 2 features"):
        QueryData(X, y, qid, feature_names=["a", "b", "c"])


def test_subset_equals_building_from_the_subset_rows():
    rng = np.random.default_rng(1)
    qid = rng.permutation(np.repeat(np.arange(10) * 7, 5))
    X, y = rng.normal(size=(50, 3)), rng.integers(0, 3, 50)
    data = QueryData(X, y, qid)
    part = data.subset([7, 2, 4])
    rows = np.isin(qid, data.qids[[2, 4, 7]])
    direct = QueryData(X[rows], y[rows], qid[rows])
    np.testing.assert_array_equal(part.X, direct.X)
    np.testing.assert_array_equal(part.y, direct.y)
    np.testing.assert_array_equal(part.offsets, direct.offsets)
    np.testing.assert_array_equal(part.order, np.flatnonzero(rows)[direct.order])


def test_fit_on_query_data_equals_fit_on_arrays_and_reuses_its_preparation():
    rng = np.random.default_rng(2)
    qid = rng.permutation(np.repeat(np.arange(12), 9))
    X, y = rng.normal(size=(108, 4)) * [1, 50, 0.01, 3], rng.integers(0, 3, 108)
    Xv, yv, qv = X[:30] + 0.1, y[:30], qid[:30]
    data, vali = QueryData(X, y, qid), QueryData(Xv, yv, qv)
    for params in (dict(), dict(batch_size=1, l1=0.2, random_state=0, normalize="minmax")):
        plain = RSRank(max_iter=8, **params).fit(X, y, qid=qid, eval_set=(Xv, yv, qv))
        built = RSRank(max_iter=8, **params).fit(data, eval_set=vali)
        # (to rounding: the vectorised dot products may sum in another order
        # in arrays aligned differently)
        np.testing.assert_allclose(built.coef_, plain.coef_, rtol=1e-12, atol=1e-16)
        np.testing.assert_allclose(built.history_["val_ndcg"], plain.history_["val_ndcg"],
                                   rtol=1e-12)
        np.testing.assert_allclose(built.predict(vali), plain.predict(Xv), rtol=1e-12,
                                   atol=1e-15)
        assert built.score(vali) == pytest.approx(plain.score(Xv, yv, qid=qv), abs=1e-12)
    # the objective's arrays were made once per objective, and kept
    kept = [key for key in data._memo if isinstance(key, tuple) and key[0] == "pairs"]
    assert len(kept) == 1
    assert Objective().pairs(data) is Objective().pairs(data)
    # metrics take the data's groups as they are
    scores = RSRank(max_iter=3).fit(data).predict(data)
    assert M.mean_ndcg(data.y, scores[data.order], data.groups, 5) == pytest.approx(
        M.mean_ndcg(y, scores, qid, 5), abs=1e-15)
    assert isinstance(data.groups, QueryGroups)


@pytest.mark.parametrize("params", [
    {}, {"normalize": "none"}, {"normalize": "query-minmax"}, {"pair_weight": "unit"},
    {"ndcg_k": 3, "gain": "linear"}, {"pair_loss": "logistic", "discount": "zipf"},
    {"average": True, "l1": 0.5}])
@pytest.mark.parametrize("sparse", [False, True])
def test_a_full_batch_first_epoch_loss_is_the_all_zero_models(params, sparse):
    # the divergence watch takes its reference from that epoch instead of a pass of its own
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 6)) * [1, 10, 100, 0.1, 1, 5]
    X[rng.uniform(size=X.shape) < 0.3] = 0
    y, qid = rng.integers(0, 4, 120), np.repeat(np.arange(12), 10)
    data = QueryData(sp.csr_matrix(X) if sparse else X, y, qid)
    model = RSRank(max_iter=2, **params).fit(data)
    assert model.history_["loss"][0] == pytest.approx(
        model.solver().objective.zero_model_loss(data), rel=1e-12)


def _copies(X, y, qid, counts):
    """Each query of ``(X, y, qid)`` repeated ``counts[q]`` times under new ids."""
    rows, new_qid = [], []
    for q, count in zip(np.unique(qid), counts):
        for copy in range(count):
            index = np.flatnonzero(qid == q)
            rows.append(index)
            new_qid.append(np.full(len(index), 1000 * q + copy))
    rows = np.concatenate(rows)
    return X[rows], y[rows], np.concatenate(new_qid)


@pytest.mark.parametrize("pair_weight", ["delta_ndcg", "unit"])
@pytest.mark.parametrize("additive", [False, True])
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**16),
       counts=st.lists(st.integers(0, 3), min_size=4, max_size=4).filter(any))
def test_a_query_weighted_k_counts_as_k_copies_of_it(pair_weight, additive, seed, counts):
    rng = np.random.default_rng(seed)
    qid = np.repeat([1, 2, 3, 4], [5, 9, 1, 12])
    X = rng.normal(size=(len(qid), 3))
    y = rng.integers(0, 4, len(qid))
    w, view = weights_and_view(X, y, qid, rng, additive)
    weighted = QueryData(X, y, qid, query_weight=np.repeat(counts, [5, 9, 1, 12]).astype(float))
    copied = QueryData(*_copies(X, y, qid, counts))
    objective = Objective(pair_weight=pair_weight)
    loss, grad = objective.loss_and_gradient(weighted, w, view=view)
    expected_loss, expected_grad = objective.loss_and_gradient(copied, w, view=view)
    np.testing.assert_allclose(loss, expected_loss, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grad, expected_grad, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        objective.hessian_diagonal(weighted, view=view) * weighted.n_queries,
        objective.hessian_diagonal(copied, view=view) * copied.n_queries, rtol=1e-10, atol=1e-12)


def test_query_weights_weigh_the_validation_mean_and_survive_subsets():
    rng = np.random.default_rng(0)
    qid = np.repeat([1, 2, 3], [4, 6, 5])
    X, y = rng.normal(size=(15, 2)), rng.integers(0, 3, 15)
    weights = np.repeat([1.0, 3.0, 0.5], [4, 6, 5])
    data = QueryData(X, y, qid, query_weight=weights)
    np.testing.assert_array_equal(data.query_weights, [1.0, 3.0, 0.5])
    np.testing.assert_array_equal(data.subset([0, 2]).query_weights, [1.0, 0.5])
    assert data.fingerprint != QueryData(X, y, qid).fingerprint
    per_query = M.ndcg_per_query(y, X[:, 0], qid, 10)
    expected = np.average(per_query[~np.isnan(per_query)],
                          weights=np.array([1.0, 3.0, 0.5])[~np.isnan(per_query)])
    assert M.nanmean(per_query, data.query_weights) == pytest.approx(expected)
    assert M.nanmean(M.weighted_values(per_query, data.query_weights)) == pytest.approx(expected)
    with pytest.raises(ValueError, match="differs within a query"):
        QueryData(X, y, qid, query_weight=np.arange(15.0))
    with pytest.raises(ValueError, match="finite values >= 0"):
        QueryData(X, y, qid, query_weight=-weights)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(-3, 3), st.sampled_from([0.0, -0.0, 1.5, 2.0])),
                max_size=30), st.booleans())
def test_grouping_equals_a_stable_sort_in_query_order_or_not(values, in_order):
    # rows already in query order skip the sort, which would keep them as they are
    from rsrank.reading._queries import group_queries

    qid = np.array(sorted(values) if in_order else values, dtype=np.float64)
    groups = group_queries(qid)
    order = np.argsort(qid, kind="stable")
    np.testing.assert_array_equal(groups.order, order)
    starts = [i for i in range(len(qid)) if i == 0 or qid[order][i] != qid[order][i - 1]]
    np.testing.assert_array_equal(groups.offsets, starts + [len(qid)])
    np.testing.assert_array_equal(groups.qids, qid[order][starts])
    ints = group_queries(qid.astype(np.int64))
    np.testing.assert_array_equal(ints.order, np.argsort(qid.astype(np.int64), kind="stable"))


@pytest.mark.parametrize("indices, indptr, problem", [
    ([0, -1, 1], [0, 1, 2, 3], "indices must be >= 0"),
    ([0, 5, 1], [0, 1, 2, 3], "indices must be < 3"),
    ([0, 1, 1], [0, 2, 1, 3], "indptr must be a non-decreasing sequence")])
def test_a_malformed_sparse_matrix_is_refused_before_a_kernel_reads_it(indices, indptr, problem):
    # the kernels index with a CSR matrix's indices as they are: a bad one would
    # read or write outside the arrays, so every way in checks them first
    from rsrank.learning.preprocessing import QueryScaler, query_normalize

    bad = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array(indices, dtype=np.int32),
                         np.array(indptr)), shape=(3, 3))
    y, qid = np.array([0, 1, 2]), np.zeros(3)
    model = RSRank(max_iter=2).fit(sp.csr_matrix(np.eye(3)), y, qid=qid)
    for attempt in (lambda: QueryData(bad, y, qid), lambda: RSRank(max_iter=2).fit(bad, y, qid=qid),
                    lambda: model.predict(bad), lambda: query_normalize(bad, qid),
                    lambda: QueryScaler().fit(np.eye(3)).transform(bad, qid=qid)):
        with pytest.raises(ValueError, match=f"not a valid sparse matrix \\({problem}\\)") as error:
            attempt()
        assert "\n" not in str(error.value)
