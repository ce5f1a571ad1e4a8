import os
import threading
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

from rsrank import RSRank, load_letor, load_letor_fold  # noqa: E402
from rsrank.dask import DaskRSRank, check_query_partitions, repartition_by_query  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        with distributed.Client(cluster) as c:
            yield c


def dask_fold(bundled_root, fold=1, rows=1500):
    X, y, qid = load_letor_fold(bundled_root, fold).train
    X = X.toarray()
    Xd = da.from_array(X, chunks=(rows, X.shape[1]))
    return repartition_by_query(Xd, da.from_array(y, chunks=rows), da.from_array(qid, chunks=rows))


def test_repartition_keeps_queries_whole(bundled_root):
    X, y, qid = load_letor_fold(bundled_root, 1).train
    q = da.from_array(qid, chunks=1000)
    with pytest.raises(ValueError, match="spans partitions"):
        check_query_partitions(q)
    X2, y2, q2 = repartition_by_query(da.from_array(X.toarray(), chunks=(1000, 45)),
                                      da.from_array(y, chunks=1000), q, rows_per_partition=1000)
    check_query_partitions(q2)
    assert len(q2.chunks[0]) > 3
    np.testing.assert_array_equal(q2.compute(), qid)


PARAMS = dict(learning_rate=0.1, normalize="none", l1=0.3, max_iter=5, batch_size=None, shuffle=False)


def test_gradient_mode_equals_single_machine_full_batch(client, bundled_root):
    X, y, qid = dask_fold(bundled_root)
    data = load_letor_fold(bundled_root, 1)
    local = RSRank(**PARAMS).fit(*data.train[:2], qid=data.train[2], eval_set=data.vali)
    model = DaskRSRank(mode="gradient", **PARAMS).fit(X, y, qid=qid, eval_set=data.vali)
    np.testing.assert_allclose(model.coef_, local.coef_, rtol=1e-9, atol=1e-12)
    assert model.history_["val_ndcg"] == pytest.approx(local.history_["val_ndcg"])
    # weights only: w to every partition and its gradient back, and w again for
    # the training NDCG (eval_train, on by default as for RSRank)
    assert model.eval_train
    assert model.bytes_per_epoch_ == 3 * len(X.chunks[0]) * 45 * 8


