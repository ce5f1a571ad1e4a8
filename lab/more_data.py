"""More data on one truth: a recipe trained on the first share of a
generated training file's queries against the same recipe on all of them,
with the same vali and test queries.

    python scripts/more_data.py --data ../data/mslr025nl ../data/web025
        [--shares 0.4,1] [--flags "--additive --interactions 10"] [--scratch DIR]
        [--name more_data] [--out results]

Each ``--data`` directory is one that ``bench_end_to_end.py`` writes
(``train.txt``, ``vali.txt``, ``test.txt`` and ``truth.npz``). Comparing
the recipe at two scales of a generator does not judge what more data
does: each scale is its own draw of the truth (``make_mslr_like`` draws
its informative features and their factors after the rows) and its own
test queries. Here the rows differ and nothing else: a share of the
training queries (whole queries from the top of the file, 0.4 of a
quarter of MSLR-WEB30K's shape being about a tenth of it) is written into
``--scratch``, never beside the input, and each share trains with
``rsrank train FLAGS`` in this process. Test NDCG@10 in the standard
convention (gain 2^label - 1, log2 discount from rank 1) per query, each
share against the largest with a paired t-test over the test queries.

Writes ``NAME.md`` and ``NAME.json`` into ``--out``.
"""

import argparse
import contextlib
import io
import json
import shlex
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from _bench import command_line, write_report


def first_queries(source, target, share):
    """Write the whole queries of the first ``share`` of ``source``'s
    (a LETOR file, queries contiguous) into ``target`` (None: only count);
    return the rows and queries of that share."""
    with open(source, "rb") as f:
        qids = [line.split(b" ", 2)[1] for line in f]
    starts = [0] + [i for i in range(1, len(qids)) if qids[i] != qids[i - 1]]
    keep = max(1, round(share * len(starts)))
    stop = starts[keep] if keep < len(starts) else len(qids)
    if target is None:
        return stop, keep
    with open(source, "rb") as f, open(target, "wb") as out:
        for i, line in enumerate(f):
            if i == stop:
                break
            out.write(line)
    return stop, keep


def train(files, flags, out):
    """``rsrank train`` on ``files`` with ``flags``; the test scores, the
    fold's record and the seconds."""
    from rsrank.cli import main as rsrank_main

    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = rsrank_main(["train", "--train", str(files["train"]), "--vali",
                            str(files["vali"]), "--test", str(files["test"]), "--quiet",
                            "--out", str(out), *flags])
    if code:
        raise SystemExit(f"rsrank train exited with {code}")
    seconds = time.perf_counter() - start
    fold = json.loads((out / "results.json").read_text())["folds"][0]
    return np.loadtxt(out / "predictions" / "Fold1.test.txt"), fold, seconds


def per_query_ndcg(y, scores, qid, k=10):
    from rsrank.evaluation.metrics import ndcg_per_query

    return np.asarray(ndcg_per_query(y, scores, qid, k), dtype=np.float64)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", required=True)
    parser.add_argument("--shares", default="0.4,1")
    parser.add_argument("--flags", default="--additive --interactions 10")
    parser.add_argument("--scratch", default=None)
    parser.add_argument("--name", default="more_data")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    from rsrank.evaluation.stats import paired_t_test

    shares = sorted(float(s) for s in args.shares.split(","))
    flags = shlex.split(args.flags)
    scratch = Path(args.scratch or tempfile.mkdtemp(prefix="more_data_"))
    scratch.mkdir(parents=True, exist_ok=True)
    rows = []
    for directory in map(Path, args.data):
        truth = np.load(directory / "truth.npz")
        y, qid = truth["test_y"], truth["test_qid"]
        runs = {}
        for share in shares:
            files = {split: directory / f"{split}.txt" for split in ("train", "vali", "test")}
            n_rows, n_queries = None, None
            if share < 1:
                files["train"] = scratch / f"{directory.name}-train-{share:g}.txt"
                n_rows, n_queries = first_queries(directory / "train.txt", files["train"],
                                                  share)
            out = scratch / f"{directory.name}-{share:g}"
            shutil.rmtree(out, ignore_errors=True)  # a run of its own in the scratch directory
            scores, fold, seconds = train(files, flags, out)
            if n_rows is None:
                n_rows, n_queries = first_queries(directory / "train.txt", None, 1)
            runs[share] = per_query_ndcg(y, scores, qid)
            rows.append({"data": directory.name, "share": share, "train_rows": n_rows,
                         "train_queries": n_queries, "seconds": seconds,
                         "test_ndcg10": float(np.nanmean(runs[share])),
                         "features": len(fold["selected_features"]),
                         "pairs": [" x ".join(p) for p, _ in fold.get("selected_interactions",
                                                                       [])]})
            print(json.dumps(rows[-1]), flush=True)
        largest = runs[shares[-1]]
        for row in rows[-len(shares):]:
            if row["share"] != shares[-1]:
                mine = runs[row["share"]]
                judged = np.isfinite(mine) & np.isfinite(largest)  # queries with a relevant one
                test = paired_t_test(mine[judged], largest[judged])
                row["paired_vs_all"] = {"difference": test.difference, "ci": [test.ci_low,
                                        test.ci_high], "pvalue": test.pvalue,
                                        "queries": test.n_queries}
    report = {"command": command_line(argv), "flags": args.flags, "rows": rows}
    report["text"] = summarize(report)
    print(report["text"])
    if args.out:
        write_report(args.out, args.name, report, report["text"])


def summarize(report):
    lines = [f"# More data on one truth: `rsrank train {report['flags']}` on a share of the "
             "training queries", "",
             "Each set's vali and test are the same for every share; the share is the first "
             "queries of its training file. Test NDCG@10 in the standard convention; the "
             "difference is the largest share's less this one's, per query (paired t-test "
             "over the test queries, 95% interval).", "",
             "| data | share | training rows | test NDCG@10 | features | pairs | seconds | "
             "difference to all rows (95% interval, p) |", "|---|---|---|---|---|---|---|---|"]
    for r in report["rows"]:
        paired = r.get("paired_vs_all")
        against = "" if paired is None else (
            f"{paired['difference']:+.4f} ({paired['ci'][0]:+.4f} to {paired['ci'][1]:+.4f}, "
            f"p = {paired['pvalue']:.3g}, {paired['queries']} queries)")
        rows = "" if r["train_rows"] is None else f"{r['train_rows']:,}"
        lines.append(f"| {r['data']} | {r['share']:g} | {rows} | {r['test_ndcg10']:.4f} | "
                     f"{r['features']} | {len(r['pairs'])} | {r['seconds']:.0f} | {against} |")
    return "\n".join(lines) + "\n"
