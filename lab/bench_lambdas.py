"""Whole-list lambdas: the epoch over every ranked place against the
``ndcg_k=10`` epoch and the X@w + X^T lambda roofline, and the cost per
document as queries grow.

    python scripts/bench_lambdas.py [--documents 1000000] [--out results]

1. MSLR-WEB30K shape (``make_mslr_like``, 136 float32 features, labels 0-4,
   long-tailed query sizes), no scaling: one epoch with ``ndcg_k=None``
   (whole list: prefix sums where they are cheaper than the pair loop) and
   with ``ndcg_k=10`` (pair loop over the top 10), each with online updates
   (``batch_size=1``, one thread, as ``results/scale.md``) and with one
   full-batch step on all cores (``batch_size=None, n_jobs=-1``), against
   one ``X @ w`` plus one ``X.T @ lambda`` with NumPy, BLAS on one thread
   and on all cores. The six are timed back to back in each of
   ``--rounds`` rounds, so that a slow spell of a shared machine hits them
   all; the table gives the median time of each and the median of the
   rounds' ratios.
   Then every query ranked by ``ranked_order`` and by the stable argsort it
   replaced, back to back in each round.
2. 200,000 documents in queries of equal size (100, 1,000, 10,000): the
   whole-list epoch per document, relative to 100-document queries.

Writes ``lambdas.md`` and ``lambdas.json`` into ``--out``.
"""

import argparse
import platform
import time
from pathlib import Path

import numpy as np

from _bench import command_line, epoch_timer, internal, roofline, time_epoch, write_report

REPO = Path(__file__).resolve().parents[1]


def interleaved(X, y, qid, rounds):
    """Per round, back to back: the whole-list and the ``ndcg_k=10`` epoch
    with online steps (one thread) and with one full-batch step on all
    cores, and the roofline on one thread and on all cores."""
    timers = {"whole": epoch_timer(X, y, qid, None), "top10": epoch_timer(X, y, qid, 10),
              "whole_par": epoch_timer(X, y, qid, None, batch_size=None, n_jobs=-1),
              "top10_par": epoch_timer(X, y, qid, 10, batch_size=None, n_jobs=-1),
              "roof": lambda: roofline(X, repeats=1),
              "roof1": lambda: roofline(X, repeats=1, threads=1)}
    times = {k: [] for k in timers}
    for _ in range(rounds):
        for k, timer in timers.items():
            times[k].append(timer())
    return {k: np.array(v) for k, v in times.items()}


def ranking_rounds(scores, offsets, rounds):
    """Per round: every query ranked by :func:`rsrank._kernels.ranked_order`
    and by ``np.argsort(-s, kind="mergesort")`` compiled by numba (the
    stable sort it replaced), back to back; the two orders are checked
    equal first."""
    from numba import njit

    ranked_order = internal("_kernels", "ranked_order")

    @njit
    def rank_all(scores, offsets, ours):
        check = 0
        for q in range(offsets.shape[0] - 1):
            s = scores[offsets[q]:offsets[q + 1]]
            order = ranked_order(s) if ours else np.argsort(-s, kind="mergesort")
            check += order[0]
        return check

    for q in range(len(offsets) - 1):
        s = scores[offsets[q]:offsets[q + 1]]
        assert np.array_equal(ranked_order(s), np.argsort(-s, kind="stable"))
    rank_all(scores, offsets, True), rank_all(scores, offsets, False)
    times = {"ranked_order": [], "argsort": []}
    for _ in range(rounds):
        for key, ours in (("ranked_order", True), ("argsort", False)):
            start = time.perf_counter()
            rank_all(scores, offsets, ours)
            times[key].append(time.perf_counter() - start)
    return {k: np.array(v) for k, v in times.items()}


