import pickle

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, GroupKFold, RandomizedSearchCV
from sklearn.utils import Bunch

from rsrank import RSRank, load_letor_fold
from rsrank import metrics as M
from rsrank.model_selection import (cross_val_score_by_query, fit_search, letor_fold_split,
                                    make_map_scorer, make_ndcg_scorer, parse_metric,
                                    regularization_path, run_letor_folds, sparsest_within)


def queries(n_queries=24, n_docs=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n_queries * n_docs, 5))
    latent = X @ np.array([2.0, -1.0, 0.0, 0.5, 0.0]) + 0.5 * rng.normal(size=len(X))
    y = np.digitize(latent, np.quantile(latent, [0.6, 0.85]))
    qid = np.repeat(np.arange(100, 100 + n_queries), n_docs)
    return X, y, qid


BASE = RSRank(learning_rate=0.05, max_iter=3, random_state=0)


def manual_cv_scores(estimator, X, y, qid, n_splits, scorer=None):
    """What a correct query-wise CV must give: fit on each split's training
    queries, score its held-out queries."""
    out = []
    for train, test in GroupKFold(n_splits).split(X, y, groups=qid):
        model = clone(estimator).fit(X[train], y[train], qid=qid[train])
        if scorer is None:
            out.append(model.score(X[test], y[test], qid=qid[test]))
        else:
            out.append(scorer(model.predict(X[test]), y[test], qid[test]))
    return np.array(out)


def test_grid_search_with_group_kfold_routes_qid():
    X, y, qid = queries()
    search = fit_search(GridSearchCV(BASE, {"l1": [0.0, 0.5]}, cv=GroupKFold(3)), X, y, qid)
    for i, l1 in enumerate(search.cv_results_["param_l1"]):
        expected = manual_cv_scores(clone(BASE).set_params(l1=l1), X, y, qid, 3)
        got = [search.cv_results_[f"split{s}_test_score"][i] for s in range(3)]
        np.testing.assert_allclose(got, expected)
    assert search.best_estimator_.n_features_in_ == 5


def test_documented_recipe_without_the_helper():
    X, y, qid = queries()
    with sklearn.config_context(enable_metadata_routing=True):
        cv = GroupKFold(3).set_split_request(groups="qid")
        search = GridSearchCV(BASE, {"l1": [0.0, 0.5]}, cv=cv).fit(X, y, qid=qid)
    expected = manual_cv_scores(clone(BASE).set_params(l1=0.0), X, y, qid, 3).mean()
    assert search.cv_results_["mean_test_score"][0] == pytest.approx(expected)


def test_routing_off_is_a_clear_error_not_a_silent_score():
    X, y, qid = queries()
    search = GridSearchCV(BASE, {"l1": [0.0]}, cv=GroupKFold(3), error_score="raise")
    with pytest.raises(ValueError, match="enable metadata routing"):
        search.fit(X, y, qid=qid, groups=qid)
    with pytest.raises(ValueError, match="needs the held-out rows' qid"):
        make_ndcg_scorer(10)(RSRank(max_iter=1).fit(X, y), X, y)


def test_randomized_search_and_cross_val_score():
    X, y, qid = queries()
    search = RandomizedSearchCV(BASE, {"l1": [0.0, 0.1, 0.5, 1.0]}, n_iter=2, cv=3,
                                random_state=0)
    fit_search(search, X, y, qid)  # an integer cv becomes GroupKFold
    l1 = search.cv_results_["param_l1"][0]
    expected = manual_cv_scores(clone(BASE).set_params(l1=l1), X, y, qid, 3)
    got = [search.cv_results_[f"split{s}_test_score"][0] for s in range(3)]
    np.testing.assert_allclose(got, expected)
    scores = cross_val_score_by_query(BASE, X, y, qid, cv=3)
    np.testing.assert_allclose(scores, manual_cv_scores(BASE, X, y, qid, 3))


