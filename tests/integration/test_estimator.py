import json
import re

import numpy as np
import pytest
import scipy.sparse as sp

from rsrank import RSRank, load_letor_fold
from rsrank.evaluation import metrics as M


def toy_queries(n_queries=12, n_docs=15, n_features=6, seed=0):
    rng = np.random.default_rng(seed)
    w = np.zeros(n_features)
    w[:2] = [2.0, -1.0]
    X = rng.uniform(size=(n_queries * n_docs, n_features))
    latent = X @ w + 0.3 * rng.normal(size=len(X))
    y = np.digitize(latent, np.quantile(latent, [0.6, 0.85]))
    qid = np.repeat(np.arange(n_queries), n_docs)
    return X, y, qid


# -- the update rule against an independent NumPy implementation ---------------

def reference_epoch(X, y, qid, w, lr, l1, period, theta, batch_size, cumulative=False,
                    power_t=0.0):
    """RSRank in plain NumPy: swap weights by actually swapping two documents
    and recomputing NDCG with rsrank.evaluation.metrics, queries in qid order. With
    ``cumulative``, L1 as written in Tsuruoka et al. (2009), Figure 2. Step
    ``t`` (from 1) has step size ``lr / t ** power_t``; a truncation shrinks
    by ``l1`` times the step sizes of the steps since the last one."""
    w = w.copy()
    step = 0
    u, paid = 0.0, np.zeros_like(w)
    owed = 0.0
    queries = np.unique(qid)
    for start in range(0, len(queries), batch_size):
        grad = np.zeros_like(w)
        batch = queries[start:start + batch_size]
        for q in batch:
            rows = np.flatnonzero(qid == q)
            Xq, yq = X[rows], y[rows]
            s = Xq @ w
            base = M.ndcg(yq, s)
            lam = np.zeros(len(rows))
            for i in range(len(rows)):
                for j in range(len(rows)):
                    if yq[i] > yq[j]:
                        swapped = s.copy()
                        swapped[[i, j]] = swapped[[j, i]]
                        weight = abs(M.ndcg(yq, swapped) - base)
                        v = s[i] - s[j]
                        d = 0.0 if v >= 1 else -2 * (1 - v) if v >= -1 else -4.0
                        lam[i] += weight * d
                        lam[j] -= weight * d
            grad += Xq.T @ lam
        step += 1
        eta = lr / step ** power_t
        w -= eta * grad / len(batch)
        owed += eta * l1
        if cumulative:
            u += eta * l1
            if step % period == 0:
                for j, z in enumerate(w.copy()):
                    if z > 0:
                        w[j] = max(0.0, z - (u + paid[j]))
                    elif z < 0:
                        w[j] = min(0.0, z + (u - paid[j]))
                    paid[j] += w[j] - z
        elif l1 > 0 and step % period == 0:
            small = np.abs(w) <= theta
            w[small] = np.sign(w[small]) * np.maximum(np.abs(w[small]) - owed, 0)
        if step % period == 0:
            owed = 0.0
    return w


@pytest.mark.parametrize("l1, period, theta, batch_size, power_t", [
    (0.0, 1, np.inf, 1, 0.0),      # plain SGD
    (0.5, 1, np.inf, 1, 0.0),      # soft-thresholding every step
    (2.0, 2, 0.05, 3, 0.0),        # truncation every 2 steps, only small weights
    (0.5, 1, np.inf, 1, 0.5),      # a 1/sqrt(t) step size, and penalty
    (0.3, 3, np.inf, 1, 0.7),      # a period's penalty sums its steps' sizes
])
def test_epoch_matches_numpy_reference(l1, period, theta, batch_size, power_t):
    X, y, qid = toy_queries(n_queries=7, n_docs=9, n_features=5, seed=1)
    w0 = np.random.default_rng(2).normal(scale=0.1, size=5)  # distinct scores
    model = RSRank(learning_rate=0.05, normalize="none", l1=l1, truncation_period=period,
                   truncation_threshold=theta, batch_size=batch_size, max_iter=1,
                   shuffle=False, power_t=power_t).fit(X, y, qid=qid, coef_init=w0)
    expected = reference_epoch(X, y, qid, w0, 0.05, l1, period, theta, batch_size,
                               power_t=power_t)
    np.testing.assert_allclose(model.coef_, expected, rtol=1e-10, atol=1e-14)


# (the reference's swap-by-recomputing gives tied scores zero weight, so the
# cases keep at least one weight non-zero at every step)
@pytest.mark.parametrize("l1, period, batch_size, n_zero", [(0.5, 1, 1, 1), (1.5, 2, 3, 0),
                                                            (1.0, 1, 2, 3)])
