"""The LETOR protocol runner, its one selection rule and its results files."""

import sys
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils import Bunch

from rsrank import RSRank, load_letor_fold
from rsrank.evaluation import metrics as M
from rsrank.evaluation.experiments import (l1_grid, parse_metric, per_query_from_results, read_results,
                                regularization_path, run_letor_folds, save_experiment,
                                choose_fit, kind_choices, sparsest_index,
                                sparsest_within)


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
    # glmnet's order: each point starts from the weights of the next stronger one
    cold = clone(base).set_params(l1=0.3).fit(*data.train[:2], qid=data.train[2],
                                              coef_init=path[2].coef)
    np.testing.assert_allclose(path[1].coef, cold.coef_)
    top = clone(base).set_params(l1=1.0).fit(*data.train[:2], qid=data.train[2])
    np.testing.assert_allclose(path[2].coef, top.coef_)


def test_sparsest_within_against_the_dense_point():
    # key="test_ndcg" on purpose: the paper's test-selected table
    path = [Bunch(n_nonzero=30, test_ndcg=0.50), Bunch(n_nonzero=20, test_ndcg=0.49),
            Bunch(n_nonzero=10, test_ndcg=0.48), Bunch(n_nonzero=5, test_ndcg=0.40)]
    dense = {"key": "test_ndcg", "reference": "dense"}
    assert sparsest_within(path, 0.03, **dense).n_nonzero == 20
    assert sparsest_within(path, 0.05, **dense).n_nonzero == 10
    for point, vali in zip(path, [0.50, 0.40, 0.49, 0.30]):
        point.val_ndcg = vali
    assert sparsest_within(path, 0.03, key="val_ndcg", reference="dense").n_nonzero == 10


def test_sparsest_within_against_the_best_point_and_its_ties():
    points = [{"n_nonzero": 9, "vali_score": 0.40}, {"n_nonzero": 3, "vali_score": 0.50},
              {"n_nonzero": 3, "vali_score": 0.51}, {"n_nonzero": 1, "vali_score": 0.45}]
    assert sparsest_index(points, 0.0) == 2  # the best score only
    assert sparsest_index(points, 0.05) == 2  # 3 non-zeros twice: the higher score
    assert sparsest_index(points, 0.2) == 3
    # "dense" is the point with the most non-zeros, however low its score
    assert sparsest_index(points, 0.0, reference="dense") == 3
    ties = [{"n_nonzero": 2, "vali_score": 0.5}, {"n_nonzero": 2, "vali_score": 0.5}]
    assert sparsest_index(ties, 0.0) == 0  # then the earlier point
    # brute force over random points: nothing kept is sparser, nothing sparser is kept
    rng = np.random.default_rng(0)
    for _ in range(200):
        points = [{"n_nonzero": int(n), "vali_score": float(v)}
                  for n, v in zip(rng.integers(0, 6, 5), rng.uniform(size=5).round(1))]
        within = float(rng.choice([0.0, 0.1, 0.5]))
        chosen = sparsest_within(points, within)
        candidates = [p for p in points if p["n_nonzero"]] or points  # never the empty model
        best = max(p["vali_score"] for p in candidates)
        admissible = [p for p in candidates if p["vali_score"] >= (1 - within) * best]
        assert chosen in admissible
        assert chosen["n_nonzero"] == min(p["n_nonzero"] for p in admissible)


def test_a_model_without_weights_is_chosen_only_when_every_point_has_none():
    points = [{"n_nonzero": 0, "vali_score": 0.60}, {"n_nonzero": 7, "vali_score": 0.50}]
    assert sparsest_index(points, 0.0) == 1 and sparsest_index(points, 0.5) == 1
    empty = [{"n_nonzero": 0, "vali_score": 0.3}, {"n_nonzero": 0, "vali_score": 0.4}]
    assert sparsest_index(empty, 0.0) == 1


