"""Folds in worker processes (``rsrank train --jobs N``) against one process.

    python scripts/bench_jobs.py [--out results] [--repeats 3]

``rsrank train DIR --quiet`` with the defaults otherwise, as a user runs
it: a fresh ``python -m rsrank`` process, the kernels already in numba's
cache (a first run compiles them before the timed ones). ``--jobs 1``
runs the folds in the command's own process, whose fits use every core
through numba's threads; ``--jobs 2`` (and ``-1`` on a machine with more
than two cores) runs them in worker processes, each a fresh interpreter
that imports the package before its first fold. The settings take turns
within each repeat. For each: the median wall time, its ratio to
``--jobs 1``'s, and the CPU seconds of the command with its workers.

Data: the bundled folds and, when present, ``../shared/data/OHSUMED``
(read as it is, gzipped).

Writes ``jobs.json`` and ``jobs.md`` into ``--out``.
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from rsrank.reading.datasets import bundled_data_path

from _bench import write_report

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def timed_train(data, jobs, scratch):
    """Wall and CPU seconds (the command and its workers) of one run."""
    out = Path(scratch) / f"run-{jobs}"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "rsrank", "train", str(data), "--quiet", "--jobs",
                    str(jobs), "--out", str(out), "--force"], check=True,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    cores = os.cpu_count() or 1
    settings = [1, 2] + ([-1] if cores > 2 else [])
    datasets = {"bundled": bundled_data_path()}
    if (SHARED / "OHSUMED").is_dir():
        datasets["OHSUMED"] = SHARED / "OHSUMED"
    report = {"cores": cores, "repeats": args.repeats, "datasets": {}}
    with tempfile.TemporaryDirectory() as scratch:
        for name, data in datasets.items():
            timed_train(data, 1, scratch)  # compiles what a first run compiles
            runs = {jobs: [] for jobs in settings}
            for _ in range(args.repeats):
                for jobs in settings:
                    runs[jobs].append(timed_train(data, jobs, scratch))
            report["datasets"][name] = {
                str(jobs): {"wall_s": [w for w, _ in values], "cpu_s": [c for _, c in values]}
                for jobs, values in runs.items()}
    lines = ["# Folds in worker processes against one process", "",
             f"`rsrank train DIR --quiet --jobs N` in a fresh process, {cores} cores, kernels "
             f"cached; the settings take turns, medians of {args.repeats} runs. CPU: the "
             "command and its workers.", "",
             "| data | --jobs | wall s | / --jobs 1 | CPU s |", "|---|---|---|---|---|"]
    for name, by_jobs in report["datasets"].items():
        base = np.median(by_jobs["1"]["wall_s"])
        for jobs, values in by_jobs.items():
            wall = np.median(values["wall_s"])
            lines.append(f"| {name} | {jobs} | {wall:.2f} | {wall / base:.2f} | "
                         f"{np.median(values['cpu_s']):.1f} |")
    write_report(args.out, "jobs", report, "\n".join(lines))


if __name__ == "__main__":
    main()
