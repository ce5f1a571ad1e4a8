"""Seeds, per-query values and ``rsrank compare`` / ``evaluate --per-query``."""

import json
import re

import numpy as np
import pytest

from rsrank import RSRank, load_letor, metrics, stats
from rsrank.cli import main
from rsrank.evaluation.experiments import run_letor_folds

TRAIN = ["--max-iter", "4", "--batch-size", "4", "--quiet"]


@pytest.fixture(scope="module")
def runs(bundled_root, tmp_path_factory):
    """Two runs on folds 1-2 of the bundled data: one seed, and three seeds
    of online-ish training (mini-batches of 4 queries, so seeds differ)."""
    base = tmp_path_factory.mktemp("runs")
    one, three = base / "one", base / "three"
    assert main(["train", str(bundled_root), "--folds", "1,2", "--l1", "0", "--out", str(one),
                 *TRAIN]) == 0
    assert main(["train", str(bundled_root), "--folds", "1,2", "--l1", "1", "--seeds", "3",
                 "--seed", "5", "--out", str(three), *TRAIN]) == 0
    return one, three


def test_results_keep_per_seed_per_query_values(runs, bundled_root):
    document = json.loads((runs[1] / "results.json").read_text())
    assert document["seeds"] == [5, 6, 7]
    assert [(f["fold"], f["seed"]) for f in document["folds"]] == [
        (1, 5), (1, 6), (1, 7), (2, 5), (2, 6), (2, 7)]
    for entry in document["folds"]:
        per_query = entry["per_query"]
        # the fold's reported means are the means of its per-query values
        assert np.mean(per_query["NDCG@10"]) == pytest.approx(entry["test"]["NDCG@10"])
        # and those values are the predictions' own, recomputed here
        _, y, qid = load_letor(bundled_root / f"Fold{entry['fold']}" / "test.txt.gz")
        scores = np.loadtxt(runs[1] / "predictions" / f"Fold{entry['fold']}.seed"
                            f"{entry['seed']}.test.txt")
        again = metrics.letor_per_query(y, scores, qid)
        assert per_query["qid"] == again["qid"].tolist()
        assert per_query["MAP"] == pytest.approx(again["MAP"])
    tests = [f["test"]["NDCG@10"] for f in document["folds"]]
    assert len(set(tests)) > 2  # the seeds give different models
    seed_means = [np.mean(tests[s::3]) for s in range(3)]
    assert document["seed_std"]["NDCG@10"] == pytest.approx(np.std(seed_means))
    assert document["mean"]["NDCG@10"] == pytest.approx(np.mean(tests))
    assert "std over 3 seeds" in (runs[1] / "results.md").read_text()


def test_api_seeds_equal_separate_random_states(bundled_root):
    estimator = RSRank(max_iter=3, batch_size=4, eval_train=False)
    both = run_letor_folds(bundled_root, estimator, {"l1": [0.0]}, folds=[1], seeds=[3, 4])
    alone = run_letor_folds(bundled_root, estimator.set_params(random_state=4), {"l1": [0.0]},
                            folds=[1])
    assert [f.seed for f in both.folds] == [3, 4] and alone.folds[0].seed is None
    assert both.folds[1].test == alone.folds[0].test
    with pytest.raises(ValueError, match="seeds must be distinct"):
        run_letor_folds(bundled_root, estimator, {"l1": [0.0]}, folds=[1], seeds=[1, 1])


