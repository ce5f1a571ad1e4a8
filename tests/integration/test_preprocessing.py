"""Feature scaling: per-query and global, alone, inside RSRank and in pipelines."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
import scipy.sparse as sp
import sklearn
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler

from rsrank import RSRank
from rsrank.estimator import DivergenceWarning
from rsrank.evaluation.metrics import mean_ndcg
from rsrank.evaluation.model_selection import fit_search
from rsrank.learning.preprocessing import QueryScaler, global_scaling, query_normalize
from rsrank.reading.synthetic import make_raw_features


def queries(seed=0, n_queries=12, n_docs=15, n_features=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_queries * n_docs, n_features)) * [1, 10, 1e-3, 100] + [0, 5, 0, 50]
    X[:, 0] = np.round(X[:, 0])  # ties
    y = rng.integers(0, 3, size=len(X))
    qid = np.repeat(np.arange(n_queries), n_docs)
    order = rng.permutation(len(X))  # rows of a query need not be adjacent
    return X[order], y[order], qid[order]


def brute_force_query_normalize(X, qid, method):
    out = np.zeros_like(X, dtype=float)
    for q in np.unique(qid):
        rows = qid == q
        block = X[rows]
        for j in range(X.shape[1]):
            column = block[:, j]
            if method == "minmax":
                low, spread = column.min(), column.max() - column.min()
            else:
                low, spread = column.mean(), column.std()
            out[rows, j] = 0.0 if spread <= 1e-12 else (column - low) / spread
    return out


@pytest.mark.parametrize("method", ["minmax", "zscore"])
def test_query_normalize_matches_brute_force(method):
    X, _, qid = queries()
    X[qid == 3, 1] = 7.0  # constant within one query -> 0 there
    expected = brute_force_query_normalize(X, qid, method)
    np.testing.assert_allclose(query_normalize(X, qid, method), expected, atol=1e-12)
    np.testing.assert_allclose(query_normalize(sp.csr_matrix(X), qid, method), expected,
                               atol=1e-12)
    assert np.all(query_normalize(X, qid, method)[qid == 3, 1] == 0)


@pytest.mark.parametrize("method, reference", [("zscore", StandardScaler),
                                               ("minmax", MinMaxScaler)])
def test_global_scaling_matches_scikit_learn(method, reference):
    X, _, _ = queries()
    X[:, 3] = 2.5  # constant column: scale 1, as scikit-learn's scalers do
    fitted = reference().fit(X)
    offset, scale = global_scaling(X, method)
    expected = (fitted.mean_, fitted.scale_) if method == "zscore" else (
        fitted.data_min_, 1 / fitted.scale_)
    np.testing.assert_allclose(offset, expected[0], rtol=1e-12)
    np.testing.assert_allclose(scale, expected[1], rtol=1e-12)
    Xs = sp.csr_matrix(np.where(np.abs(X) < 0.5, 0.0, X))  # implicit zeros count
    sparse = global_scaling(Xs, method)
    dense = global_scaling(Xs.toarray(), method)
    np.testing.assert_allclose(sparse, dense, rtol=1e-12)


@pytest.mark.parametrize("normalize, scaler", [("zscore", StandardScaler),
                                               ("minmax", MinMaxScaler)])
def test_builtin_global_scaling_equals_a_scaler_pipeline(normalize, scaler):
    X, y, qid = queries()
    params = dict(learning_rate=0.05, l1=0.05, max_iter=5, random_state=0)
    model = RSRank(normalize=normalize, **params).fit(X, y, qid=qid)
    with sklearn.config_context(enable_metadata_routing=True):
        pipeline = make_pipeline(scaler(), RSRank(normalize="none", **params))
        pipeline.fit(X, y, qid=qid)
        np.testing.assert_allclose(model.coef_, pipeline[-1].coef_, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(model.predict(X), pipeline.predict(X), rtol=1e-9, atol=1e-9)
        assert pipeline.score(X, y, qid=qid) == pytest.approx(model.score(X, y, qid=qid))
    weights, constant = model.linear_function()
    np.testing.assert_allclose(model.predict(X), X @ weights + constant, rtol=1e-12)
    sparse = RSRank(normalize=normalize, **params).fit(sp.csr_matrix(X), y, qid=qid)
    np.testing.assert_allclose(sparse.coef_, model.coef_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("method", ["minmax", "zscore"])
def test_query_scaler_pipeline_equals_builtin_query_normalization(method):
    X, y, qid = queries()
    params = dict(learning_rate=0.05, max_iter=4, random_state=0)
    model = RSRank(normalize=f"query-{method}", **params).fit(X, y, qid=qid)
    with sklearn.config_context(enable_metadata_routing=True):
        pipeline = make_pipeline(QueryScaler(method), RSRank(normalize="none", **params))
        pipeline.fit(X, y, qid=qid)
        np.testing.assert_allclose(pipeline.predict(X, qid=qid), model.predict(X, qid=qid),
                                   rtol=1e-10, atol=1e-12)
        assert pipeline.score(X, y, qid=qid) == pytest.approx(model.score(X, y, qid=qid))
    with pytest.raises(ValueError, match="pass qid"):
        model.predict(X)
    with pytest.raises(ValueError, match="no function of one document"):
        model.linear_function()


def test_query_scaler_without_qid_says_how_to_route_it():
    X, y, qid = queries()
    with pytest.raises(ValueError, match="enable metadata routing"):
        QueryScaler().fit(X).transform(X)


@pytest.mark.parametrize("scaler", [StandardScaler, MinMaxScaler, QueryScaler])
def test_pipelines_in_grid_search_give_finite_scores(scaler):
    X, y, qid = queries(n_queries=20)
    search = GridSearchCV(make_pipeline(scaler(), RSRank(normalize="none", max_iter=3)),
                          {"rsrank__l1": [0.0, 0.1]}, cv=GroupKFold(3), error_score="raise")
    fit_search(search, X, y, qid)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    assert 0 < search.best_score_ <= 1


def test_a_diverging_stream_names_its_widest_features_too():
    train = make_raw_features(120, random_state=0)
    queries_of = np.unique(train.qid)
    blocks = [np.isin(train.qid, part) for part in np.array_split(queries_of, 3)]
    chunks = lambda: ((train.X[rows], train.y[rows], train.qid[rows]) for rows in blocks)  # noqa: E731
    with pytest.warns(DivergenceWarning, match=r"widest features: f\d+ in \[.*"
                      r"normalize='zscore'"):
        RSRank(normalize="none", learning_rate=1e-2, random_state=0,
               max_iter=100).fit_chunks(chunks)
    # the default step is the curvature of all the blocks, which this descent does not overshoot
    with warnings.catch_warnings():
        warnings.simplefilter("error", DivergenceWarning)
        RSRank(normalize="none", random_state=0, max_iter=100).fit_chunks(chunks)


def test_raw_features_diverge_with_a_warning_and_default_scaling_fixes_them():
    train, test = make_raw_features(120, random_state=0), make_raw_features(60, random_state=1)
    single = max(max(mean_ndcg(test.y, s * test.X[:, j], test.qid, 10) for s in (1, -1))
                 for j in range(test.X.shape[1]))
    with pytest.warns(DivergenceWarning, match=r"widest features: doc_length in \[.*"
                      r"normalize='zscore'"):
        import pandas as pd

        frame = pd.DataFrame(train.X, columns=train.feature_names)
        RSRank(normalize="none", learning_rate=1e-2, random_state=0, max_iter=100).fit(
            frame, train.y, qid=train.qid)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DivergenceWarning)
        model = RSRank(random_state=0, max_iter=30).fit(train.X, train.y, qid=train.qid)
        # the default step, from the data's curvature, does not overshoot even unscaled
        RSRank(normalize="none", random_state=0, max_iter=100).fit(frame, train.y,
                                                                   qid=train.qid)
    assert model.score(test.X, test.y, qid=test.qid) > single + 0.03


def test_the_divergence_advice_names_the_cause_that_applies():
    # features alike in range (all in [0, 1]): the step, not the widest features
    rng = np.random.default_rng(0)
    X, y, qid = rng.uniform(size=(180, 6)), rng.integers(0, 3, 180), np.repeat(np.arange(12), 15)
    with pytest.warns(DivergenceWarning) as caught:
        RSRank(learning_rate=1e3, normalize="none", max_iter=5, random_state=0).fit(
            X, y, qid=qid)
    message = str(caught[0].message)
    assert "ranges are alike" in message and "learning_rate='curvature'" in message
    assert "widest" not in message
    with pytest.warns(DivergenceWarning) as caught:  # scaled by the model: the step too
        RSRank(learning_rate=1e3, max_iter=5, random_state=0).fit(
            X * [1e4, 1, 1, 1, 1, 1], y, qid=qid)
    assert "widest" not in str(caught[0].message)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_column_moments_match_numpy_on_dense_and_csr(dtype):
    from rsrank.learning.preprocessing import column_moments, column_sums, combine_moments

    rng = np.random.default_rng(4)
    X = (rng.normal(scale=50, size=(300, 6)) * (rng.uniform(size=(300, 6)) < 0.4)).astype(dtype)
    X[:, 2] = 0  # an all-zero column
    X[:, 3] = np.abs(X[:, 3]) + 1  # a column without zeros
    reference = X.astype(np.float64)
    expected = (300, reference.sum(0), (reference ** 2).sum(0), reference.min(0),
                reference.max(0))
    for matrix in (X, sp.csr_matrix(X)):
        got = column_moments(matrix)
        assert got[0] == 300
        for a, b in zip(got[1:], expected[1:]):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        sums = column_sums(matrix)  # the first three, in the same order: the same bits
        assert len(sums) == 3 and sums[0] == 300
        for a, b in zip(sums[1:], got[1:3]):
            np.testing.assert_array_equal(a, b)
    # blocks of rows combine to the whole, the sums as the moments
    halves = combine_moments(column_moments(sp.csr_matrix(X[:120])), column_moments(X[120:]))
    for a, b in zip(halves[1:], expected[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    halves = combine_moments(column_sums(sp.csr_matrix(X[:120])), column_sums(X[120:]))
    assert len(halves) == 3 and halves[0] == 300
    for a, b in zip(halves[1:], expected[1:3]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 11), st.integers(1, 5), st.integers(0, 2 ** 32 - 1),
       st.sampled_from([np.float32, np.float64]))
def test_dense_column_moments_equal_numpy_whatever_the_rows_and_nans(rows, width, seed, dtype):
    """Any number of rows (the four-row blocks and the rest), with NaNs
    anywhere: sums as NumPy's (NaN where a NaN is), the smallest and largest
    of the other values (infinite where there are none); the pass without
    the extremes gives the same sums bit for bit."""
    from rsrank.learning.preprocessing import column_moments, column_sums

    rng = np.random.default_rng(seed)
    X = rng.normal(scale=10, size=(rows, width)).astype(dtype)
    X[rng.uniform(size=X.shape) < 0.2] = np.nan
    _, total, squares, low, high = column_moments(X)
    reference = X.astype(np.float64)
    np.testing.assert_allclose(total, reference.sum(0), rtol=1e-12)
    np.testing.assert_allclose(squares, (reference ** 2).sum(0), rtol=1e-12)
    finite = ~np.isnan(reference)
    np.testing.assert_array_equal(low, np.where(finite, reference, np.inf).min(0))
    np.testing.assert_array_equal(high, np.where(finite, reference, -np.inf).max(0))
    count, alone, alone_squares = column_sums(X)
    assert count == rows
    np.testing.assert_array_equal(alone, total)
    np.testing.assert_array_equal(alone_squares, squares)
