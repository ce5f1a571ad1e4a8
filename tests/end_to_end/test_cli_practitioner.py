"""The command line on a search engineer's own data: raw features, file
layouts, feature names, run files, exports and quiet pipes."""

import json
import subprocess
import sys

import numpy as np
import pytest

from rsrank import RSRank, load_letor, writers
from rsrank.cli import DEFAULT_L1_RATIO, main
from rsrank.evaluation.metrics import mean_ndcg
from rsrank.reading.synthetic import make_raw_features


def write_letor(path, data, docid_offset=0):
    docids = [f"D{docid_offset + row}" for row in range(len(data.y))]
    writers.write_letor(path, data.X, data.y, data.qid, docids=docids)
    np.testing.assert_array_equal(load_letor(path)[0].toarray(), data.X)  # exact round trip
    return path


@pytest.fixture(scope="module")
def raw_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("raw")
    train = make_raw_features(150, random_state=0)
    vali = make_raw_features(50, random_state=1)
    test = make_raw_features(50, random_state=2)
    vali.qid = vali.qid + 1000
    test.qid = test.qid + 2000
    names = root / "features.txt"
    names.write_text("".join(f"{j + 1} {name}\n" for j, name in enumerate(train.feature_names)))
    return dict(train=write_letor(root / "train.txt", train),
                vali=write_letor(root / "vali.txt", vali, 10**5),
                test=write_letor(root / "test.txt", test, 2 * 10**5), names=names, data=test)


def test_raw_features_train_with_the_defaults_better_than_any_single_feature(
        raw_files, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", "--train", str(raw_files["train"]), "--vali", str(raw_files["vali"]),
                 "--test", str(raw_files["test"]), "--feature-names", str(raw_files["names"]),
                 "--quiet", "--out", str(out)]) == 0
    results = json.loads((out / "results.json").read_text())
    data = raw_files["data"]
    single = max(mean_ndcg(data.y, sign * data.X[:, j], data.qid, 10, convention="letor")
                 for j in range(data.X.shape[1]) for sign in (1, -1))
    assert results["folds"][0]["test"]["NDCG@10"] > single + 0.03
    names = [name for name, _ in results["folds"][0]["selected_features"]]
    assert set(names) <= set(make_raw_features(1).feature_names)
    model = json.loads((out / "models" / "Fold1.json").read_text())
    assert model["feature_names"][3] == "doc_length" and model["normalize"] == "zscore"
    # the default step follows the features' scale: without scaling it does not diverge
    capsys.readouterr()
    assert main(["train", "--train", str(raw_files["train"]), "--vali", str(raw_files["vali"]),
                 "--feature-names", str(raw_files["names"]), "--normalize", "none",
                 "--l1", "0", "--quiet"]) == 0
    assert "warning" not in capsys.readouterr().err
    # a fixed step without scaling diverges, and says so in one line that names the flag
    assert main(["train", "--train", str(raw_files["train"]), "--vali", str(raw_files["vali"]),
                 "--feature-names", str(raw_files["names"]), "--normalize", "none",
                 "--l1", "0", "--learning-rate", "0.1", "--quiet"]) == 0
    warning = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert len(warning) == 1 and "doc_length" in warning[0] and "--normalize zscore" in warning[0]
    # every point of the L1 grid at that step warns, still in one line
    assert main(["train", "--train", str(raw_files["train"]), "--vali", str(raw_files["vali"]),
                 "--feature-names", str(raw_files["names"]), "--normalize", "none",
                 "--learning-rate", "0.1", "--quiet"]) == 0
    warning = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert len(warning) == 1
    assert warning[0].endswith(f"(and {len(DEFAULT_L1_RATIO) - 1} more like it)")


def test_single_file_with_a_seeded_validation_fraction(raw_files, capsys):
    argv = ["train", str(raw_files["train"]), "--vali-fraction", "0.25", "--l1", "0",
            "--max-iter", "5", "--quiet"]
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert "No test split" in first
    assert main(argv) == 0
    assert capsys.readouterr().out == first  # the same seed holds out the same queries


@pytest.mark.parametrize("comments", [True, False])
def test_a_held_out_validation_run_names_the_training_files_documents(
        raw_files, comments, tmp_path):
    # the vali split held out of the training file is evaluated (no test): its
    # run and qrels name each document as the training file does, the docid of
    # its comment or row<n> by its row in that file, not by its row in the split
    data = make_raw_features(150, random_state=0)
    train = raw_files["train"]
    if not comments:
        train = tmp_path / "plain.txt"
        writers.write_letor(train, data.X, data.y, data.qid)
    out = tmp_path / "run"
    assert main(["train", str(train), "--vali-fraction", "0.25", "--l1", "0", "--max-iter", "5",
                 "--quiet", "--out", str(out)]) == 0
    file_docids = [f"D{row}" if comments else f"row{row + 1}" for row in range(len(data.y))]
    where = {docid: (str(q), int(label))
             for docid, q, label in zip(file_docids, data.qid, data.y)}
    qrels = (out / "trec" / "Fold1.vali.qrels").read_text().splitlines()
    run = (out / "trec" / "Fold1.vali.run").read_text().splitlines()
    judged = {line.split()[2]: (line.split()[0], int(line.split()[3])) for line in qrels}
    assert judged and all(where[docid] == seen for docid, seen in judged.items())
    held = {q for q, _ in judged.values()}
    assert len(judged) == sum(str(q) in held for q in data.qid)  # every row of those queries
    assert {(line.split()[0], line.split()[2]) for line in run} == {
        (q, docid) for docid, (q, _) in judged.items()}
    # the report names the run file the evaluated split was written to
    report = (out / "results.md").read_text()
    assert "compute on trec/vali.run." in report and (out / "trec" / "vali.run").is_file()


