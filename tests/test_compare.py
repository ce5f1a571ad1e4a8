"""Seeds, per-query values and ``rsrank compare`` / ``evaluate --per-query``."""

import json

import numpy as np
import pytest

from rsrank import RSRank, load_letor, metrics, stats
from rsrank.cli import main
from rsrank.experiments import run_letor_folds

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