def test_one_standard_error_rule_against_a_brute_force_paired_se():
    from scipy import stats

    rng = np.random.default_rng(1)
    for _ in range(200):
        n_queries = int(rng.integers(2, 30))
        base = rng.uniform(size=n_queries)
        points = [{"n_nonzero": int(rng.integers(1, 9)),
                   "per_query": np.clip(base + rng.normal(rng.uniform(-0.2, 0.1), 0.1,
                                                          n_queries), 0, 1)}
                  for _ in range(int(rng.integers(1, 6)))]
        for point in points:
            point["vali_score"] = float(np.mean(point["per_query"]))
        best = max(points, key=lambda p: p["vali_score"])
        admissible = [p for p in points
                      if np.mean(p["per_query"] - best["per_query"])
                      >= -stats.sem(p["per_query"] - best["per_query"]) or p is best]
        chosen = sparsest_within(points, "1se")
        assert any(chosen is p for p in admissible)
        assert chosen["n_nonzero"] == min(p["n_nonzero"] for p in admissible)
    # few queries make it lenient, many strict: the same mean gap of 0.02
    gap = lambda n: [{"n_nonzero": 9, "vali_score": 0.5, "per_query": np.full(n, 0.5)},  # noqa: E731
                     {"n_nonzero": 2, "vali_score": 0.48,
                      "per_query": 0.48 + 0.1 * np.tile([1.0, -1.0], n // 2)}]
    assert sparsest_index(gap(10), "1se") == 1 and sparsest_index(gap(1000), "1se") == 0


def test_choose_fit_within_one_kind_is_sparsest_within():
    rng = np.random.default_rng(2)
    for _ in range(50):
        points = [{"kind": "additive", "n_nonzero": int(rng.integers(1, 9)),
                   "vali_score": float(rng.uniform()), "per_query": rng.uniform(size=5)}
                  for _ in range(int(rng.integers(1, 6)))]
        assert choose_fit(points, 0.01) == sparsest_index(points, 0.01)


def _kind_points(kind, per_query, n_nonzero=3):
    values = np.asarray(per_query, dtype=float)
    return {"kind": kind, "n_nonzero": n_nonzero, "vali_score": float(np.nanmean(values)),
            "per_query": values}


def test_choose_fit_keeps_a_richer_kind_only_beyond_one_standard_error():
    from scipy import stats

    rng = np.random.default_rng(3)
    for _ in range(300):
        n_queries = int(rng.integers(2, 40))
        linear = rng.uniform(size=n_queries)
        shift, spread = rng.uniform(-0.05, 0.15), rng.uniform(0.01, 0.3)
        additive = linear + rng.normal(shift, spread, n_queries)
        points = [_kind_points("linear", linear, 12), _kind_points("additive", additive, 4)]
        diff = additive - linear
        beyond = diff.mean() > stats.sem(diff)  # brute force: scipy's standard error
        assert choose_fit(points, 0.01) == (1 if beyond else 0)
        # the order of the points does not matter, the order of the kinds does
        assert choose_fit(points[::-1], 0.01) == (0 if beyond else 1)
    # a richer kind's best vali score above the simpler one's is not enough
    base = np.tile([0.2, 0.8], 10)
    noisy = base + 0.01 + 0.3 * np.tile([1.0, -1.0], 10)
    points = [_kind_points("linear", base), _kind_points("additive", noisy)]
    assert points[1]["vali_score"] > points[0]["vali_score"] and choose_fit(points, 0.0) == 0
    steady = base + 0.01
    assert choose_fit([_kind_points("linear", base), _kind_points("additive", steady)], 0.0) == 1


def test_choose_fit_walks_the_kinds_from_the_simplest_and_skips_nan_queries():
    base = np.r_[np.linspace(0.2, 0.8, 20), np.nan]
    up = lambda by: np.r_[base[:-1] + by, np.nan]  # noqa: E731
    wobble = np.r_[0.1 * np.tile([1.0, -1.0], 10), 0.0]
    linear, additive, pairs = (_kind_points("linear", base), _kind_points("additive", up(0.05)),
                               _kind_points("interactions", up(0.06) + wobble))
    # the additive model beats linear steadily; the pairs beat linear, not the additive model
    assert choose_fit([pairs, additive, linear], 0.0) == 1
    assert choose_fit([pairs, linear], 0.0) == 0
    # within each kind, the sparsest point within reach
    sparse = {**_kind_points("additive", up(0.049)), "n_nonzero": 1}
    assert choose_fit([linear, additive, sparse], 0.01) == 2
    # each kind's own choice, the simplest kind first
    assert list(kind_choices([pairs, sparse, additive, linear], 0.01).items()) == [
        ("linear", 3), ("additive", 1), ("interactions", 0)]
    assert kind_choices([additive, sparse], 0.01) == {"additive": 1}
    # a single query gives no standard error: the simpler kind stays
    one = [_kind_points("linear", [0.3]), _kind_points("additive", [0.9])]
    assert choose_fit(one, 0.0) == 0


@pytest.mark.parametrize("points, within, rule, message", [
    ([], 0.0, {}, "no points"),
    ([{"n_nonzero": 1, "vali_score": 0.5}], 1.0, {}, "within must be"),
    ([{"n_nonzero": 1, "vali_score": 0.5}], "2se", {}, "within must be"),
    ([{"n_nonzero": 1, "vali_score": 0.5}], 0.0, {"reference": "worst"}, "reference must"),
])
def test_sparsest_within_refuses(points, within, rule, message):
    with pytest.raises(ValueError, match=message):
        sparsest_within(points, within, **rule)


def test_per_query_from_results_averages_seeds_and_keys_by_fold():
    entry = lambda fold, seed, values: {"fold": fold, "seed": seed, "per_query": {
        "qid": [7, 3], "NDCG@10": values}}
    document = {"folds": [entry(1, 0, [0.2, 0.4]), entry(1, 1, [0.4, 0.0]),
                          entry(2, 0, [1.0, 0.5])]}
    merged = per_query_from_results(document)
    assert list(merged["qid"]) == ["1:7", "1:3", "2:7", "2:3"]
    assert merged["NDCG@10"] == pytest.approx([0.3, 0.2, 1.0, 0.5])
    with pytest.raises(ValueError, match="no per-query values"):
        per_query_from_results({"folds": [{"fold": 1}]}, source="old/results.json")


def test_results_written_are_read_back(bundled_root, tmp_path):
    base = RSRank(learning_rate=0.05, max_iter=3, random_state=0)
    experiment = run_letor_folds(bundled_root, base, {"l1": [0.0, 0.5]}, folds=[2], seeds=2)
    save_experiment(experiment, tmp_path / "run", command="rsrank train x")
    document = read_results(tmp_path / "run")
    assert read_results(tmp_path / "run" / "results.json") == document
    assert document["command"] == "rsrank train x" and document["seeds"] == [0, 1]
    values = per_query_from_results(document)
    expected = np.mean([f.per_query["NDCG@10"] for f in experiment.folds], axis=0)
    np.testing.assert_allclose(values["NDCG@10"], expected)
    assert list(values["qid"]) == [f"2:{q}" for q in experiment.folds[0].per_query["qid"]]


@pytest.mark.parametrize("text, error, message", [
    (None, FileNotFoundError, "no results.json"),
    ("{not json", ValueError, "not valid JSON"),
    ("[1, 2]", ValueError, "not a results.json"),
    ('{"folds": 3}', ValueError, "not a results.json"),
])
def test_read_results_refuses(tmp_path, text, error, message):
    if text is not None:
        (tmp_path / "results.json").write_text(text)
    with pytest.raises(error, match=message):
        read_results(tmp_path)


@pytest.mark.parametrize("params", [
    {}, {"normalize": "none"}, {"normalize": "minmax", "pair_weight": "unit"},
    {"normalize": "query-zscore", "ndcg_k": 5}, {"pair_loss": "logistic", "gain": "linear"},
    # K > 1 moves the weights K steps between truncations: at w = 0 by at most the
    # K steps' truncation, but the steps reorder the documents, so the edge holds
    # for small steps only
    {"truncation_period": 3, "learning_rate": 1e-2}, {"l1_method": "cumulative"}])
@pytest.mark.parametrize("sparse", [False, True])
def test_l1_max_is_the_edge_of_the_all_zero_model(bundled_root, params, sparse):
    import scipy.sparse as sp

    from rsrank import QueryData

    X, y, qid = load_letor_fold(bundled_root, 2).train[:3]
    data = QueryData(sp.csr_matrix(X) if sparse else X.toarray(), y, qid)
    base = RSRank(max_iter=30, **params)
    top = base.l1_max(data)
    assert top > 0
    above = clone(base).set_params(l1=top * 1.001).fit(data)
    assert not np.any(above.coef_)
    if base.truncation_period == 1:  # K > 1: weights move between truncations, then go back
        assert not np.any(above.history_["n_nonzero"])
    below = clone(base).set_params(l1=top * 0.95, max_iter=1).fit(data)
    assert np.count_nonzero(below.coef_) >= 1  # the first step moves the steepest feature
    # arrays give the same (CSR rows: to rounding, as the dense kernel sums four rows at a
    # time and the CSR kernel one)
    assert top == pytest.approx(base.l1_max(X, y, qid=qid), rel=1e-12)


def test_l1_grid():
    grid = l1_grid(20.0, 4, 1e-3)
    np.testing.assert_allclose(grid, [20.0, 2.0, 0.2, 0.02])
    assert l1_grid(0.0, 3) == [0.0, 0.0, 0.0]
    for bad in [(np.nan, 3, 0.1), (-1.0, 3, 0.1), (1.0, 1, 0.1), (1.0, 3, 1.0)]:
        with pytest.raises(ValueError):
            l1_grid(*bad)


def test_l1_max_of_a_stream_equals_that_of_the_loaded_data(bundled_root):
    X, y, qid = load_letor_fold(bundled_root, 2).train[:3]
    queries = np.unique(qid)
    blocks = [np.isin(qid, part) for part in np.array_split(queries, 3)]
    for params in [{}, {"normalize": "none"}, {"normalize": "query-minmax", "ndcg_k": 5}]:
        base = RSRank(**params)
        streamed = base.l1_max_chunks(lambda: ((X[b], y[b], qid[b]) for b in blocks))
        assert streamed == pytest.approx(base.l1_max(X, y, qid=qid), rel=1e-9)


def test_l1_ratio_points_are_fractions_of_each_folds_l1_max(bundled_root):
    from rsrank import QueryData

    base = RSRank(max_iter=5, random_state=0)
    run = run_letor_folds(bundled_root, base, {"l1_ratio": [0.0, 0.1, 1.01]}, folds=[1, 4])
    for fold in run.folds:
        train = QueryData(*load_letor_fold(bundled_root, fold.fold).train[:3])
        top = base.l1_max(train)
        by_ratio = {t["params"]["l1_ratio"]: t for t in fold.grid}
        assert [by_ratio[r]["params"]["l1"] for r in (0.0, 0.1, 1.01)] == [0.0, 0.1 * top,
                                                                            1.01 * top]
        assert by_ratio[1.01]["n_nonzero"] == 0  # above the top every weight stays zero
        assert by_ratio[0.0]["n_nonzero"] > by_ratio[0.1]["n_nonzero"] > 0
    # a point given as l1 trains the same model as the l1_ratio that stands for it
    fold = run.folds[0]
    explicit = run_letor_folds(bundled_root, base, {"l1": [fold.params["l1"]]}, folds=[1])
    np.testing.assert_array_equal(explicit.folds[0].model.coef_, fold.model.coef_)
    with pytest.raises(ValueError, match="both l1 and l1_ratio"):
        run_letor_folds(bundled_root, base, {"l1_ratio": [0.5], "l1": [1.0]}, folds=[1])


def test_auto_rate_is_chosen_once_per_fold_without_l1_and_the_grid_runs_at_it(bundled_root):
    from rsrank import QueryData

    base = RSRank(max_iter=8, random_state=0)
    run = run_letor_folds(bundled_root, base, {"l1_ratio": [0.0, 0.1]}, folds=[2], within=0.5)
    fold = load_letor_fold(bundled_root, 2)
    train, vali = QueryData(*fold.train[:3]), QueryData(*fold.vali[:3])
    chosen = clone(base).fit(train, eval_set=vali).learning_rate_
    assert {t["params"]["learning_rate"] for t in run.folds[0].grid} == {chosen}
    # the grid's points are plain fits at the chosen rate
    fixed = clone(base).set_params(learning_rate=chosen)
    for point in run.folds[0].grid:
        model = clone(fixed).set_params(l1=point["params"]["l1"]).fit(train, eval_set=vali)
        assert point["n_nonzero"] == np.count_nonzero(model.coef_)
        assert point["vali_score"] == pytest.approx(
            M.mean_ndcg(vali.y, model.predict(vali)[vali.order], vali.groups, 10,
                       convention="letor"), abs=1e-12)


def test_a_selection_hands_out_an_estimator_per_fit_only_when_asked(bundled_root):
    from rsrank import QueryData
    from rsrank.evaluation.experiments import fit_and_select

    fold = load_letor_fold(bundled_root, 1)
    selection = fit_and_select(RSRank(max_iter=3), [{"l1": 0.0}, {"l1": 1.0}],
                               QueryData(*fold.train), QueryData(*fold.vali))
    assert all(fit._face is None for fit in selection.fits)  # the fits are values
    chosen = selection.model
    assert [fit._face is not None for fit in selection.fits] == [
        i == selection.chosen for i in range(2)]
    assert selection.models[selection.chosen] is chosen
    assert [m.l1 for m in selection.models] == [0.0, 1.0]


def test_a_path_on_more_rows_than_path_rows_walks_a_sample_and_refits_its_choice(bundled_root):
    from rsrank import QueryData
    from rsrank.evaluation.experiments import fit_and_select
    from rsrank.learning.defaults import PATH_SETTLE_TOL
    from rsrank.learning.path import carried_weights, path_sample

    fold = load_letor_fold(bundled_root, 1)
    train, vali = QueryData(*fold.train), QueryData(*fold.vali)
    sample = path_sample(train, 2000, seed=3)
    # whole queries, the fewest of a seeded order that reach the rows, in their own order
    assert sample.n_rows >= 2000 > sample.n_rows - sample.sizes.max()
    assert np.array_equal(sample.qids, np.sort(sample.qids))
    assert np.isin(sample.qids, train.qids).all()
    assert np.array_equal(path_sample(train, 2000, seed=3).qids, sample.qids)
    assert np.array_equal(path_sample(train, 2000, None).qids,  # no seed: the same every run
                          path_sample(train, 2000, 0).qids)
    base = RSRank(max_iter=30, learning_rate="curvature", random_state=3)
    grid = [{"l1_ratio": r, "pair_weight": "unit"} for r in (0.3, 0.1, 0.0)]
    sampled = fit_and_select(base, grid, train, vali, path=True, within=0.01, path_rows=2000)
    walked = fit_and_select(base, grid, sample, vali, path=True, within=0.01)
    # the path's points are the sample's; the refit of the choice comes last, and is chosen
    assert sampled.tried[:3] == walked.tried
    assert sampled.chosen == 3 and sampled.tried[3]["refit"] == "all training queries"
    # the path's fits on the sample settle to PATH_SETTLE_TOL; the refit on all rows
    # to the estimator's weight_tol (None: all its epochs)
    assert [fit.fitted.params["weight_tol"] for fit in sampled.fits] == [PATH_SETTLE_TOL] * 3 + [
        None]
    params = walked.tried[walked.chosen]["params"]
    refit = sampled.tried[3]["params"]
    assert refit["l1_ratio"] == params["l1_ratio"]
    # its strength is the same share of the whole data's edge, and it starts from the sample
    unit = clone(base).set_params(pair_weight="unit")
    assert refit["l1"] == pytest.approx(params["l1_ratio"] * unit.l1_max(train))
    # from the sample's weights, each carried to the whole data's scaling: the same scores
    sample_model = walked.fits[walked.chosen].model
    start = carried_weights(base, params, sample_model, train)
    whole_scale = clone(unit).set_params(max_iter=1).fit(train).model_.scale
    assert not np.allclose(whole_scale, sample_model.scale)
    np.testing.assert_allclose(start / whole_scale, sample_model.coef / sample_model.scale)
    again = clone(unit).set_params(l1=refit["l1"]).fit(train, eval_set=vali, coef_init=start)
    np.testing.assert_allclose(sampled.model.coef_, again.coef_)
    assert sampled.tried[3]["vali_score"] == pytest.approx(M.mean_ndcg(
        vali.y, sampled.model.predict(vali)[vali.order], vali.groups, 10, convention="letor"))
    # with swap weights (a loss that is not convex) the refit starts from zero
    swap = [{**point, "pair_weight": "delta_ndcg"} for point in grid]
    sampled = fit_and_select(base, swap, train, vali, path=True, within=0.01, path_rows=2000)
    walked = fit_and_select(base, swap, sample, vali, path=True, within=0.01)
    params = walked.tried[walked.chosen]["params"]
    assert carried_weights(base, params, walked.fits[walked.chosen].model, train) is None
    refit = sampled.tried[3]["params"]
    again = clone(base).set_params(pair_weight="delta_ndcg", l1=refit["l1"]).fit(
        train, eval_set=vali)
    assert np.count_nonzero(again.coef_) > 0
    np.testing.assert_allclose(sampled.model.coef_, again.coef_)
    # a training set within path_rows walks its path on all of it
    whole = fit_and_select(base, grid, train, vali, path=True, within=0.01,
                           path_rows=train.n_rows)
    assert whole.tried == fit_and_select(base, grid, train, vali, path=True,
                                         within=0.01).tried


def test_a_fold_given_by_hand_is_a_typed_fold_and_a_misnamed_part_is_refused(bundled_root):
    from rsrank.evaluation.experiments import run_letor_folds
    from rsrank.reading.folds import Fold

    fold = load_letor_fold(bundled_root, 1)
    assert isinstance(fold, Fold) and fold["train"] is fold.train and fold.paths["train"]
    by_hand = Bunch(train=fold.train, vali=fold.vali, test=fold.test)
    made = Fold.of(by_hand)
    assert made.test is fold.test and made.paths == {} and made.query_options == {}
    # "tset" for "test" used to be dropped without a word, and the fold judged on vali
    with pytest.raises(ValueError, match="a fold has no 'tset'"):
        run_letor_folds([Bunch(train=fold.train, vali=fold.vali, tset=fold.test)],
                        RSRank(max_iter=1), {})
    with pytest.raises(KeyError):
        made["tset"]


def test_the_refit_of_a_choice_fits_only_what_the_choice_stands_for(bundled_root, monkeypatch):
    from rsrank import QueryData
    from rsrank.evaluation.experiments import fit_and_select, refit_on_all
    from rsrank.learning import fitting

    fold = load_letor_fold(bundled_root, 1)
    train, vali = QueryData(*fold.train), QueryData(*fold.vali)
    base = RSRank(max_iter=20, learning_rate="curvature", relax=True, random_state=3)
    grid = [{"l1_ratio": r, "pair_weight": "unit"} for r in (0.3, 0.1)]
    walked = fit_and_select(base, grid, train, vali, path=True, within=0.01)
    relaxes = [entry["params"]["relax"] for entry in walked.tried]
    assert relaxes == [False, True, False, True]
    calls = []
    for name in ("refit_kept", "refit_terms", "fit"):
        real = getattr(fitting, name)
        monkeypatch.setattr(fitting, name, lambda *a, _real=real, _name=name, **k: (
            calls.append((_name, a[0].solver.penalty.l1 > 0)) or _real(*a, **k)))
    # the penalized point of 0.1: its penalized fit alone, no relaxed refit beside it
    tried, _, fits, last = refit_on_all(base, train, vali, "ndcg@10", "letor", walked.tried,
                                        walked.per_query, walked.fits, 2)
    assert [c for c in calls if c[0] != "fit"] == [] and ("fit", True) in calls
    assert last == 4 and tried[4]["params"]["relax"] is False
    assert tried[4]["params"]["l1_ratio"] == 0.1
    # its relaxed refit: one fit without a penalty of the features the choice kept, and no
    # penalized fit that would only choose them again
    calls.clear()
    tried, _, fits, last = refit_on_all(base, train, vali, "ndcg@10", "letor", walked.tried,
                                        walked.per_query, walked.fits, 3)
    assert calls[0][0] == "refit_terms" and ("fit", False) in calls and ("fit", True) not in calls
    assert not any(name == "refit_kept" for name, _ in calls)
    assert last == 4 and tried[4]["params"]["relax"] is True
    assert tried[4]["params"]["l1_ratio"] == 0.1  # the strength on these rows, as the walk's
    assert tried[4]["params"]["l1"] == pytest.approx(walked.tried[3]["params"]["l1"])
    kept = set(walked.fits[3].model.selected_indices())
    assert kept and set(fits[4].model.selected_indices()) <= kept
    assert fits[4].fitted.params["l1"] == 0.0


def test_a_path_on_a_sample_gives_each_relaxed_refit_fewer_epochs_and_the_choice_all(
        bundled_root, monkeypatch):
    from rsrank import QueryData
    from rsrank.evaluation import experiments
    from rsrank.evaluation.experiments import fit_and_select
    from rsrank.learning.path import walk

    fold = load_letor_fold(bundled_root, 1)
    train, vali = QueryData(*fold.train), QueryData(*fold.vali)
    base = RSRank(max_iter=40, learning_rate="curvature", relax=True, weight_tol=None,
                  random_state=3)
    grid = [{"l1_ratio": r, "pair_weight": "unit"} for r in (0.3, 0.1)]
    points = walk(base, grid, train, validation=vali, relax_epochs=7)
    assert [p.fit.fitted.n_iter for p in points] == [40, 40]  # the penalized fits: all
    assert [p.relaxed.fitted.n_iter for p in points] == [7, 7]
    assert points[0].relaxed.fitted.params["max_iter"] == 7
    # the penalized fits are the walk's without a cap
    full = walk(base, grid[:1], train, validation=vali)[0]
    np.testing.assert_array_equal(points[0].fit.model.coef, full.fit.model.coef)
    assert full.relaxed.fitted.n_iter == 40
    # a path on a sample caps its relaxed refits; the choice's refit on all rows takes all
    monkeypatch.setattr(experiments, "PATH_RELAX_EPOCHS", 5)
    sampled = fit_and_select(base, grid, train, vali, path=True, within=0.01, path_rows=2000)
    relaxed = [fit.fitted.n_iter for entry, fit in zip(sampled.tried[:-1], sampled.fits)
               if entry["params"]["relax"]]
    assert relaxed and set(relaxed) == {5}
    assert sampled.fits[-1].fitted.n_iter == 40
    # a path on all rows has no refit after it: its relaxed refits take all their epochs
    whole = fit_and_select(base, grid, train, vali, path=True, within=0.01)
    assert {fit.fitted.n_iter for fit in whole.fits} == {40}


def test_the_refit_on_all_rows_drops_the_walks_bin_codes_of_the_vali_rows(bundled_root,
                                                                           monkeypatch):
    """The vali rows' bin codes of the encodings a path on a sample walked
    are freed before the refit on all rows makes its own: kept, they only
    added to the memory of the refit (26 MiB at a quarter of MSLR-WEB30K's
    shape), and the choice is the same as with them kept."""
    import gc
    import weakref

    from rsrank import QueryData
    from rsrank.evaluation import experiments
    from rsrank.evaluation.experiments import fit_and_select

    fold = load_letor_fold(bundled_root, 1)
    train, vali = (QueryData(X.toarray(), y, qid) for X, y, qid in (fold.train, fold.vali))
    base = RSRank(additive=True, max_bins=8, max_iter=20, random_state=3)
    grid = [{"l1_ratio": r} for r in (0.3, 0.0)]
    with monkeypatch.context() as keeping:  # as before: nothing forgotten
        keeping.setattr(QueryData, "forget", lambda data: None)
        kept = fit_and_select(base, grid, train, vali, path=True, within=0.01, path_rows=2000)
    codes, refitting = [], []  # per vali coding: made by the refit, and its codes
    rows, refit_on_all = QueryData.rows, experiments.refit_on_all

    def watched(data, view="none"):  # each vali view's codes, as they are made
        made = rows(data, view)
        if data is vali and made.dense_codes.size and not any(
                ref() is made.dense_codes for _, ref in codes):
            codes.append((bool(refitting), weakref.ref(made.dense_codes)))
        return made

    def refit(*args, **kwargs):
        refitting.append(True)
        return refit_on_all(*args, **kwargs)
    train.forget(), vali.forget()
    monkeypatch.setattr(QueryData, "rows", watched)
    monkeypatch.setattr(experiments, "refit_on_all", refit)
    dropped = fit_and_select(base, grid, train, vali, path=True, within=0.01, path_rows=2000)
    gc.collect()
    walk = [ref() is not None for made_by_refit, ref in codes if not made_by_refit]
    refits = [ref() is not None for made_by_refit, ref in codes if made_by_refit]
    assert walk and refits and not any(walk) and all(refits)  # the refit's alone
    assert dropped.tried == kept.tried
    np.testing.assert_array_equal(dropped.model.coef_, kept.model.coef_)


def test_a_fold_read_from_files_trains_without_its_test_values_and_reads_them_after(
        bundled_root):
    fold = load_letor_fold(bundled_root, 1)
    values = fold.test[0].toarray()  # CSR, as the reader gives it
    held = []  # whether the fold held the test values at each fit
    base = RSRank(learning_rate=0.05, max_iter=3, random_state=0)
    late = run_letor_folds([fold], base, {"l1": [0.0, 0.5]},
                           on_fit=lambda *_: held.append(fold.test[0] is not None))
    assert len(held) == 2 and not any(held)
    np.testing.assert_array_equal(fold.test[0].toarray(), values)  # whole again after the run
    # the same results as a fold whose test values stay (given as arrays)
    kept = run_letor_folds([replace(load_letor_fold(bundled_root, 1), reread_test=None)], base,
                           {"l1": [0.0, 0.5]})
    assert late.folds[0].test == kept.folds[0].test
    np.testing.assert_array_equal(late.folds[0].test_scores, kept.folds[0].test_scores)


def test_a_test_file_changed_while_the_model_trains_is_refused(tmp_path):
    from rsrank.reading.layouts import load_splits

    rng = np.random.default_rng(0)
    paths = {}
    for split, queries in (("train", range(1, 9)), ("vali", range(9, 13)),
                           ("test", range(13, 17))):
        lines = [f"{rng.integers(0, 3)} qid:{q} 1:{rng.normal():.4f} 2:{rng.normal():.4f}"
                 for q in queries for _ in range(6)]
        paths[split] = tmp_path / f"{split}.txt"
        paths[split].write_text("\n".join(lines) + "\n")
    fold = load_splits(paths["train"], paths["vali"], paths["test"])
    text = paths["test"].read_text()
    changed = ("4" if text[0] != "4" else "3") + text[1:]  # the first document's label

    def change(*_):
        paths["test"].write_text(changed)

    with pytest.raises(ValueError, match=r"test\.txt: the test file changed while the model "
                                         r"trained"):
        run_letor_folds([fold], RSRank(max_iter=2), {"l1": [0.0]}, on_fit=change)


def test_a_run_that_fails_leaves_the_folds_test_values_as_given(bundled_root):
    fold = load_letor_fold(bundled_root, 1)
    values = fold.test[0].toarray()

    def fail(*_):
        raise RuntimeError("stopped in a fit")

    with pytest.raises(RuntimeError, match="stopped in a fit"):
        run_letor_folds([fold], RSRank(max_iter=2), {"l1": [0.0]}, on_fit=fail)
    np.testing.assert_array_equal(fold.test[0].toarray(), values)


def test_a_failed_run_whose_test_file_is_gone_raises_its_own_error_with_a_note(tmp_path):
    from rsrank.reading.layouts import load_splits

    rng = np.random.default_rng(1)
    paths = {}
    for split, queries in (("train", range(1, 9)), ("vali", range(9, 13)),
                           ("test", range(13, 17))):
        lines = [f"{rng.integers(0, 3)} qid:{q} 1:{rng.normal():.4f} 2:{rng.normal():.4f}"
                 for q in queries for _ in range(6)]
        paths[split] = tmp_path / f"{split}.txt"
        paths[split].write_text("\n".join(lines) + "\n")
    fold = load_splits(paths["train"], paths["vali"], paths["test"])

    def fail(*_):
        paths["test"].unlink()
        raise RuntimeError("stopped in a fit")

    with pytest.raises(RuntimeError, match="stopped in a fit") as raised:
        run_letor_folds([fold], RSRank(max_iter=2), {"l1": [0.0]}, on_fit=fail)
    if sys.version_info >= (3, 11):
        assert any("test.txt: not read again after the failed run" in note
                   for note in raised.value.__notes__)
    assert fold.test[0] is None and len(fold.test[1]) == 24


def test_a_fold_built_for_one_run_lets_its_training_values_go_before_the_test_is_scored(
        bundled_root):
    base = RSRank(learning_rate=0.05, max_iter=3)
    kept_fold = load_letor_fold(bundled_root, 1)
    own = replace(load_letor_fold(bundled_root, 1), keep_train=False)
    labels = own.train[1].copy()
    gone = run_letor_folds([own], base, {"l1": [0.0, 0.5]}, seeds=[0, 1])
    kept = run_letor_folds([kept_fold], base, {"l1": [0.0, 0.5]}, seeds=[0, 1])
    assert own.train[0] is None  # let go after the last seed, the labels kept
    np.testing.assert_array_equal(own.train[1], labels)
    assert kept_fold.train[0] is not None and kept_fold.train[0].shape[0] == len(labels)
    for late, early in zip(gone.folds, kept.folds):  # the second seed trained on all of it
        assert late.test == early.test and late.seed == early.seed
        np.testing.assert_array_equal(late.test_scores, early.test_scores)


def test_the_refit_of_a_runs_own_training_rows_holds_their_bin_codes_alone(bundled_root):
    from rsrank import QueryData
    from rsrank.evaluation.experiments import fit_and_select

    fold = load_letor_fold(bundled_root, 1)
    base = RSRank(additive=True, max_bins=16, max_iter=20, learning_rate="curvature",
                  random_state=0)
    # a relaxed choice: its refit starts from the penalized weights, whose reference
    # loss (the all-zero model's) is taken on the bin codes the rows are left with
    grid = [{"l1_ratio": r, "pair_weight": "unit", "relax": relax}
            for r in (0.3, 0.1) for relax in (True, False)]
    vali = QueryData(*fold.vali)
    kept = fit_and_select(base, grid, QueryData(*fold.train), vali, path=True,
                          path_rows=2000)
    train, gone = QueryData(*fold.train), []
    own = fit_and_select(base, grid, train, QueryData(*fold.vali), path=True, path_rows=2000,
                         last_use=lambda: gone.append(True))
    assert gone == [True]  # once, as the refit on all rows coded them
    with pytest.raises(RuntimeError, match="let go once they were coded into bins"):
        train.X
    assert own.tried == kept.tried and own.chosen == kept.chosen == len(kept.tried) - 1
    assert own.tried[own.chosen]["params"]["relax"] is True
    np.testing.assert_array_equal(own.model.coef_, kept.model.coef_)
    # a training set that walks its path on all rows refits nothing: its values stay
    whole = QueryData(*fold.train)
    fit_and_select(base, grid, whole, vali, path=True, last_use=lambda: gone.append(False))
    assert gone == [True] and whole.X is not None


def test_a_runs_own_fold_keeps_its_training_rows_as_codes_for_every_seed(bundled_root):
    """A run's own training rows, walked on a sample by an additive kind,
    are coded once, before the first fit, and every seed fits on the same
    codes: each seed's results are those of a run of that seed alone."""
    base = RSRank(additive=True, max_bins=16, max_iter=20, learning_rate="curvature",
                  batch_size=50)
    grid = {"l1_ratio": [0.3, 0.1], "pair_weight": ["unit"]}
    options = dict(path=True, path_rows=2000)
    runs = {}
    for seeds in ([0, 1], [0], [1]):
        own = replace(load_letor_fold(bundled_root, 1, dense=True), keep_train=False)
        held = []  # at each fit: whether the fold holds its training values
        runs[tuple(seeds)] = run_letor_folds(
            [own], base, grid, seeds=seeds, **options,
            on_fit=lambda fold, seed, *_: held.append(own.train[0] is not None))
        assert own.train[0] is None and held and not any(held)
    for alone in (runs[(0,)], runs[(1,)]):
        together = [f for f in runs[(0, 1)].folds if f.seed == alone.folds[0].seed][0]
        assert together.test == alone.folds[0].test and together.params == alone.folds[0].params
        np.testing.assert_array_equal(together.test_scores, alone.folds[0].test_scores)


def test_a_path_on_a_sample_of_its_own_rows_reads_their_codes_alone(bundled_root):
    """:func:`keep_codes`: an additive grid whose path walks a sample codes
    the training rows at its bins and tells the caller once, and the path
    then fits as on rows coded by hand. A grid that reads values (a linear
    point), points at other bins, a path on all rows and sparse rows keep
    the values."""
    from rsrank import QueryData
    from rsrank.evaluation.experiments import fit_and_select
    from rsrank.learning.path import keep_codes

    fold = load_letor_fold(bundled_root, 1, dense=True)
    base = RSRank(additive=True, interactions=1, max_bins=32, max_iter=10,
                  learning_rate="curvature", random_state=0)
    grid = [{"l1_group_ratio": r, "pair_weight": "unit"} for r in (0.3, 0.1)]
    vali = QueryData(*fold.vali)
    by_hand = QueryData(*fold.train)
    assert by_hand.keep_codes_alone(32)
    expected = fit_and_select(base, grid, by_hand, vali, path=True, path_rows=2000)
    train, told = QueryData(*fold.train), []
    assert keep_codes(base, grid, train, 2000, lambda: told.append(True))
    assert told == [True] and train.X.coded
    got = fit_and_select(base, grid, train, vali, path=True, path_rows=2000)
    assert got.tried == expected.tried and got.chosen == expected.chosen
    np.testing.assert_array_equal(got.model.coef_, expected.model.coef_)
    kept = {"mixed": ([*grid, {"l1_ratio": 0.1, "additive": False, "interactions": 0}], 2000),
            "bins": ([*grid, {"l1_group_ratio": 0.1, "max_bins": 16}], 2000),
            "all rows": (grid, fold.train[0].shape[0])}
    for points, rows in kept.values():
        values = QueryData(*fold.train)
        assert not keep_codes(base, points, values, rows, lambda: told.append(False))
        assert isinstance(values.X, np.ndarray)
    sparse = QueryData(*load_letor_fold(bundled_root, 1).train[:3])
    assert not keep_codes(base, grid, sparse, 2000, lambda: told.append(False))
    assert told == [True] and sp.issparse(sparse.X)


def test_a_runs_own_vali_values_are_read_after_its_training_rows_are_coded(bundled_root):
    """A fold read with ``vali_values=False`` holds the vali labels alone;
    the run reads the values once its training rows are codes (never both
    values at once), and scores as the fold read whole does."""
    base = RSRank(additive=True, max_bins=16, max_iter=20, learning_rate="curvature",
                  random_state=0)
    grid = {"l1_ratio": [0.3, 0.1], "pair_weight": ["unit"]}
    options = dict(path=True, path_rows=2000, seeds=[0])
    whole = replace(load_letor_fold(bundled_root, 1, dense=True), keep_train=False)
    later = replace(load_letor_fold(bundled_root, 1, dense=True, vali_values=False),
                    keep_train=False)
    assert later.vali[0] is None
    np.testing.assert_array_equal(later.vali[1], whole.vali[1])
    read, seen = later.reread_vali, []
    later.reread_vali = lambda: seen.append(later.train[0] is None) or read()
    got, expected = (run_letor_folds([fold], base, grid, **options) for fold in (later, whole))
    assert seen == [True]  # once, after the training values went
    np.testing.assert_array_equal(later.vali[0], whole.vali[0])
    assert got.folds[0].test == expected.folds[0].test
    np.testing.assert_array_equal(got.folds[0].test_scores, expected.folds[0].test_scores)
