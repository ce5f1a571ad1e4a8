import os
import sys

import pytest

from rsrank.cli import DEFAULT_L1_RATIO, build_parser, main


def test_info_on_bundled_data(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "Fold1/train" in out and "Fold5/test" in out
    assert "0:" in out  # label histogram


def test_info_on_ohsumed(capsys, ohsumed_root):
    assert main(["info", str(ohsumed_root / "Fold1" / "test.txt.gz")]) == 0
    line = capsys.readouterr().out.splitlines()[1]
    assert line.split()[1:4] == ["22", "3383", "45"]


def test_user_errors_are_one_line_on_stderr(tmp_path, capsys):
    assert main(["info", str(tmp_path / "missing.txt")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing.txt" in err and "Traceback" not in err
    bad = tmp_path / "bad.txt"
    bad.write_text("1 qid:1 1:0.5\n1 qid:1 1:NULL\n")
    assert main(["info", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "line 2" in err and "NULL" in err


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert "rsrank" in capsys.readouterr().out


import json

import numpy as np

from rsrank import RSRank, load_letor
from rsrank.evaluation.runs import read_scores
from rsrank.evaluation.metrics import letor_report
from rsrank.evaluation.experiments import run_letor_folds


def test_train_writes_results_that_match_the_api(tmp_path, capsys, bundled_root):
    out = tmp_path / "run"
    argv = ["train", str(bundled_root), "--folds", "1,2", "--l1", "0,0.3", "--max-iter", "40",
            "--within", "0.02", "--jobs", "2",  # one thread per fold, as below
            "--quiet", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "| mean ± std |" in printed and "NDCG@10" in printed
    results = json.loads((out / "results.json").read_text())
    assert results["command"] == "rsrank " + " ".join(argv)
    # the default recipe: paths at the curvature step with momentum, each point until its
    # weights settle, last epochs, both pair weights
    api = run_letor_folds(bundled_root, RSRank(max_iter=40, random_state=0,
                                               eval_convention="letor", restore_best=False,
                                               n_jobs=1, momentum=True, weight_tol=1e-4),
                          {"l1": [0.0, 0.3], "pair_weight": ["unit", "delta_ndcg"],
                           "learning_rate": ["curvature"]},
                          folds=[1, 2], within=0.02, dtype=np.float32, dense="auto", path=True)
    for written, fold in zip(results["folds"], api.folds):
        assert written["test"] == fold.test
        assert written["params"] == fold.params
    assert sorted(p.name for p in (out / "models").iterdir()) == ["Fold1.json", "Fold2.json"]
    assert (out / "results.md").read_text().count("| mean ± std |") == 1
    # the written model and predictions reproduce the fold's test numbers
    X, y, qid = load_letor(bundled_root / "Fold2" / "test.txt.gz", dtype=np.float32)
    model = RSRank.load(out / "models" / "Fold2.json")
    scores = read_scores(out / "predictions" / "Fold2.test.txt", len(y))
    np.testing.assert_allclose(scores, model.predict(X), rtol=1e-9)
    assert letor_report(y, scores, qid).as_dict()["NDCG@10"] == pytest.approx(
        results["folds"][1]["test"]["NDCG@10"], abs=1e-8)


def test_dtype_float64_trains_on_the_values_as_written(tmp_path, capsys, bundled_root):
    argv = ["train", str(bundled_root), "--folds", "3", "--max-iter", "40", "--quiet"]
    runs = {}
    for dtype in ("float32", "float64"):
        assert main(argv + ["--dtype", dtype, "--out", str(tmp_path / dtype)]) == 0
        runs[dtype] = json.loads((tmp_path / dtype / "results.json").read_text())["folds"][0]
    api = run_letor_folds(bundled_root, RSRank(max_iter=40, random_state=0,
                                               eval_convention="letor", restore_best=False,
                                               momentum=True, weight_tol=1e-4),
                          {"l1_ratio": DEFAULT_L1_RATIO, "pair_weight": ["unit", "delta_ndcg"],
                           "learning_rate": ["curvature"]},
                          folds=[3], within=0.01, path=True).folds[0]
    assert runs["float64"]["test"] == api.test and runs["float64"]["params"] == api.params
    # float32 features: the same model to float32's rounding (l1_max too)
    assert runs["float32"]["params"]["l1_ratio"] == api.params["l1_ratio"]
    assert runs["float32"]["params"]["l1"] == pytest.approx(api.params["l1"], rel=1e-5)
    for name, value in api.test.items():
        assert runs["float32"]["test"][name] == pytest.approx(value, abs=1e-3)


def test_train_does_not_overwrite_without_force(tmp_path, capsys, bundled_root):
    out = tmp_path / "run"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    argv = ["train", str(bundled_root), "--folds", "1", "--max-iter", "1", "--quiet",
            "--out", str(out)]
    assert main(argv) == 2
    assert "exists" in capsys.readouterr().err
    assert (out / "keep.txt").read_text() == "mine"
    # --force replaces results, never a directory of the user's
    assert main(argv + ["--force"]) == 2
    assert "not a results directory rsrank wrote" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    (out / "keep.txt").unlink()
    assert main(argv) == 0  # an empty directory loses nothing
    assert main(argv) == 2 and "pass --force" in capsys.readouterr().err
    assert main(argv + ["--force"]) == 0
    assert (out / "results.json").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no leftovers


@pytest.mark.parametrize("command", ["train", "path"])
def test_a_taken_out_is_refused_before_the_data_are_read(tmp_path, capsys, command):
    """The data here cannot be read (line 2 is broken): the --out refused
    first shows the data were not read before the refusal."""
    train = tmp_path / "train.txt"
    train.write_text("1 qid:1 1:0.5\n2 qid:1 1:oops\n")
    out = tmp_path / "run"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    argv = [command, "--train", str(train), "--vali", str(train), "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "exists and is not a results directory rsrank wrote" in err and "oops" not in err
    (out / "keep.txt").unlink()
    out.rmdir()
    assert main(argv) == 2  # with --out free, the data are read and refused
    assert "line 2" in capsys.readouterr().err


def test_interrupted_write_leaves_nothing(tmp_path, monkeypatch, bundled_root):
    import rsrank.evaluation.reports

    def failing(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(rsrank.evaluation.reports, "write_scores", failing)
    out = tmp_path / "run"
    assert main(["train", str(bundled_root), "--folds", "1", "--max-iter", "1", "--quiet",
                 "--out", str(out)]) == 130
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, message", [
    (["train", "--l1", "0,abc"], "'abc' is not a number"),
    (["train", "--folds", "1,x"], "'x' is not an integer"),
    (["train", "--select", "auc"], "unknown metric"),
])
def test_malformed_arguments_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_missing_fold_is_one_line(capsys, bundled_root):
    assert main(["train", str(bundled_root), "--folds", "9", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "fold 9 does not exist" in err and err.count("\n") == 1


def test_evaluate_and_predict(tmp_path, capsys, bundled_root):
    from rsrank import load_letor_fold

    data = load_letor_fold(bundled_root, 1)
    model = RSRank(learning_rate=0.05, max_iter=3, random_state=0).fit(*data.train[:2],
                                                                       qid=data.train[2])
    model.save(tmp_path / "m.json")
    test_file = str(bundled_root / "Fold1" / "test.txt.gz")
    assert main(["predict", str(tmp_path / "m.json"), test_file, "--out",
                 str(tmp_path / "s.txt")]) == 0
    scores = read_scores(tmp_path / "s.txt")
    np.testing.assert_allclose(scores, model.predict(data.test[0]), rtol=1e-9)
    expected = str(letor_report(data.test[1], scores, data.test[2]))
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "m.json"), test_file]) == 0
    heading, table = capsys.readouterr().out.strip().split("\n", 1)
    assert table == expected and "'letor' convention" in heading
    assert main(["evaluate", "--scores", str(tmp_path / "s.txt"), test_file]) == 0
    assert capsys.readouterr().out.strip().split("\n", 1)[1] == expected
    (tmp_path / "short.txt").write_text("1\n2\n")
    assert main(["evaluate", "--scores", str(tmp_path / "short.txt"), test_file]) == 2
    assert "2 scores for" in capsys.readouterr().err


def test_path_command(tmp_path, capsys, bundled_root):
    out = tmp_path / "path"
    assert main(["path", str(bundled_root), "--fold", "1", "--l1", "0,1", "--max-iter", "20",
                 "--batch-size", "1000", "--learning-rate", "0.02", "--out", str(out)]) == 0
    points = json.loads((out / "path.json").read_text())["path"]
    assert [p["l1"] for p in points] == [0.0, 1.0]
    assert points[0]["n_nonzero"] > points[1]["n_nonzero"]
    assert "| l1 | non-zero weights |" in capsys.readouterr().out


def test_train_stream_matches_the_api(tmp_path, capsys, bundled_root):
    argv = ["train", str(bundled_root), "--folds", "2", "--max-iter", "3", "--quiet",
            "--learning-rate", "0.05", "--l1", "0.1", "--stream", "5", "--out",
            str(tmp_path / "stream")]
    assert main(argv) == 0
    written = json.loads((tmp_path / "stream" / "results.json").read_text())["folds"][0]
    api = run_letor_folds(bundled_root, RSRank(max_iter=3, random_state=0,
                                               eval_convention="letor"),
                          {"l1": [0.1], "learning_rate": [0.05]}, folds=[2], stream_queries=5)
    assert written["test"] == api.folds[0].test


def test_streamed_folds_equal_in_memory_folds_without_shuffling(bundled_root):
    base = RSRank(max_iter=3, shuffle=False, random_state=0, learning_rate=0.05, l1=0.1,
                  batch_size=1)  # with batch_size=None a stream steps once per block
    memory = run_letor_folds(bundled_root, base, {}, folds=[2])
    stream = run_letor_folds(bundled_root, base, {}, folds=[2], stream_queries=5)
    np.testing.assert_allclose(stream.folds[0].test_scores, memory.folds[0].test_scores,
                               rtol=1e-10)
    assert stream.folds[0].test == pytest.approx(memory.folds[0].test)


def test_grid_options_reach_the_models(tmp_path, bundled_root):
    out = tmp_path / "grid"
    assert main(["train", str(bundled_root), "--folds", "1", "--max-iter", "4", "--quiet",
                 "--ndcg-k", "all,5", "--discount", "log2,letor", "--patience", "1",
                 "--pair-weight", "delta_ndcg", "--out", str(out)]) == 0
    fold = json.loads((out / "results.json").read_text())["folds"][0]
    tried = [t["params"] for t in fold["grid"]]
    assert {(p["ndcg_k"], p["discount"]) for p in tried} == {
        (None, "log2"), (None, "letor"), (5, "log2"), (5, "letor")}
    model = RSRank.load(out / "models" / "Fold1.json")
    assert model.early_stopping and model.n_iter_no_change == 1
    assert model.n_iter_ <= 4
    # the step-size decay is a grid axis, averaging a switch
    out = tmp_path / "decay"
    assert main(["train", str(bundled_root), "--folds", "1", "--max-iter", "4", "--quiet",
                 "--l1", "0", "--power-t", "0,0.5", "--average", "--out", str(out)]) == 0
    fold = json.loads((out / "results.json").read_text())["folds"][0]
    # two pair weightings (the default recipe's) times two decays
    assert sorted(t["params"]["power_t"] for t in fold["grid"]) == [0.0, 0.0, 0.5, 0.5]
    assert RSRank.load(out / "models" / "Fold1.json").average is True


@pytest.mark.parametrize("argv, message", [
    (["train", "--ndcg-k", "0"], "'0' is not a positive integer or 'all'"),
    (["train", "--discount", "cosine"], "'cosine' is not log2, letor, zipf"),
    (["train", "--power-t", "0.5,-1"], "'-1' must be a finite number >= 0"),
    (["path", "--power-t", "0.5,1"], "'0.5,1' must be one number"),
    (["train", "--pair-weight", "ndcg"], "'ndcg': comma-separated unit and delta_ndcg"),
    (["train", "--learning-rate", "fast"], "fast"),
    (["train", "--weight-tol", "-1"], "'-1' must be a finite number >= 0"),
])
def test_malformed_grid_options(argv, message, capsys):
    with pytest.raises(SystemExit):
        main(argv)
    assert message in capsys.readouterr().err


def test_train_threads_by_the_work_for_one_fold_and_shares_cores_between_folds():
    import os

    from rsrank.learning.recipe import fold_threads

    def threads(*argv):
        args = build_parser().parse_args(["train", *argv])
        return fold_threads(args.jobs, args.scheduler)

    assert threads() == "auto"  # settled per fit by the work and the free cores
    assert threads("--jobs", "2") == max(1, (os.cpu_count() or 1) // 2)
    assert threads("--jobs", "-1") == 1  # joblib's "all cores" for folds
    assert threads("--scheduler", "tcp://nowhere:1") == 1


def test_the_path_stops_a_point_once_its_weights_settle():
    from rsrank.learning.recipe import PATH_WEIGHT_TOL, train_recipe

    def weight_tol(*argv):
        args = build_parser().parse_args(["train", *argv])
        return train_recipe(learning_rate=args.learning_rate,
                            weight_tol=args.weight_tol)[0].weight_tol

    assert weight_tol() == PATH_WEIGHT_TOL
    assert weight_tol("--weight-tol", "1e-5") == 1e-5
    assert weight_tol("--weight-tol", "0") is None  # every epoch
    assert weight_tol("--learning-rate", "auto") is None


def test_the_table_names_the_kept_features_of_every_fold(tmp_path, capsys, bundled_root):
    out = tmp_path / "run"
    assert main(["train", str(bundled_root), "--folds", "2,4", "--max-iter", "5", "--quiet",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    folds = json.loads((out / "results.json").read_text())["folds"]
    for fold in folds:
        line = next(l for l in printed.splitlines() if l.startswith(f"- Fold{fold['fold']}: "))
        names = [item.rsplit(" ", 1)[0] for item in line.split(": ", 1)[1].split(", ")]
        assert names == [name for name, _ in fold["selected_features"]]
        assert len(names) == fold["n_nonzero"] > 0
    assert printed.count("- Fold") == 2 and "Kept features" in (out / "results.md").read_text()


def test_seeds_of_full_batch_training_run_once_and_say_why(tmp_path, capsys, bundled_root):
    out = tmp_path / "run"
    assert main(["train", str(bundled_root), "--folds", "1", "--max-iter", "3", "--quiet",
                 "--seeds", "3", "--seed", "4", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "every seed gives the same model; running seed 4 once" in err
    document = json.loads((out / "results.json").read_text())
    assert document["seeds"] == [4] and len(document["folds"]) == 1
    # with random batches the seeds differ, and all of them run
    assert main(["train", str(bundled_root), "--folds", "1", "--max-iter", "3", "--quiet",
                 "--seeds", "2", "--batch-size", "4", "--out", str(tmp_path / "b")]) == 0
    assert "same model" not in capsys.readouterr().err
    assert json.loads((tmp_path / "b" / "results.json").read_text())["seeds"] == [0, 1]


def test_a_run_that_compiles_says_so_once_on_a_terminal(tmp_path, capsys, monkeypatch,
                                                         bundled_root):
    import subprocess

    import rsrank.cli._options

    argv = ["train", str(bundled_root), "--folds", "1", "--max-iter", "2"]
    notice = "compiling kernels, first run only"
    monkeypatch.setattr(rsrank.cli._options, "on_terminal", lambda: True)
    for compiled, extra, shown in [(False, [], True), (True, [], False),
                                   (False, ["--quiet"], False)]:
        monkeypatch.setattr(rsrank.cli._options, "compiled_before", lambda: compiled)
        assert main(argv + extra) == 0
        assert (notice in capsys.readouterr().err) == shown
    # an empty numba cache is seen as one
    probe = "from rsrank._kernels import compiled_before; print(compiled_before())"
    empty = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                           env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}, check=True)
    assert empty.stdout.strip() == "False"


def test_path_reads_every_layout_and_scales_its_grid_to_the_data(tmp_path, capsys,
                                                                 bundled_root):
    fold = bundled_root / "Fold3"
    argv = ["path", "--train", str(fold / "train.txt.gz"), "--vali", str(fold / "vali.txt.gz"),
            "--out", str(tmp_path / "p")]
    assert main(argv) == 0
    document = json.loads((tmp_path / "p" / "path.json").read_text())
    points = document["path"]
    top = document["l1_max"]
    assert top == pytest.approx(RSRank().l1_max(*load_letor(fold / "train.txt.gz")[:2],
                                                qid=load_letor(fold / "train.txt.gz")[2]),
                                rel=1e-5)  # float32 features here, float64 there
    assert [p["l1"] for p in points] == pytest.approx([0.0] + list(top * np.geomspace(
        1e-3, 1, 10)))
    # rsrank train's recipe (the curvature step, each point settled, warm-started
    # from the stronger one): the features in use never grow with the penalty
    counts = [p["n_nonzero"] for p in points]
    assert counts == sorted(counts, reverse=True) and counts[-1] == 0 and counts[0] > 20
    assert all("test_ndcg" not in p for p in points)  # no test file: no test column
    assert "smallest l1 that keeps every weight at zero" in capsys.readouterr().out
    assert main(argv[:-2] + ["--fold", "2"]) == 2
    assert "is one fold; leave --fold out" in capsys.readouterr().err


def test_streaming_explicit_files_equals_streaming_their_fold(tmp_path, bundled_root):
    fold = bundled_root / "Fold2"
    common = ["--max-iter", "3", "--quiet", "--learning-rate", "0.05", "--l1", "0.1",
              "--stream", "5"]
    assert main(["train", str(bundled_root), "--folds", "2", *common,
                 "--out", str(tmp_path / "root")]) == 0
    assert main(["train", "--train", str(fold / "train.txt.gz"), "--vali",
                 str(fold / "vali.txt.gz"), "--test", str(fold / "test.txt.gz"), *common,
                 "--out", str(tmp_path / "files")]) == 0
    root, files = (json.loads((tmp_path / name / "results.json").read_text())["folds"][0]
                   for name in ("root", "files"))
    assert files["test"] == root["test"]
    assert files["selected_features"] == root["selected_features"]


def test_train_progress_one_bar_on_a_terminal_fold_lines_when_piped_nothing_quiet(
        bundled_root, capsys, monkeypatch):
    from rsrank.cli import train

    argv = ["train", str(bundled_root), "--folds", "1,2", "--max-iter", "5", "--vali-cv", "2",
            "--l1-ratio", "0.1,0"]
    assert main(argv) == 0  # piped: a line per finished fold
    err = capsys.readouterr().err
    assert [line.split(":")[0] for line in err.splitlines()] == ["fold 1", "fold 2"]
    assert main([*argv, "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(train, "on_terminal", lambda: True)
    # a wide terminal and a refresh at every fit: what the bar shows does not hang on
    # how busy the machine is (tqdm redraws at most every 0.1 s, cut to the width)
    monkeypatch.setenv("TQDM_MININTERVAL", "0")
    monkeypatch.setenv("COLUMNS", "300")
    assert main(argv) == 0
    err = capsys.readouterr().err
    # one bar over 2 folds x 4 points (two strengths, two pair weightings) x (vali + 2 folds)
    assert "24/24" in err and "/24" in err.split("\r")[1] and "fold 2: test NDCG@10" in err
    assert "pair_weight=" in err and "l1_ratio=0.1" in err


def test_path_and_compare_draw_their_pictures_and_one_fold_prints_no_spread(
        bundled_root, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    assert main(["path", str(bundled_root), "--max-iter", "10", "--l1", "0,100",
                 "--plot", str(tmp_path / "path.png")]) == 0
    assert (tmp_path / "path.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for name, l1 in (("a", "0"), ("b", "100")):
        assert main(["train", str(bundled_root), "--folds", "1", "--l1", l1, "--max-iter", "10",
                     "--quiet", "--out", str(tmp_path / name)]) == 0
    printed = capsys.readouterr().out
    assert "± 0.0000" not in printed and "| features | selected |" in printed
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--resamples", "10",
                 "--plot", str(tmp_path / "compare.svg")]) == 0
    assert b"<svg" in (tmp_path / "compare.svg").read_bytes()[:400]
    # the picture may not overwrite a run
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--plot",
                 str(tmp_path / "a" / "results.json")]) == 2


_COMMAND_HELPS = [[name, "--help"] for name in ("info", "fetch", "train", "evaluate", "compare",
                                                 "predict", "export", "plot", "path")]


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["--debug", "--help"], ["nosuch"],
                                  ["fetch", "--list"], *_COMMAND_HELPS,
                                  ["train", "--max-iter", "0"], ["export", "--format", "bing"],
                                  # an unknown option: argparse reads every default first
                                  # (--select's "ndcg@10" by the selection's parser), and with
                                  # --within given, its check too
                                  ["train", "--nosuch"], ["path", "--nosuch"],
                                  ["train", "--within", "0.02", "--select", "map", "--nosuch"]])
def test_the_version_every_help_a_usage_error_and_fetch_import_no_numerical_library(argv):
    """Every command's ``--help`` (its defaults included) and a usage error
    read the arguments alone; nor does ``rsrank fetch``, which downloads and
    checks files: the first command of a new user, and of scripts that
    fetch before each run."""
    import subprocess
    import sys

    probe = ("import sys\nfrom rsrank.__main__ import main\nsys.argv = ['rsrank', *sys.argv[1:]]\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "print(sorted(m for m in ('sklearn', 'scipy', 'numba', 'numpy') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stderr
    if argv == ["--help"]:
        from rsrank.cli._commands import COMMANDS

        for name, summary in COMMANDS.items():  # listed from the table, as each defines itself
            assert name in done.stdout
    if argv == ["nosuch"]:
        assert "invalid choice: 'nosuch'" in done.stderr
    if argv[-1] == "--nosuch":
        assert "unrecognized arguments: --nosuch" in done.stderr
    if argv == ["train", "--help"]:  # the defaults shown are the estimator's and the recipe's
        from rsrank import RSRank
        from rsrank.learning.defaults import LEVEL_ROWS, ROWS_BINS
        from rsrank.learning.recipe import PATH_EPOCHS

        defaults = RSRank().get_params()
        text = " ".join(done.stdout.split())
        assert f"epochs (default {defaults['max_iter']}; {PATH_EPOCHS} with" in text
        # the recipe's bins by the rows, the estimator's below them
        assert (f"default {ROWS_BINS[0]} on {LEVEL_ROWS:,} training rows or more in memory, "
                f"else {defaults['max_bins']}") in text
        assert (f"default {ROWS_BINS[1]} on {LEVEL_ROWS:,} training rows or more in memory, "
                f"else {defaults['interaction_bins']})") in text
    if argv[-1] in ("0", "bing"):  # argparse's usage, then the one line that says why
        assert done.stderr.strip().splitlines()[-1].startswith(f"rsrank {argv[0]}: error: "
                                                               f"argument {argv[1]}")
    if argv == ["fetch", "--list"]:
        assert "OHSUMED" in done.stdout


def test_each_command_defines_itself_with_its_tables_help():
    from rsrank.cli import build_parser
    from rsrank.cli._commands import COMMANDS

    parser = build_parser()
    choices = next(a for a in parser._actions if a.dest == "command")
    helps = {action.dest: action.help for action in choices._choices_actions}
    assert helps == COMMANDS


def test_path_rows_walks_the_path_on_a_sample_and_says_so(tmp_path, bundled_root):
    from rsrank.learning.recipe import PATH_ROWS

    out = tmp_path / "run"
    assert main(["train", str(bundled_root), "--folds", "1", "--max-iter", "5", "--quiet",
                 "--path-rows", "1000", "--out", str(out)]) == 0
    document = json.loads((out / "results.json").read_text())
    fold = document["folds"][0]
    assert document["path_rows"] == 1000
    assert fold["grid"][-1]["refit"] == "all training queries"
    assert fold["params"] == fold["grid"][-1]["params"]
    assert "walked a seeded sample of about 1,000 of the training rows" in (
        out / "results.md").read_text()
    for case, (flags, recorded) in enumerate((([], PATH_ROWS), (["--path-rows", "0"], None),
                                              (["--learning-rate", "0.1"], None))):
        again = tmp_path / f"case{case}"
        assert main(["train", str(bundled_root), "--folds", "1", "--max-iter", "2", "--quiet",
                     *flags, "--out", str(again)]) == 0
        document = json.loads((again / "results.json").read_text())
        assert document["path_rows"] == recorded  # with a fixed step: no path, no sample
        assert "refit" not in document["folds"][0]["grid"][-1]


@pytest.mark.parametrize("extra, message", [
    (["--learning-rate", "0.1", "--path-rows", "1000"],
     "--path-rows samples the path of --learning-rate curvature"),
    (["--stream", "10", "--path-rows", "1000"], "--stream reads it in blocks"),
    (["--within", "0.03", "--path-rows", "1000"],
     "the 3 folds of the training queries judged beside vali"),
    (["--vali-cv", "2", "--path-rows", "1000"], "give --vali-cv 0 to sample"),
])
def test_a_path_sample_no_path_would_take_is_refused(extra, message, capsys, bundled_root):
    assert main(["train", str(bundled_root), "--folds", "1", "--quiet", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_an_output_in_a_loop_of_symbolic_links_is_one_line(tmp_path, capsys, bundled_root):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    fold = bundled_root / "Fold1"
    assert main(["train", str(bundled_root), "--folds", "1", "--max-iter", "2", "--quiet",
                 "--out", str(tmp_path / "run")]) == 0
    model = str(tmp_path / "run" / "models" / "Fold1.json")
    capsys.readouterr()
    for argv in (["train", str(bundled_root), "--folds", "1", "--quiet", "--out"],
                 ["predict", model, str(fold / "test.txt.gz"), "--out"],
                 ["export", model, "--format", "solr", "--out"]):
        code = main([*argv, str(tmp_path / "a")])
        err = capsys.readouterr().err
        assert code == 2 and "a loop of symbolic links" in err, err
        assert len(err.strip().splitlines()) == 1