@pytest.mark.slow
def test_lightgbm_layout_directory(lightgbm_example, tmp_path, capsys):
    assert main(["info", str(lightgbm_example)]) == 0
    assert "rank.train" in capsys.readouterr().out
    out = tmp_path / "lgb"
    assert main(["train", str(lightgbm_example), "--max-iter", "20", "--quiet",
                 "--out", str(out)]) == 0
    fold = json.loads((out / "results.json").read_text())["folds"][0]
    assert fold["evaluated_on"] == "test" and 0 < fold["test"]["NDCG@10"] <= 1


def test_predict_runs_read_by_trec_tools(raw_files, tmp_path):
    data = load_letor(raw_files["train"])
    model = RSRank(max_iter=5).fit(*data[:2], qid=data[2])
    model.save(tmp_path / "m.json")
    run = tmp_path / "run.trec"
    assert main(["predict", str(tmp_path / "m.json"), str(raw_files["test"]), "--format", "trec",
                 "--out", str(run)]) == 0
    X, y, qid, docids = load_letor(raw_files["test"], return_docids=True)
    assert docids[0] == "D200000"
    import pytrec_eval

    scores = model.predict(X)
    qrels, written = {}, {}
    for q, d, label in zip(qid, docids, y):
        qrels.setdefault(str(q), {})[d] = int(label)
    for line in run.read_text().splitlines():
        q, q0, d, rank, score, tag = line.split()
        assert q0 == "Q0" and tag == "rsrank"
        written.setdefault(q, {})[d] = float(score)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg"})
    trec = np.mean([v["ndcg"] for v in evaluator.evaluate(written).values()])
    # trec_eval's gain is the label itself
    assert trec == pytest.approx(mean_ndcg(y, scores, qid, gain="linear"), rel=1e-6)
    assert main(["predict", str(tmp_path / "m.json"), str(raw_files["test"]), "--format", "tsv",
                 "--out", str(tmp_path / "run.tsv")]) == 0
    header, first = (tmp_path / "run.tsv").read_text().splitlines()[:2]
    assert header == "qid\tdocid\tscore" and first.split("\t")[1] == "D200000"


def test_outputs_never_overwrite_inputs(raw_files, tmp_path, capsys):
    data = load_letor(raw_files["train"])
    RSRank(max_iter=2).fit(*data[:2], qid=data[2]).save(tmp_path / "m.json")
    before = raw_files["test"].read_bytes()
    assert main(["predict", str(tmp_path / "m.json"), str(raw_files["test"]),
                 "--out", str(raw_files["test"])]) == 2
    assert "would overwrite the input" in capsys.readouterr().err
    assert raw_files["test"].read_bytes() == before
    assert main(["train", str(raw_files["train"].parent), "--out",
                 str(raw_files["train"].parent), "--force", "--quiet"]) == 2
    assert raw_files["train"].exists()


def test_export_command_names_the_features_the_engine_computes(raw_files, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["train", "--train", str(raw_files["train"]), "--vali", str(raw_files["vali"]),
                 "--feature-names", str(raw_files["names"]), "--quiet", "--out", str(out)]) == 0
    capsys.readouterr()
    model = RSRank.load(out / "models" / "Fold1.json")
    assert main(["export", str(out / "models" / "Fold1.json"), "--format", "solr"]) == 0
    captured = capsys.readouterr()
    exported = json.loads(captured.out)
    assert {f["name"] for f in exported["features"]} == {n for n, _ in model.selected_features()}
    assert f"computes {len(model.selected_features())} of 5 features" in captured.err


@pytest.mark.slow
def test_closed_pipe_and_piped_stderr_stay_quiet(raw_files, tmp_path):
    data = load_letor(raw_files["train"])
    RSRank(max_iter=2).fit(*data[:2], qid=data[2]).save(tmp_path / "m.json")
    command = (f"{sys.executable} -m rsrank.cli predict {tmp_path / 'm.json'} "
               f"{raw_files['test']} | head -1")
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120)
    assert done.stderr == "" and len(done.stdout.splitlines()) == 1
    done = subprocess.run([sys.executable, "-m", "rsrank.cli", "train", str(raw_files["train"]),
                           "--max-iter", "3", "--l1", "0"], capture_output=True, text=True,
                          timeout=300)
    # off a terminal no bar: a line per finished fold, that is all
    assert done.returncode == 0 and "\r" not in done.stderr
    assert [line.split(":")[0] for line in done.stderr.splitlines()] == ["fold 1"]


def test_fold_options_on_explicit_files_are_refused(raw_files, capsys):
    for option, message in ((["--folds", "1"], "needs a directory of Fold<k>"),
                            (["--stream", "10"], "streaming needs a validation file")):
        assert main(["train", "--train", str(raw_files["train"]), *option, "--quiet"]) == 2
        assert message in capsys.readouterr().err
