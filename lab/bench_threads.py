"""Threads against the work and against busy cores.

    python scripts/bench_threads.py [--out results] [--repeats 3]

Two measurements:

* **Epoch time by data size**, on an idle machine: one full-batch epoch of
  ``RSRank()``'s defaults on ``make_mslr_like`` rows (45 dense float32
  features), with one thread and with every core; the ratio shows from
  which size threads pay (``rsrank.learning._threads.WORK_PER_THREAD``).
* **The default run with busy cores**: ``rsrank train``'s default grid on
  the bundled data (every fold) and one fit of 20 epochs on 200,000 rows of
  136 features, with ``n_jobs`` 1, -1 (every core) and ``"auto"``, while 0,
  1 or 2 other processes spin on the cores.

Writes ``threads.json`` and ``threads.md`` into ``--out``. Times are the
fastest of ``--repeats``, the thread settings taking turns within each
repeat (a shared machine only errs upwards, and drifts).
"""

import argparse
import multiprocessing
import os
import time
from pathlib import Path

import numpy as np

from rsrank import QueryData, RSRank
from rsrank.learning.recipe import (DEFAULT_L1_RATIO, DEFAULT_WITHIN, PATH_EPOCHS, PATH_PAIR_WEIGHTS,
                           PATH_WEIGHT_TOL)
from rsrank.reading.datasets import bundled_data_path
from rsrank.evaluation.experiments import run_letor_folds
from rsrank.reading.synthetic import make_mslr_like

from _bench import epoch_timer, fastest, internal, write_report

WORK_PER_THREAD, threads = internal("learning._threads", "WORK_PER_THREAD"), internal("learning._threads", "threads")

MODES = (1, -1, "auto")


def spin():
    while True:
        pass


def busy(n):
    """``n`` processes spinning on the cores."""
    workers = [multiprocessing.Process(target=spin, daemon=True) for _ in range(n)]
    for worker in workers:
        worker.start()
    time.sleep(0.5)
    return workers


def epoch_sizes(repeats):
    rows = []
    for n_rows in (300, 1_000, 3_000, 30_000, 300_000, 1_000_000):
        data = make_mslr_like(n_documents=n_rows, n_queries=max(n_rows // 100, 2), n_features=45,
                              random_state=0)
        times = {}
        for n_jobs in (1, -1):
            run = epoch_timer(data.X, data.y, data.qid, None, batch_size=None,
                              normalize="zscore", n_jobs=n_jobs)
            times[str(n_jobs)] = min(run() for _ in range(max(repeats, 3)))
        rows.append({"rows": n_rows, "stored": n_rows * 45, "one_thread": times["1"],
                     "every_core": times["-1"], "ratio": times["-1"] / times["1"],
                     "auto_threads": threads("auto", n_rows * 45)})
        print(rows[-1], flush=True)
    return rows


def default_run(n_jobs):
    """``rsrank train``'s default recipe on the bundled data (as
    ``scripts/recipe_study.py`` checks it against the command line), on
    ``n_jobs`` threads."""
    estimator = RSRank(learning_rate="curvature", max_iter=PATH_EPOCHS, restore_best=False,
                       weight_tol=PATH_WEIGHT_TOL, random_state=0, eval_convention="letor",
                       eval_train=False, n_jobs=n_jobs)
    grid = {"l1_ratio": DEFAULT_L1_RATIO, "learning_rate": ["curvature"],
            "pair_weight": PATH_PAIR_WEIGHTS}
    return lambda: run_letor_folds(bundled_data_path(), estimator, grid, convention="letor",
                                   within=DEFAULT_WITHIN, path=True)


def large_fit(n_jobs, data):
    return lambda: RSRank(max_iter=20, random_state=0, eval_train=False,
                          n_jobs=n_jobs).fit(data)


def busy_cores(repeats):
    mslr = make_mslr_like(n_documents=200_000, n_queries=2_000, random_state=0)
    large = QueryData(mslr.X, mslr.y, mslr.qid)
    rows = []
    for n_busy in (0, 1, 2):
        workers = busy(n_busy)
        try:
            for task, make in (("bundled default run", default_run),
                               ("200k x 136, 20 epochs", lambda j: large_fit(j, large))):
                runs = {j: make(j) for j in MODES}
                times = {str(j): [] for j in MODES}
                for _ in range(repeats):  # the modes take turns: they share the drift
                    for j in MODES:
                        times[str(j)].append(fastest(runs[j], 1))
                rows.append({"busy": n_busy, "task": task,
                             **{j: min(t) for j, t in times.items()}})
                print(rows[-1], flush=True)
        finally:
            for worker in workers:
                worker.terminate()
    return rows


def markdown(sizes, loaded):
    lines = [f"Cores: {os.cpu_count()}. `WORK_PER_THREAD` = {WORK_PER_THREAD:,} stored values.",
             "", "## One epoch by data size (idle machine, 45 dense float32 features)", "",
             "| rows | stored values | 1 thread (s) | every core (s) | every core / 1 | auto threads |",
             "|---|---|---|---|---|---|"]
    for r in sizes:
        lines.append(f"| {r['rows']:,} | {r['stored']:,} | {r['one_thread']:.4f} | "
                     f"{r['every_core']:.4f} | {r['ratio']:.2f} | {r['auto_threads']} |")
    lines += ["", "## The default run with other processes busy on the cores", "",
              "Seconds (fastest of the repeats); in brackets the time over one thread's.", "",
              "| busy processes | task | 1 thread | every core | auto |", "|---|---|---|---|---|"]
    for r in loaded:
        one = r["1"]
        lines.append(f"| {r['busy']} | {r['task']} | {one:.2f} | {r['-1']:.2f} "
                     f"({r['-1'] / one:.2f}) | {r['auto']:.2f} ({r['auto'] / one:.2f}) |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    RSRank(max_iter=1).fit(np.ones((4, 2)), [0, 1, 0, 1], qid=[1, 1, 2, 2])  # compile first
    sizes = epoch_sizes(args.repeats)
    loaded = busy_cores(args.repeats)
    write_report(Path(args.out), "threads", {"epoch_by_size": sizes, "busy_cores": loaded},
                 markdown(sizes, loaded))


if __name__ == "__main__":
    main()
