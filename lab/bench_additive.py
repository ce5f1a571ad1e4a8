"""An additive model's epoch and fit against the linear model's and LightGBM's,
at MSLR-WEB30K's shape.

    python scripts/bench_additive.py [--rows 200000] [--repeats 5] [--out results]

``make_mslr_like`` rows (136 float32 features, MSLR-WEB30K's query sizes and
labels), built once as a :class:`~rsrank.QueryData`. Measured, in one
process with numba's cache warm (a first small fit compiles what is not
cached yet):

* **One epoch**, full batch, on one thread and on every core: ``RSRank()``
  (z-scored linear) and ``RSRank(additive=True)`` with 32 and 255 bins; an
  epoch's time is the fastest training pass of ``--repeats`` fits of 5
  epochs each (``history_["seconds"]``, the NDCG bookkeeping left out),
  the settings taking turns.
* **Memory** of the rows the epochs read: the float32 ``X`` against the
  uint8 bin codes.
* **A whole fit**: ``RSRank(max_iter=100)`` linear and additive (the
  thresholds and codes included), and LightGBM's lambdarank with 100 trees
  (``num_leaves=31``, and 2: stumps), every core each.

Times are the fastest of the repeats; the report gives ratios to the linear
model, measured in the same run.
"""

import argparse
import time
from pathlib import Path

import numpy as np

from _bench import write_report


def mslr_rows(n_rows, seed=0):
    from rsrank.reading.synthetic import make_mslr_like

    return make_mslr_like(n_documents=n_rows, n_queries=max(2, round(n_rows / 120)),
                          random_state=seed)


def epoch_seconds(data, params, repeats):
    from rsrank import RSRank

    best = np.inf
    for _ in range(repeats):
        model = RSRank(max_iter=5, eval_train=False, random_state=0, **params).fit(data)
        best = min(best, min(model.history_["seconds"]))
    return best


def fit_seconds(fit, repeats):
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fit()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default="results")
    args = parser.parse_args(argv)

    import lightgbm
    from rsrank import QueryData, RSRank

    generated = mslr_rows(args.rows)
    X, y, qid = generated.X, generated.y, generated.qid
    data = QueryData(X, y, qid)
    # compile (or load) every kernel the measurements call
    small = QueryData(X[:2000], y[:2000], qid[:2000])
    for jobs in (1, -1):
        for params in ({}, {"additive": True}):
            RSRank(max_iter=2, n_jobs=jobs, **params).fit(small)

    settings = {"linear": {}, "additive, 32 bins": {"additive": True},
                "additive, 255 bins": {"additive": True, "max_bins": 255}}
    # the settings take turns, repeat after repeat, so that a slower spell of
    # the machine falls on all of them alike
    epochs = {}
    for _ in range(args.repeats):
        for name, params in settings.items():
            for jobs, label in ((1, "1 thread"), (-1, "every core")):
                seconds = epoch_seconds(data, {**params, "n_jobs": jobs}, 1)
                epochs[(name, label)] = min(epochs.get((name, label), np.inf), seconds)

    from rsrank.learning.binning import StepEncoding

    memory = {"float32 X": X.nbytes}
    for bins in (32, 255):
        encoding = StepEncoding.fit(X, bins)
        memory[f"bin codes, {bins} bins"] = data.rows(encoding).dense_codes.nbytes

    sizes = np.unique(qid, return_counts=True)[1]
    fits = {
        "RSRank() linear, 100 epochs": lambda: RSRank(max_iter=100, eval_train=False,
                                                      n_jobs=-1).fit(X, y, qid=qid),
        "RSRank(additive=True), 100 epochs": lambda: RSRank(
            max_iter=100, eval_train=False, n_jobs=-1, additive=True).fit(X, y, qid=qid),
        "LightGBM lambdarank, 100 trees": lambda: lightgbm.LGBMRanker(
            n_estimators=100, verbose=-1).fit(X, y, group=sizes),
        "LightGBM lambdarank stumps, 100 trees": lambda: lightgbm.LGBMRanker(
            n_estimators=100, num_leaves=2, verbose=-1).fit(X, y, group=sizes),
    }
    fit_times = {name: fit_seconds(fit, max(1, args.repeats // 2)) for name, fit in fits.items()}

    lines = [f"{args.rows:,} `make_mslr_like` rows x 136 float32 features "
             f"({len(sizes):,} queries), as a QueryData built once; numba's cache warm.", "",
             "## One epoch (full batch; the fastest training pass)", "",
             "| model | 1 thread (s) | every core (s) | / linear, 1 thread | / linear, every core |",
             "|---|---|---|---|---|"]
    for name in settings:
        one, every = epochs[(name, "1 thread")], epochs[(name, "every core")]
        lines.append(f"| {name} | {one:.4f} | {every:.4f} | "
                     f"{one / epochs[('linear', '1 thread')]:.2f} | "
                     f"{every / epochs[('linear', 'every core')]:.2f} |")
    lines += ["", "## Memory of the rows an epoch reads", "", "| rows as | MB | / float32 X |",
              "|---|---|---|"]
    for name, size in memory.items():
        lines.append(f"| {name} | {size / 1e6:.1f} | {size / memory['float32 X']:.2f} |")
    lines += ["", "## A whole fit (every core; the arrays given, thresholds and codes included)",
              "", "| fit | seconds | / linear |", "|---|---|---|"]
    reference = fit_times["RSRank() linear, 100 epochs"]
    for name, seconds in fit_times.items():
        lines.append(f"| {name} | {seconds:.2f} | {seconds / reference:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    report = {"rows": args.rows, "queries": int(len(sizes)),
              "epoch_seconds": {f"{n} / {label}": v for (n, label), v in epochs.items()},
              "memory_bytes": memory, "fit_seconds": fit_times}
    write_report(Path(args.out), "additive_speed", report, text)


if __name__ == "__main__":
    main()
