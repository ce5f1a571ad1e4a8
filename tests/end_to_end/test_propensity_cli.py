"""Learning from clicks, through the ``rsrank`` command line: the rest of its
tests, through the API, are in tests/integration/test_propensity.py."""

import json

import numpy as np
import pytest

from rsrank import RSRank
from rsrank.cli import main
from rsrank.clicks import load_click_fold
from rsrank.evaluation.metrics import letor_per_query
from rsrank.evaluation.experiments import run_letor_folds

from integration import test_propensity

click_fold = test_propensity.click_fold  # the fixture, shared with test_propensity.py



def test_train_on_click_logs_reports_the_curve(click_fold, capsys):
    fold, logs = click_fold
    out = logs / "out"
    code = main(["train", "--train", str(fold / "train.txt.gz"), "--clicks",
                 str(logs / "train.clicks.csv"), "--vali", str(fold / "vali.txt.gz"),
                 "--vali-clicks", str(logs / "vali.clicks.csv"), "--test",
                 str(fold / "test.txt.gz"), "--out", str(out), "--quiet"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "examination by position (Fold1, estimated from the training log): 1.000" in printed
    results = json.loads((out / "results.json").read_text())
    curve = results["examination"]["Fold1"]
    assert curve["estimated"] and curve["examination"][0] == 1.0
    assert len(curve["examination"]) == 10
    # --debias auto (the default) fitted plain clicks beside, and says what it kept
    kept = results["debias"]["Fold1"]
    assert kept["kept"] == ("debiased" if kept["difference"] > 0 else "plain")
    assert f"debias auto (Fold1): kept {kept['kept']} clicks" in printed
    assert f"clicks={kept['kept']}" in printed  # the table's selected column
    assert results["folds"][0]["test"]["NDCG@10"] > 0.5  # judged on the test labels
    pytest.importorskip("matplotlib")
    assert main(["plot", str(out), "--out", str(logs / "curve.png")]) == 0
    assert (logs / "curve.png").read_bytes()[:4] == b"\x89PNG"
    assert "the examination curve of Fold1" in capsys.readouterr().out


def test_click_options_that_cannot_work_are_one_line(click_fold, capsys):
    fold, logs = click_fold
    train = ["train", "--train", str(fold / "train.txt.gz")]
    assert main([*train, "--vali-clicks", str(logs / "vali.clicks.csv")]) == 2
    assert "--vali-clicks needs --clicks" in capsys.readouterr().err
    assert main([*train, "--clicks", str(logs / "train.clicks.csv"), "--vali",
                 str(fold / "vali.txt.gz")]) == 2
    assert "vali is given without the vali clicks" in capsys.readouterr().err
    # a log naming documents the features lack: the log, the fix
    assert main(["train", "--train", str(fold / "vali.txt.gz"), "--clicks",
                 str(logs / "train.clicks.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "train.clicks.csv" in err and "the features lack" in err


def test_a_fold_root_with_click_logs_trains_on_them(click_fold, tmp_path, capsys):
    import shutil

    fold, logs = click_fold
    root = tmp_path / "root"
    (root / "Fold1").mkdir(parents=True)
    for name in ("train.txt.gz", "vali.txt.gz", "test.txt.gz"):
        shutil.copy(fold / name, root / "Fold1" / name)
    for name in ("train.clicks.csv", "vali.clicks.csv"):
        shutil.copy(logs / name, root / "Fold1" / name)
    assert main(["train", str(root), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "examination by position (Fold1, estimated from the training log)" in printed
    # a log without its fold's training log is named
    (root / "Fold2").mkdir()
    for name in ("train.txt.gz", "vali.txt.gz", "test.txt.gz"):
        shutil.copy(fold / name, root / "Fold2" / name)
    assert main(["train", str(root), "--quiet"]) == 2
    assert "Fold2: no train.clicks.csv" in capsys.readouterr().err


def test_a_known_curve_on_the_command_line(click_fold, capsys):
    fold, logs = click_fold
    train = ["train", "--train", str(fold / "train.txt.gz"), "--clicks",
             str(logs / "train.clicks.csv"), "--quiet"]
    curve = ",".join(f"{1 / k:.6f}" for k in range(1, 11))
    assert main([*train, "--propensity", curve]) == 0
    assert ("examination by position (Fold1, given): 1.000 0.500 0.333"
            in capsys.readouterr().out)
    assert main([*train, "--propensity", "1,0.5"]) == 2
    assert "cover positions 1 to 2" in capsys.readouterr().err


def test_click_data_takes_the_model_kinds_and_exports(click_fold, capsys):
    fold, logs = click_fold
    out = logs / "additive"
    assert main(["train", "--train", str(fold / "train.txt.gz"), "--clicks",
                 str(logs / "train.clicks.csv"), "--vali", str(fold / "vali.txt.gz"),
                 "--vali-clicks", str(logs / "vali.clicks.csv"), "--test",
                 str(fold / "test.txt.gz"), "--additive", "--out", str(out), "--quiet"]) == 0
    assert (out / "trec" / "Fold1.test.run").is_file()
    model = RSRank.load(out / "models" / "Fold1.json")
    # additive, and sparse as on labels (the path's selection; a relaxed refit has no penalty)
    assert model.additive and 0 < len(model.selected_features()) < model.n_features_in_
    solr = logs / "model.solr.json"
    assert main(["export", str(out / "models" / "Fold1.json"), "--format", "solr",
                 "--out", str(solr)]) == 0
    exported = json.loads(solr.read_text())
    # the ranker alone: exactly the model's kept features (no position term)
    names = {feature["name"] for feature in exported["features"]}
    assert names == {name for name, _ in model.selected_features()} and names


def test_a_click_run_without_test_reports_its_vali_lists_as_it_judged_them(click_fold):
    # lists shorter than 10 would score 0 by LETOR's rule: the report weighs
    # and scores them as the selection did
    fold, logs = click_fold
    data = load_click_fold(fold / "train.txt.gz", logs / "train.clicks.csv",
                           fold / "vali.txt.gz", logs / "vali.clicks.csv")
    result = run_letor_folds([data], RSRank(max_iter=5, random_state=0), [{}]).folds[0]
    assert result.evaluated_on == "vali"
    assert result.test["NDCG@10"] == pytest.approx(result.vali_score)
    X, y, lists = data.vali
    assert np.mean(np.bincount(np.unique(lists, return_inverse=True)[1]) < 10) > 0.3
    by_letor = letor_per_query(y, result.model.predict(X), lists)["NDCG@10"]
    assert np.nanmean(by_letor) < 0.8 * result.test["NDCG@10"]
    # the command line too: its vali file's rows (and docids) are not the lists'
    out = logs / "no_test"
    assert main(["train", "--train", str(fold / "train.txt.gz"), "--clicks",
                 str(logs / "train.clicks.csv"), "--vali", str(fold / "vali.txt.gz"),
                 "--vali-clicks", str(logs / "vali.clicks.csv"), "--out", str(out),
                 "--quiet"]) == 0
    reported = json.loads((out / "results.json").read_text())["folds"][0]
    assert reported["evaluated_on"] == "vali"
    assert not (out / "trec").exists()


def test_debias_off_trains_on_plain_clicks_from_the_command_line(click_fold, capsys):
    fold, logs = click_fold
    train = ["train", "--train", str(fold / "train.txt.gz"), "--clicks",
             str(logs / "train.clicks.csv"), "--vali", str(fold / "vali.txt.gz"),
             "--vali-clicks", str(logs / "vali.clicks.csv"), "--test",
             str(fold / "test.txt.gz"), "--quiet"]
    assert main([*train, "--debias", "off"]) == 0
    printed = capsys.readouterr().out
    assert "| 1 | " in printed and "examination by position" not in printed
    assert main([*train, "--debias", "off", "--propensity", "1,0.5"]) == 2
    assert "--debias off leaves in: give one or the other" in capsys.readouterr().err
    assert main(["train", "--train", str(fold / "train.txt.gz"), "--debias", "off"]) == 2
    assert "--debias needs --clicks" in capsys.readouterr().err


def test_models_are_compared_on_a_click_log_before_an_a_b_test(click_fold, tmp_path, capsys):
    fold, logs = click_fold
    train = ["train", "--train", str(fold / "train.txt.gz"), "--clicks",
             str(logs / "train.clicks.csv"), "--vali", str(fold / "vali.txt.gz"),
             "--vali-clicks", str(logs / "vali.clicks.csv"), "--quiet"]
    for debias in ("on", "off"):
        assert main([*train, "--debias", debias, "--out", str(tmp_path / debias)]) == 0
    capsys.readouterr()
    on, off = (str(tmp_path / debias / "models" / "Fold1.json") for debias in ("on", "off"))
    vali, log = str(fold / "vali.txt.gz"), str(logs / "vali.clicks.csv")
    assert main(["evaluate", on, vali, "--clicks", log]) == 0
    line = capsys.readouterr().out
    assert line.startswith(f"{on} on {log}: NDCG@10 estimated from the clicks 0.")
    assert "95% interval [" in line and "over 20 queries" in line
    assert main(["compare", off, on, "--data", vali, "--clicks", log]) == 0
    printed = capsys.readouterr().out
    assert "paired over 20 queries" in printed and f"| {on} | " in printed
    assert main(["compare", off, on, "--clicks", log]) == 2
    assert "--clicks needs --data FILE" in capsys.readouterr().err
    assert main(["compare", off, on, "--data", vali, "--clicks", log, "--metrics", "MAP"]) == 2
    assert "--clicks estimates NDCG@10" in capsys.readouterr().err
    assert main(["evaluate", on, vali, "--clicks", log, "--per-query"]) == 2
    assert "not with --scores or --per-query" in capsys.readouterr().err
