"""Which tool gives which NDCG@10 for the same rankings, and the convention
of rsrank.evaluation.metrics that reproduces each.

    python scripts/conventions.py [--data ../shared/data/OHSUMED] [--out results]

Runs ``rsrank train DATA --jobs 2`` (its defaults) into a scratch
directory, then judges its whole-collection run (``trec/test.run``, every
fold's test queries) by trec_eval (pytrec_eval), scikit-learn's
``ndcg_score``, ranx and LETOR's rules, beside rsrank's conventions on the
same rows. Writes ``conventions.md`` and ``conventions.json``.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from _bench import SHARED_DATA, write_report

REPO = Path(__file__).resolve().parents[1]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(SHARED_DATA / "OHSUMED"))
    parser.add_argument("--out", default=str(REPO / "results"))
    args = parser.parse_args(argv)

    import pytrec_eval
    import ranx
    from sklearn.metrics import ndcg_score

    from rsrank.evaluation import metrics

    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "run"
        subprocess.run([sys.executable, "-m", "rsrank", "train", args.data, "--jobs", "2",
                        "--quiet", "--out", str(out)], check=True, stdout=subprocess.DEVNULL)
        document = json.loads((out / "results.json").read_text())
        run, qrels = {}, {}
        for line in open(out / "trec" / "test.run"):
            q, _, d, _, score, _ = line.split()
            run.setdefault(q, {})[d] = float(score)
        for line in open(out / "trec" / "test.qrels"):
            q, _, d, rel = line.split()
            qrels.setdefault(q, {})[d] = int(rel)
    rows = [(q, d, s, qrels[q][d]) for q in run for d, s in run[q].items()]
    qid = np.array([int(q) for q, *_ in rows])
    docids = np.array([d for _, d, _, _ in rows])
    scores = np.array([s for _, _, s, _ in rows])
    y = np.array([r for *_, r in rows])
    queries = np.unique(qid)
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    sk = [ndcg_score([y[qid == q]], [scores[qid == q]], k=10) if y[qid == q].any() else 0.0
          for q in queries]
    ranx_value = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), "ndcg@10")

    def ours(convention, **keywords):
        return float(metrics.mean_ndcg(y, scores, qid, 10, convention=convention, docids=docids,
                                       **keywords))

    table = [
        ("LETOR's Eval-Score, mean over folds (the table rsrank train prints)",
         document["mean"]["NDCG@10"], "letor", document["mean"]["NDCG@10"]),
        ("LETOR's rules, pooled over the queries", None, "letor", ours("letor")),
        ("trec_eval / pytrec_eval ndcg_cut.10 on trec/test.run",
         float(np.mean([trec[str(q)]["ndcg_cut_10"] for q in queries])), "trec_eval",
         ours("trec_eval")),
        ("scikit-learn ndcg_score(k=10), mean over queries", float(np.mean(sk)), "sklearn",
         ours("sklearn")),
        ("ranx ndcg@10", float(ranx_value), "(none: its order of tied scores is its own)", None),
        ("the trec_eval formula with file order among ties", None, "trec_eval, ties='stable'",
         ours("trec_eval", ties="stable")),
    ]
    tied = int(sum(len(s) - len(set(s.values())) for s in run.values()))
    lines = ["# One ranking, several NDCG@10s: which tool gives which", "",
             f"`rsrank train {Path(args.data).name}` with its defaults; its whole-collection run "
             f"({len(queries)} queries, {len(rows):,} documents, {tied:,} of them tied with "
             "another document's score in their query) judged by each tool, beside the "
             "convention of rsrank.evaluation.metrics on the same rows.", "",
             "| tool | its NDCG@10 | rsrank convention | rsrank's NDCG@10 |", "|---|---|---|---|"]
    for tool, value, convention, mine in table:
        shown = "" if value is None else f"{value:.4f}"
        lines.append(f"| {tool} | {shown} | {convention} | "
                     f"{'' if mine is None else f'{mine:.4f}'} |")
    lines += ["", f"rsrank train's own pooled line: LETOR {document['pooled_ndcg@10']['letor']:.4f}, "
              f"trec_eval {document['pooled_ndcg@10']['trec_eval']:.4f}."]
    report = {"queries": int(len(queries)), "documents": len(rows), "tied": tied,
              "rows": [dict(zip(("tool", "value", "convention", "rsrank"), row))
                       for row in table], "pooled": document["pooled_ndcg@10"]}
    write_report(args.out, "conventions", report, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
