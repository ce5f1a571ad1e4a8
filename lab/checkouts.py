"""One ``rsrank train`` command with the code of two commits, one after the
other on each set: their time, CPU time, peak memory, test NDCG@10 paired
over the queries, and whether their test predictions are the same.

    python scripts/checkouts.py OLD NEW --data DIR [DIR ...] [--repeats 2]
        [--name checkouts] [--out results] [--flags "--additive --interactions 10"]

``OLD`` and ``NEW`` are commits (anything ``git worktree add`` takes); each
gets a detached worktree of this repository in a temporary directory,
removed at the end. A set ``DIR`` holds ``train.txt``, ``vali.txt`` and
``test.txt`` (``bench_end_to_end.py --data`` writes them). Before any
clock, each checkout runs the command once on the first set untimed: numba
caches compiled kernels beside their source, so a new worktree compiles its
own. Then per set and repeat, ``OLD`` and then ``NEW``, each in a fresh
process (``python -m rsrank train --train DIR/train.txt --vali
DIR/vali.txt --test DIR/test.txt --out RUN --quiet FLAGS`` with the
checkout first on ``PYTHONPATH``): its wall time, its user and system CPU
time and its peak resident memory (the child's ``ru_maxrss``, from
``os.wait4``). Reported per set: the medians over the repeats and their
ratios ``NEW/OLD``, the test NDCG@10 of each with their difference paired
over the queries (``rsrank.stats``' paired t-test and randomization test),
and whether the two ``predictions/Fold1.test.txt`` are identical byte for
byte. On a shared machine the wall times drift between runs; CPU time, and
the same set run back to back, drift less. Writes ``NAME.md`` and
``NAME.json`` into ``--out``.
"""

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from rsrank.stats import paired_t_test, permutation_test

from _bench import REPO, command_line, fold_per_query, write_report


def _worktree(commit, where):
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "-f", "--detach", str(where),
                    commit], check=True, capture_output=True)
    return subprocess.run(["git", "-C", str(where), "rev-parse", "--short=12", "HEAD"],
                          check=True, capture_output=True, text=True).stdout.strip()


def _train(checkout, data, out, flags):
    """One run in a fresh process: (wall s, user s, system s, peak bytes)."""
    argv = [sys.executable, "-m", "rsrank", "train", "--train", str(data / "train.txt"),
            "--vali", str(data / "vali.txt"), "--test", str(data / "test.txt"),
            "--out", str(out), "--quiet", *flags]
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    start = time.perf_counter()
    child = subprocess.Popen(argv, cwd=checkout, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    error = child.stderr.read().decode(errors="replace")
    child.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{checkout}: rsrank train failed on {data}:\n{error}")
    return wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss * 1024


def _ndcg(run):
    fold = json.loads((run / "results.json").read_text())["folds"][0]
    return fold_per_query(fold)


def _compare(old_run, new_run):
    old, new = _ndcg(old_run), _ndcg(new_run)
    queries = sorted(q for q in old if not np.isnan(old[q]))
    a = np.array([old[q] for q in queries])
    b = np.array([new[q] for q in queries])
    test = paired_t_test(a, b)
    same = ((old_run / "predictions" / "Fold1.test.txt").read_bytes()
            == (new_run / "predictions" / "Fold1.test.txt").read_bytes())
    return {"queries": len(queries), "old": test.mean_a, "new": test.mean_b,
            "difference": test.difference, "low": test.ci_low, "high": test.ci_high,
            "t_p": test.pvalue, "randomization_p": permutation_test(a, b),
            "identical_predictions": same}


def _markdown(args, commits, rows):
    flags = " ".join(args.flags)
    lines = [f"# `rsrank train {flags}` with the code of {commits['old']} and of "
             f"{commits['new']}", "",
             f"Command: `{command_line()}`", "",
             "Each checkout in its own worktree, the command once untimed on the first set "
             "(compiling its kernels), then per set and repeat the old and the new code one "
             "after the other, each in a fresh process. Medians over the repeats; CPU is user "
             "plus system time; peak memory is the process's. Test NDCG@10 paired over the "
             "queries (paired t-test, randomization test).", "",
             "| set | old wall s | new wall s | new/old | old CPU s | new CPU s | new/old | "
             "old peak | new peak | old NDCG@10 | new NDCG@10 | difference [95% CI] | t-test p "
             "| randomization p | same predictions |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        old, new, paired = row["old"], row["new"], row["paired"]

        def mib(value):
            return f"{value / 2 ** 20:,.0f} MiB"
        lines.append(
            f"| `{row['set']}` | {old['wall']:.1f} | {new['wall']:.1f} | "
            f"{new['wall'] / old['wall']:.2f} | {old['cpu']:.1f} | {new['cpu']:.1f} | "
            f"{new['cpu'] / old['cpu']:.2f} | {mib(old['peak'])} | {mib(new['peak'])} | "
            f"{paired['old']:.4f} | {paired['new']:.4f} | {paired['difference']:+.4f} "
            f"[{paired['low']:+.4f}, {paired['high']:+.4f}] | {paired['t_p']:.3g} | "
            f"{paired['randomization_p']:.3g} | "
            f"{'yes' if paired['identical_predictions'] else 'no'} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--data", nargs="+", required=True)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--flags", default="--additive --interactions 10",
                        help="the train command's options, one string")
    parser.add_argument("--name", default="checkouts")
    parser.add_argument("--out", default="results")
    args = parser.parse_args(argv)
    args.flags = shlex.split(args.flags)
    sets = [Path(d).resolve() for d in args.data]
    for data in sets:
        missing = [n for n in ("train.txt", "vali.txt", "test.txt") if not (data / n).exists()]
        if missing:
            parser.error(f"{data}: no {', '.join(missing)}")
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        trees, commits = {}, {}
        try:
            for which in ("old", "new"):
                trees[which] = scratch / which
                commits[which] = _worktree(getattr(args, which), trees[which])
                _train(trees[which], sets[0], scratch / f"warm_{which}", args.flags)
            rows = []
            for data in sets:
                times = {"old": [], "new": []}
                for repeat in range(args.repeats):
                    for which in ("old", "new"):
                        times[which].append(_train(trees[which], data,
                                                   scratch / f"{data.name}_{which}_{repeat}",
                                                   args.flags))
                measured = {which: {"wall": float(np.median([t[0] for t in runs])),
                                    "cpu": float(np.median([t[1] + t[2] for t in runs])),
                                    "peak": float(np.median([t[3] for t in runs])),
                                    "runs": runs}
                            for which, runs in times.items()}
                rows.append({"set": str(Path(os.path.relpath(data, REPO))), **measured,
                             "paired": _compare(scratch / f"{data.name}_old_0",
                                                scratch / f"{data.name}_new_0")})
                print(f"{data.name}: wall {measured['new']['wall'] / measured['old']['wall']:.2f}"
                      f"x, CPU {measured['new']['cpu'] / measured['old']['cpu']:.2f}x",
                      file=sys.stderr)
        finally:
            for tree in trees.values():
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force",
                                str(tree)], capture_output=True)
    report = {"old": commits["old"], "new": commits["new"], "flags": args.flags,
              "repeats": args.repeats, "sets": rows}
    write_report(args.out, args.name, report, _markdown(args, commits, rows))
    return 0
