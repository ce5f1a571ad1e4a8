"""How long the bound of an additive fit's level steps takes, one gradient
an iteration against two.

    python scripts/bench_level_bound.py --data DIR [DIR ...] [--bins 255] [--repeats 2]
        [--out results]

Each ``--data`` directory is one that ``bench_end_to_end.py`` writes; its
``train.txt`` is read in float32 and coded on ``--bins`` quantile bins per
feature. With the unit pair weights (the path's at MSLR-WEB30K's shape),
:meth:`rsrank.learning.objective.Objective.level_step_bound` takes each
Hessian product of its 12 power iterations as the gradient at a small
point less the gradient at 0, which it computes once: unit pair weights do
not follow the ranking, so within the pair loss's quadratic part the
gradient is linear in the weights. The reference here is the same power
method with each product the difference of the gradients at two points
along the direction (the rule for swap weights, and for every weighting
before). Both read the same rows, pairs and level curvatures, made before
the clock starts; the fastest of ``--repeats`` runs of each, and the two
estimates with their relative difference.

Writes ``level_bound.json`` and ``level_bound.md`` into ``--out``.
"""

import argparse
import time
from pathlib import Path

import numpy as np
from _bench import command_line, internal, write_report

from rsrank import QueryData, load_letor
from rsrank.learning.objective import Objective


def two_point_bound(objective, data, view, iterations=12):
    """The power method with each product from two points along the
    direction, as the bound is estimated for swap weights."""
    bins = np.asarray(data.rows(view).bins, dtype=np.int64)
    curvature = objective.level_curvature(data, view=view)
    inverse = np.divide(1.0, curvature, out=np.zeros_like(curvature), where=curvature > 0)
    direction = np.random.default_rng(0).standard_normal(int(bins[-1]))
    largest = 0.0
    for _ in range(iterations):
        direction /= np.linalg.norm(direction)
        small = 1e-4 / max(1.0, float(np.abs(direction).sum()))
        far = objective.loss_and_gradient(data, 2 * small * direction, view=view)[1]
        near = objective.loss_and_gradient(data, small * direction, view=view)[1]
        moved = internal("_kernels", "level_moves")(
            (far - near) / (small * max(data.n_queries, 1)), bins, inverse)
        size = float(np.linalg.norm(moved))
        if size == 0.0:
            break
        largest = max(largest, size)
        direction = moved
    return largest


def fastest(run, repeats, setup):
    best, value = np.inf, None
    for _ in range(repeats):
        setup()
        start = time.perf_counter()
        value = run()
        best = min(best, time.perf_counter() - start)
    return best, value


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", required=True)
    parser.add_argument("--bins", type=int, default=255)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    objective = Objective(pair_weight="unit")
    rows = []
    for directory in map(Path, args.data):
        X, y, qid = load_letor(directory / "train.txt", dtype=np.float32, dense="auto")[:3]
        data = QueryData(X, y, qid)
        view = data.step_encoding(args.bins)

        def setup():  # the rows' codes, pairs and level curvatures, made afresh
            data.forget()
            objective.level_curvature(data, view=view)
            objective.pairs(data)
        seconds, bound = fastest(lambda: objective.level_step_bound(data, view=view),
                                 args.repeats, setup)
        reference_seconds, reference = fastest(
            lambda: two_point_bound(objective, data, view), args.repeats, setup)
        rows.append({"data": directory.name, "rows": data.n_rows, "levels": view.n_steps,
                     "seconds": seconds, "reference_seconds": reference_seconds,
                     "ratio": seconds / reference_seconds, "bound": bound,
                     "reference_bound": reference,
                     "relative_difference": abs(bound - reference) / reference})
        print(rows[-1], flush=True)
    lines = ["# The level steps' bound: one gradient an iteration against two", "",
             f"Command: `{command_line(argv)}`", "",
             "Unit pair weights, the training rows of each set coded on "
             f"{args.bins} quantile bins per feature; 12 power iterations; the fastest of "
             f"{args.repeats} runs of each (rows, pairs and level curvatures made before the "
             "clock starts).", "",
             "| data | rows | levels | one gradient (s) | two gradients (s) | ratio | bound | "
             "two-point bound | relative difference |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['data']} | {row['rows']:,} | {row['levels']:,} | "
                     f"{row['seconds']:.2f} | {row['reference_seconds']:.2f} | "
                     f"{row['ratio']:.2f}x | {row['bound']:.6f} | {row['reference_bound']:.6f} | "
                     f"{row['relative_difference']:.1e} |")
    report = {"command": command_line(argv), "rows": rows}
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        write_report(args.out, "level_bound", report, text)


if __name__ == "__main__":
    main()