def test_files_on_workers(client, bundled_root, tmp_path):
    data = load_letor_fold(bundled_root, 1)
    path = bundled_root / "Fold1" / "train.txt.gz"
    lines = [line for line in __import__("gzip").open(path, "rt")]
    half = next(i for i in range(len(lines) // 2, len(lines))
                if lines[i].split()[1] != lines[i - 1].split()[1])
    (tmp_path / "a.txt").write_text("".join(lines[:half]))
    (tmp_path / "b.txt").write_text("".join(lines[half:]))
    local = RSRank(**PARAMS).fit(*data.train[:2], qid=data.train[2])
    model = DaskRSRank(mode="gradient", **PARAMS).fit_files(
        [tmp_path / "a.txt", tmp_path / "b.txt"], n_features=45)
    np.testing.assert_allclose(model.coef_, local.coef_, rtol=1e-9, atol=1e-12)
    plain = model.to_local()
    assert type(plain) is RSRank
    X, y, qid = load_letor(bundled_root / "Fold1" / "test.txt.gz", n_features=45)
    np.testing.assert_allclose(plain.predict(X), local.predict(X), rtol=1e-9)
    import pickle

    assert pickle.loads(pickle.dumps(model)).coef_.tolist() == model.coef_.tolist()


@pytest.mark.slow
def test_mixing_reaches_single_machine_ndcg_on_ohsumed(client, ohsumed_root):
    data = load_letor_fold(ohsumed_root, 1)
    X, y, qid = data.train
    params = dict(learning_rate=1e-2, normalize="none", batch_size=1, max_iter=30, random_state=0, eval_convention="letor")
    local = RSRank(**params).fit(X, y, qid=qid, eval_set=data.vali)
    Xd, yd, qd = repartition_by_query(da.from_array(X.toarray(), chunks=(4700, 45)),
                                      da.from_array(y, chunks=4700), da.from_array(qid, chunks=4700))
    mixed = DaskRSRank(mode="mixing", **params).fit(Xd, yd, qid=qd, eval_set=data.vali)
    test = data.test
    assert mixed.score(test[0], test[1], qid=test[2]) == pytest.approx(
        local.score(test[0], test[1], qid=test[2]), abs=0.03)
    assert abs(max(mixed.history_["val_ndcg"]) - max(local.history_["val_ndcg"])) < 0.03


def test_mixing_trains_an_additive_model_as_well_as_one_machine(client, bundled_root):
    X, y, qid = dask_fold(bundled_root)
    data = load_letor_fold(bundled_root, 1)
    params = dict(additive=True, learning_rate=0.05, batch_size=4, max_iter=15, random_state=0,
                  l1_group=1e-3, eval_convention="letor")
    local = RSRank(**params).fit(*data.train[:2], qid=data.train[2], eval_set=data.vali)
    mixed = DaskRSRank(mode="mixing", **params).fit(X, y, qid=qid, eval_set=data.vali)
    assert mixed.model_.encoding.key == local.model_.encoding.key
    test = data.test
    assert mixed.score(test[0], test[1], qid=test[2]) == pytest.approx(
        local.score(test[0], test[1], qid=test[2]), abs=0.03)
    with pytest.raises(ValueError, match="does not relax"):
        DaskRSRank(relax=True, **params).fit(X, y, qid=qid)


@pytest.mark.parametrize("kind", [{}, {"additive": True, "l1_group": 1e-3}])
def test_to_local_goes_on_as_the_local_model_would(client, bundled_root, kind):
    # the local copy carries the whole fit: warm_start, partial_fit and
    # refit_kept go on from it as from the same fit made on one machine
    X, y, qid = dask_fold(bundled_root)
    train = load_letor_fold(bundled_root, 1).train
    params = {**PARAMS, **kind, "max_iter": 3}
    local = RSRank(**params).fit(*train[:2], qid=train[2])
    plain = DaskRSRank(mode="gradient", **params).fit(X, y, qid=qid).to_local()
    assert type(plain) is RSRank and plain.get_params() == local.get_params()
    for model in (local, plain):
        model.set_params(warm_start=True, max_iter=2).fit(*train[:2], qid=train[2])
        model.partial_fit(*train[:2], qid=train[2])
    np.testing.assert_allclose(plain.coef_, local.coef_, rtol=1e-7, atol=1e-10)
    assert plain.n_iter_ == local.n_iter_
    kept = plain.refit_kept(*train[:2], qid=train[2])
    names = lambda model: {name for name, _ in model.selected_features()}
    assert names(kept) <= names(plain)


@pytest.mark.parametrize("rule", ["curvature", "auto"])
def test_the_curvature_step_is_summed_over_the_partitions(client, bundled_root, rule):
    X, y, qid = dask_fold(bundled_root)
    train = load_letor_fold(bundled_root, 1).train
    params = dict(normalize="zscore", max_iter=4, batch_size=None, shuffle=False)
    local = RSRank(**params, learning_rate="curvature").fit(*train[:2], qid=train[2])
    model = DaskRSRank(mode="gradient", **params, learning_rate=rule).fit(X, y, qid=qid)
    assert model.learning_rate_ == pytest.approx(local.learning_rate_, rel=1e-10)
    np.testing.assert_allclose(model.coef_, local.coef_, rtol=1e-7, atol=1e-10)


@pytest.mark.slow  # worker processes, one of them killed
def test_killed_worker_gives_the_right_model_or_a_clear_error(bundled_root):
    data = load_letor_fold(bundled_root, 1)
    params = dict(learning_rate=0.1, normalize="none", l1=0.3, max_iter=200, batch_size=None, shuffle=False)
    local = RSRank(**params).fit(*data.train[:2], qid=data.train[2])
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        X, y, qid = dask_fold(bundled_root)
        outcome = {}

        def train():
            try:
                outcome["model"] = DaskRSRank(mode="gradient", **params).fit(X, y, qid=qid)
            except Exception as error:  # recorded and checked below
                outcome["error"] = error

        thread = threading.Thread(target=train)
        thread.start()
        time.sleep(2.0)
        assert thread.is_alive(), "the fit ended before the worker was killed"
        victim = list(c.scheduler_info()["workers"])[0]
        try:
            c.run(os._exit, 1, workers=[victim])
        except distributed.comm.core.CommClosedError:
            pass  # the worker died before it could answer: that is the point
        thread.join(timeout=600)  # generous: a loaded machine recovers slowly
        assert not thread.is_alive()
    if "model" in outcome:
        np.testing.assert_allclose(outcome["model"].coef_, local.coef_, rtol=1e-9, atol=1e-12)
    else:
        assert "worker" in str(outcome["error"]).lower() or isinstance(
            outcome["error"], distributed.client.FutureCancelledError)


def test_cli_train_on_a_cluster_matches_local(client, bundled_root, tmp_path):
    import json

    from rsrank.cli import main

    address = client.scheduler.address
    base = ["train", str(bundled_root), "--folds", "1,2", "--max-iter", "3", "--quiet",
            "--l1", "0,0.3"]
    assert main(base + ["--out", str(tmp_path / "local")]) == 0
    assert main(base + ["--scheduler", address, "--out", str(tmp_path / "cluster")]) == 0
    local = json.loads((tmp_path / "local" / "results.json").read_text())
    remote = json.loads((tmp_path / "cluster" / "results.json").read_text())
    assert [f["test"] for f in remote["folds"]] == [f["test"] for f in local["folds"]]


def test_grid_search_with_joblib_dask_backend(client):
    from joblib import parallel_config
    from sklearn.model_selection import GridSearchCV

    from rsrank.evaluation.model_selection import fit_search

    rng = np.random.default_rng(0)
    X = rng.uniform(size=(240, 4))
    y = (X[:, 0] * 3).astype(int)
    qid = np.repeat(np.arange(20), 12)
    search = GridSearchCV(RSRank(max_iter=3, random_state=0), {"l1": [0.0, 0.5]}, cv=3)
    local = fit_search(search, X, y, qid).cv_results_["mean_test_score"]
    with parallel_config(backend="dask"):
        search = GridSearchCV(RSRank(max_iter=3, random_state=0), {"l1": [0.0, 0.5]}, cv=3,
                              n_jobs=-1)
        remote = fit_search(search, X, y, qid).cv_results_["mean_test_score"]
    np.testing.assert_allclose(remote, local)


def test_dask_dataframe_input(client, bundled_root):
    dd = pytest.importorskip("dask.dataframe")
    X, y, qid = dask_fold(bundled_root)
    frame = dd.from_dask_array(X, columns=[f"f{j + 1}" for j in range(X.shape[1])])
    from_array = DaskRSRank(mode="gradient", **PARAMS).fit(X, y, qid=qid)
    from_frame = DaskRSRank(mode="gradient", **PARAMS).fit(frame, y, qid=qid)
    np.testing.assert_allclose(from_frame.coef_, from_array.coef_, rtol=1e-12)


def test_fit_files_checks_what_fit_checks(client, bundled_root, tmp_path):
    path = bundled_root / "Fold1" / "train.txt.gz"
    lines = [line for line in __import__("gzip").open(path, "rt")]
    # a query cut in two: its first rows in one file, the rest in another
    cut = next(i for i in range(1, len(lines)) if lines[i].split()[1] == lines[i - 1].split()[1])
    (tmp_path / "a.txt").write_text("".join(lines[:cut]))
    (tmp_path / "b.txt").write_text("".join(lines[cut:]))
    model = DaskRSRank(max_iter=2)
    with pytest.raises(ValueError, match=r"query \d+ is in both .*a\.txt and .*b\.txt"):
        model.fit_files([tmp_path / "a.txt", tmp_path / "b.txt"], n_features=45)
    with pytest.raises(ValueError, match="given twice"):
        model.fit_files([path, path], n_features=45)
    with pytest.raises(ValueError, match="at least one file"):
        model.fit_files([], n_features=45)
    X, y, qid = dask_fold(bundled_root)
    with pytest.raises(ValueError, match="needs qid"):
        model.fit(X, y, qid=None)
    (tmp_path / "cut.txt.gz").write_bytes(path.read_bytes()[:2000])
    with pytest.raises(Exception, match=r"cut\.txt\.gz.*truncated"):
        model.fit_files([tmp_path / "cut.txt.gz"], n_features=45)


def test_parameters_are_rsranks_plus_mode():
    # one definition: the same keys and defaults as RSRank, and mode
    ours, theirs = DaskRSRank().get_params(), RSRank().get_params()
    assert ours.pop("mode") == "gradient"
    assert ours.keys() == theirs.keys()
    for name, value in theirs.items():
        assert ours[name] == value or (value != value and ours[name] != ours[name]), name
    assert DaskRSRank(l1=0.5, mode="mixing").get_params()["l1"] == 0.5


@pytest.mark.parametrize("options", [
    dict(),                                                    # the defaults (z-score)
    dict(normalize="minmax", l1=0.3),
    dict(normalize="none", l1=0.3, l1_method="cumulative", truncation_period=2),
    dict(l1=0.3, truncation_threshold=0.05, truncation_period=3),
    dict(power_t=0.5, l1=0.2, average=True),
    dict(normalize="query-zscore", average=True),
    dict(early_stopping=True, n_iter_no_change=2, tol=0.0, restore_best=True),
    dict(restore_best=False, pair_loss="hinge", pair_weight="unit", ndcg_k=5),
    dict(gain="linear", discount="letor", eval_convention="letor", eval_k=5),
    dict(l1=0.3, feature_costs={0: 5.0, "f3": 0.5}),
    dict(additive=True, max_bins=16, l1_group=0.01),            # steps from the histograms
    dict(additive=True, l1=0.001, l1_group=0.005, feature_costs={3: 4.0}, average=True),
])
def test_gradient_mode_gives_the_local_full_batch_model(client, bundled_root, options):
    X, y, qid = dask_fold(bundled_root)
    data = load_letor_fold(bundled_root, 1)
    params = dict(learning_rate=0.1, max_iter=6, shuffle=False, **options)
    local = RSRank(**params).fit(*data.train[:2], qid=data.train[2], eval_set=data.vali)
    model = DaskRSRank(mode="gradient", **params).fit(X, y, qid=qid, eval_set=data.vali)
    np.testing.assert_allclose(model.coef_, local.coef_, rtol=1e-9, atol=1e-12)
    assert model.n_iter_ == local.n_iter_ and model.best_iteration_ == local.best_iteration_
    assert model.t_ == local.t_
    for key in ("val_ndcg", "train_ndcg", "loss"):
        np.testing.assert_allclose(model.history_[key], local.history_[key], rtol=1e-9)
    np.testing.assert_allclose(model.feature_scale_, local.feature_scale_, rtol=1e-12)
    if model.additive:  # the thresholds of all the rows, found across the partitions
        assert model.model_.encoding.key == local.model_.encoding.key
        for ours, theirs in zip(model.model_.encoding.counts, local.model_.encoding.counts):
            np.testing.assert_array_equal(ours, theirs)
        assert 0 < len(model.selected_features()) < 45


def test_interactions_are_refused_on_a_cluster_before_any_work(client, bundled_root):
    X, y, qid = dask_fold(bundled_root)
    with pytest.raises(ValueError, match="interactions search pairs on training data in memory"):
        DaskRSRank(additive=True, interactions=2, mode="gradient").fit(X, y, qid=qid)


@pytest.mark.parametrize("with_sessions", [False, True])
def test_a_click_log_split_by_session_gives_the_one_process_model(client, with_sessions):
    from rsrank.reading.synthetic import make_letor_like, simulate_clicks

    data = make_letor_like(n_queries=40, docs_per_query=(15, 30), random_state=3)
    production = data.X @ np.random.default_rng(3).normal(size=data.X.shape[1])
    sim = simulate_clicks(data.y, data.qid, production, n_sessions=20, random_state=3)
    # sessions in a random order: every partition holds parts of many queries
    order = np.random.default_rng(4).permutation(sim.session.max() + 1)
    rows = np.argsort(order[sim.session], kind="stable")
    X, click = data.X[sim.docid][rows], sim.click[rows]
    qid, position = sim.qid[rows], sim.position[rows]
    # with the sessions, the log trains on its session lists (weighted queries)
    session = sim.session[rows] if with_sessions else None
    local = RSRank(**PARAMS).fit(X, click, qid=qid, position=position, session=session)
    chunks = 1000  # whole sessions of 10 rows
    model = DaskRSRank(mode="gradient", **PARAMS).fit(
        da.from_array(X, chunks=(chunks, X.shape[1])), da.from_array(click, chunks=chunks),
        qid=da.from_array(qid, chunks=chunks), position=da.from_array(position, chunks=chunks),
        session=None if session is None else da.from_array(session, chunks=chunks))
    np.testing.assert_allclose(model.examination_.curve, local.examination_.curve, rtol=1e-6)
    np.testing.assert_allclose(model.coef_, local.coef_, rtol=1e-6, atol=1e-9)
    assert np.count_nonzero(local.coef_)


def test_a_click_log_holds_every_row_of_x_to_the_rules_of_a_fit_on_labels(client):
    from rsrank.reading.synthetic import make_letor_like, simulate_clicks

    data = make_letor_like(n_queries=20, docs_per_query=(12, 20), random_state=5)
    sim = simulate_clicks(data.y, data.qid, data.X[:, 0], n_sessions=10, random_state=5)
    X = data.X[sim.docid].copy()
    quiet = ~np.isin(sim.session, sim.session[sim.click > 0])  # sessions without a click
    X[np.flatnonzero(quiet)[0], 1] = np.nan  # in no session list
    chunks = 500
    with pytest.raises(ValueError, match=r"X has missing values \(NaN\) in 1 feature"):
        DaskRSRank(mode="gradient", **PARAMS).fit(
            da.from_array(X, chunks=(chunks, X.shape[1])), da.from_array(sim.click, chunks=chunks),
            qid=da.from_array(sim.qid, chunks=chunks),
            position=da.from_array(sim.position, chunks=chunks),
            session=da.from_array(sim.session, chunks=chunks))
