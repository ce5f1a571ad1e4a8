"""RSRankCV's recipe, through the ``rsrank`` command line: the rest of its
tests, through the API, are in tests/integration/test_cv.py."""

import numpy as np
import pytest
from sklearn.model_selection import ParameterGrid

from rsrank import QueryData, load_letor_fold
from rsrank.evaluation.experiments import run_letor_folds
from rsrank.learning.path import walk
from rsrank.learning.recipe import train_recipe

from integration.test_cv import RATIOS


def test_rsrank_train_can_judge_on_vali_and_on_folds_of_train(bundled_root, capsys):
    from rsrank.cli import main
    from rsrank.evaluation.experiments import held_out_values, score_fits
    fold = load_letor_fold(bundled_root, 2)
    fold.fold = 2
    estimator, grid = train_recipe(l1_ratio=RATIOS, max_iter=60, n_jobs=1)
    result = run_letor_folds([fold], estimator, grid, within=0.01, path=True,
                             vali_cv=3).folds[0]
    train, vali = QueryData(*fold.train[:3]), QueryData(*fold.vali[:3])
    points = list(ParameterGrid(grid))
    _, on_vali, _ = score_fits(walk(estimator, points, train, validation=vali), vali,
                               "ndcg@10", "letor")
    held = held_out_values(estimator, points, train, 3, "ndcg@10", "letor")
    expected = [np.nanmean(np.concatenate([a, b])) for a, b in zip(on_vali, held)]
    assert [t["vali_score"] for t in result.grid] == pytest.approx(expected)
    assert len(held[0]) == train.n_queries
    assert main(["train", str(bundled_root), "--stream", "--vali-cv", "3", "--quiet"]) == 2
    assert "vali_cv" in capsys.readouterr().err


def test_rsrank_train_at_3_percent_walks_the_sparse_path_on_vali_and_folds(bundled_root,
                                                                          tmp_path):
    import json

    from rsrank.cli import main
    from rsrank.learning.recipe import SPARSE_L1_RATIO, SPARSE_VALI_CV
    runs = {}
    for name, extra in (("sparse", []), ("vali", ["--vali-cv", "0"]),
                        ("stream", ["--stream"])):
        out = tmp_path / name
        assert main(["train", str(bundled_root), "--folds", "1", "--max-iter", "3", "--quiet",
                     "--within", "0.03", "--out", str(out), *extra]) == 0
        runs[name] = json.loads((out / "results.json").read_text())
    assert runs["sparse"]["vali_cv"] == SPARSE_VALI_CV
    assert runs["vali"]["vali_cv"] is None and runs["stream"]["vali_cv"] is None
    walked = {t["params"]["l1_ratio"] for t in runs["sparse"]["folds"][0]["grid"]}
    assert walked == set(SPARSE_L1_RATIO)