def test_cumulative_penalty_matches_numpy_reference(l1, period, batch_size, n_zero):
    X, y, qid = toy_queries(n_queries=7, n_docs=9, n_features=5, seed=1)
    w0 = np.random.default_rng(2).normal(scale=0.1, size=5)
    model = RSRank(learning_rate=0.05, normalize="none", l1=l1, l1_method="cumulative",
                   truncation_period=period, batch_size=batch_size, max_iter=1,
                   shuffle=False).fit(X, y, qid=qid, coef_init=w0)
    expected = reference_epoch(X, y, qid, w0, 0.05, l1, period, np.inf, batch_size,
                               cumulative=True)
    np.testing.assert_allclose(model.coef_, expected, rtol=1e-10, atol=1e-14)
    assert np.count_nonzero(model.coef_ == 0) == n_zero  # exact zeros


@pytest.mark.parametrize("power_t", [0.0, 0.5])
def test_cumulative_penalty_equals_scikit_learn_sgd(power_t):
    # two-document queries with unit pair weights are pairwise classification
    # of x_a - x_b: scikit-learn's SGDClassifier with L1 (its cumulative
    # penalty), no intercept and a constant step (or its "invscaling" one)
    # takes the same steps
    from sklearn.linear_model import SGDClassifier

    rng = np.random.default_rng(5)
    n_pairs, n_features = 60, 6
    A, B = rng.normal(size=(n_pairs, n_features)), rng.normal(size=(n_pairs, n_features))
    flip = (A - B) @ [2.0, -1.0, 0, 0, 0, 0] < 0  # the preferred document first
    A[flip], B[flip] = B[flip].copy(), A[flip].copy()
    X = np.stack([A, B], axis=1).reshape(-1, n_features)
    y = np.tile([1, 0], n_pairs)
    qid = np.repeat(np.arange(n_pairs), 2)
    sign = np.where(np.arange(n_pairs) % 2 == 0, 1.0, -1.0)  # both classes for scikit-learn
    D = (A - B) * sign[:, None]
    rate = 0.01 if power_t == 0 else 0.05
    ours = RSRank(learning_rate=rate, power_t=power_t, normalize="none", l1=0.2,
                  l1_method="cumulative", pair_weight="unit", batch_size=1, max_iter=3,
                  shuffle=False).fit(X, y, qid=qid)
    theirs = SGDClassifier(loss="modified_huber", penalty="l1", alpha=0.2, fit_intercept=False,
                           learning_rate="constant" if power_t == 0 else "invscaling",
                           eta0=rate, power_t=power_t, max_iter=3, tol=None,
                           shuffle=False, average=False).fit(D, sign)
    np.testing.assert_allclose(ours.coef_, theirs.coef_.ravel(), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(ours.coef_ == 0, theirs.coef_.ravel() == 0)
    assert 0 < np.count_nonzero(ours.coef_) < n_features


def test_cumulative_penalty_carries_over_warm_start_and_partial_fit():
    X, y, qid = toy_queries()
    params = dict(learning_rate=0.05, normalize="none", batch_size=1, l1=0.3,
                  l1_method="cumulative", shuffle=False)
    two = RSRank(max_iter=2, **params).fit(X, y, qid=qid)
    warm = RSRank(max_iter=1, warm_start=True, **params)
    warm.fit(X, y, qid=qid).fit(X, y, qid=qid)
    np.testing.assert_allclose(warm.coef_, two.coef_, rtol=1e-12)
    blocks = RSRank(**params)
    for _ in range(2):
        for block in np.array_split(np.unique(qid), 3):
            rows = np.isin(qid, block)
            blocks.partial_fit(X[rows], y[rows], qid=qid[rows])
    np.testing.assert_allclose(blocks.coef_, two.coef_, rtol=1e-12)
    # a fresh fit starts the penalty over
    again = RSRank(max_iter=2, **params).fit(X, y, qid=qid).fit(X, y, qid=qid)
    np.testing.assert_array_equal(again.coef_, two.coef_)


def test_truncation_schedule_with_zero_gradient():
    # one pair, of all-zero rows: no gradient; only truncation moves weights
    X = np.r_[np.eye(4).repeat(7, axis=0), np.zeros((2, 4))]
    y = np.r_[np.zeros(28, dtype=int), 1, 0]
    qid = np.r_[np.arange(28), 28, 28]  # 29 queries -> 29 steps per epoch
    w0 = np.array([0.5, -0.5, 0.05, 2.0])
    model = RSRank(learning_rate=0.01, normalize="none", batch_size=1, l1=1.0,
                   truncation_period=3, truncation_threshold=1.0, max_iter=1,
                   shuffle=False).fit(X, y, qid=qid, coef_init=w0)
    alpha = 0.01 * 3 * 1.0
    truncations = 29 // 3
    np.testing.assert_allclose(model.coef_, [0.5 - truncations * alpha,
                                             -0.5 + truncations * alpha, 0.0, 2.0])
    assert model.t_ == 29


# -- invariances ------------------------------------------------------------------

def test_dense_equals_csr_and_float32_close():
    X, y, qid = toy_queries()
    params = dict(learning_rate=0.05, l1=0.1, max_iter=5, random_state=3)
    dense = RSRank(**params).fit(X, y, qid=qid)
    sparse = RSRank(**params).fit(sp.csr_matrix(X), y, qid=qid)
    np.testing.assert_allclose(dense.coef_, sparse.coef_, rtol=1e-12, atol=1e-15)
    single = RSRank(**params).fit(X.astype(np.float32), y, qid=qid)
    np.testing.assert_allclose(single.coef_, dense.coef_, rtol=1e-3, atol=1e-5)
    assert single.predict(X.astype(np.float32)).dtype == np.float64


def test_same_seed_same_model_and_other_seed_differs():
    # batches visit the queries in a seeded order; full-batch steps in the stored one
    X, y, qid = toy_queries()
    a = RSRank(learning_rate=0.05, max_iter=3, random_state=4, batch_size=2).fit(X, y, qid=qid)
    b = RSRank(learning_rate=0.05, max_iter=3, random_state=4, batch_size=2).fit(X, y, qid=qid)
    c = RSRank(learning_rate=0.05, max_iter=3, random_state=5, batch_size=2).fit(X, y, qid=qid)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert not np.array_equal(a.coef_, c.coef_)
    full = [RSRank(learning_rate=0.05, max_iter=3, random_state=seed, shuffle=shuffle).fit(
        X, y, qid=qid).coef_ for seed in (4, 5) for shuffle in (True, False)]
    for other in full[1:]:
        np.testing.assert_array_equal(other, full[0])


def test_interleaved_rows_give_the_same_model_without_shuffle():
    # rows of different queries may come in any order; order inside a query is kept
    X, y, qid = toy_queries(seed=6)
    rng = np.random.default_rng(0)
    target_qid = qid[rng.permutation(len(qid))]
    mixed = np.empty(len(qid), dtype=int)
    for q in np.unique(qid):
        mixed[target_qid == q] = np.flatnonzero(qid == q)
    params = dict(learning_rate=0.05, normalize="none", max_iter=3, shuffle=False)
    a = RSRank(**params).fit(X, y, qid=qid)
    b = RSRank(**params).fit(X[mixed], y[mixed], qid=qid[mixed])
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_allclose(b.predict(X[mixed]), a.predict(X)[mixed])


def test_parallel_batch_equals_serial():
    X, y, qid = toy_queries(n_queries=30)
    params = dict(learning_rate=0.3, l1=0.2, max_iter=4, batch_size=None, random_state=0)
    serial = RSRank(**params).fit(X, y, qid=qid)
    parallel = RSRank(n_jobs=2, **params).fit(X, y, qid=qid)
    # the queries go to the same gradient rows whatever the threads: the same model bit for bit
    np.testing.assert_array_equal(parallel.coef_, serial.coef_)
    assert parallel.history_["loss"] == serial.history_["loss"]


def test_weight_tol_stops_at_the_first_settled_epoch_without_changing_the_iterate():
    X, y, qid = toy_queries(n_queries=20)
    params = dict(learning_rate="curvature", l1=0.01, max_iter=500, random_state=0,
                  eval_train=False)
    tol = 1e-3
    stopped = RSRank(weight_tol=tol, **params).fit(X, y, qid=qid)
    n = stopped.n_iter_
    assert 2 < n < 500
    fits = {k: RSRank(**{**params, "max_iter": k}).fit(X, y, qid=qid).coef_ for k in (n - 2, n - 1, n)}
    np.testing.assert_array_equal(stopped.coef_, fits[n])  # the stop leaves the iterate alone

    def moved(a, b):
        return np.abs(a - b).max() / np.abs(a).max()
    assert moved(fits[n], fits[n - 1]) <= tol < moved(fits[n - 1], fits[n - 2])
    # weights that a strong L1 keeps at zero settle at once
    zero = RSRank(weight_tol=tol, **{**params, "l1": 1e6}).fit(X, y, qid=qid)
    assert zero.n_iter_ == 1 and not zero.coef_.any()
    with pytest.raises(ValueError, match="weight_tol"):
        RSRank(weight_tol=-1.0).fit(X, y, qid=qid)


def test_with_momentum_settledness_counts_from_the_settle_epoch():
    from rsrank.learning.solver import SETTLE_AFTER

    X, y, qid = toy_queries(n_queries=20)
    params = dict(learning_rate="curvature", l1=0.01, max_iter=100, random_state=0,
                  eval_train=False)
    stronger = RSRank(**{**params, "l1": 0.05}).fit(X, y, qid=qid).coef_
    # from the previous point of a path every first move is small: any tolerance is met
    for momentum, epochs in ((False, 1), (True, SETTLE_AFTER)):
        fitted = RSRank(momentum=momentum, weight_tol=10.0, **params).fit(
            X, y, qid=qid, coef_init=stronger)
        assert fitted.n_iter_ == epochs
    # a fit that settles later stops where its weights settle, as without momentum
    late = RSRank(momentum=True, weight_tol=1e-6, **params).fit(X, y, qid=qid)
    assert SETTLE_AFTER < late.n_iter_ <= 100


def test_partial_fit_over_query_blocks_equals_one_epoch():
    X, y, qid = toy_queries()
    # without scaling: partial_fit fixes a scaling on its first block, fit on all rows
    full = RSRank(learning_rate=0.05, normalize="none", batch_size=1, l1=0.1, max_iter=1,
                  shuffle=False).fit(X, y, qid=qid)
    stream = RSRank(learning_rate=0.05, normalize="none", batch_size=1, l1=0.1, shuffle=False)
    for block in np.array_split(np.unique(qid), 4):
        rows = np.isin(qid, block)
        stream.partial_fit(X[rows], y[rows], qid=qid[rows])
    np.testing.assert_allclose(stream.coef_, full.coef_, rtol=1e-12)
    assert stream.t_ == full.t_ == 12


def test_warm_start_continues():
    X, y, qid = toy_queries()
    two = RSRank(learning_rate=0.05, max_iter=2, shuffle=False).fit(X, y, qid=qid)
    warm = RSRank(learning_rate=0.05, max_iter=1, shuffle=False, warm_start=True)
    warm.fit(X, y, qid=qid).fit(X, y, qid=qid)
    np.testing.assert_allclose(warm.coef_, two.coef_)
    cold = RSRank(learning_rate=0.05, max_iter=1, shuffle=False)
    cold.fit(X, y, qid=qid).fit(X, y, qid=qid)
    assert not np.allclose(cold.coef_, two.coef_)


@pytest.mark.parametrize("l1", [0.0, 0.2])
def test_average_is_the_mean_of_the_epochs_iterates(l1):
    # the iterate after k epochs is a plain fit of k epochs (no shuffling);
    # the averaged model is the mean of those, and the steps are unchanged
    X, y, qid = toy_queries()
    params = dict(learning_rate=0.05, batch_size=3, l1=l1, shuffle=False)
    iterates = [RSRank(max_iter=k, **params).fit(X, y, qid=qid).coef_ for k in range(1, 6)]
    model = RSRank(max_iter=5, average=True, **params).fit(X, y, qid=qid)
    np.testing.assert_allclose(model.coef_, np.mean(iterates, axis=0), rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(model.history_["n_nonzero"],
                                  [np.count_nonzero(np.mean(iterates[:k], axis=0))
                                   for k in range(1, 6)])
    assert model.t_ == 20
    # partial_fit over the whole data, one call per epoch, averages the same way
    stream = RSRank(average=True, normalize="none", **params)
    plain = RSRank(max_iter=5, normalize="none", **params)
    iterates = [RSRank(max_iter=k, normalize="none", **params).fit(X, y, qid=qid).coef_
                for k in range(1, 6)]
    for _ in range(5):
        stream.partial_fit(X, y, qid=qid)
    np.testing.assert_allclose(stream.coef_, np.mean(iterates, axis=0), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(stream.solver_state_.w, plain.fit(X, y, qid=qid).coef_, rtol=1e-12)


def test_average_selects_the_best_epoch_of_the_mean():
    X, y, qid = toy_queries(seed=3)
    Xv, yv, qv = toy_queries(seed=4)
    model = RSRank(learning_rate=0.05, batch_size=1, max_iter=8, average=True,
                   random_state=0).fit(X, y, qid=qid, eval_set=(Xv, yv, qv))
    best = int(np.argmax(model.history_["val_ndcg"]))
    assert model.best_iteration_ == best + 1
    assert model.score(Xv, yv, qid=qv) == pytest.approx(model.history_["val_ndcg"][best])
    with pytest.raises(ValueError, match="average must be True or False"):
        RSRank(average="yes").fit(X, y, qid=qid)


# -- learning -----------------------------------------------------------------------

def test_learns_and_keeps_best_validation_epoch():
    X, y, qid = toy_queries(n_queries=40)
    train, val = qid < 30, qid >= 30
    model = RSRank(learning_rate=0.05, max_iter=20, random_state=0).fit(
        X[train], y[train], qid=qid[train], eval_set=(X[val], y[val], qid[val]))
    history = model.history_
    assert len(history["train_ndcg"]) == len(history["val_ndcg"]) == 20
    assert model.score(X[val], y[val], qid=qid[val]) == pytest.approx(max(history["val_ndcg"]))
    assert model.best_iteration_ == 1 + int(np.argmax(history["val_ndcg"]))
    random_scores = np.random.default_rng(0).normal(size=int(val.sum()))
    assert model.score(X[val], y[val], qid=qid[val]) > M.mean_ndcg(y[val], random_scores, qid[val], 10) + 0.2


@pytest.mark.parametrize("convention", sorted(c for c in M.CONVENTIONS
                                               if M.CONVENTIONS[c]["ties"] != "docid"))
@pytest.mark.parametrize("sparse", [False, True])
def test_epoch_ndcg_bookkeeping_equals_metrics(convention, sparse):
    """The per-epoch NDCG (kernel over data grouped once) against
    rsrank.evaluation.metrics on shuffled rows with tied scores, queries shorter than
    eval_k and queries without a relevant document."""
    rng = np.random.default_rng(7)
    sizes = rng.integers(1, 25, size=60)
    qid = rng.permutation(np.repeat(rng.permutation(1000)[:60], sizes))
    X = rng.integers(0, 3, size=(len(qid), 4)).astype(float)  # few values: many ties
    y = rng.integers(0, 4, size=len(qid))
    y[np.isin(qid, np.unique(qid)[:8])] = 0
    if sparse:
        X = sp.csr_matrix(X)
    from rsrank import QueryData
    from rsrank.learning.solver import NDCGMonitor
    monitor = NDCGMonitor(QueryData(X, y, qid), 7, convention)
    for _ in range(5):
        w = rng.integers(-2, 3, size=4).astype(float)
        expected = M.mean_ndcg(y, X @ w, qid, 7, convention=convention)
        assert monitor(w) == pytest.approx(expected, rel=1e-12, abs=1e-15)
    # the same numbers in a fit's history: train (grouped by _prepare) and validation
    train, val = qid < 500, qid >= 500
    model = RSRank(eval_convention=convention, eval_k=7, normalize="none", max_iter=3,
                   restore_best=False, random_state=0)
    model.fit(X[train], y[train], qid=qid[train], eval_set=(X[val], y[val], qid[val]))
    assert model.history_["train_ndcg"][-1] == pytest.approx(
        model.score(X[train], y[train], qid=qid[train]), rel=1e-12)
    assert model.history_["val_ndcg"][-1] == pytest.approx(
        model.score(X[val], y[val], qid=qid[val]), rel=1e-12)


def test_early_stopping_stops():
    X, y, qid = toy_queries(n_queries=40)
    model = RSRank(learning_rate=0.05, max_iter=500, early_stopping=True, n_iter_no_change=3,
                   tol=0.5, random_state=0).fit(X, y, qid=qid)
    assert model.n_iter_ == 4  # a tolerance of 0.5 cannot be met: stop after 1 + 3
    assert len(model.history_["val_ndcg"]) == 4


def test_score_convention_is_configurable():
    X, y, qid = toy_queries()
    model = RSRank(learning_rate=0.05, max_iter=2, random_state=0).fit(X, y, qid=qid)
    s = model.predict(X)
    # LETOR's convention by default, as RSRankCV, the scorers and rsrank train
    assert model.score(X, y, qid=qid) == pytest.approx(M.mean_ndcg(y, s, qid, 10,
                                                                   convention="letor"))
    model.set_params(eval_k=3, eval_convention="standard")
    assert model.score(X, y, qid=qid) == pytest.approx(M.mean_ndcg(y, s, qid, 3))
    with pytest.raises(ValueError, match="ties by document id|document id, which a fit"):
        model.set_params(eval_convention="trec_eval").fit(X, y, qid=qid)


def test_selected_features_and_names():
    pd = pytest.importorskip("pandas")
    X, y, qid = toy_queries()
    frame = pd.DataFrame(X, columns=[f"bm25_{j}" for j in range(X.shape[1])])
    model = RSRank(learning_rate=0.3, l1=0.1, batch_size=None, max_iter=50,
                   shuffle=False).fit(frame, y, qid=qid)
    selected = model.selected_features()
    assert [name for name, _ in selected][:2] == ["bm25_0", "bm25_1"]
    assert len(selected) == np.count_nonzero(model.coef_)
    assert all(abs(a[1]) >= abs(b[1]) for a, b in zip(selected, selected[1:]))


def test_recovers_sparse_support_on_bundled_data(bundled_root):
    truth = json.loads((bundled_root / "truth.json").read_text())
    support = set(truth["support"])
    data = load_letor_fold(bundled_root, 1, n_features=truth["n_features"])
    X, y, qid = data.train
    nonzeros = []
    for l1 in (0.0, 0.1, 0.3, 1.0):
        model = RSRank(learning_rate=0.1, normalize="none", l1=l1, batch_size=None,
                       max_iter=300, shuffle=False).fit(X, y, qid=qid)
        nonzeros.append(np.count_nonzero(model.coef_))
    found = set(np.flatnonzero(model.coef_))
    precision = len(found & support) / len(found)
    recall = len(found & support) / len(support)
    assert precision >= 0.9 and recall >= 0.9, (precision, recall, sorted(found))
    assert all(a >= b for a, b in zip(nonzeros, nonzeros[1:])), nonzeros
    assert nonzeros[0] > nonzeros[-1]


# -- bad input -----------------------------------------------------------------------

@pytest.mark.parametrize("mutate, message", [
    (lambda X, y, q: (np.where(X > 0.99, np.nan, X), y, q), "NaN"),
    (lambda X, y, q: (X, y - 1, q), "non-negative"),
    (lambda X, y, q: (X, y + 0.5, q), "integer"),
    (lambda X, y, q: (X, y, q[:-1]), "qid has"),
])
def test_bad_input(mutate, message):
    X, y, qid = toy_queries()
    X, y, qid = mutate(X, y.astype(float), qid)
    with pytest.raises(ValueError, match=message):
        RSRank(max_iter=1).fit(X, y, qid=qid)


def test_eval_set_feature_mismatch():
    X, y, qid = toy_queries()
    with pytest.raises(ValueError, match="features"):
        RSRank(max_iter=1).fit(X, y, qid=qid, eval_set=(X[:, :3], y, qid))


def test_divergence_suggests_smaller_learning_rate():
    X, y, qid = toy_queries()
    with pytest.raises(ValueError, match="lower learning_rate"):
        RSRank(learning_rate=1e308, max_iter=5, pair_loss="hinge").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="ranges are alike.*lower learning_rate"):
        RSRank(learning_rate=1e300, normalize="none", max_iter=5,
               pair_loss="hinge").fit(X * 1e10, y, qid=qid)
    wide = np.ones(X.shape[1])
    wide[2] = 1e6  # one feature far wider than the others: that is the cause
    with pytest.raises(ValueError, match="widest features: f3 .*scale the features.*"
                       "normalize='zscore'"):
        RSRank(learning_rate=1e300, normalize="none", max_iter=5,
               pair_loss="hinge").fit(X * 1e10 * wide, y, qid=qid)


def test_queries_without_pairs_are_fine_but_data_without_any_is_refused():
    X = np.random.default_rng(0).normal(size=(7, 3))
    y = np.array([1, 1, 0, 2, 2, 1, 0])
    qid = np.array([1, 1, 2, 3, 3, 4, 4])  # one-document and single-label queries, one pair
    RSRank(max_iter=2, learning_rate=0.1).fit(X, y, qid=qid)
    for learning_rate in ("auto", "curvature", 0.1):
        with pytest.raises(ValueError, match="no pair to learn from: in each of the 3 training"):
            RSRank(max_iter=2, learning_rate=learning_rate).fit(X[:5], y[:5], qid=qid[:5])
    with pytest.raises(ValueError, match="1 sample"):
        RSRank().fit(X[:1], y[:1])


@pytest.mark.parametrize("params", [dict(learning_rate=0), dict(l1=-1), dict(batch_size=0),
                                    dict(pair_loss="squared"), dict(discount="log10"),
                                    dict(n_jobs=0), dict(ndcg_k=0), dict(l1=np.nan),
                                    dict(learning_rate=np.nan), dict(tol=np.nan),
                                    dict(truncation_threshold=np.nan), dict(normalize="l2"),
                                    dict(l1_method="tsuruoka"),
                                    dict(l1_method="cumulative", truncation_threshold=1.0)])
def test_bad_parameters(params):
    X, y, qid = toy_queries(2, 4, 2)
    with pytest.raises(ValueError):
        RSRank(**params).fit(X, y, qid=qid)


def test_streaming_over_chunks_equals_in_memory_training(bundled_root):
    from rsrank import iter_letor_chunks

    path = bundled_root / "Fold1" / "train.txt.gz"
    X, y, qid = load_letor_fold(bundled_root, 1).train
    vali = load_letor_fold(bundled_root, 1).vali
    params = dict(learning_rate=0.05, l1=0.1, max_iter=3, shuffle=False, batch_size=1)
    memory = RSRank(**params).fit(X, y, qid=qid, eval_set=vali)
    stream = RSRank(**params).fit_chunks(lambda: iter_letor_chunks(path, 7, n_features=45),
                                         eval_set=vali)
    np.testing.assert_allclose(stream.coef_, memory.coef_, rtol=1e-12)
    assert stream.history_["val_ndcg"] == pytest.approx(memory.history_["val_ndcg"])
    assert stream.t_ == memory.t_ and stream.best_iteration_ == memory.best_iteration_
    assert np.isnan(stream.history_["train_ndcg"]).all()


def test_verbose_shows_a_progress_bar_with_ndcg(capsys):
    X, y, qid = toy_queries()
    RSRank(max_iter=2, verbose=1).fit(X, y, qid=qid, eval_set=(X, y, qid))
    err = capsys.readouterr().err
    assert "epochs" in err and "val@10" in err
    RSRank(max_iter=2).fit(X, y, qid=qid)
    assert capsys.readouterr().err == ""


def test_read_only_and_unsorted_csr_input_is_left_alone():
    X, y, qid = toy_queries()
    csr = sp.csr_matrix(X)
    # reverse the column order inside each row: valid CSR with unsorted indices
    for r in range(csr.shape[0]):
        lo, hi = csr.indptr[r], csr.indptr[r + 1]
        csr.indices[lo:hi] = csr.indices[lo:hi][::-1].copy()
        csr.data[lo:hi] = csr.data[lo:hi][::-1].copy()
    csr.has_sorted_indices = False
    before = (csr.data.copy(), csr.indices.copy())
    for array in (csr.data, csr.indices, csr.indptr):
        array.flags.writeable = False
    model = RSRank(learning_rate=0.05, max_iter=2, random_state=0).fit(csr, y, qid=qid)
    np.testing.assert_array_equal(csr.data, before[0])
    np.testing.assert_array_equal(csr.indices, before[1])
    dense = RSRank(learning_rate=0.05, max_iter=2, random_state=0).fit(X, y, qid=qid)
    np.testing.assert_allclose(model.coef_, dense.coef_, rtol=1e-10)


def test_full_batch_models_do_not_depend_on_the_seed(bundled_root):
    # what lets rsrank train run --seeds once for full-batch training
    fold = load_letor_fold(bundled_root, 3)
    models = [RSRank(max_iter=20, l1=0.3, random_state=seed).fit(
        *fold.train[:2], qid=fold.train[2], eval_set=fold.vali[:3]) for seed in (0, 1, 2)]
    for model in models[1:]:
        np.testing.assert_allclose(model.coef_, models[0].coef_, rtol=1e-9, atol=1e-12)
        assert model.best_iteration_ == models[0].best_iteration_


def test_auto_learning_rate_keeps_the_rate_of_the_best_validation_fit():
    import warnings

    from rsrank.estimator import AUTO_RATES

    X, y, qid = toy_queries(n_queries=40, seed=3)
    Xv, yv, qv = toy_queries(n_queries=20, seed=4)
    auto = RSRank(max_iter=15, random_state=0).fit(X, y, qid=qid, eval_set=(Xv, yv, qv))
    fits = {rate: RSRank(max_iter=15, random_state=0, learning_rate=rate).fit(
        X, y, qid=qid, eval_set=(Xv, yv, qv)) for rate in AUTO_RATES}
    best = {rate: max(f.history_["val_ndcg"]) for rate, f in fits.items()}
    chosen = min((rate for rate in AUTO_RATES if best[rate] == max(best.values())))
    assert auto.learning_rate_ == chosen and auto.learning_rate == "auto"
    np.testing.assert_array_equal(auto.coef_, fits[chosen].coef_)
    for key in ("loss", "val_ndcg", "n_nonzero"):
        assert auto.history_[key] == fits[chosen].history_[key]
    assert auto.best_iteration_ == fits[chosen].best_iteration_
    # without validation data "auto" is one fit at the curvature step
    alone = RSRank(max_iter=15, random_state=0).fit(X, y, qid=qid)
    fixed = RSRank(max_iter=15, random_state=0, learning_rate="curvature").fit(X, y, qid=qid)
    assert alone.learning_rate_ == fixed.learning_rate_ != 1e-2
    np.testing.assert_array_equal(alone.coef_, fixed.coef_)
    # the warnings are the winning rate's own: a losing rate that overshoots is silent
    wide = np.array([300.0, 1, 1, 1, 1, 1])

    def messages(**params):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = RSRank(max_iter=15, normalize="none", random_state=0, **params).fit(
                X * wide, y, qid=qid, eval_set=(Xv * wide, yv, qv))
        return model, sorted(str(w.message) for w in caught)

    model, heard = messages()
    assert heard == messages(learning_rate=model.learning_rate_)[1] == []
    assert messages(learning_rate=0.1)[1]  # the losing 0.1 alone warns
    with pytest.raises(ValueError, match="learning_rate"):
        RSRank(learning_rate="fast").fit(X, y, qid=qid)


def degenerate_cases():
    rng = np.random.default_rng(0)
    X, y, qid = rng.normal(size=(40, 3)), rng.integers(0, 3, 40), np.repeat(np.arange(4), 10)
    with_missing = lambda value: np.where(np.arange(40) < 5, value, qid)  # noqa: E731
    return [
        ("every label equal", (X, np.ones(40, int), qid), "no pair to learn from: in each of the 4 training"),
        ("one document per query", (X, y, np.arange(40)), "in each of the 40 training queries"),
        ("NaN qid", (X, y, with_missing(np.nan)), "qid at row 0 is nan (5 rows without one)"),
        ("infinite qid", (X, y, with_missing(np.inf)), "qid at row 0 is inf"),
        ("None qid", (X, y, np.array([None] + list(qid[1:]), dtype=object)),
         "qid at row 0 is None (1 row without one)"),
        ("qid of another length", (X, y, qid[:10]), "qid has 10 entries but there are 40 rows"),
        ("one row", (X[:1], y[:1], None), "1 sample"),
    ]


@pytest.mark.parametrize("name, data, message", degenerate_cases(),
                         ids=[case[0] for case in degenerate_cases()])
def test_degenerate_training_data_is_refused_with_what_to_check(name, data, message):
    X, y, qid = data
    for learning_rate in ("auto", "curvature"):
        with pytest.raises(ValueError, match=re.escape(message)):
            RSRank(max_iter=2, learning_rate=learning_rate).fit(
                X, y, qid=qid, eval_set=(X, y, qid) if learning_rate == "auto" else None)


@pytest.mark.parametrize("rule", ["curvature", "auto"])
def test_a_stream_takes_the_curvature_step_of_all_its_blocks(bundled_root, rule):
    # the trace is a sum over queries: blocks add theirs up to the one of all the data
    from rsrank import iter_letor_chunks

    path = bundled_root / "Fold1" / "train.txt.gz"
    X, y, qid = load_letor_fold(bundled_root, 1).train
    params = dict(learning_rate=rule, max_iter=3, shuffle=False, batch_size=1)
    memory = RSRank(**{**params, "learning_rate": "curvature"}).fit(X, y, qid=qid)
    stream = RSRank(**params).fit_chunks(lambda: iter_letor_chunks(path, 7, n_features=45))
    assert stream.learning_rate_ == pytest.approx(memory.learning_rate_, rel=1e-10)
    assert stream.learning_rate_ != 1e-2
    np.testing.assert_allclose(stream.coef_, memory.coef_, rtol=1e-8, atol=1e-12)


def test_the_divergence_watch_keeps_min_of_the_losses_as_they_arrive():
    # the watch keeps the lowest loss up to date instead of taking min() of
    # every loss each epoch: the same value as min() at each epoch, NaN and
    # infinite losses included, however many arrive between two looks
    from hypothesis import given, settings, strategies as st

    from rsrank.learning.solver import DivergenceWatch

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=30),
           st.lists(st.integers(1, 3), min_size=30, max_size=30))
    def check(losses, gaps):
        watch = DivergenceWatch(lambda seen: 1e300, lambda: "")
        seen, at = [], 0
        for gap in gaps:
            if at >= len(losses):
                break
            seen.extend(losses[at:at + gap])
            at += gap
            watch(seen)
            expected = min(seen)
            assert watch.lowest == expected or (watch.lowest != watch.lowest
                                                and expected != expected)
    check()
