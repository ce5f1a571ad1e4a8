"""Additive models, through the ``rsrank`` command line: the rest of its tests,
through the API, are in tests/integration/test_additive.py."""

from integration.test_additive import nonlinear_fold


def test_the_selection_keeps_the_cheapest_model_within_reach_and_reports_its_cost(tmp_path,
                                                                                   capsys):
    from rsrank.cli import main
    from rsrank.evaluation.experiments import sparsest_within

    points = [{"n_nonzero": 3, "cost": 30.0, "vali_score": 0.90},
              {"n_nonzero": 5, "cost": 5.0, "vali_score": 0.895},
              {"n_nonzero": 2, "cost": 40.0, "vali_score": 0.899}]
    assert sparsest_within(points, 0.01) is points[1]
    assert sparsest_within([{k: v for k, v in p.items() if k != "cost"} for p in points],
                           0.01)["n_nonzero"] == 2
    costs = tmp_path / "costs.txt"
    costs.write_text("f12 10\n")
    assert main(["train", "--folds", "1", "--max-iter", "20", "--feature-costs", str(costs),
                 "--quiet", "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert "Total cost of the kept features (--feature-costs): Fold1 " in out
    import json

    fold = json.loads((tmp_path / "run" / "results.json").read_text())["folds"][0]
    names = [name for name, _ in fold["selected_features"]]
    assert fold["feature_cost"] == len(names) + (9 if "f12" in names else 0)


def test_rsrank_path_walks_the_group_path_with_costs(tmp_path, capsys):
    import json

    from rsrank.cli import main

    costs = tmp_path / "costs.txt"
    costs.write_text("f12 5\nf5 3\n")
    out = tmp_path / "path"
    assert main(["path", "--additive", "--learning-rate", "curvature", "--max-iter", "30",
                 "--feature-costs", str(costs), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| l1_group | features in use | total cost |" in text
    points = json.loads((out / "path.json").read_text())["path"]
    assert points[0]["l1"] == 0 and points[-1]["n_nonzero"] <= points[0]["n_nonzero"]
    for point in points:  # each cost is its features' sum (f12 and f5 dearer)
        assert point["cost"] >= point["n_nonzero"]


def test_rsrank_train_additive_relaxes_by_default(tmp_path, capsys):
    import json

    from rsrank.cli import main

    nonlinear_fold(tmp_path / "data", 7)
    grids = {}
    for flags in ([], ["--no-relax"]):
        out = tmp_path / ("run" + "".join(flags))
        assert main(["train", str(tmp_path / "data"), "--additive", "--max-iter", "100",
                     "--quiet", "--out", str(out), *flags]) == 0
        fold = json.loads((out / "results.json").read_text())["folds"][0]
        grids[tuple(flags)] = fold["grid"]
        assert 0 < len(fold["selected_features"]) < 20
    relaxed, plain = grids[()], grids[("--no-relax",)]
    # every penalized point twice (penalized, then relaxed); without a penalty, once
    penalized = sum(p["params"]["l1_group"] > 0 for p in plain)
    assert penalized == 18 and len(relaxed) == len(plain) + penalized
    assert [p["params"].get("relax") for p in relaxed[:2]] == [False, True]
    assert all("relax" not in p["params"] for p in plain)
    capsys.readouterr()


def test_with_linear_the_selection_sees_both_kinds_paths_as_each_walks_it_alone(tmp_path):
    import json

    from rsrank.cli import main
    from rsrank.evaluation.experiments import sparsest_within

    nonlinear_fold(tmp_path / "data", 8)
    folds = {}
    for name, flags in (("both", ["--additive", "--with-linear"]), ("additive", ["--additive"]),
                        ("linear", [])):
        out = tmp_path / name
        assert main(["train", str(tmp_path / "data"), "--max-iter", "40", "--quiet",
                     "--out", str(out), *flags]) == 0
        folds[name] = json.loads((out / "results.json").read_text())["folds"][0]
    grid = folds["both"]["grid"]
    linear = [p for p in grid if p["params"].get("additive") is False]
    shapes = [p for p in grid if "l1_group_ratio" in p["params"]]
    assert len(linear) + len(shapes) == len(grid)
    # each kind's points are the fits its own run makes, in its order
    for mine, alone in ((linear, folds["linear"]["grid"]), (shapes, folds["additive"]["grid"])):
        assert [p["vali_score"] for p in mine] == [p["vali_score"] for p in alone]
        assert [p["n_nonzero"] for p in mine] == [p["n_nonzero"] for p in alone]
    # each kind's own choice is its run's, and the selection keeps one of them
    assert {p["kind"] for p in linear} == {"linear"} and {p["kind"] for p in shapes} == {"additive"}
    mine = {"linear": sparsest_within(linear, 0.01), "additive": sparsest_within(shapes, 0.01)}
    for kind in ("linear", "additive"):
        assert {k: v for k, v in mine[kind]["params"].items() if k in folds[kind]["params"]} \
            == folds[kind]["params"]
    kept = "additive" if "l1_group_ratio" in folds["both"]["params"] else "linear"
    assert folds["both"]["params"] == mine[kept]["params"]
    # a linear kind cannot take it
    assert main(["train", str(tmp_path / "data"), "--with-linear", "--quiet"]) == 2
