"""Where a query's lambdas cost less by prefix sums than by the pair loop.

    python scripts/bench_crossover.py [--documents 200000] [--rounds 5] [--out results]

A query's lambdas come from one of two kernels (``query_lambdas_from``): the
pair loop over the top ``cutoff`` places, O(n * cutoff), or prefix sums over
the ranking, O(n log n + n L) for L label levels. Here both run on queries
of one size at a time (``--documents`` rows of MSLR-WEB30K's labels and
Gaussian scores, each query ranked once beforehand, as an epoch finds it
from the last), for the whole list and for ``ndcg_k=10``, with swap and
unit weights; the table gives nanoseconds per document of each, the
median of ``--rounds``, the two taking turns. The rule of
``rsrank._kernels.lambdas`` (``PREFIX_MIN_SIZE``, ``PREFIX_COST_PER_LEVEL``)
is read against it: the last column says which kernel the rule picks.

Writes ``crossover.md`` and ``crossover.json`` into ``--out``.
"""

import argparse
import time

import numpy as np

from _bench import command_line, internal, write_report

SIZES = (4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256)
#: MSLR-WEB30K's share of each label 0-4
SHARES = (0.514, 0.325, 0.134, 0.019, 0.008)


def kernels():
    from numba import njit

    pair_loop = internal("_kernels", "pair_loop_lambdas")
    ranked = internal("_kernels", "ranked_lambdas")
    levels_of = internal("_kernels", "label_levels")
    ranked_order = internal("_kernels", "ranked_order")

    @njit
    def orders(scores, offsets):
        out = np.empty(scores.shape[0], dtype=np.int64)
        for q in range(offsets.shape[0] - 1):
            lo, hi = offsets[q], offsets[q + 1]
            out[lo:hi] = ranked_order(scores[lo:hi])
        return out

    @njit
    def run(prefix, scores, gains, labels, order, levels, n_levels, discount, cutoff, unit,
            offsets, lam):
        total = 0.0
        for q in range(offsets.shape[0] - 1):
            lo, hi = offsets[q], offsets[q + 1]
            if prefix:
                total += ranked(order[lo:hi], scores[lo:hi], gains[lo:hi], levels[lo:hi],
                                n_levels[q], discount, cutoff, 1.0, 0, unit, lam[lo:hi], (0, 0))
            else:
                total += pair_loop(scores[lo:hi], gains[lo:hi], labels[lo:hi], discount, cutoff,
                                   1.0, 0, unit, lam[lo:hi], np.empty(0, dtype=np.int64),
                                   (0, 0))
        return total

    @njit
    def all_levels(labels, offsets, levels, n_levels):
        for q in range(offsets.shape[0] - 1):
            lo, hi = offsets[q], offsets[q + 1]
            n_levels[q] = levels_of(labels[lo:hi], levels[lo:hi])

    return orders, run, all_levels


def measure(size, documents, rounds, rng, compiled):
    orders, run, all_levels = compiled
    n_queries = max(1, documents // size)
    labels = rng.choice(len(SHARES), p=SHARES, size=n_queries * size).astype(np.int64)
    scores = rng.normal(size=len(labels))
    offsets = np.arange(0, len(labels) + 1, size, dtype=np.int64)
    gains = 2.0 ** labels - 1.0
    discount = 1.0 / np.log2(np.arange(size) + 2.0)
    order = orders(scores, offsets)
    levels = np.zeros(len(labels), dtype=np.int64)
    n_levels = np.zeros(n_queries, dtype=np.int64)
    all_levels(labels, offsets, levels, n_levels)
    lam = np.zeros(len(labels))
    rows = []
    for cutoff in (size, 10) if size > 10 else (size,):
        for unit in (False, True):
            if unit and cutoff < size:
                continue  # unit weights have no cut-off
            times = {True: [], False: []}
            for _ in range(rounds + 1):
                for prefix in (False, True):
                    start = time.perf_counter()
                    run(prefix, scores, gains, labels, order, levels, n_levels, discount,
                        cutoff, unit, offsets, lam)
                    times[prefix].append(time.perf_counter() - start)
            per = {k: float(np.median(v[1:])) / len(labels) * 1e9 for k, v in times.items()}
            rows.append({"size": size, "cutoff": "whole" if cutoff == size else cutoff,
                         "weights": "unit" if unit else "swap", "pair_loop_ns": per[False],
                         "prefix_ns": per[True],
                         "mean_levels": float(n_levels.mean())})
    return rows


def rule_picks(size, cutoff, unit, levels):
    top = size if unit else min(size, cutoff)
    return ("prefix" if size > internal("_kernels", "PREFIX_MIN_SIZE")
            and top > internal("_kernels", "PREFIX_COST_PER_LEVEL") * levels else "pair loop")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    compiled = kernels()
    rng = np.random.default_rng(0)
    rows = []
    for size in SIZES:
        for row in measure(size, args.documents, args.rounds, rng, compiled):
            cutoff = size if row["cutoff"] == "whole" else row["cutoff"]
            row["rule"] = rule_picks(size, cutoff, row["weights"] == "unit",
                                     round(row["mean_levels"]))
            rows.append(row)
            print(row, flush=True)
    lines = ["# Pair loop or prefix sums: a query's lambdas by its size", "",
             f"{args.documents:,} documents per size (MSLR-WEB30K's label shares), "
             f"median of {args.rounds} rounds, the two kernels taking turns.", "",
             "| documents per query | cut-off | weights | label levels (mean) | pair loop, ns "
             "per document | prefix sums, ns per document | faster | the rule picks |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        faster = "prefix" if r["prefix_ns"] < r["pair_loop_ns"] else "pair loop"
        lines.append(f"| {r['size']} | {r['cutoff']} | {r['weights']} | {r['mean_levels']:.1f} "
                     f"| {r['pair_loop_ns']:.0f} | {r['prefix_ns']:.0f} | {faster} | "
                     f"{r['rule']} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        write_report(args.out, "crossover", {"command": command_line(argv), "rows": rows}, text)


if __name__ == "__main__":
    main()
