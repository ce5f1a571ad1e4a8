"""How long the paired randomization test of ``rsrank compare`` takes, beside
:func:`scipy.stats.permutation_test` on the same values.

    python scripts/bench_compare.py [--out results] [--repeats 3]

For 106, 643 and 2,000 queries (OHSUMED's test set, a tenth of MSLR-WEB30K's
test queries, a larger test set) and a difference between two systems'
per-query NDCG@10 that is null, small and clear, times
:func:`rsrank.stats.permutation_test` and scipy's paired test of the mean
difference (``permutation_type="samples"``), each with 100,000 resamples,
and gives both p-values: two Monte Carlo estimates of one p-value, which
differ by their sampling error (about ``2 sqrt(p/2 / 100,000)`` each).
The fastest of ``--repeats`` runs of each.

Writes ``compare_speed.json`` and ``compare_speed.md`` into ``--out``.
"""

import argparse
import time

import numpy as np
from _bench import command_line, write_report
from scipy import stats as scipy_stats

from rsrank.stats import permutation_test

QUERIES = (106, 643, 2000)
SHIFTS = {"null": 0.0, "small": 0.01, "clear": 0.03}
RESAMPLES = 100_000


def scipy_test(a, b):
    return scipy_stats.permutation_test(
        (b, a), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples",
        vectorized=True, n_resamples=RESAMPLES, alternative="two-sided", random_state=0).pvalue


def fastest(test, a, b, repeats):
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        p = test(a, b)
        best = min(best, time.perf_counter() - start)
    return best, float(p)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    rows = []
    for n in QUERIES:
        for name, shift in SHIFTS.items():
            a = rng.uniform(size=n)
            b = np.clip(a + rng.normal(shift, 0.1, size=n), 0, 1)
            ours, p_ours = fastest(lambda a, b: permutation_test(a, b, n_resamples=RESAMPLES),
                                   a, b, args.repeats)
            theirs, p_theirs = fastest(scipy_test, a, b, args.repeats)
            rows.append({"queries": n, "difference": name, "rsrank_seconds": ours,
                         "scipy_seconds": theirs, "rsrank_p": p_ours, "scipy_p": p_theirs})
    lines = ["# The paired randomization test beside scipy's", "",
             f"`{command_line()}`: {RESAMPLES:,} resamples each, the fastest of "
             f"{args.repeats} runs; per-query values uniform on [0, 1], the second system's "
             "shifted by the difference's mean plus noise (sd 0.1), clipped to [0, 1].", "",
             "| queries | difference | rsrank s | scipy s | rsrank / scipy | rsrank p | scipy p |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['queries']:,} | {row['difference']} | {row['rsrank_seconds']:.3f} | "
                     f"{row['scipy_seconds']:.3f} | "
                     f"{row['rsrank_seconds'] / row['scipy_seconds']:.3f}x | "
                     f"{row['rsrank_p']:.4g} | {row['scipy_p']:.4g} |")
    write_report(args.out, "compare_speed", {"rows": rows, "resamples": RESAMPLES,
                                             "repeats": args.repeats}, "\n".join(lines))


if __name__ == "__main__":
    main()
