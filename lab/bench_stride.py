"""An additive epoch with pairs by the stride of its tables: the package's
odd stride against the power of two it replaced.

    python scripts/bench_stride.py [--out results] [--processes 5] [--epochs 60]

Rows from ``make_web_like`` (136 float32 features of mixed families,
50,000 rows: the size of the path's sample), an additive model with
``interactions=10`` at 255 bins a feature and 16 x 16 grids (each pair
256 codes), ``learning_rate="curvature"`` with momentum, ``--epochs``
epochs. Dense rows lay each feature's codes one stride apart: the most
codes of any feature (256 here) rounded up to an odd number (257), or,
as before, not rounded (256). Each layout is fitted in ``--processes``
fresh processes, taking turns (how the table falls in memory is the
process's); each reports the median seconds of its epochs. The two
layouts' weights are checked equal.

Writes ``stride.md`` and ``stride.json`` into ``--out``.
"""

import argparse
import hashlib
import json
import subprocess
import sys

import numpy as np

from _bench import write_report


def child(layout, epochs):
    from rsrank import RSRank
    from rsrank.learning.binning import StepEncoding
    from rsrank.reading.synthetic import make_web_like

    if layout == "power of two":
        odd = StepEncoding.stride.fget
        StepEncoding.stride = property(lambda self: odd(self) - 1 if odd(self) == 257
                                       else odd(self))
    data = make_web_like(n_documents=50_000, n_queries=420, random_state=0)
    model = RSRank(additive=True, interactions=10, max_bins=255, interaction_bins=16,
                   learning_rate="curvature", momentum=True, max_iter=epochs, weight_tol=None)
    model.fit(data.X, data.y, qid=data.qid)
    stride = int(model.model_.encoding.strided_slots()[1])
    print(json.dumps({"layout": layout, "stride": stride,
                      "epoch_ms": 1000 * float(np.median(model.history_["seconds"])),
                      "coef": hashlib.sha256(model.coef_.tobytes()).hexdigest()}))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--processes", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child, args.epochs)
    layouts = ["odd", "power of two"]
    runs = {layout: [] for layout in layouts}
    for _ in range(args.processes):
        for layout in layouts:
            done = subprocess.run([sys.executable, __file__, "--child", layout, "--epochs",
                                   str(args.epochs)], capture_output=True, text=True, check=True)
            row = json.loads(done.stdout.strip().splitlines()[-1])
            runs[layout].append(row)
            print(row, flush=True)
    hashes = {row["coef"] for rows in runs.values() for row in rows}
    if len(hashes) != 1:
        raise SystemExit(f"the layouts fitted different weights: {hashes}")
    medians = {layout: float(np.median([r["epoch_ms"] for r in rows]))
               for layout, rows in runs.items()}
    report = {"processes": args.processes, "epochs": args.epochs, "runs": runs,
              "median_epoch_ms": medians}
    lines = ["# An additive epoch with pairs, by the stride of its tables", "",
             "50,000 rows of `make_web_like` (136 features), `RSRank(additive=True, "
             "interactions=10, max_bins=255, interaction_bins=16, learning_rate=\"curvature\", "
             f"momentum=True)`, {args.epochs} epochs; each layout in {args.processes} fresh "
             "processes, taking turns. The weights of every run are the same, bit for bit.", "",
             "| layout | stride | median ms per epoch, each process | median | vs odd |",
             "|---|---|---|---|---|"]
    for layout, rows in runs.items():
        lines.append(f"| {layout} | {rows[0]['stride']} | "
                     + ", ".join(f"{r['epoch_ms']:.1f}" for r in rows)
                     + f" | {medians[layout]:.1f} | {medians[layout] / medians['odd']:.2f}x |")
    write_report(args.out, "stride", report, "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
