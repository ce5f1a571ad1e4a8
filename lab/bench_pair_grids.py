"""The costs of a pair's grid split: every run of a table's rows, summed in
a kernel, against the same costs in whole-array NumPy steps.

    python scripts/bench_pair_grids.py [--out results] [--tables 20] [--repeats 3]

A search's ten pairs at 255 bins a feature give twenty tables of 255 x 255
cells (each pair split along both features); here ``--tables`` random ones
of that size, counts Poisson with some cells empty. For every start ``i``
and end ``j`` of a run of rows, the count-weighted sum of squares around
each column's run mean, from prefix sums over the rows:

* NumPy, one start at a time, every end at once (the package before the
  kernel: each start's arrays of ends x columns went through memory);
* ``rsrank._kernels.run_costs``: a run's columns summed in cache.

Fastest of ``--repeats``; the largest relative difference between the two
is reported (they sum the columns in another order). Writes
``pair_grids.md`` and ``pair_grids.json`` into ``--out``.
"""

import argparse

import numpy as np

from _bench import command_line, fastest, internal, write_report


def _numpy_costs(w, wm, wmm, costs):
    """The costs as the package computed them before the kernel."""
    for i in range(w.shape[0] - 1):
        weight, first, second = w[i + 1:] - w[i], wm[i + 1:] - wm[i], wmm[i + 1:] - wmm[i]
        costs[i, i + 1:] = np.sum(second - np.where(
            weight > 0, first ** 2 / np.maximum(weight, 1e-300), 0.0), axis=1)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--tables", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    run_costs = internal("_kernels", "run_costs")
    rng = np.random.default_rng(0)
    tables = []
    for _ in range(args.tables):
        counts = rng.poisson(rng.uniform(0.5, 4.0), size=(255, 255)).astype(float)
        means = rng.normal(size=counts.shape)

        def prefix(values):
            return np.vstack([np.zeros(values.shape[1]), np.cumsum(values, axis=0)])
        tables.append((prefix(counts), prefix(counts * means), prefix(counts * means ** 2)))
    costs = {name: [np.full((256, 256), np.inf) for _ in tables] for name in ("numpy", "kernel")}
    run_costs(*tables[0], costs["kernel"][0])  # compiled or loaded before the clock
    times = {}
    for name, costed in (("numpy", _numpy_costs), ("kernel", run_costs)):
        times[name] = fastest(lambda: [costed(*table, out)
                                       for table, out in zip(tables, costs[name])], args.repeats)
    worst = 0.0
    for before, after in zip(costs["numpy"], costs["kernel"]):
        held = np.isfinite(before)
        assert np.array_equal(held, np.isfinite(after))
        worst = max(worst, float(np.max(np.abs(before[held] - after[held])
                                         / np.maximum(1.0, np.abs(before[held])))))
    ratio = times["kernel"] / times["numpy"]
    lines = ["# The costs of a pair's grid split: a kernel against whole-array steps", "",
             f"Command: `{command_line()}`", "",
             f"{args.tables} tables of 255 x 255 cells (a search's ten pairs at 255 bins, each "
             f"split along both features); fastest of {args.repeats}, one thread.", "",
             "| costs of every run | seconds | / NumPy |", "|---|---|---|",
             f"| NumPy, one start at a time (before) | {times['numpy']:.3f} | 1.00x |",
             f"| `run_costs` kernel | {times['kernel']:.3f} | {ratio:.2f}x |", "",
             f"The largest relative difference between the two: {worst:.1e}."]
    write_report(args.out, "pair_grids", {"tables": args.tables, "seconds": times,
                                          "ratio": ratio, "max_relative_difference": worst},
                 "\n".join(lines))


if __name__ == "__main__":
    main()
