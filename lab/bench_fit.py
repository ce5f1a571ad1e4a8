"""Fit-time benchmark on one OHSUMED fold: RSRank against peers in one run.

    python scripts/bench_fit.py [--root ../shared/data/OHSUMED] [--fold 1]
        [--epochs 100] [--repeats 3] [--out results/bench_fit.md]

Measures, on the training split of the fold:

* RSRank: the time of one epoch of the numba kernel (online updates, one
  query per step, the paper's setting) and of a whole ``fit`` with
  per-epoch training NDCG bookkeeping; then the same for full-batch epochs
  (one step per epoch, as ``rsrank train``'s path takes them) without the
  bookkeeping, whose difference per epoch is what a fit's loop costs in
  Python around the kernel;
* XGBoost ``XGBRanker(booster="gblinear", objective="rank:ndcg")`` per
  boosting round and for the whole fit;
* scikit-learn ``SGDClassifier(loss="modified_huber")`` on pairwise
  differences (every pair of documents of a query with different labels),
  per epoch and for the whole fit, pair construction excluded;
* the time of a fresh process importing rsrank and fitting a tiny model,
  twice: the second run shows whether numba's compilation cache works.

Every method trains for the same number of epochs/rounds with fixed
hyper-parameters (no tuning here) and the test NDCG@10 (LETOR rules) each
reaches is reported next to its time. Timings are medians over repeats.
"""

import argparse
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from rsrank import QueryData, RSRank, __version__, load_letor_fold
from rsrank.learning.solver import SolverState
from rsrank.evaluation.metrics import mean_ndcg

from _bench import SHARED_DATA, command_line, pairwise_differences, write_report

REPO = Path(__file__).resolve().parents[1]


def timed(function, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), result


def cold_start_seconds():
    code = ("import time; t = time.perf_counter(); import numpy as np; from rsrank import RSRank; "
            "X = np.random.default_rng(0).uniform(size=(40, 5)); y = np.arange(40) % 3; "
            "RSRank(max_iter=1).fit(X, y, qid=np.arange(40) // 10); "
            "print(time.perf_counter() - t)")
    return float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                                text=True).stdout)


