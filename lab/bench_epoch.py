"""An epoch against the roofline, where its time goes, the setup of a fit
and the cost of short queries.

    python scripts/bench_epoch.py [--documents 468598] [--queries 4000] [--rounds 7]
        [--out results]

Data: ``make_mslr_like`` rows (136 float32 features, MSLR-WEB30K's query
sizes and labels), ``--documents`` in ``--queries`` queries. Every epoch is
one a fit runs: ``RSRank(max_iter=E, learning_rate=0.01,
normalize="none")`` with no validation and no stopping rule, so that two
fits differ by their epochs alone; an epoch's time is the median of the
fit's own per-epoch times (``history_["seconds"]``) after its first (the
first ranks every query afresh). Measured, the settings taking turns in
each of ``--rounds`` rounds (a shared machine drifts between rounds more
than within one), with medians of the times and of the rounds' ratios:

1. **The whole-list epoch** (``ndcg_k=None``, full batch, both pair
   weightings' default ``delta_ndcg``) of the linear model and of the
   additive one (``additive=True``, its default bins), on one thread and on every
   core, against the roofline: one ``X @ w`` plus one ``X.T @ lambda``
   with NumPy's BLAS (float32, as X) on one thread and on every core.
2. **Where one thread's linear epoch goes**, each in a loop of the
   package's own kernels over the queries: the scores and gradient of
   every query back to back (the epoch's two passes over X, fused per
   query as the epoch does, with fixed lambdas); the lambdas of every
   query (ranking and pair sums) from fixed scores; the three per query as
   the epoch runs them (the lambdas prefetch the next query's rows); and
   that loop with every query's rows in cache, so that the difference is
   what reading X from memory adds.
3. **The setup of a fit given fresh arrays**: the wall time of
   ``RSRank(max_iter=1).fit(X, y, qid=qid)`` on new copies of the arrays
   less its one epoch, over the median epoch, on one thread: the median
   of the rounds and the fastest round (on this machine some rounds take
   about twice as long as the others).
4. **Short queries**: the linear epoch per row on 200,000 rows of 136
   features in queries of 10 and of 100 documents (labels 0-4), one thread.
5. **The additive epoch's passes over its codes**, one thread: its scores
   (a table lookup per value) and its gradient (a histogram update per
   value), alone and per query back to back, against the roofline, timed
   in the same rounds as the epochs; and the additive epoch over its floor
   (both passes) as the median of the rounds' ratios.

Writes ``epoch.md`` and ``epoch.json`` into ``--out``.
"""

import argparse
import time

import numpy as np

from _bench import command_line, internal, roofline, write_report

EPOCHS = 6


def fit_epochs(data, n_jobs, **params):
    """The per-epoch seconds of a fit of :data:`EPOCHS` epochs, after its
    first."""
    from rsrank import RSRank

    model = RSRank(max_iter=EPOCHS, learning_rate=0.01, normalize="none", eval_train=False,
                   random_state=0, n_jobs=n_jobs, **params).fit(data)
    return float(np.median(model.history_["seconds"][1:]))


def settings(data, binned):
    return {"linear, 1 thread": lambda: fit_epochs(data, 1),
            "linear, all cores": lambda: fit_epochs(data, -1),
            "additive, 1 thread": lambda: fit_epochs(binned, 1, additive=True),
            "additive, all cores": lambda: fit_epochs(binned, -1, additive=True),
            "roofline, 1 thread": lambda: roofline(data.X, repeats=3, threads=1),
            "roofline, all cores": lambda: roofline(data.X, repeats=3)}


