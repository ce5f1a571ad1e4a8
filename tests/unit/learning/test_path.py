"""A unit test of rsrank.learning.path's walk: with ``patience`` each
setting stops after that many points in a row that do not raise the best
score of its fits, and a setting that keeps improving walks every point."""

import gc
import weakref

import numpy as np

from rsrank import RSRank
from rsrank.learning.path import walk
from rsrank.reading.querydata import QueryData


def small_data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, 4))
    y = (X[:, 0] + 0.3 * rng.normal(size=120) > 0.5).astype(float) + (X[:, 1] > 1)
    return QueryData(X, y, np.repeat(np.arange(12), 10))


def test_a_setting_stops_after_patience_points_without_a_better_score():
    data = small_data()
    ratios = [0.5, 0.3, 0.2, 0.1, 0.05, 0.0]
    grid = [{"l1_ratio": r, "pair_weight": weight} for r in ratios
            for weight in ("unit", "delta_ndcg")]
    # unit: best at its second point, then lower; delta_ndcg: better at every point
    scores = {"unit": iter([0.5, 0.7, 0.6, 0.65, 0.9, 0.9]),
              "delta_ndcg": iter([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])}
    judged = []

    def judge(fit):
        weight = fit.params["pair_weight"]
        judged.append(weight)
        return next(scores[weight])
    points = walk(RSRank(learning_rate="curvature", max_iter=3), grid, data,
                  judge=judge, patience=2)
    walked = [(p.params["pair_weight"], p.params["l1_ratio"]) for p in points]
    # unit's third and fourth points do not beat 0.7: it stops there, never seeing 0.9
    assert [r for w, r in walked if w == "unit"] == [0.5, 0.3, 0.2, 0.1]
    assert [r for w, r in walked if w == "delta_ndcg"] == ratios
    assert judged.count("unit") == 4 and judged.count("delta_ndcg") == 6


def test_without_patience_every_point_is_walked_and_none_is_judged():
    def judge(fit):
        raise AssertionError("judged without patience")
    grid = [{"l1_ratio": r} for r in (0.5, 0.2, 0.0)]
    points = walk(RSRank(learning_rate="curvature", max_iter=3), grid, small_data(1),
                  judge=judge)
    assert [p.params["l1_ratio"] for p in points] == [0.5, 0.2, 0.0]


def test_a_path_on_a_sample_and_the_refit_of_its_choice_take_one_search_on_all_rows(
        monkeypatch):
    from rsrank.learning import fitting
    from rsrank.learning.path import one_search, path_sample, refit_point

    rng = np.random.default_rng(4)
    X = rng.normal(size=(600, 5))
    y = np.clip(np.round(X[:, 0] * X[:, 1] + X[:, 2] + 0.3 * rng.normal(size=600)), 0, 3)
    train = QueryData(X, y, np.repeat(np.arange(60), 10))
    vali = QueryData(rng.normal(size=(200, 5)), y[:200], np.repeat(np.arange(20), 10))
    base = RSRank(additive=True, interactions=2, learning_rate="curvature", max_iter=4,
                  relax=True)
    grid = [{"l1_group_ratio": r, "pair_weight": w} for w in ("unit", "delta_ndcg")
            for r in (0.3, 0.05)]
    sample = path_sample(train, 300, 0)
    searched, real = [], fitting.top_pairs
    monkeypatch.setattr(fitting, "top_pairs",
                        lambda *a, **k: searched.append(a[2].n_rows) or real(*a, **k))
    with one_search(base, grid, train, sample) as walked:
        # the path walks the weighting the pairs were searched with: the grid's first
        assert walked == grid[:2]
        points = walk(base, walked, sample, validation=vali)
        walk(base, grid[:1], sample, validation=vali)  # the sample keeps the search
        # the path's fits do not hold the sample: it goes before the refit
        gone = weakref.ref(sample)
        del sample
        gc.collect()
        assert gone() is None
        chosen = points[1]  # the unit weighting at 0.05, its relaxed refit
        refit = refit_point(base, {**chosen.params, "relax": True}, chosen.relaxed, train, vali)
    assert searched == [train.n_rows]  # one search, on all the rows
    pairs = points[0].fit.model.encoding.pairs
    assert len(pairs) == 2
    for model in [p.fit.model for p in points] + [refit.fit.model]:
        np.testing.assert_array_equal(model.encoding.pairs, pairs)
    # the relaxed choice: one fit on all rows of the terms the sample's fit kept
    assert refit.relaxed is None and refit.fit.fitted.params["l1_group"] == 0.0
    kept = set(chosen.relaxed.model.selected_terms())
    assert kept and set(refit.fit.model.selected_terms()) <= kept
    assert refit.fit.model.encoding.counts[0].sum() == train.n_rows
    assert refit.params["l1_group_ratio"] == 0.05 and refit.params["relax"] is True
    assert points[0].fit.face.n_features_in_ == 5  # a face made after the sample went


def test_a_sampled_path_walks_every_weighting_of_a_kind_without_pairs():
    """Only a kind with pairs walks its search's weighting alone; a grid
    with such a kind first in ``delta_ndcg`` keeps that one."""
    from rsrank.learning.path import one_search

    data = small_data(2)
    linear = [{"l1_ratio": r, "pair_weight": w, "additive": False, "interactions": 0}
              for w in ("unit", "delta_ndcg") for r in (0.3, 0.0)]
    pairs = [{"l1_group_ratio": r, "pair_weight": w, "additive": True, "interactions": 1}
             for w in ("delta_ndcg", "unit") for r in (0.3, 0.0)]
    base = RSRank(learning_rate="curvature", max_iter=2)
    with one_search(base, linear, data, data) as walked:
        assert walked == linear
    with one_search(base, linear + pairs, data, data) as walked:
        assert walked == linear + pairs[:2]


def test_settle_tol_stops_the_penalized_fits_alone_and_never_tightens_them():
    # the penalized fits stop at the larger of the estimator's weight_tol and settle_tol;
    # the relaxed refits keep the estimator's: on all rows it is the chosen point's
    data = small_data(2)
    grid = [{"l1_ratio": r} for r in (0.3, 0.1)]

    def walked(weight_tol, settle_tol):
        points = walk(RSRank(learning_rate="curvature", max_iter=300, relax=True,
                             weight_tol=weight_tol), grid, data,
                      settle_tol=settle_tol)
        return [(p.fit.fitted.params["weight_tol"], p.fit.fitted.n_iter,
                 p.relaxed.fitted.params["weight_tol"]) for p in points]
    tight, loose = walked(1e-6, None), walked(1e-6, 1e-2)
    assert [t for t, _, _ in tight] == [1e-6, 1e-6]
    assert [t for t, _, _ in loose] == [1e-2, 1e-2]
    assert [r for _, _, r in loose] == [1e-6, 1e-6]
    assert all(a < b for (_, a, _), (_, b, _) in zip(loose, tight))  # fewer epochs
    assert [t for t, _, _ in walked(0.05, 1e-2)] == [0.05, 0.05]
