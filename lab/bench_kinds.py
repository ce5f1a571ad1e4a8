"""Wall time of ``rsrank train`` for each model kind on the same folds, in
one process, the kinds taking turns.

    python scripts/bench_kinds.py [--data ../shared/data/OHSUMED] [--rounds 2] [--out results]

Each round runs ``rsrank train DATA --quiet`` (linear), ``--additive`` and
``--additive --interactions 10`` one after another (the kernels compiled
before the first round), and the ratios to the linear run of the same
round are reported with their median over the rounds: the machine's other
load drifts between rounds more than within one.
"""

import argparse
import contextlib
import io
import time
import warnings

import numpy as np

from _bench import SHARED_DATA, command_line, portable, write_report

KINDS = {"linear": [], "additive": ["--additive"],
         "interactions 10": ["--additive", "--interactions", "10"]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(SHARED_DATA / "OHSUMED"))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", default="results")
    parser.add_argument("--name", default="kinds_time")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    from rsrank.cli import main as rsrank_main

    def run(flags):
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            code = rsrank_main(["train", args.data, "--quiet", *flags])
        if code != 0:
            raise SystemExit(f"rsrank train {' '.join(flags)} failed")
        return time.perf_counter() - start

    run(["--folds", "1", "--additive", "--interactions", "2", "--max-iter", "2"])  # compile
    seconds = {kind: [] for kind in KINDS}
    for round_ in range(args.rounds):
        for kind, flags in KINDS.items():
            seconds[kind].append(run(flags))
            print(round_, kind, round(seconds[kind][-1], 1), flush=True)
    ratios = {kind: [s / l for s, l in zip(seconds[kind], seconds["linear"])] for kind in KINDS}
    lines = ["# Wall time of rsrank train by model kind", "",
             f"`{command_line()}`: `rsrank train {portable(args.data)} --quiet` with each "
             "kind's flags, "
             f"{args.rounds} rounds, the kinds taking turns in one process; seconds of each "
             "run and the ratio to the linear run of the same round.", "",
             "| kind | flags | seconds per round | ratio to linear per round | median ratio |",
             "|---|---|---|---|---|"]
    for kind, flags in KINDS.items():
        lines.append(f"| {kind} | `{' '.join(flags) or '(none)'}` | "
                     + ", ".join(f"{s:.1f}" for s in seconds[kind]) + " | "
                     + ", ".join(f"{r:.2f}" for r in ratios[kind])
                     + f" | {np.median(ratios[kind]):.2f} |")
    write_report(args.out, args.name, {"command": command_line(), "seconds": seconds,
                                       "ratios": ratios}, "\n".join(lines))


if __name__ == "__main__":
    main()
