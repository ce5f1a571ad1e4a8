"""An additive model's setup on MSLR-WEB30K-shaped rows: the bin codes and
the step curvature, against NumPy doing the codes.

    python scripts/bench_codes.py [--out results] [--documents 227045] [--repeats 5]
                                  [--max-bins 32,255] [--no-curvature]

Rows from ``make_mslr_like`` (136 float32 features, long-tailed queries),
thresholds fitted on its first 50,000 rows with each of ``--max-bins``
(the default's 32, and LightGBM's 255).
Times, fastest of ``--repeats``, the settings taking turns:

* ``bin_codes``: the package's codes (kernels a row at a time), on one
  thread and on two (blocks of rows shared out);
* the same codes a column at a time through NumPy's ``searchsorted``
  (``rsrank.learning.binning._code``, the codes' definition), checked equal;
* the thresholds of all the rows (``fit_thresholds``: one sort a column,
  the columns shared out among the threads) on one thread and on two,
  against each column's ``np.unique`` and then ``np.sort`` (two sorts a
  column, one thread: the package before), checked equal;
* a training set's whole setup, ``StepEncoding.coded`` (thresholds, codes
  and the rows per bin), on one thread and on two;
* the step curvature of every step (``Objective.hessian_diagonal`` on the
  codes, swap weights: the pairs of each query summed per step column
  without building it), on a fresh copy of the data each time
  (``--no-curvature`` leaves it out).

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
    parser.add_argument("--no-curvature", action="store_true",
                        help="leave the step curvature out")
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

        def two_sorts(max_bins=max_bins):
            return [two_sort_thresholds(X[:, j], max_bins) for j in range(X.shape[1])]

        everything = [t.tobytes() for t in fit_thresholds(X, max_bins, n_threads=1)]
        assert [t.tobytes() for t in two_sorts()] == everything
        for n_threads in (1, 2):
            assert np.array_equal(bin_codes(X, thresholds, n_threads=n_threads).toarray(),
                                  by_columns())
            assert [t.tobytes() for t in fit_thresholds(X, max_bins, n_threads)] == everything
            timers[f"bin_codes (kernels, a row at a time), {max_bins} bins, {n_threads} "
                   f"thread{'s' * (n_threads > 1)}"] = (
                lambda thresholds=thresholds, n=n_threads: bin_codes(X, thresholds, n_threads=n))
        timers[f"searchsorted, a column at a time, {max_bins} bins"] = by_columns
        timers[f"thresholds, unique then sort a column (before), {max_bins} bins"] = two_sorts
        for n_threads in (1, 2):
            timers[f"thresholds, one sort a column, {max_bins} bins, {n_threads} "
                   f"thread{'s' * (n_threads > 1)}"] = (
                lambda max_bins=max_bins, n=n_threads: fit_thresholds(X, max_bins, n))
        for n_threads in (1, 2):
            timers[f"StepEncoding.coded (the whole setup), {max_bins} bins, {n_threads} "
                   f"thread{'s' * (n_threads > 1)}"] = (
                lambda max_bins=max_bins, n=n_threads: whole_setup(X, max_bins, n))
        if not args.no_curvature:
            curvature()  # compiles
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
    lines = ["# An additive model's setup: thresholds, bin codes and step curvature", "",
             f"{len(X):,} rows of {X.shape[1]} float32 features in {report['queries']:,} "
             f"queries (`make_mslr_like`); median thresholds per feature: "
             + ", ".join(f"{size} of at most {bins - 1}" for bins, size in sizes.items())
             + f"; fastest of {args.repeats}, the settings taking turns.", "",
             "| work | seconds | / searchsorted of the same bins | / unique then sort of the "
             "same bins |", "|---|---|---|---|"]
    for name, value in fastest.items():
        bins = next(part for part in name.split(", ") if part.endswith(" bins"))
        codes = fastest[f"searchsorted, a column at a time, {bins}"]
        sorts = fastest[f"thresholds, unique then sort a column (before), {bins}"]
        lines.append(f"| {name} | {value:.3f} | {value / codes:.2f} | {value / sorts:.2f} |")
    write_report(args.out, "codes", report, "\n".join(lines))


def two_sort_thresholds(values, max_bins):
    """One column's thresholds as the package found them before (no NaN or
    infinite values here): ``np.unique`` for the distinct values, then
    ``np.sort`` again for the quantiles."""
    values = values.astype(np.float32)
    distinct = np.unique(values)
    if len(distinct) <= max_bins:
        return np.ascontiguousarray(distinct[:-1])
    ordered = np.sort(values)
    ranks = np.ceil(np.arange(1, max_bins) / max_bins * len(ordered)).astype(np.int64)
    cuts = np.unique(ordered[np.maximum(ranks - 1, 0)])
    return np.ascontiguousarray(cuts[cuts < distinct[-1]], dtype=np.float32)


def whole_setup(X, max_bins, n_threads):
    """A training set's :meth:`StepEncoding.coded` on ``n_threads`` threads,
    as a fit's start takes its ``n_jobs``."""
    from rsrank.learning.binning import StepEncoding

    return StepEncoding.coded(X, max_bins, n_threads)


if __name__ == "__main__":
    main()