def equal_queries(size, total=200_000, n_features=136, seed=0):
    rng = np.random.default_rng(seed)
    n_queries = total // size
    X = rng.normal(size=(n_queries * size, n_features)).astype(np.float32)
    y = rng.integers(0, 5, size=len(X))
    qid = np.repeat(np.arange(n_queries), size)
    return X, y, qid


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--out", default=str(REPO / "results"))
    args = parser.parse_args(argv)
    from rsrank.reading.synthetic import make_mslr_like

    n_queries = max(1, round(args.documents * 31_531 / 3_771_125))
    data = make_mslr_like(n_documents=args.documents, n_queries=n_queries, random_state=0)
    X, y, qid = data.X, data.y, data.qid
    times = interleaved(X, y, qid, args.rounds)
    whole, top10, roof, roof1 = (float(np.median(times[k]))
                                 for k in ("whole", "top10", "roof", "roof1"))
    def ratio(a, b):
        return float(np.median(times[a] / times[b]))

    shape = {"documents": len(y), "queries": int(len(np.unique(qid))),
             "max_query": int(np.bincount(np.unique(qid, return_inverse=True)[1]).max()),
             "rounds": args.rounds, "whole_list_s": whole, "ndcg10_s": top10, "roofline_s": roof,
             "whole_over_ndcg10": ratio("whole", "top10"),
             "whole_over_roofline": ratio("whole", "roof"),
             "ndcg10_over_roofline": ratio("top10", "roof"),
             "roofline_1thread_s": roof1,
             "parallel_whole_list_s": float(np.median(times["whole_par"])),
             "parallel_ndcg10_s": float(np.median(times["top10_par"])),
             "parallel_whole_over_ndcg10": ratio("whole_par", "top10_par"),
             "parallel_whole_over_roofline": ratio("whole_par", "roof"),
             "parallel_ndcg10_over_roofline": ratio("top10_par", "roof"),
             "whole_over_roofline_1thread": ratio("whole", "roof1"),
             "ndcg10_over_roofline_1thread": ratio("top10", "roof1"),
             "times_s": {k: v.tolist() for k, v in times.items()}}
    _, counts = np.unique(qid, return_counts=True)
    offsets = np.r_[0, np.cumsum(counts)].astype(np.int64)
    scores = X.astype(np.float64) @ np.random.default_rng(2).normal(size=X.shape[1])
    ranking = ranking_rounds(scores, offsets, args.rounds)
    shape["ranking"] = {"ranked_order_s": float(np.median(ranking["ranked_order"])),
                        "argsort_s": float(np.median(ranking["argsort"])),
                        "argsort_over_ranked_order": float(np.median(
                            ranking["argsort"] / ranking["ranked_order"])),
                        "times_s": {k: v.tolist() for k, v in ranking.items()}}
    sizes = []
    for size in (100, 1000, 10000):
        Xs, ys, qs = equal_queries(size)
        seconds = time_epoch(Xs, ys, qs, None)
        sizes.append({"docs_per_query": size, "epoch_s": seconds,
                      "us_per_document": seconds / len(ys) * 1e6})
    import numba

    from rsrank import __version__

    report = {"command": command_line(),
              "machine": f"{platform.machine()}, {numba.config.NUMBA_NUM_THREADS} cores",
              "rsrank_version": __version__, "mslr_shape": shape, "query_sizes": sizes}
    base = sizes[0]["us_per_document"]
    lines = ["# Whole-list lambdas", "", f"Command: `{report['command'].strip()}`", "",
             f"{report['machine']}; rsrank {__version__}, numba {numba.__version__}. No "
             "scaling. Section 1: "
             f"{args.rounds} rounds after a warm-up epoch, each timing the six back to back; "
             "medians of the times and of the rounds' ratios. Section 2: online updates, "
             "median of 3 epochs after a warm-up.", "",
             f"## MSLR-WEB30K shape: {shape['documents']:,} documents, {shape['queries']:,} "
             f"queries (longest {shape['max_query']:,}), 136 float32 features", "",
             "| epoch | seconds | / its ndcg_k=10 epoch | / roofline, 1 thread | "
             "/ roofline, all cores |", "|---|---|---|---|---|",
             f"| online (`batch_size=1`, one thread), whole list (`ndcg_k=None`) | {whole:.3f} | "
             f"{shape['whole_over_ndcg10']:.2f} | {shape['whole_over_roofline_1thread']:.2f} | "
             f"{shape['whole_over_roofline']:.2f} |",
             f"| online, `ndcg_k=10` | {top10:.3f} | 1.00 | "
             f"{shape['ndcg10_over_roofline_1thread']:.2f} | {shape['ndcg10_over_roofline']:.2f} |",
             f"| full batch, all cores (`batch_size=None, n_jobs=-1`), whole list | "
             f"{shape['parallel_whole_list_s']:.3f} | {shape['parallel_whole_over_ndcg10']:.2f} "
             f"| | {shape['parallel_whole_over_roofline']:.2f} |",
             f"| full batch, all cores, `ndcg_k=10` | {shape['parallel_ndcg10_s']:.3f} | 1.00 | | "
             f"{shape['parallel_ndcg10_over_roofline']:.2f} |",
             f"| roofline (X@w + X.T@λ), 1 thread | {roof1:.3f} | | 1.00 | |",
             f"| roofline, all cores | {roof:.3f} | | | 1.00 |", "",
             "Ranking every query once (scores from a random w): `ranked_order` "
             f"{shape['ranking']['ranked_order_s'] * 1e3:.1f} ms, numba's "
             "`np.argsort(-s, kind=\"mergesort\")` "
             f"{shape['ranking']['argsort_s'] * 1e3:.1f} ms, "
             f"{shape['ranking']['argsort_over_ranked_order']:.2f} times as long (median of "
             f"{args.rounds} rounds that time the two back to back; the orders are equal).",
             "",
             "## Cost per document as queries grow (whole list, 200,000 documents)", "",
             "| documents per query | epoch seconds | µs per document | vs 100 |",
             "|---|---|---|---|"]
    for row in sizes:
        lines.append(f"| {row['docs_per_query']:,} | {row['epoch_s']:.3f} | "
                     f"{row['us_per_document']:.2f} | {row['us_per_document'] / base:.2f} |")
    text = "\n".join(lines) + "\n"
    out = Path(args.out)
    write_report(out, "lambdas", report, text)
    print(text)


if __name__ == "__main__":
    main()