def parts(X, y, qid, rounds):
    """Median seconds, one thread, of the epoch's loop over the queries and
    of its parts, each a loop of the package's own kernels: the scores and
    gradient alone, the lambdas alone, all three per
    query as the epoch runs them (the lambdas prefetching the next query's
    rows), and that loop again with every query's rows in cache (the
    first rows of X stand in for each query's: what memory adds is the
    difference). So that every loop ranks and sums the same lambdas, these
    come from scores that move a little before each round, as between two
    epochs, and the passes write theirs beside them."""
    from numba import njit

    dense_scores = internal("_kernels", "dense_scores")
    dense_add_gradient = internal("_kernels", "dense_add_gradient")
    query_lambdas_from = internal("_kernels", "query_lambdas_from")
    all_query_levels = internal("_kernels", "all_query_levels")
    rows_span = internal("_kernels", "rows_span")

    @njit
    def loop(X, offsets, w, fresh, scores, lam, grad, gains, labels, discount, rankings, levels,
             n_levels, passes, lambdas, in_cache):
        total = 0.0
        n_queries = offsets.shape[0] - 1
        for q in range(n_queries):
            lo, hi = offsets[q], offsets[q + 1]
            rows = X[:hi - lo] if in_cache else X[lo:hi]
            if passes:
                dense_scores(rows, 0, hi - lo, w, fresh[lo:hi])
            if lambdas:
                ahead = (0, 0)
                if passes and not in_cache and q + 1 < n_queries:
                    ahead = rows_span(X, offsets[q + 1], offsets[q + 2])
                total += query_lambdas_from(scores[lo:hi], gains[lo:hi], labels[lo:hi],
                                            discount, hi - lo, 1.0, 0, False, lam[lo:hi],
                                            rankings[lo:hi], levels[lo:hi], n_levels[q], ahead)
            if passes:
                dense_add_gradient(rows, 0, hi - lo, lam[lo:hi], 1.0, grad)
        return total

    _, counts = np.unique(qid, return_counts=True)
    offsets = np.r_[0, np.cumsum(counts)].astype(np.int64)
    rng = np.random.default_rng(0)
    w = rng.normal(size=X.shape[1]) * 0.1
    scores = X.astype(np.float64) @ w
    fresh = np.empty_like(scores)
    lam = rng.normal(size=len(y))
    grad = np.zeros(X.shape[1])
    labels = y.astype(np.int64)
    gains = 2.0 ** labels - 1.0
    discount = 1.0 / np.log2(np.arange(len(y)) + 2.0)
    levels = np.zeros(len(y), dtype=np.int64)
    n_levels = np.zeros(len(counts), dtype=np.int64)
    all_query_levels(gains, labels, offsets, discount, 0, levels, n_levels)
    rankings = np.full(len(y), -1, dtype=np.int64)
    kinds = {"scores and gradient": (True, False, False), "lambdas": (False, True, False),
             "the epoch's loop": (True, True, False),
             "the epoch's loop, rows in cache": (True, True, True)}
    times = {name: [] for name in kinds}
    for name, kind in kinds.items():  # compile
        loop(X, offsets, w, fresh, scores, lam, grad, gains, labels, discount, rankings, levels,
             n_levels, *kind)
    for _ in range(rounds):
        for name, kind in kinds.items():
            scores += rng.normal(size=len(y)) * 1e-3
            start = time.perf_counter()
            loop(X, offsets, w, fresh, scores, lam, grad, gains, labels, discount, rankings,
                 levels, n_levels, *kind)
            times[name].append(time.perf_counter() - start)
    return {k: float(np.median(v)) for k, v in times.items()}


def additive_passes(data):
    """Timers, one thread, of the additive epoch's two passes over its bin
    codes, each a loop of the package's kernels over the queries (the
    scores by table lookups, the gradient as histograms, and both per query
    as the epoch runs them), with fixed steps and lambdas; each call gives
    the seconds of one loop. Their default bins are fitted by a one-epoch
    fit. They are timed in the same rounds as the epochs, so that the
    additive epoch's ratio to its floor (both passes) pairs times taken
    moments apart: on a shared machine two runs a few minutes apart gave
    1.35 and 1.85 for the ratio of separate medians."""
    from numba import njit

    from rsrank import RSRank

    coded_scores = internal("_kernels", "coded_scores")
    coded_add_histogram = internal("_kernels", "coded_add_histogram")
    step_table = internal("_kernels", "step_table")
    uniform_stride = internal("_kernels", "uniform_stride")
    workspace = internal("learning.objective", "workspace")

    @njit
    def loop(rows, table, scores, lam, grad, stride, score, histogram):
        for q in range(rows.offsets.shape[0] - 1):
            lo, hi = rows.offsets[q], rows.offsets[q + 1]
            if score:
                coded_scores(rows, lo, hi, table, scores, stride)
            if histogram:
                coded_add_histogram(rows, lo, hi, lam, 1.0, grad, stride)

    view = RSRank(max_iter=1, additive=True, n_jobs=1, eval_train=False).fit(data).model_.view
    rows, work = data.rows(view), workspace(data, 1, view)
    rng = np.random.default_rng(0)
    table = step_table(rng.normal(size=int(rows.bins[-1])) * 0.01, rows.bins, rows.slots,
                       work.table)
    stride, scores, lam = uniform_stride(rows.slots), np.zeros(data.n_rows), rng.normal(
        size=data.n_rows)

    def timer(kind):
        def run():
            start = time.perf_counter()
            loop(rows, table, scores, lam, work.partial[0], stride, *kind)
            return time.perf_counter() - start
        run()  # compile
        return run

    return {name: timer(kind) for name, kind in ADDITIVE_PASSES.items()}


