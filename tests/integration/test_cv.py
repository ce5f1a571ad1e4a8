"""RSRankCV: rsrank train's recipe as one estimator, selecting on an
eval_set as rsrank train selects on vali, or on folds of the training
queries."""

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GroupKFold

from conftest import small_queries
from rsrank import QueryData, RSRankCV, load_letor_fold
from rsrank.estimator import DivergenceWarning
from rsrank.evaluation.experiments import choose_fit, run_letor_folds, sparsest_within
from rsrank.evaluation.metrics import ndcg_per_query
from rsrank.learning.path import walk
from rsrank.learning.recipe import train_recipe

RATIOS = [0.215, 0.0464, 0.01, 0.0]
FAST = dict(l1_ratio=RATIOS, max_iter=60, n_jobs=1)


def test_with_an_eval_set_it_selects_what_rsrank_train_selects(bundled_root):
    fold = load_letor_fold(bundled_root, 2)
    cv = RSRankCV(**FAST).fit(*fold.train[:2], qid=fold.train[2], eval_set=fold.vali[:3])
    estimator, grid = train_recipe(l1_ratio=RATIOS, max_iter=60, n_jobs=1)
    fold.fold = 2
    result = run_letor_folds([fold], estimator, grid, within=0.01, path=True).folds[0]
    assert cv.best_params_ == result.params and cv.validated_on_ == "eval_set"
    np.testing.assert_array_equal(cv.coef_, result.model.coef_)
    np.testing.assert_array_equal(cv.predict(fold.test[0]), result.model.predict(fold.test[0]))
    assert [p["vali_score"] for p in cv.path_] == [t["vali_score"] for t in result.grid]
    # both pair weightings, every strength
    assert {p["params"]["pair_weight"] for p in cv.path_} == {"unit", "delta_ndcg"}
    assert len(cv.path_) == 2 * len(RATIOS)


def test_without_an_eval_set_each_point_is_judged_on_the_queries_folds_held_out():
    X, y, qid = small_queries(n_queries=30)
    cv = RSRankCV(cv=3, **FAST).fit(X, y, qid=qid)
    assert cv.validated_on_ == "3 folds"
    # by hand: each fold's path, scored on the queries it held out
    estimator, grid = cv.recipe()
    queries = np.unique(qid)
    held = [[] for _ in grid]
    for kept, _ in GroupKFold(3).split(np.zeros((30, 1)), None, groups=np.arange(30)):
        rows = np.isin(qid, queries[kept])
        for i, point in enumerate(walk(estimator, grid, QueryData(X[rows], y[rows], qid[rows]))):
            held[i].append(ndcg_per_query(y[~rows], point.model.predict(X[~rows]), qid[~rows],
                                          10, convention="letor"))
    for i, entry in enumerate(cv.path_):
        expected = np.concatenate(held[i])
        np.testing.assert_allclose(entry["per_query"], expected)
        assert entry["vali_score"] == pytest.approx(np.nanmean(expected))
    # the choice is the rule's, among the fits on all the queries
    assert cv.path_[cv.best_index_] is sparsest_within(cv.path_, 0.01)
    again = [p.model for p in walk(estimator, grid, QueryData(X, y, qid))][cv.best_index_]
    np.testing.assert_array_equal(cv.coef_, again.coef_)
    assert cv.path_[cv.best_index_]["n_nonzero"] == len(cv.selected_features())


def test_it_is_a_scikit_learn_estimator_that_never_diverges_by_default():
    X, y, qid = small_queries(n_queries=24)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DivergenceWarning)
        cv = RSRankCV(**FAST).fit(X * [1e4, 1, 1e-6, 1, 1], y, qid=qid)
    assert clone(cv).get_params() == cv.get_params()
    assert 0 < cv.score(X * [1e4, 1, 1e-6, 1, 1], y, qid=qid) <= 1
    assert cv.l1_ratio_ in RATIOS
    with pytest.raises(ValueError, match="within"):
        RSRankCV(within=2).fit(X, y, qid=qid)


def test_the_additive_kind_walks_whole_shapes():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(600, 4))
    qid = np.repeat(np.arange(30), 20)
    y = (np.sin(3 * X[:, 0]) + (X[:, 1] > 0.5) + 0.3 * rng.normal(size=600) > 1).astype(int)
    cv = RSRankCV(additive=True, **FAST).fit(X, y, qid=qid)
    assert "l1_group_ratio" in cv.best_params_
    names = [name for name, _ in cv.selected_features()]
    assert "f1" in names and "f2" in names


