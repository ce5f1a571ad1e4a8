import warnings

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, GroupKFold, RandomizedSearchCV

from conftest import small_queries
from rsrank import RSRank, load_letor_fold
from rsrank.evaluation import metrics as M
from rsrank.evaluation.experiments import run_letor_folds
from rsrank.evaluation.model_selection import (cross_val_score_by_query, fit_search, letor_fold_split,
                                    make_map_scorer, make_ndcg_scorer)


queries = small_queries


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


@pytest.mark.parametrize("wrap", ["search", "pipeline in a search", "cross_val_score",
                                  "RSRankCV in a search"])
def test_a_search_whose_scorer_cannot_see_qid_fails_in_one_line_naming_the_fix(wrap):
    # routing off: scikit-learn gives fit the qid but the scorer none, so every
    # score would be NaN and best_params_ picked from NaNs; each fit refuses
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from rsrank import RSRankCV

    X, y, qid = queries()
    cv = GroupKFold(3)
    if wrap == "search":
        run = lambda: GridSearchCV(BASE, {"l1": [0.0, 0.5]}, cv=cv).fit(X, y, qid=qid, groups=qid)
    elif wrap == "pipeline in a search":
        pipe = make_pipeline(StandardScaler(), clone(BASE))
        run = lambda: GridSearchCV(pipe, {"rsrank__l1": [0.0, 0.5]}, cv=cv).fit(
            X, y, rsrank__qid=qid, groups=qid)
    elif wrap == "cross_val_score":
        run = lambda: cross_val_score(clone(BASE), X, y, cv=cv, groups=qid, params={"qid": qid})
    else:
        run = lambda: GridSearchCV(RSRankCV(l1_ratio=[0.1], max_iter=3), {"cv": [2]}, cv=cv).fit(
            X, y, qid=qid, groups=qid)
    with pytest.raises(ValueError) as caught:
        run()
    last = str(caught.value).strip().splitlines()[-1]
    assert "every score would be NaN" in last and "rsrank.model_selection.fit_search" in last


def test_a_search_that_gives_fit_no_qid_fails_naming_the_fix():
    X, y, qid = queries()
    # routing on but qid not passed: the split's rows would be one query each
    with sklearn.config_context(enable_metadata_routing=True), pytest.raises(ValueError) as caught:
        GridSearchCV(BASE, {"l1": [0.0]}, cv=GroupKFold(3).set_split_request(groups=True)).fit(
            X, y, groups=qid)
    assert "without qid" in str(caught.value).splitlines()[-1]
    # one query said out loud is taken at its word, routing on or off
    one = np.zeros(len(y))
    search = GridSearchCV(BASE, {"l1": [0.0]}, cv=3).fit(X, y, qid=one)
    assert np.isfinite(search.cv_results_["mean_test_score"]).all()


def test_outside_a_search_routing_off_is_a_clear_error_at_score():
    X, y, qid = queries()
    with pytest.raises(ValueError, match="needs the held-out rows' qid"):
        make_ndcg_scorer(10)(RSRank(max_iter=1).fit(X, y, qid=qid), X, y)


def test_a_fitted_search_and_its_pipeline_score_by_query():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from rsrank.evaluation.model_selection import score_by_query

    X, y, qid = queries()
    pipe = make_pipeline(StandardScaler(), clone(BASE))
    search = fit_search(GridSearchCV(pipe, {"rsrank__l1": [0.0, 0.5]}, cv=GroupKFold(3)), X, y, qid)
    best = search.best_estimator_
    expected = best[-1].score(best[0].transform(X), y, qid=qid)
    assert score_by_query(search, X, y, qid) == expected
    assert score_by_query(best, X, y, qid) == expected
    # routing is off again after fit_search: the pipeline's own score names the helper
    with pytest.raises(ValueError, match="drops it while metadata routing is off.*score_by_query"):
        best.score(X, y, qid=qid)


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


def test_fit_without_qid_says_its_rows_are_one_query():
    from rsrank import OneQueryWarning
    from rsrank.reading.synthetic import make_raw_features

    data = make_raw_features(30, random_state=0)
    with pytest.warns(OneQueryWarning, match=r"got no qid: its \d+ rows are ranked as one query"):
        RSRank(max_iter=2).fit(data.X, data.y)
    with pytest.warns(OneQueryWarning, match="partial_fit"):
        RSRank(max_iter=2).partial_fit(data.X, data.y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        RSRank(max_iter=2).fit(data.X, data.y, qid=data.qid)
        with pytest.raises(ValueError, match="1 sample"):  # one row: no warning, no pair
            RSRank(max_iter=2).fit(data.X[:1], data.y[:1])


def test_a_pipeline_scores_with_qid_once_routing_is_on_and_says_so_when_it_is_off():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y, qid = queries()
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = make_pipeline(StandardScaler(), clone(BASE)).fit(X, y, qid=qid)
        routed = pipe.score(X, y, qid=qid)
    alone = pipe[-1].score(pipe[0].transform(X), y, qid=qid)
    assert routed == alone
    # without routing the Pipeline drops qid before RSRank sees it: the message names why
    with pytest.raises(ValueError, match="Pipeline.*drops it.*enable_metadata_routing"):
        pipe.score(X, y, qid=qid)


def test_fit_search_given_an_estimator_instead_of_a_search_says_what_to_give():
    from rsrank import RSRankCV

    X, y, qid = np.zeros((4, 2)), np.array([0, 1, 0, 1]), np.array([1, 1, 2, 2])
    for given in (RSRank(), RSRankCV()):
        with pytest.raises(TypeError, match=rf"fit_search fits a search over an estimator "
                                            rf"\(GridSearchCV or RandomizedSearchCV\), got "
                                            rf"{type(given).__name__}: wrap it"):
            fit_search(given, X, y, qid)


def test_fit_search_on_a_click_log_points_to_rsrankcv():
    X, y, qid = np.zeros((4, 2)), np.array([0, 1, 0, 1]), np.array([1, 1, 2, 2])
    with pytest.raises(ValueError, match=r"position= makes y a click log: search a click log "
                                         r"with RSRankCV\(\)"):
        fit_search(GridSearchCV(RSRank(), {"l1": [0.0]}), X, y, qid, position=[1, 2, 1, 2])