def test_multi_metric_scorers_with_refit():
    X, y, qid = queries()
    scoring = {"ndcg@1": make_ndcg_scorer(1), "ndcg@10": make_ndcg_scorer(10, convention="letor"),
               "map": make_map_scorer()}
    search = GridSearchCV(BASE, {"l1": [0.0, 0.5]}, cv=GroupKFold(3), scoring=scoring,
                          refit="ndcg@10")
    fit_search(search, X, y, qid)
    expected = manual_cv_scores(clone(BASE).set_params(l1=0.0), X, y, qid, 3,
                                lambda s, yy, q: M.mean_ndcg(yy, s, q, 10, convention="letor"))
    assert search.cv_results_["mean_test_ndcg@10"][0] == pytest.approx(expected.mean())
    expected_map = manual_cv_scores(clone(BASE).set_params(l1=0.0), X, y, qid, 3,
                                    lambda s, yy, q: M.mean_average_precision(yy, s, q))
    assert search.cv_results_["mean_test_map"][0] == pytest.approx(expected_map.mean())
    assert search.best_index_ == int(np.argmax(search.cv_results_["mean_test_ndcg@10"]))


def test_letor_split_in_grid_search_matches_the_letor_protocol(bundled_root):
    data = load_letor_fold(bundled_root, 2)
    grid = {"l1": [0.0, 0.3], "learning_rate": [0.01, 0.05]}
    base = RSRank(max_iter=5, random_state=0, eval_convention="letor")
    X, y, qid, cv = letor_fold_split(data.train, data.vali)
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(clone(base).set_fit_request(eval_set=True), grid, cv=cv,
                              refit=False, scoring=make_ndcg_scorer(10, convention="letor"))
        search.fit(X, y, qid=qid, eval_set=data.vali)
    experiment = run_letor_folds(bundled_root, base, grid, folds=[2])
    fold = experiment.folds[0]
    assert search.best_params_ == fold.params
    assert search.best_score_ == pytest.approx(fold.vali_score)
    vali_scores = sorted(t["vali_score"] for t in fold.grid)
    np.testing.assert_allclose(sorted(search.cv_results_["mean_test_score"]), vali_scores)


def test_letor_split_rejects_shared_queries():
    X, y, qid = queries()
    with pytest.raises(ValueError, match="share 1 qid"):
        letor_fold_split((X[:24], y[:24], qid[:24]), (X[12:36], y[12:36], qid[12:36]))


def test_parse_metric():
    assert parse_metric("NDCG@10") == ("ndcg", 10)
    assert parse_metric("p@5") == ("p", 5)
    assert parse_metric("map") == ("map", None)
    with pytest.raises(ValueError, match="unknown metric"):
        parse_metric("auc")


def test_run_letor_folds_parallel_equals_serial(bundled_root):
    base = RSRank(learning_rate=0.05, max_iter=3, random_state=0)
    serial = run_letor_folds(bundled_root, base, {"l1": [0.0, 0.5]}, folds=[1, 3])
    parallel = run_letor_folds(bundled_root, base, {"l1": [0.0, 0.5]}, folds=[1, 3], n_jobs=2)
    assert [f.fold for f in parallel.folds] == [1, 3]
    for a, b in zip(serial.folds, parallel.folds):
        assert a.params == b.params and a.test == b.test
        np.testing.assert_array_equal(a.test_scores, b.test_scores)
    # the test report is LETOR's table of the selected model's test scores
    data = load_letor_fold(bundled_root, 3)
    report = M.letor_report(data.test[1], serial.folds[1].test_scores, data.test[2]).as_dict()
    assert serial.folds[1].test == report
    summary = serial.summary()
    assert summary["NDCG@10"][0] == pytest.approx(np.mean([f.test["NDCG@10"] for f in serial.folds]))


def test_regularization_path(bundled_root):
    data = load_letor_fold(bundled_root, 1)
    base = RSRank(learning_rate=0.1, batch_size=None, max_iter=60, shuffle=False)
    path = regularization_path(*data.train, [1.0, 0.0, 0.3], estimator=base, test_set=data.test)
    assert [p.l1 for p in path] == [0.0, 0.3, 1.0]
    nonzeros = [p.n_nonzero for p in path]
    assert nonzeros[0] > nonzeros[-1]
    assert all("test_ndcg" in p and "val_ndcg" not in p for p in path)
    # warm start: the second point starts from the first point's weights
    cold = clone(base).set_params(l1=0.3).fit(*data.train[:2], qid=data.train[2],
                                              coef_init=path[0].coef)
    np.testing.assert_allclose(path[1].coef, cold.coef_)