def loop_seconds(settings, repeats, epochs=2000):
    """What a fit's epoch costs around its kernel: the time per epoch that a
    fit of ``2 * epochs`` adds to one of ``epochs`` on 4 queries of 10
    documents and 5 features, where the kernel takes a few microseconds."""
    rng = np.random.default_rng(0)
    X, y, qid = rng.normal(size=(40, 5)), rng.integers(0, 3, 40), np.arange(40) // 10

    def fit(n):
        return RSRank(**{**settings, "max_iter": n, "learning_rate": 1e-4}).fit(X, y, qid=qid)
    fit(10)
    longer, shorter = timed(lambda: fit(2 * epochs), repeats)[0], timed(lambda: fit(epochs), repeats)[0]
    return (longer - shorter) / epochs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(SHARED_DATA / "OHSUMED"))
    parser.add_argument("--fold", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(REPO / "results"),
                        help="directory of bench_fit.md/.json")
    args = parser.parse_args(argv)

    data = load_letor_fold(args.root, args.fold)
    X, y, qid = data.train
    Xt, yt, qt = data.test

    def test_ndcg(scores):
        return mean_ndcg(yt, scores, qt, 10, convention="letor")

    rows = []

    # RSRank: one kernel epoch, then the whole fit
    model = RSRank(learning_rate=1e-2, normalize="none", batch_size=1, max_iter=args.epochs,
                   random_state=0)
    model.fit(X, y, qid=qid)  # compile and warm up
    data = QueryData(X, y, qid)
    solver, state = model.solver(), SolverState(np.zeros(X.shape[1]))
    order = np.random.default_rng(0).permutation(data.n_queries)
    work = solver.new_work(data)
    epoch_times = []
    for _ in range(max(args.repeats, 5) * 4):
        start = time.perf_counter()
        solver.epoch(data, state, order, work=work)
        epoch_times.append(time.perf_counter() - start)
    fit_time, fitted = timed(lambda: RSRank(learning_rate=1e-2, normalize="none", batch_size=1,
                                            max_iter=args.epochs,
                                            random_state=0).fit(X, y, qid=qid), args.repeats)
    rows.append(dict(method="RSRank (batch_size=1, numba)", epoch_s=float(np.median(epoch_times)),
                     fit_s=fit_time, test_ndcg10=test_ndcg(fitted.predict(Xt))))

    # full batch, as the path's fits: the kernel's epoch against a fit's per epoch
    settings = dict(learning_rate=1e-2, normalize="none", max_iter=args.epochs, random_state=0,
                    eval_train=False, early_stopping=False, weight_tol=None, n_jobs=1)
    full = RSRank(**settings)
    full.fit(X, y, qid=qid)
    solver, state = full.solver(), SolverState(np.zeros(X.shape[1]))
    work = solver.new_work(data)
    order = np.arange(data.n_queries)
    full_epochs = []
    for _ in range(max(args.repeats, 5) * 4):
        start = time.perf_counter()
        solver.epoch(data, state, order, work=work)
        full_epochs.append(time.perf_counter() - start)
    fit_time, fitted = timed(lambda: RSRank(**settings).fit(X, y, qid=qid), args.repeats)
    rows.append(dict(method="RSRank full batch (numba)", epoch_s=float(np.median(full_epochs)),
                     fit_s=fit_time, test_ndcg10=test_ndcg(fitted.predict(Xt))))
    loop_s = loop_seconds(settings, args.repeats)

    try:
        import xgboost as xgb
    except ImportError:
        xgb = None
    if xgb is not None:
        order = np.argsort(qid, kind="stable")
        Xs, ys, qs = X[order], y[order], qid[order]

        def fit_xgb():
            return xgb.XGBRanker(booster="gblinear", objective="rank:ndcg", n_estimators=args.epochs,
                                 learning_rate=0.1, n_jobs=1, random_state=0).fit(Xs, ys, qid=qs)

        fit_time, ranker = timed(fit_xgb, args.repeats)
        rows.append(dict(method="XGBoost XGBRanker gblinear rank:ndcg", epoch_s=fit_time / args.epochs,
                         fit_s=fit_time, test_ndcg10=test_ndcg(ranker.predict(Xt))))

    from sklearn.linear_model import SGDClassifier

    D, t = pairwise_differences(X, y, qid)

    def fit_sgd():
        return SGDClassifier(loss="modified_huber", penalty=None, max_iter=args.epochs, tol=None,
                             fit_intercept=False, random_state=0).fit(D, t)

    fit_time, sgd = timed(fit_sgd, args.repeats)
    rows.append(dict(method=f"scikit-learn SGDClassifier modified_huber on {len(t):,} pairs",
                     epoch_s=fit_time / args.epochs, fit_s=fit_time,
                     test_ndcg10=test_ndcg(Xt @ sgd.coef_.ravel())))

    cold = [cold_start_seconds(), cold_start_seconds()]

    command = command_line()
    lines = [
        "# Fit time on OHSUMED, one fold",
        "",
        f"Command: `{command}`",
        "",
        f"Fold {args.fold} training split: {X.shape[0]:,} documents, {len(np.unique(qid))} "
        f"queries, {X.shape[1]} features. {args.epochs} epochs (or boosting rounds) for every "
        f"method, fixed hyper-parameters, single thread. Median of {args.repeats} runs "
        f"(RSRank's epoch: median of {len(epoch_times)}). rsrank {__version__}, "
        f"Python {platform.python_version()}, {platform.machine()}.",
        "",
        "| method | time per epoch | whole fit | epoch vs RSRank | test NDCG@10 (LETOR) |",
        "|---|---|---|---|---|",
    ]
    base = rows[0]["epoch_s"]
    for row in rows:
        lines.append(f"| {row['method']} | {row['epoch_s'] * 1e3:.2f} ms | {row['fit_s']:.3f} s | "
                     f"{row['epoch_s'] / base:.1f}x | {row['test_ndcg10']:.4f} |")
    lines += [
        "",
        "RSRank's whole fit with `batch_size=1` also computes the training NDCG@10 after "
        "every epoch (for `history_`); its kernel epoch does not. The full-batch fit does not. "
        f"Around the kernel, a full-batch fit's epoch costs {loop_s * 1e6:.0f} us in Python "
        "(measured on 4 queries of 10 documents, where the kernel takes a few microseconds).",
        "",
        f"Fresh process, `import rsrank` + first fit of a tiny model: {cold[0]:.2f} s, then "
        f"{cold[1]:.2f} s (numba's on-disk cache compiled the kernels at most once).",
        "",
        "Test NDCG@10 here is after a fixed number of epochs with untuned settings; it is a "
        "sanity check that each method learned, not a comparison of accuracy (see the "
        "reproduction results for model selection on the validation folds).",
    ]
    write_report(args.out, "bench_fit", dict(rows=rows, cold_start_s=cold, fold=args.fold,
                                             epochs=args.epochs, full_batch_loop_s=loop_s),
                 "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
