"""An additive model's setup on MSLR-WEB30K-shaped rows: the bin codes and
the step curvature, against NumPy doing the codes.

    python scripts/bench_codes.py [--out results] [--documents 227045] [--repeats 5]

Rows from ``make_mslr_like`` (136 float32 features, long-tailed queries),
thresholds fitted on its first 50,000 rows with the default ``max_bins``.
Times, fastest of ``--repeats``, the settings taking turns:

* ``bin_codes``: the package's codes (kernels a row at a time);
* the same codes a column at a time through NumPy's ``searchsorted``
  (``rsrank.learning.binning._code``, the codes' definition), checked equal;
* the step curvature of every step (``Objective.hessian_diagonal`` on the
  codes, swap weights: the pairs of each query summed per step column
  without building it), on a fresh copy of the data each time.

Writes ``codes.md`` and ``codes.json`` into ``--out``.
"""

import argparse
import time

import numpy as np

from _bench import internal, write_report


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--documents", type=int, default=227_045)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    from rsrank import QueryData
    from rsrank.learning.binning import StepEncoding, bin_codes, fit_thresholds
    from rsrank.learning.objective import Objective
    from rsrank.reading.synthetic import make_mslr_like

    column_code = internal("learning.binning", "_code")
    queries = max(args.documents * 4000 // 468_598, 1)
    made = make_mslr_like(n_documents=args.documents, n_queries=queries, random_state=0)
    X, y, qid = made.X, made.y, made.qid
    thresholds = fit_thresholds(X[:50_000])

    def by_columns():
        return np.stack([column_code(X[:, j], cuts) for j, cuts in enumerate(thresholds)],
                        axis=1)

    def curvature():
        data = QueryData(X, y, qid)
        return Objective().hessian_diagonal(data, view=StepEncoding(thresholds))

    assert np.array_equal(bin_codes(X, thresholds).toarray(), by_columns())
    curvature()  # compiles
    timers = {"bin_codes (kernels, a row at a time)": lambda: bin_codes(X, thresholds),
              "searchsorted, a column at a time": by_columns,
              "step curvature (hessian_diagonal)": curvature}
    times = {name: [] for name in timers}
    for _ in range(args.repeats):
        for name, run in timers.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    sizes = [len(cuts) for cuts in thresholds]
    report = {"documents": len(X), "queries": int(len(np.unique(qid))),
              "features": X.shape[1], "thresholds_per_feature": int(np.median(sizes)),
              "repeats": args.repeats, "seconds": times}
    fastest = {name: min(values) for name, values in times.items()}
    base = fastest["searchsorted, a column at a time"]
    lines = ["# An additive model's setup: bin codes and step curvature", "",
             f"{len(X):,} rows of {X.shape[1]} float32 features in {report['queries']:,} "
             f"queries (`make_mslr_like`), {report['thresholds_per_feature']} thresholds per "
             f"feature (median); fastest of {args.repeats}, the settings taking turns.", "",
             "| work | seconds | / searchsorted |", "|---|---|---|"]
    for name, value in fastest.items():
        lines.append(f"| {name} | {value:.3f} | {value / base:.2f} |")
    write_report(args.out, "codes", report, "\n".join(lines))


if __name__ == "__main__":
    main()