def test_sparsest_within():
    # key="test_ndcg" on purpose: the paper's test-selected table (the default is vali)
    path = [Bunch(n_nonzero=30, test_ndcg=0.50), Bunch(n_nonzero=20, test_ndcg=0.49),
            Bunch(n_nonzero=10, test_ndcg=0.48), Bunch(n_nonzero=5, test_ndcg=0.40)]
    assert sparsest_within(path, 0.03, key="test_ndcg").n_nonzero == 20
    assert sparsest_within(path, 0.05, key="test_ndcg").n_nonzero == 10
    for point, vali in zip(path, [0.50, 0.40, 0.49, 0.30]):
        point.val_ndcg = vali
    assert sparsest_within(path, 0.03).n_nonzero == 10  # selects on vali by default


# -- model files ------------------------------------------------------------------------

def fitted_model():
    X, y, qid = queries()
    return RSRank(learning_rate=0.05, l1=0.2, max_iter=3, random_state=0,
                  truncation_threshold=np.inf).fit(X, y, qid=qid), X


def test_model_file_round_trip(tmp_path):
    model, X = fitted_model()
    model.save(tmp_path / "m.json")
    loaded = RSRank.load(tmp_path / "m.json")
    np.testing.assert_array_equal(loaded.coef_, model.coef_)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert loaded.get_params() == model.get_params()
    assert loaded.normalize == "zscore"
    np.testing.assert_array_equal(loaded.feature_scale_, model.feature_scale_)
    assert loaded.history_ == {} and model.history_["loss"]  # the history is not a model
    text = (tmp_path / "m.json").read_text()
    assert '"format": "rsrank-model"' in text and '"truncation_threshold": "inf"' in text
    assert '"labels_and_sizes_sha256"' in text
    assert pickle.loads(pickle.dumps(model)).predict(X) == pytest.approx(model.predict(X))


@pytest.mark.parametrize("edit, message", [
    (lambda t: t[: len(t) // 2], "not a valid RSRank model file"),
    (lambda t: t.replace('"rsrank-model"', '"other"'), "not an RSRank model file"),
    (lambda t: t.replace('"format_version": 2', '"format_version": 99'), "newer"),
    (lambda t: t.replace('"n_features": 5', '"n_features": 6'), "list of 6 numbers"),
    (lambda t: t.replace('"format_version": 2', '"format_version": "1"'), "positive integer"),
    (lambda t: t.replace('"n_jobs": null', '"n_jobs": "abc"'), "invalid parameter: n_jobs"),
    (lambda t: t.replace('"l1": 0.2', '"l1": "nan"'), "invalid parameter: l1"),
    (lambda t: t.replace('"fitted": {', '"fitted": [').replace('"n_nonzero"', '"x"'),
     "not a valid RSRank model file"),
    (lambda t: t.replace('"params": {', '"params": [{'), "not a valid"),
    (lambda t: '{"a":' * 100_000 + "1" + "}" * 100_000, "not an RSRank model file|nested"),
    (lambda t: t.replace('"l1": 0.2', '"l2": 0.2'), "unknown parameters"),
])
def test_model_file_errors(tmp_path, edit, message):
    model, _ = fitted_model()
    model.save(tmp_path / "m.json")
    (tmp_path / "m.json").write_text(edit((tmp_path / "m.json").read_text()))
    with pytest.raises(ValueError, match=message):
        RSRank.load(tmp_path / "m.json")


def test_model_with_callable_gain_cannot_be_saved_as_json(tmp_path):
    X, y, qid = queries()
    model = RSRank(gain=lambda r: r, max_iter=1).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="use pickle"):
        model.save(tmp_path / "m.json")
    assert not (tmp_path / "m.json").exists()