def test_a_selection_of_3_percent_or_more_takes_the_sparse_recipe():
    from rsrank.learning.recipe import (DEFAULT_L1_RATIO, SPARSE_L1_RATIO, SPARSE_VALI_CV,
                               vali_folds)
    # the sparse path: every default point, and twice as many between 1 and 0.1 of l1_max
    assert set(DEFAULT_L1_RATIO) < set(SPARSE_L1_RATIO)
    strong = [r for r in SPARSE_L1_RATIO if r >= 0.1]
    assert len(strong) == 2 * len([r for r in DEFAULT_L1_RATIO if r >= 0.1])
    assert SPARSE_L1_RATIO == sorted(SPARSE_L1_RATIO, reverse=True)
    for within, ratios, folds in ((0.01, DEFAULT_L1_RATIO, None), ("1se", DEFAULT_L1_RATIO, None),
                                  (0.03, SPARSE_L1_RATIO, SPARSE_VALI_CV),
                                  (0.1, SPARSE_L1_RATIO, SPARSE_VALI_CV)):
        assert train_recipe(within=within)[1]["l1_ratio"] == ratios
        assert train_recipe(within=within, additive=True)[1]["l1_group_ratio"] == ratios
        assert vali_folds(within) == folds
    # what is given wins: a grid, folds, or 0 folds (vali alone)
    assert train_recipe(within=0.03, l1_ratio=[0.5, 0])[1]["l1_ratio"] == [0.5, 0]
    assert vali_folds(0.03, 0) is None and vali_folds(0.01, 5) == 5


def test_the_sparse_recipe_with_an_eval_set_also_judges_on_folds_like_rsrank_train(bundled_root):
    fold = load_letor_fold(bundled_root, 2)
    cv = RSRankCV(within=0.05, **FAST).fit(*fold.train[:2], qid=fold.train[2],
                                           eval_set=fold.vali[:3])
    assert cv.validated_on_ == "eval_set and 3 folds"
    estimator, grid = train_recipe(l1_ratio=RATIOS, max_iter=60, n_jobs=1, within=0.05)
    fold.fold = 2
    result = run_letor_folds([fold], estimator, grid, within=0.05, path=True,
                             vali_cv=3).folds[0]
    assert cv.best_params_ == result.params
    assert [p["vali_score"] for p in cv.path_] == [t["vali_score"] for t in result.grid]
    # one value per vali query and per training query
    assert len(cv.path_[0]["per_query"]) == len(np.unique(fold.vali[2])) + len(
        np.unique(fold.train[2]))


def test_rsrankcv_with_linear_walks_both_kinds_at_the_given_strengths():
    X, y, qid = small_queries(n_queries=30)
    cv = RSRankCV(additive=True, with_linear=True, **FAST).fit(X, y, qid=qid)
    kinds = [p["params"].get("additive", True) for p in cv.path_]
    assert kinds.count(False) == 2 * len(RATIOS)  # both pair weightings
    assert {p["params"].get("l1_ratio", p["params"].get("l1_group_ratio"))
            for p in cv.path_} == set(RATIOS)
    assert cv.best_index_ == choose_fit(cv.path_, 0.01)
    assert {p["kind"] for p in cv.path_} == {"linear", "additive"}
    assert cv.estimator_.model_.kind == ("additive" if kinds[cv.best_index_] else "linear")


def test_verbose_prints_a_line_per_fit_wherever_stderr_goes(capsys):
    X, y, qid = small_queries(n_queries=20)
    RSRankCV(max_iter=3, cv=2).fit(X, y, qid=qid)
    assert capsys.readouterr().err == ""  # silent by default, as scikit-learn's CV estimators
    RSRankCV(max_iter=3, cv=2, verbose=1).fit(X, y, qid=qid)
    lines = capsys.readouterr().err.splitlines()
    total = int(lines[0].split(" of about ")[1].split()[0])
    assert len(lines) == total and lines[-1].startswith(f"RSRankCV: fit {total} of about {total}")
    assert "pair_weight=" in lines[0]


def test_its_path_runs_with_blas_on_one_thread(monkeypatch):
    # as the command line: BLAS's waiting threads would share the cores with
    # the path's fits, between them too (rsrank.learning._blas)
    from threadpoolctl import threadpool_limits

    from conftest import blas_threads

    import rsrank.cv

    seen = []

    class Seen(Exception):
        """The probe has seen what it came for."""

    def probe(*args, **kwargs):
        seen.append(blas_threads())
        raise Seen

    monkeypatch.setattr(rsrank.cv, "fit_and_select", probe)
    X, y, qid = small_queries(n_queries=10)
    with threadpool_limits(limits=2, user_api="blas"):
        if blas_threads() != {2}:
            pytest.skip("no BLAS here that takes two threads")
        with pytest.raises(Seen):
            RSRankCV(**FAST).fit(X, y, qid=qid, eval_set=(X, y, qid))
        assert seen == [{1}]
        assert blas_threads() == {2}