#: the additive epoch's passes over its codes, as :func:`additive_passes` times them
ADDITIVE_PASSES = {"additive scores": (True, False), "additive histograms": (False, True),
                   "additive scores and histograms": (True, True)}
#: the additive epoch's floor: both its passes over the codes
FLOOR = "additive scores and histograms"


def setup_seconds(X, y, qid, repeats):
    """The fastest wall time of a one-epoch fit on fresh copies, less that
    fit's epoch."""
    from rsrank import RSRank

    best = np.inf
    for _ in range(repeats):
        Xc, yc, qc = X.copy(), y.copy(), qid.copy()
        start = time.perf_counter()
        model = RSRank(max_iter=1, learning_rate=0.01, normalize="none", eval_train=False,
                       random_state=0, n_jobs=1).fit(Xc, yc, qid=qc)
        best = min(best, time.perf_counter() - start - model.history_["seconds"][0])
    return best


def equal_queries(size, total=200_000, n_features=136, seed=0):
    from rsrank import QueryData

    rng = np.random.default_rng(seed)
    n_queries = total // size
    X = rng.normal(size=(n_queries * size, n_features)).astype(np.float32)
    return QueryData(X, rng.integers(0, 5, size=len(X)), np.repeat(np.arange(n_queries), size))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=468_598)
    parser.add_argument("--queries", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    import numba

    from rsrank import QueryData, RSRank
    from rsrank.reading.synthetic import make_mslr_like

    made = make_mslr_like(n_documents=args.documents, n_queries=args.queries, random_state=0)
    X, y, qid = made.X, made.y, made.qid
    data = QueryData(X, y, qid)
    binned = QueryData(X, y, qid)
    RSRank(max_iter=1, learning_rate=0.01).fit(X[:2000], y[:2000], qid=qid[:2000])  # compile
    timers = {**settings(data, binned), **additive_passes(binned)}
    short = {size: equal_queries(size) for size in (10, 100)}
    times = {name: [] for name in [*timers, "short 10", "short 100", "setup"]}
    for _ in range(args.rounds):
        for name, timer in timers.items():
            times[name].append(timer())
        for size, part in short.items():
            times[f"short {size}"].append(fit_epochs(part, 1) / part.n_rows)
        times["setup"].append(setup_seconds(X, y, qid, 1))
    times = {k: np.array(v) for k, v in times.items()}

    def ratio(a, b):
        return float(np.median(times[a] / times[b]))

    breakdown = parts(X, y, qid, args.rounds)
    coded = {name: float(np.median(times[name])) for name in ADDITIVE_PASSES}
    report = {"command": command_line(argv), "documents": len(y),
              "queries": int(data.n_queries), "threads": numba.config.NUMBA_NUM_THREADS,
              "times_s": {k: v.tolist() for k, v in times.items()},
              "epoch_over_roofline": {
                  "linear, 1 thread": ratio("linear, 1 thread", "roofline, 1 thread"),
                  "linear, all cores": ratio("linear, all cores", "roofline, all cores"),
                  "additive, 1 thread": ratio("additive, 1 thread", "roofline, 1 thread"),
                  "additive, all cores": ratio("additive, all cores", "roofline, all cores")},
              "parts_s": breakdown, "additive_parts_s": coded,
              "additive_over_floor": ratio("additive, 1 thread", FLOOR),
              "additive_over_floor_rounds": (times["additive, 1 thread"]
                                             / times[FLOOR]).tolist(),
              "setup_over_epoch": ratio("setup", "linear, 1 thread"),
              "setup_fastest_over_epoch": float(times["setup"].min()
                                                / np.median(times["linear, 1 thread"])),
              "short_10_over_100": ratio("short 10", "short 100")}
    report["text"] = summarize(report, times, args.rounds)
    print(report["text"])
    if args.out:
        write_report(args.out, "epoch", report, report["text"])


def summarize(report, times, rounds):
    median = {k: float(np.median(v)) for k, v in times.items()}
    over = report["epoch_over_roofline"]
    lines = [f"# An epoch against the roofline ({report['documents']:,} documents, "
             f"{report['queries']:,} queries, 136 float32 features; {report['threads']} cores)",
             "", f"Medians over {rounds} rounds, the settings taking turns in each; ratios are "
             "the medians of the rounds' ratios.", "",
             "| epoch (whole list, full batch) | ms | / roofline on as many threads |",
             "|---|---|---|"]
    for name in ("linear, 1 thread", "linear, all cores", "additive, 1 thread",
                 "additive, all cores"):
        lines.append(f"| {name} | {median[name] * 1e3:.1f} | {over[name]:.2f} |")
    for name in ("roofline, 1 thread", "roofline, all cores"):
        lines.append(f"| {name} (X @ w + X.T @ λ, BLAS) | {median[name] * 1e3:.1f} | 1.00 |")
    epoch = median["linear, 1 thread"]
    part = report["parts_s"]
    lines += ["", "Where one thread's linear epoch goes (the package's kernels in a loop over "
              "the queries; the epoch's loop runs scores, lambdas and gradient per query, the "
              "lambdas prefetching the next query's rows):", "",
              "| part | ms | share of the epoch |", "|---|---|---|"]
    for name, seconds in part.items():
        lines.append(f"| {name} | {seconds * 1e3:.1f} | {seconds / epoch:.2f} |")
    rest = epoch - part["the epoch's loop"]
    lines.append(f"| the rest of the epoch (step, loss, calls) | {rest * 1e3:.1f} | "
                 f"{rest / epoch:.2f} |")
    memory = part["the epoch's loop"] - part["the epoch's loop, rows in cache"]
    lines += ["", f"Reading the rows from memory adds {memory * 1e3:.1f} ms to the loop "
              f"({memory / epoch:.2f} of the epoch)."]
    additive, roofline = median["additive, 1 thread"], median["roofline, 1 thread"]
    lines += ["", "The additive epoch's passes over its bin codes (uint8), one thread, in "
              "the same kind of loop (its lambdas are the linear epoch's):", "",
              "| part | ms | share of the additive epoch | / roofline, 1 thread |",
              "|---|---|---|---|"]
    for name, seconds in report["additive_parts_s"].items():
        lines.append(f"| {name} | {seconds * 1e3:.1f} | {seconds / additive:.2f} | "
                     f"{seconds / roofline:.2f} |")
    spread = report["additive_over_floor_rounds"]
    lines += ["", f"The additive epoch (one thread) over its floor, both passes, timed in the "
              f"same rounds: **{report['additive_over_floor']:.2f}x** (median of the rounds' "
              f"ratios; {min(spread):.2f} to {max(spread):.2f})."]
    fastest = min(report["times_s"]["setup"])
    lines += ["", f"- Setup of a fit given fresh arrays (one thread): "
              f"{median['setup'] * 1e3:.1f} ms, **{report['setup_over_epoch']:.2f}** of an epoch "
              f"(median of the rounds; the fastest round {fastest * 1e3:.1f} ms, "
              f"{report['setup_fastest_over_epoch']:.2f}).",
              f"- Short queries (200,000 rows, one thread): "
              f"{median['short 10'] * 1e9:.0f} ns per row in 10-document queries, "
              f"{median['short 100'] * 1e9:.0f} ns in 100-document ones: "
              f"**{report['short_10_over_100']:.2f}x**."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
