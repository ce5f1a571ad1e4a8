"""An additive model's setup on MSLR-WEB30K-shaped rows: the bin codes and
the step curvature, against NumPy doing the codes.

    python scripts/bench_codes.py [--out results] [--documents 227045] [--repeats 5]
                                  [--max-bins 32,255]

Rows from ``make_mslr_like`` (136 float32 features, long-tailed queries),
thresholds fitted on its first 50,000 rows with each of ``--max-bins``
(the default's 32, and LightGBM's 255).
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
    parser.add_argument("--max-bins", default="32,255",
                        help="comma-separated bins per feature, each measured")
    args = parser.parse_args(argv)
    from rsrank import QueryData
    from rsrank.learning.binning import StepEncoding, bin_codes, fit_thresholds
    from rsrank.learning.objective import Objective
    from rsrank.reading.synthetic import make_mslr_like

    column_code = internal("learning.binning", "_code")
    queries = max(args.documents * 4000 // 468_598, 1)
    made = make_mslr_like(n_documents=args.documents, n_queries=queries, random_state=0)
    X, y, qid = made.X, made.y, made.qid
    timers, sizes = {}, {}
    for max_bins in (int(v) for v in args.max_bins.split(",")):
        thresholds = fit_thresholds(X[:50_000], max_bins)
        sizes[max_bins] = int(np.median([len(cuts) for cuts in thresholds]))

        def by_columns(thresholds=thresholds):
            return np.stack([column_code(X[:, j], cuts) for j, cuts in enumerate(thresholds)],
                            axis=1)

        def curvature(thresholds=thresholds):
            data = QueryData(X, y, qid)
            return Objective().hessian_diagonal(data, view=StepEncoding(thresholds))

        assert np.array_equal(bin_codes(X, thresholds).toarray(), by_columns())
        curvature()  # compiles
        timers[f"bin_codes (kernels, a row at a time), {max_bins} bins"] = (
            lambda thresholds=thresholds: bin_codes(X, thresholds))
        timers[f"searchsorted, a column at a time, {max_bins} bins"] = by_columns
        timers[f"step curvature (hessian_diagonal), {max_bins} bins"] = curvature
    times = {name: [] for name in timers}
    for _ in range(args.repeats):
        for name, run in timers.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    report = {"documents": len(X), "queries": int(len(np.unique(qid))),
              "features": X.shape[1], "thresholds_per_feature": sizes,
              "repeats": args.repeats, "seconds": times}
    fastest = {name: min(values) for name, values in times.items()}
    lines = ["# An additive model's setup: bin codes and step curvature", "",
             f"{len(X):,} rows of {X.shape[1]} float32 features in {report['queries']:,} "
             f"queries (`make_mslr_like`); median thresholds per feature: "
             + ", ".join(f"{size} of at most {bins - 1}" for bins, size in sizes.items())
             + f"; fastest of {args.repeats}, the settings taking turns.", "",
             "| work | seconds | / searchsorted of the same bins |", "|---|---|---|"]
    for name, value in fastest.items():
        base = fastest["searchsorted, a column at a time, " + name.rsplit(", ", 1)[1]]
        lines.append(f"| {name} | {value:.3f} | {value / base:.2f} |")
    write_report(args.out, "codes", report, "\n".join(lines))


if __name__ == "__main__":
    main()