def test_compare_directories_against_independent_tests(runs, bundled_root, capsys):
    one, three = runs
    assert main(["compare", str(one), str(three), "--json", "--resamples", "5000"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["seeds"] == {str(one): 1, str(three): 3}
    assert [t["metric"] for t in report["tests"]] == ["NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10",
                                                       "MAP"]
    # recompute: per query, the three seeds' NDCG@10 averaged, paired with the one-seed run
    a, b = [], []
    for fold in (1, 2):
        _, y, qid = load_letor(bundled_root / f"Fold{fold}" / "test.txt.gz")
        a.append(metrics.letor_per_query(
            y, np.loadtxt(one / "predictions" / f"Fold{fold}.test.txt"), qid)["NDCG@10"])
        b.append(np.mean([metrics.letor_per_query(
            y, np.loadtxt(three / "predictions" / f"Fold{fold}.seed{s}.test.txt"),
            qid)["NDCG@10"] for s in (5, 6, 7)], axis=0))
    expected = stats.paired_t_test(np.concatenate(a), np.concatenate(b))
    row = report["tests"][3]
    assert row["n_queries"] == expected.n_queries == 40
    assert row["t_pvalue"] == pytest.approx(expected.pvalue)
    assert row["difference"] == pytest.approx(expected.difference)
    assert row["t_pvalue_holm"] == pytest.approx(
        stats.holm([t["t_pvalue"] for t in report["tests"]])[3])
    # the table: one row per metric
    assert main(["compare", str(one), str(three), "--resamples", "2000"]) == 0
    table = capsys.readouterr().out
    assert "Paired over 40 queries" in table and table.count("| NDCG@") == 4


def test_compare_score_files_and_per_query_evaluate(runs, bundled_root, capsys):
    test = bundled_root / "Fold1" / "test.txt.gz"
    model = runs[0] / "models" / "Fold1.json"
    first = runs[0] / "predictions" / "Fold1.test.txt"
    second = runs[1] / "predictions" / "Fold1.seed5.test.txt"
    assert main(["evaluate", str(model), str(test), "--per-query"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines[0].split("\t")
    assert header[:2] == ["qid", "NDCG@1"] and header[-1] == "MAP" and len(lines) == 21
    table = np.array([[float(v) for v in line.split("\t")[1:]] for line in lines[1:]])
    assert main(["evaluate", str(model), str(test)]) == 0
    report = capsys.readouterr().out
    assert f"MAP\t{table[:, -1].mean():.4f}" in report
    assert main(["compare", str(first), str(second), "--data", str(test), "--json",
                 "--metrics", "MAP", "--resamples", "1000"]) == 0
    row = json.loads(capsys.readouterr().out)["tests"][0]
    assert row["mean_a"] == pytest.approx(table[:, -1].mean(), abs=1e-6)


@pytest.mark.parametrize("argv, message", [
    (["ONE"], "at least two runs"),
    (["ONE", "ONE"], "named twice"),
    (["ONE", "SCORES"], "needs --data"),
    (["ONE", "THREE", "--metrics", "NDCG@11"], "unknown metric 'NDCG@11'"),
    (["ONE", "THREE", "--baseline", "nowhere"], "--baseline nowhere is not one of the runs"),
    (["ONE", "FOLD1"], "not on the same queries"),
    (["ONE", "THREE", "--convention", "standard"], "'letor' convention, not 'standard'"),
    (["ONE", "NOWHERE"], "nowhere: no such file or directory"),
    (["ONE", "EMPTY"], "empty: no results.json"),
])
def test_compare_errors_are_one_line(runs, bundled_root, tmp_path, capsys, argv, message):
    fold1 = tmp_path / "fold1"
    assert main(["train", str(bundled_root), "--folds", "1", "--l1", "0", "--out", str(fold1),
                 *TRAIN]) == 0
    capsys.readouterr()
    names = {"ONE": str(runs[0]), "THREE": str(runs[1]), "FOLD1": str(fold1),
             "SCORES": str(runs[0] / "predictions" / "Fold1.test.txt"),
             "NOWHERE": str(tmp_path / "nowhere"), "EMPTY": str(tmp_path / "empty")}
    (tmp_path / "empty").mkdir()
    assert main(["compare", *[names.get(a, a) for a in argv]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def _trec_lines(path):
    return [line.split() for line in path.read_text().splitlines()]


def test_train_writes_trec_runs_and_qrels_that_compare_reads(runs, bundled_root, capsys):
    from rsrank.reading.datasets import read_docids

    one, three = runs
    assert sorted(p.name for p in (one / "trec").iterdir()) == [
        "Fold1.test.qrels", "Fold1.test.run", "Fold2.test.qrels", "Fold2.test.run",
        "test.qrels", "test.run"]
    assert {"test.seed5.run", "test.seed7.run", "Fold2.seed6.test.run", "test.qrels"} <= {
        p.name for p in (three / "trec").iterdir()}
    whole_qrels, whole_run = [], []
    for fold in (1, 2):
        data = bundled_root / f"Fold{fold}" / "test.txt.gz"
        _, y, qid = load_letor(data)
        docids = read_docids(data)
        qrels = _trec_lines(one / "trec" / f"Fold{fold}.test.qrels")
        # a judgment per test row, in file order, with the file's docid and label
        assert qrels == [[str(q), "0", d, str(int(label))] for q, d, label in zip(qid, docids, y)]
        run = _trec_lines(one / "trec" / f"Fold{fold}.test.run")
        scores = np.loadtxt(one / "predictions" / f"Fold{fold}.test.txt")
        by_doc = {(q, d): s for q, d, s in zip(qid.astype(str), docids, scores)}
        # every document once, with its prediction, ranked 1.. by falling score in its query
        assert sorted((r[0], r[2]) for r in run) == sorted(by_doc)
        for r in run:
            assert float(r[4]) == pytest.approx(by_doc[r[0], r[2]], rel=1e-9)
            assert r[1] == "Q0" and r[5] == "rsrank"
        for q in np.unique(qid).astype(str):
            ranked = [r for r in run if r[0] == q]
            assert [int(r[3]) for r in ranked] == list(range(1, len(ranked) + 1))
            assert [float(r[4]) for r in ranked] == sorted((float(r[4]) for r in ranked),
                                                           reverse=True)
        whole_qrels += qrels
        whole_run += run
    assert _trec_lines(one / "trec" / "test.qrels") == whole_qrels
    assert _trec_lines(one / "trec" / "test.run") == whole_run
    # the whole-collection run judged by its qrels is the directory's own result
    assert main(["compare", str(one), str(one / "trec" / "test.run"), "--qrels",
                 str(one / "trec" / "test.qrels"), "--json", "--resamples", "100"]) == 0
    rows = json.loads(capsys.readouterr().out)["tests"]
    assert len(rows) == 5 and rows[0]["n_queries"] == len(set(q[0] for q in whole_qrels))
    for row in rows:
        assert row["difference"] == pytest.approx(0, abs=1e-9)
    # and one fold's run by the fold's qrels, the directory's fold
    assert main(["compare", str(one / "trec" / "Fold2.test.run"), str(one),
                 "--qrels", str(one / "trec" / "Fold2.test.qrels"), "--json",
                 "--metrics", "NDCG@10", "--resamples", "100"]) == 0
    assert json.loads(capsys.readouterr().out)["tests"][0]["difference"] == pytest.approx(0)


@pytest.mark.parametrize("text, message", [
    ("1 0 d1 2\n1 0 d2\n", "line 2: 3 fields"),
    ("1 0 d1 x\n", "line 1: label 'x' is not a whole number"),
    ("q7 0 d1 1\n", "line 1: qid 'q7' is not a whole number"),
    ("1 0 d1 -2\n", "line 1: label -2 is negative; map such"),
    ("1 0 d1 1\n1 0 d1 0\n", "line 2: document 'd1' of query 1 is judged again (first on "
     "line 1)"),
    ("\n", "no judgments"),
])
def test_bad_qrels_name_the_file_and_line(tmp_path, text, message):
    from rsrank.evaluation.runs import read_qrels
    path = tmp_path / "bad.qrels"
    path.write_text(text)
    with pytest.raises(ValueError, match=re.escape(message)) as error:
        read_qrels(path)
    assert str(error.value).startswith(str(path))


def test_trec_runs_follow_the_file_when_its_queries_are_out_of_order(tmp_path):
    import warnings

    from rsrank.reading.synthetic import make_letor_like
    from rsrank.evaluation.writers import write_letor

    data = make_letor_like(n_queries=30, docs_per_query=(5, 12), n_features=6, n_informative=3,
                           n_redundant=1, n_constant=1, random_state=3)
    fold = tmp_path / "data" / "Fold1"
    fold.mkdir(parents=True)
    for split, keep in (("train", data.qid < 18), ("vali", (data.qid >= 18) & (data.qid < 24))):
        write_letor(fold / f"{split}.txt", data.X[keep], data.y[keep], data.qid[keep])
    # the test file: queries in falling order, and one query's rows in two blocks
    rows = np.concatenate([np.flatnonzero(data.qid == q) for q in range(29, 23, -1)])
    rows = np.r_[rows, rows[:2]][2:]
    docids = np.array([f"d{r}" for r in rows], dtype=object)
    write_letor(fold / "test.txt", data.X[rows], data.y[rows], data.qid[rows], docids=docids)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["train", str(tmp_path / "data"), "--max-iter", "5", "--quiet",
                     "--out", str(tmp_path / "run")]) == 0
    scores = np.loadtxt(tmp_path / "run" / "predictions" / "Fold1.test.txt")
    expected = {(str(q), d): s for q, d, s in zip(data.qid[rows], docids, scores)}
    run = _trec_lines(tmp_path / "run" / "trec" / "Fold1.test.run")
    assert {(r[0], r[2]): float(r[4]) for r in run} == pytest.approx(expected, rel=1e-9)
    for q in {r[0] for r in run}:
        ranked = [float(r[4]) for r in run if r[0] == q]
        assert ranked == sorted(ranked, reverse=True)
