"""The metric conventions against their tools' numbers, through the ``rsrank``
command line: the rest of its tests, through the API, are in
tests/integration/test_metrics.py."""

import numpy as np
import pytest
from sklearn.metrics import ndcg_score

from rsrank import load_letor_fold
from rsrank.evaluation import metrics as M

from letor_reference import evaluate as letor_evaluate



def _read_trec(run_path, qrels_path):
    run, qrels = {}, {}
    for line in open(run_path):
        q, _, d, _, score, _ = line.split()
        run.setdefault(q, {})[d] = float(score)
    for line in open(qrels_path):
        q, _, d, rel = line.split()
        qrels.setdefault(q, {})[d] = int(rel)
    return run, qrels


def test_each_named_convention_is_its_tools_number_on_ohsumed_runs(ohsumed_root, tmp_path,
                                                                  capsys):
    """rsrank train's own run files of OHSUMED (whose scores tie often:
    documents with the same features), judged by trec_eval (pytrec_eval),
    scikit-learn's ndcg_score and LETOR's Eval-Score rules, against the
    conventions named for them, to 1e-4."""
    import pytrec_eval
    from rsrank.cli import main

    out = tmp_path / "run"
    assert main(["train", str(ohsumed_root), "--folds", "1,2", "--max-iter", "30",
                 "--l1-ratio", "0", "--quiet", "--out", str(out)]) == 0
    document = __import__("json").loads((out / "results.json").read_text())
    run, qrels = _read_trec(out / "trec" / "test.run", out / "trec" / "test.qrels")
    rows = [(q, d, s, qrels[q][d]) for q in run for d, s in run[q].items()]
    qid = np.array([int(q) for q, *_ in rows])
    docids = np.array([d for _, d, _, _ in rows])
    scores = np.array([s for _, _, s, _ in rows])
    y = np.array([r for *_, r in rows])
    assert len(np.unique(scores)) < len(scores)  # the ties the conventions disagree on
    # trec_eval: ndcg_cut_10, P_10 and map, query by query
    measured = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "P.10", "map"}).evaluate(run)
    queries = np.unique(qid)
    ours = M.letor_per_query(y, scores, qid, convention="trec_eval", docids=docids)
    for ours_name, theirs in (("NDCG@10", "ndcg_cut_10"), ("P@10", "P_10"), ("MAP", "map")):
        np.testing.assert_allclose(ours[ours_name], [measured[str(q)][theirs] for q in queries],
                                   atol=1e-4)
    # without the document ids' order, ties alone move the mean by more than 1e-4
    stable = M.mean_ndcg(y, scores, qid, 10, convention="trec_eval", ties="stable")
    assert abs(stable - np.mean(ours["NDCG@10"])) > 1e-4
    # the pooled trec_eval number rsrank train reports is trec_eval's on trec/test.run
    pooled = document["pooled_ndcg@10"]
    assert pooled["trec_eval"] == pytest.approx(
        np.mean([measured[str(q)]["ndcg_cut_10"] for q in queries]), abs=1e-4)
    assert pooled["queries"] == len(queries)
    # scikit-learn's ndcg_score, query by query (it averages over tied scores)
    sk = [ndcg_score([y[qid == q]], [scores[qid == q]], k=10) if y[qid == q].any() else 0.0
          for q in queries]
    np.testing.assert_allclose(M.ndcg_per_query(y, scores, qid, 10, convention="sklearn"), sk,
                               atol=1e-4)
    # LETOR's Eval-Score rules (rows in the test file's order, as Eval-Score reads them)
    for fold in document["folds"]:
        test = load_letor_fold(ohsumed_root, fold["fold"]).test
        predictions = np.loadtxt(out / "predictions" / f"Fold{fold['fold']}.test.txt")
        reference = letor_evaluate(test[1], predictions, test[2])
        assert fold["test"]["NDCG@10"] == pytest.approx(reference[0][9], abs=1e-4)
    capsys.readouterr()


def test_one_convention_in_every_score(bundled_root, tmp_path, capsys):
    """One model, one NDCG: RSRank.score, RSRankCV.score (its chosen fit),
    the scorer, rsrank train's table and rsrank compare agree."""
    import json

    from rsrank import RSRank, RSRankCV
    from rsrank.cli import main
    from rsrank.reading.datasets import load_letor_fold as fold_of
    from rsrank.evaluation.model_selection import make_ndcg_scorer

    assert RSRank().eval_convention == RSRankCV().convention == M.DEFAULT_CONVENTION == "letor"
    out = tmp_path / "run"
    assert main(["train", str(bundled_root), "--folds", "1", "--max-iter", "20", "--quiet",
                 "--out", str(out)]) == 0
    reported = json.loads((out / "results.json").read_text())["folds"][0]["test"]["NDCG@10"]
    data = fold_of(bundled_root, 1)
    X, y, qid = data.test
    model = RSRank.load(out / "models" / "Fold1.json")
    assert model.score(X, y, qid=qid) == pytest.approx(reported, abs=1e-9)
    fresh = RSRank(max_iter=5).fit(*data.train[:2], qid=data.train[2])
    value = M.mean_ndcg(y, fresh.predict(X), qid, 10, convention="letor")
    assert fresh.score(X, y, qid=qid) == pytest.approx(value, abs=1e-12)
    import sklearn

    with sklearn.config_context(enable_metadata_routing=True):
        assert make_ndcg_scorer()(fresh, X, y, qid=qid) == pytest.approx(value, abs=1e-12)
    chosen = RSRankCV(max_iter=5, l1_ratio=[0.0], pair_weight=["delta_ndcg"]).fit(
        *data.train[:2], qid=data.train[2], eval_set=data.vali)
    assert chosen.score(X, y, qid=qid) == pytest.approx(
        M.mean_ndcg(y, chosen.predict(X), qid, 10, convention="letor"), abs=1e-12)
    capsys.readouterr()
    assert main(["compare", str(out), str(out), "--json", "--resamples", "10"]) == 2  # twice
    (tmp_path / "copy").mkdir()
    import shutil

    shutil.copytree(out, tmp_path / "copy" / "run")
    capsys.readouterr()
    assert main(["compare", str(out), str(tmp_path / "copy" / "run"), "--json",
                 "--resamples", "10", "--metrics", "NDCG@10"]) == 0
    tests = json.loads(capsys.readouterr().out)["tests"]
    assert tests[0]["mean_a"] == pytest.approx(reported, abs=1e-9)
