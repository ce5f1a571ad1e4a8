"""The pair search's histograms on MSLR-WEB30K-shaped rows: every pair of
136 features over 227,045 rows, a block of rows at a time, against the
same sums a row at a time.

    python scripts/bench_pair_search.py [--out results] [--documents 227045] [--repeats 3]

Rows from ``make_mslr_like`` (136 float32 features), coded on 8 and on 16
quantile bins per feature (``interaction_bins``' default and its largest),
and one value per row. Times, fastest of ``--repeats``:

* a row at a time, every pair's cell of the row in turn (the search's
  kernel before blocks; a pair's cells lie ``bins**2`` values apart, so a
  row touches every pair's histogram: 18 MB of them at 8 bins);
* a block of rows at a time, one pair after the other (the search's kernel
  before runs of pairs), each pair's cells filled from two code columns
  while they stay in cache;
* runs of four pairs with one first feature filled in one pass over the
  block, each pair's sums and counts in arrays of their own (the
  search's kernel before they sat side by side);
* ``pair_histograms_serial``: the same runs, each cell's sum and count
  side by side;
* ``pair_histograms_parallel`` on 2 threads, the pairs shared out.

All five give the same sums, bit for bit (checked). Writes
``pair_search.md`` and ``pair_search.json`` into ``--out``.
"""

import argparse
import itertools
import time

import numpy as np
from numba import njit

from _bench import internal, write_report


@njit(cache=True)
def _row_at_a_time(codes, values, first, second, n_bins, sums, counts):
    for i in range(codes.shape[0]):
        value = values[i]
        for p in range(first.shape[0]):
            cell = codes[i, first[p]] * n_bins + codes[i, second[p]]
            sums[p, cell] += value
            counts[p, cell] += 1


#: the rows of a block of the package's kernel
BLOCK = internal("_kernels", "PAIR_BLOCK")


@njit(cache=True)
def _pair_at_a_time(columns, values, first, second, n_bins, sums, counts):
    for lo in range(0, columns.shape[1], BLOCK):
        hi = min(lo + BLOCK, columns.shape[1])
        for p in range(first.shape[0]):
            a, b = columns[first[p]], columns[second[p]]
            for i in range(lo, hi):
                cell = a[i] * n_bins + b[i]
                sums[p, cell] += values[i]
                counts[p, cell] += 1


@njit(cache=True)
def _two_arrays(columns, values, first, second, n_bins, sums, counts):
    """The package's kernel before each cell's sum and count sat side by
    side: runs of four pairs with one first feature, unrolled, sums and
    counts in arrays of their own (serial)."""
    for lo in range(0, columns.shape[1], BLOCK):
        hi = min(lo + BLOCK, columns.shape[1])
        p = 0
        while p < first.shape[0]:
            if p + 4 <= first.shape[0] and first[p + 1] == first[p] and (
                    first[p + 2] == first[p] and first[p + 3] == first[p]):
                a = columns[first[p]]
                b0, b1 = columns[second[p]], columns[second[p + 1]]
                b2, b3 = columns[second[p + 2]], columns[second[p + 3]]
                for i in range(lo, hi):
                    row, value = a[i] * n_bins, values[i]
                    sums[p, row + b0[i]] += value
                    counts[p, row + b0[i]] += 1
                    sums[p + 1, row + b1[i]] += value
                    counts[p + 1, row + b1[i]] += 1
                    sums[p + 2, row + b2[i]] += value
                    counts[p + 2, row + b2[i]] += 1
                    sums[p + 3, row + b3[i]] += value
                    counts[p + 3, row + b3[i]] += 1
                p += 4
                continue
            a, b = columns[first[p]], columns[second[p]]
            for i in range(lo, hi):
                sums[p, a[i] * n_bins + b[i]] += values[i]
                counts[p, a[i] * n_bins + b[i]] += 1
            p += 1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--documents", type=int, default=227_045)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    import numba

    from rsrank.learning.binning import bin_codes, fit_thresholds
    from rsrank.reading.synthetic import make_mslr_like

    serial = internal("_kernels", "pair_histograms_serial")
    parallel = internal("_kernels", "pair_histograms_parallel")
    queries = max(args.documents * 4000 // 468_598, 1)
    X = make_mslr_like(n_documents=args.documents, n_queries=queries, random_state=0).X
    values = np.random.default_rng(0).normal(size=len(X))
    pairs = np.array(list(itertools.combinations(range(X.shape[1]), 2)))
    first, second = np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1])
    times, rows = {}, []
    for n_bins in (8, 16):
        codes = np.ascontiguousarray(bin_codes(X, fit_thresholds(X, n_bins)).toarray())
        side = int(codes.max()) + 1

        def row_at_a_time(codes=codes, side=side):
            out = np.zeros((2, len(pairs), side * side))
            _row_at_a_time(codes, values, first, second, side, out[0], out[1])
            return out

        def blocked(build, codes=codes, side=side):
            out = np.zeros((2, len(pairs), side * side))
            build(np.ascontiguousarray(codes.T), values, first, second, side, out[0], out[1])
            return out

        def side_by_side(build, codes=codes, side=side):  # each cell's sum and count together
            cells = np.zeros((len(pairs), side * side, 2))
            build(np.ascontiguousarray(codes.T), values, first, second, side, cells)
            return np.moveaxis(cells, 2, 0)

        runs = {"a row at a time": row_at_a_time,
                "blocks of rows, a pair at a time (serial)": lambda: blocked(_pair_at_a_time),
                "blocks of rows, runs of four pairs, sums and counts apart (serial)":
                    lambda: blocked(_two_arrays),
                "blocks of rows (serial)": lambda: side_by_side(serial),
                "blocks of rows (2 threads)": lambda: side_by_side(parallel)}
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        results = {name: run() for name, run in runs.items()}  # compiles, and checks
        reference = results["a row at a time"]
        assert all(np.array_equal(reference, out) for out in results.values())
        for name, run in runs.items():
            seconds = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                run()
                seconds.append(time.perf_counter() - start)
            times[f"{name}, {n_bins} bins"] = seconds
            rows.append((n_bins, name, min(seconds), min(times[f"a row at a time, {n_bins} bins"])))
    report = {"documents": len(X), "features": X.shape[1], "pairs": len(pairs),
              "repeats": args.repeats, "seconds": times}
    lines = ["# The pair search's histograms", "",
             f"Every pair of {X.shape[1]} features ({len(pairs):,} pairs) over {len(X):,} rows "
             f"(`make_mslr_like`), one value per row; fastest of {args.repeats}. Every way "
             "gives the same sums, bit for bit.", "",
             "| bins per feature | way | seconds | / a row at a time | / a pair at a time |",
             "|---|---|---|---|---|"]
    for n_bins, name, value, base in rows:
        pair = min(times[f"blocks of rows, a pair at a time (serial), {n_bins} bins"])
        lines.append(f"| {n_bins} | {name} | {value:.2f} | {value / base:.2f} | "
                     f"{value / pair:.2f} |")
    write_report(args.out, "pair_search", report, "\n".join(lines))


if __name__ == "__main__":
    main()
