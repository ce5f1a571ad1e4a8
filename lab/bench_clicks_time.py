"""Wall time of ``rsrank train`` on click logs against the same command on
the expert labels of the same (shown) documents.

For each dataset, a weak production ranker's top 10 of every training and
vali query is shown to simulated users (position-based, eta 1); the click
logs and LETOR files holding the shown documents (with their docids and
labels) are written to a scratch directory. Both commands read those
feature files; the one on clicks also reads the logs, estimates the
examination and trains on the training log's clicks as preferences
between the shown documents (validating on the vali log's session lists),
and ignores the files' labels; it runs with each ``--debias`` (``auto``,
the default, fits both readings: the debiased one and plain clicks). All
run as subprocesses, each timed ``--repeats`` times (the fastest kept), in
the same run: the ratios are what count.

    python scripts/bench_clicks_time.py [--sessions 100] [--repeats 3] [--out results]
"""

import argparse
import csv
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import SHARED_DATA, command_line, fastest, write_report  # noqa: E402
from rsrank.reading.datasets import load_letor  # noqa: E402
from rsrank.evaluation.writers import write_letor  # noqa: E402
from rsrank.reading.synthetic import make_letor_like, simulate_clicks  # noqa: E402


def ohsumed_fold():
    root = SHARED_DATA / "OHSUMED" / "Fold1"
    return {split: load_letor(root / f"{split}.txt.gz", n_features=45, return_docids=True,
                              dense=True) for split in ("train", "vali", "test")}


def generated(n_queries):
    data = make_letor_like(n_queries=n_queries, docs_per_query=(30, 120), random_state=0)
    docids = np.array([f"d{i}" for i in range(len(data.y))])
    queries = np.unique(data.qid)
    parts = np.array_split(queries, [int(0.6 * len(queries)), int(0.8 * len(queries))])
    return {split: (data.X[m], data.y[m], data.qid[m], docids[m]) for split, part in
            zip(("train", "vali", "test"), parts) if (m := np.isin(data.qid, part)) is not None}


def write_case(fold, directory, sessions):
    """The feature files, the click logs and the shown documents' label files."""
    rng = np.random.default_rng(0)
    weights = rng.normal(size=fold["train"][0].shape[1])
    for split, (X, y, qid, docids) in fold.items():
        if split == "test":
            write_letor(directory / f"{split}.txt", X, y, qid, docids=docids)
            continue
        log = simulate_clicks(y, qid, X @ weights, n_sessions=sessions, eta=1.0,
                              random_state=len(split))
        with open(directory / f"{split}.clicks.csv", "w", newline="") as handle:
            rows = csv.writer(handle)
            rows.writerow(["session", "qid", "docid", "position", "click"])
            rows.writerows(zip(log.session, log.qid, np.asarray(docids)[log.docid],
                               log.position, log.click))
        shown = np.unique(log.docid)
        write_letor(directory / f"{split}.shown.txt", X[shown], y[shown], qid[shown],
                    docids=np.asarray(docids)[shown])


def timed(argv, repeats):
    """The least wall time of ``repeats`` runs of the command ``argv``."""
    return fastest(lambda: subprocess.run(argv, check=True, capture_output=True), repeats)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    rsrank = [sys.executable, "-m", "rsrank"]
    cases = {"generated 2000 queries": lambda: generated(2000)}
    if (SHARED_DATA / "OHSUMED").is_dir():
        cases = {"OHSUMED Fold1": ohsumed_fold, **cases}
    rows = []
    for name, make in cases.items():
        with tempfile.TemporaryDirectory() as scratch:
            d = Path(scratch)
            write_case(make(), d, args.sessions)
            clicks = [*rsrank, "train", "--train", str(d / "train.shown.txt"), "--clicks",
                      str(d / "train.clicks.csv"), "--vali", str(d / "vali.shown.txt"),
                      "--vali-clicks", str(d / "vali.clicks.csv"), "--test",
                      str(d / "test.txt"), "--quiet"]
            labels = [*rsrank, "train", "--train", str(d / "train.shown.txt"), "--vali",
                      str(d / "vali.shown.txt"), "--test", str(d / "test.txt"), "--quiet"]
            timed(labels, 1)  # compiled kernels, warm file cache
            seconds = {"labels": timed(labels, args.repeats)}
            for debias in DEBIAS:
                seconds[debias] = timed([*clicks, "--debias", debias], args.repeats)
        rows.append({"data": name, **seconds,
                     **{f"ratio {debias}": seconds[debias] / seconds["labels"]
                        for debias in DEBIAS}})
        print(rows[-1], flush=True)
    lines = ["| data | labels of the shown documents (s) | "
             + " | ".join(f"clicks, --debias {debias} (s, ratio)" for debias in DEBIAS) + " |",
             "|---" * (2 + len(DEBIAS)) + "|"]
    lines += [f"| {r['data']} | {r['labels']:.1f} | " + " | ".join(
        f"{r[debias]:.1f} ({r[f'ratio {debias}']:.2f}x)" for debias in DEBIAS) + " |"
        for r in rows]
    markdown = "\n".join(lines) + "\n"
    print(markdown)
    if args.out:
        write_report(args.out, "clicks_time", {"command": command_line(argv), "rows": rows},
                     markdown)


#: the readings timed: auto (rsrank train --clicks's default) fits both others
DEBIAS = ("auto", "on", "off")


if __name__ == "__main__":
    main()
