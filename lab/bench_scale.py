"""Speed and memory at MSLR-WEB30K scale, RSRank against LightGBM and XGBoost.

    python scripts/bench_scale.py [--sizes 10000,100000,1000000,3771125]
        [--peer-sizes 1000000,3771125] [--epochs 10] [--rounds 50]
        [--out results]

Data: ``rsrank.reading.synthetic.make_mslr_like`` (MSLR-WEB30K's documents per
query, 136 float32 features, labels 0-4 in its proportions); each size is
the number of training documents, with vali and test a third of that again
each (a 60/20/20 split by query). Each measurement runs in a
fresh process that loads the data from ``.npy`` files, so its peak resident
memory (RSS) is its own. Measured:

* RSRank: the time of one epoch of the kernel (online updates, one query
  per step) with the NDCG cut-off ``ndcg_k=10`` and with the whole list, a
  whole ``fit`` with early stopping on vali, the test NDCG@10 it reaches and
  the peak RSS against the size of X;
* the "roofline": one ``X @ w`` plus one ``X.T @ lambda`` with NumPy (BLAS
  on one thread, as the epoch, and on all cores) on the same X, and
  RSRank's epochs as multiples of it;
* LightGBM lambdarank: time per boosting round, time to its best vali
  NDCG@10, test NDCG@10; XGBoost gblinear rank:ndcg: time per round, test
  NDCG@10 (both with early stopping on vali, 2 threads);
* cost against documents per query (10 to 2,000, 200,000 documents) with
  and without the cut-off.
"""

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _bench import command_line, peak_rss_bytes, roofline, time_epoch, write_report

REPO = Path(__file__).resolve().parents[1]


# -- measurements, each run in its own process -----------------------------------------


def load(directory):
    d = Path(directory)
    out = {}
    for split in ("train", "vali", "test"):
        out[split] = tuple(np.load(d / f"{split}_{part}.npy") for part in ("X", "y", "qid"))
    return out


def ndcg10(y, scores, qid):
    from rsrank.evaluation.metrics import mean_ndcg

    return mean_ndcg(y, scores, qid, 10)


def measure_rsrank(directory, epochs):
    from rsrank import RSRank

    baseline = peak_rss_bytes()
    data = load(directory)
    X, y, qid = data["train"]
    loaded = sum(a.nbytes for split in data.values() for a in split)
    out = {"x_bytes": int(X.nbytes), "rows": int(X.shape[0]), "loaded_bytes": int(loaded),
           "rss_baseline_bytes": int(baseline), "rss_after_loading_bytes": int(peak_rss_bytes())}
    out["epoch_s_cutoff10"] = time_epoch(X, y, qid, 10)
    out["epoch_s_full"] = time_epoch(X, y, qid, None)
    model = RSRank(ndcg_k=10, learning_rate=1e-3, normalize="none", batch_size=1,
                   max_iter=epochs, early_stopping=True,
                   n_iter_no_change=3, tol=0.0, eval_train=False, random_state=0)
    start = time.perf_counter()
    model.fit(X, y, qid=qid, eval_set=data["vali"])
    out["fit_s"] = time.perf_counter() - start
    out["fit_epochs"] = int(model.n_iter_)
    out["test_ndcg10"] = ndcg10(data["test"][1], model.predict(data["test"][0]), data["test"][2])
    out["peak_rss_bytes"] = int(peak_rss_bytes())
    return out


def measure_roofline(directory):
    X = load(directory)["train"][0]
    return {"roofline_s": roofline(X), "roofline_1thread_s": roofline(X, threads=1)}


def measure_lightgbm(directory, rounds):
    import lightgbm as lgb

    data = load(directory)
    X, y, qid = data["train"]
    Xv, yv, qv = data["vali"]
    sizes = lambda q: np.unique(q, return_counts=True)[1]  # noqa: E731  (qid is sorted)
    start = time.perf_counter()
    train = lgb.Dataset(X, y, group=sizes(qid), free_raw_data=False).construct()
    vali = lgb.Dataset(Xv, yv, group=sizes(qv), reference=train).construct()
    construct_s = time.perf_counter() - start
    stamps = []
    start = time.perf_counter()
    booster = lgb.train(
        {"objective": "lambdarank", "metric": "ndcg", "eval_at": [10], "num_threads": 2,
         "learning_rate": 0.1, "num_leaves": 31, "verbose": -1},
        train, num_boost_round=rounds, valid_sets=[vali],
        callbacks=[lgb.early_stopping(10, verbose=False),
                   lambda env: stamps.append(time.perf_counter())])
    total = time.perf_counter() - start
    best = booster.best_iteration or len(stamps)
    per_round = float(np.median(np.diff([start] + stamps)))
    test = ndcg10(data["test"][1], booster.predict(data["test"][0], num_iteration=best),
                  data["test"][2])
    return {"construct_s": construct_s, "round_s": per_round, "rounds": len(stamps),
            "best_round": int(best), "to_best_s": float(stamps[best - 1] - start),
            "fit_s": total, "test_ndcg10": test, "peak_rss_bytes": int(peak_rss_bytes())}


def measure_xgboost(directory, rounds):
    import xgboost as xgb

    data = load(directory)
    X, y, qid = data["train"]
    Xv, yv, qv = data["vali"]
    start = time.perf_counter()
    dtrain = xgb.DMatrix(X, y, qid=qid)
    dvali = xgb.DMatrix(Xv, yv, qid=qv)
    construct_s = time.perf_counter() - start
    stamps = []

    class Stamp(xgb.callback.TrainingCallback):
        def after_iteration(self, model, epoch, evals_log):
            stamps.append(time.perf_counter())
            return False

    start = time.perf_counter()
    booster = xgb.train({"booster": "gblinear", "objective": "rank:ndcg", "eval_metric": "ndcg@10",
                         "eta": 0.1, "nthread": 2, "updater": "coord_descent"},
                        dtrain, num_boost_round=rounds, evals=[(dvali, "vali")],
                        early_stopping_rounds=10, verbose_eval=False, callbacks=[Stamp()])
    total = time.perf_counter() - start
    per_round = float(np.median(np.diff([start] + stamps)))
    test = ndcg10(data["test"][1], booster.predict(xgb.DMatrix(data["test"][0])), data["test"][2])
    return {"construct_s": construct_s, "round_s": per_round, "rounds": len(stamps),
            "best_round": int(booster.best_iteration) + 1, "fit_s": total, "test_ndcg10": test,
            "peak_rss_bytes": int(peak_rss_bytes())}


def measure_docs_per_query(total=200_000):
    from rsrank.reading.synthetic import MSLR_LABEL_SHARES

    rng = np.random.default_rng(0)
    X = rng.standard_normal((total, 136), dtype=np.float32)
    y = rng.choice(len(MSLR_LABEL_SHARES), size=total, p=MSLR_LABEL_SHARES)
    rows = []
    for n in (10, 30, 100, 300, 1000, 2000):
        qid = np.arange(total) // n
        rows.append({"docs_per_query": n, "epoch_s_cutoff10": time_epoch(X, y, qid, 10),
                     "epoch_s_full": time_epoch(X, y, qid, None)})
    return rows


def child(argv):
    kind, directory, *rest = argv
    if kind == "rsrank":
        result = measure_rsrank(directory, int(rest[0]))
    elif kind == "roofline":
        result = measure_roofline(directory)
    elif kind == "lightgbm":
        result = measure_lightgbm(directory, int(rest[0]))
    elif kind == "xgboost":
        result = measure_xgboost(directory, int(rest[0]))
    else:
        result = measure_docs_per_query()
    print(json.dumps(result))


def run_child(*args):
    completed = subprocess.run([sys.executable, __file__, "--child", *map(str, args)],
                               capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(f"{args[0]} failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def write_split(size, directory):
    """``size`` training documents, plus half as many again for vali and test."""
    from rsrank.reading.synthetic import make_mslr_like

    total = int(round(size / 0.6))
    n_queries = max(10, int(round(total * 31_531 / 3_771_125)))
    data = make_mslr_like(n_documents=total, n_queries=n_queries, random_state=0)
    queries = np.unique(data.qid)
    cut1, cut2 = queries[int(0.6 * len(queries))], queries[int(0.8 * len(queries))]
    masks = {"train": data.qid < cut1, "vali": (data.qid >= cut1) & (data.qid < cut2),
             "test": data.qid >= cut2}
    for split, mask in masks.items():
        start, stop = np.flatnonzero(mask)[[0, -1]]
        np.save(directory / f"{split}_X.npy", data.X[start:stop + 1])
        np.save(directory / f"{split}_y.npy", data.y[start:stop + 1])
        np.save(directory / f"{split}_qid.npy", data.qid[start:stop + 1])
    return n_queries


def markdown(report):
    lines = ["# RSRank at MSLR-WEB30K scale", "", f"Command: `{report['command']}`", "",
             f"{report['machine']}; rsrank {report['versions']['rsrank']}, numba "
             f"{report['versions']['numba']}, LightGBM {report['versions']['lightgbm']}, "
             f"XGBoost {report['versions']['xgboost']}. Synthetic data shaped like "
             "MSLR-WEB30K (136 float32 features, long-tailed documents per query, labels 0-4); "
             "each size is the training split, with vali and test a third of it again each "
             "(60/20/20 by query). Each measurement ran in a fresh process.", "",
             "## RSRank epoch, roofline and memory", "",
             "| documents (train) | X (train) | epoch, ndcg_k=10 | epoch, whole list | roofline "
             "(X@w + X.T@λ), 1 thread / all cores | epoch / roofline 1 thread (k=10, whole) | "
             "epoch / roofline all cores (k=10, whole) | data loaded | peak RSS above the "
             "interpreter | that / data | fit (early stopping) | test NDCG@10 |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in report["sizes"]:
        r, roof = row["rsrank"], row["roofline"]
        one, every = roof["roofline_1thread_s"], roof["roofline_s"]
        epochs = (r["epoch_s_cutoff10"], r["epoch_s_full"])
        per_one = ", ".join(f"{e / one:.1f}x" for e in epochs)
        per_every = ", ".join(f"{e / every:.1f}x" for e in epochs)
        used = r["peak_rss_bytes"] - r["rss_baseline_bytes"]
        lines.append(
            f"| {r['rows']:,} | {r['x_bytes'] / 1e6:,.0f} MB | {r['epoch_s_cutoff10']:.3f} s | "
            f"{r['epoch_s_full']:.3f} s | {one:.3f} s / {every:.3f} s | "
            f"{per_one} | {per_every} | "
            f"{r['loaded_bytes'] / 1e6:,.0f} MB | {used / 1e6:,.0f} MB | "
            f"{used / r['loaded_bytes']:.2f} | "
            f"{r['fit_s']:.1f} s ({r['fit_epochs']} epochs) | {r['test_ndcg10']:.4f} |")
    lines += ["", "## Against LightGBM and XGBoost on the same data", "",
              "| documents (train) | method | per epoch / round | rounds run (best) | to best | "
              "data set construction | test NDCG@10 | peak RSS |", "|---|---|---|---|---|---|---|---|"]
    for row in report["sizes"]:
        if "lightgbm" not in row:
            continue
        r = row["rsrank"]
        lines.append(f"| {r['rows']:,} | RSRank (ndcg_k=10, 1 thread) | {r['epoch_s_cutoff10']:.3f} s | "
                     f"{r['fit_epochs']} | {r['fit_s']:.1f} s | none | {r['test_ndcg10']:.4f} | "
                     f"{r['peak_rss_bytes'] / 1e6:,.0f} MB |")
        for name, key in (("LightGBM lambdarank (2 threads)", "lightgbm"),
                          ("XGBoost gblinear rank:ndcg (2 threads)", "xgboost")):
            p = row[key]
            to_best = f"{p['to_best_s']:.1f} s" if "to_best_s" in p else ""
            lines.append(f"| {r['rows']:,} | {name} | {p['round_s']:.3f} s | {p['rounds']} "
                         f"({p['best_round']}) | {to_best} | {p['construct_s']:.1f} s | "
                         f"{p['test_ndcg10']:.4f} | {p['peak_rss_bytes'] / 1e6:,.0f} MB |")
    lines += ["", "## Documents per query: whole list against the cut-off", "",
              "200,000 documents in queries of equal size, one epoch of online updates:", "",
              "| documents per query | epoch, whole list | epoch, ndcg_k=10 | ratio |",
              "|---|---|---|---|"]
    for row in report["docs_per_query"]:
        lines.append(f"| {row['docs_per_query']:,} | {row['epoch_s_full']:.3f} s | "
                     f"{row['epoch_s_cutoff10']:.3f} s | "
                     f"{row['epoch_s_full'] / row['epoch_s_cutoff10']:.1f}x |")
    lines += ["", "Peak RSS is the process's high-water mark minus what the interpreter held "
              "after importing everything and before loading data; the data loaded is the "
              "train, vali and test arrays. The roofline is NumPy's BLAS on one thread (as "
              "RSRank's online epoch, where one query per step is sequential) and on all "
              "cores.", "",
              "![scale](scale.png)", ""]
    return "\n".join(lines)


def plot(report, out):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot")
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    rows = [row["rsrank"]["rows"] for row in report["sizes"]]
    for key, label in (("epoch_s_cutoff10", "RSRank epoch, ndcg_k=10"),
                       ("epoch_s_full", "RSRank epoch, whole list")):
        axes[0].plot(rows, [row["rsrank"][key] for row in report["sizes"]], "o-", label=label)
    for key, label in (("roofline_1thread_s", "roofline X@w + X.T@λ, 1 thread"),
                       ("roofline_s", "roofline, all cores")):
        axes[0].plot(rows, [row["roofline"][key] for row in report["sizes"]], "s--",
                     label=label)
    axes[0].set_xscale("log")
    axes[0].set_yscale("log")
    axes[0].set_xlabel("training documents")
    axes[0].set_ylabel("seconds")
    axes[0].legend()
    dpq = report["docs_per_query"]
    n = [row["docs_per_query"] for row in dpq]
    axes[1].plot(n, [row["epoch_s_full"] for row in dpq], "o-", label="whole list: O(n^2)")
    axes[1].plot(n, [row["epoch_s_cutoff10"] for row in dpq], "o-", label="ndcg_k=10: O(n k)")
    axes[1].set_xscale("log")
    axes[1].set_yscale("log")
    axes[1].set_xlabel("documents per query (200,000 documents)")
    axes[1].set_ylabel("seconds per epoch")
    axes[1].legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv=None):
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000,3771125")
    parser.add_argument("--peer-sizes", default="1000000,3771125")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=50, help="LightGBM rounds at most")
    parser.add_argument("--xgb-rounds", type=int, default=10, help="XGBoost rounds at most")
    parser.add_argument("--out", default=str(REPO / "results"),
                        help="directory of scale.md/.json")
    args = parser.parse_args(argv)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    peer_sizes = {int(float(s)) for s in args.peer_sizes.split(",") if s}
    report = {"command": command_line(),
              "machine": f"{platform.machine()}, {len(__import__('os').sched_getaffinity(0))} cores",
              "sizes": []}
    import lightgbm
    import numba
    import xgboost

    import rsrank

    report["versions"] = {"rsrank": rsrank.__version__, "numba": numba.__version__,
                          "lightgbm": lightgbm.__version__, "xgboost": xgboost.__version__}
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            directory = Path(tmp) / str(size)
            directory.mkdir()
            write_split(size, directory)
            row = {"documents": size}
            print(f"{size:,} documents", flush=True)
            row["rsrank"] = run_child("rsrank", directory, args.epochs)
            row["roofline"] = run_child("roofline", directory)
            if size in peer_sizes:
                row["lightgbm"] = run_child("lightgbm", directory, args.rounds)
                row["xgboost"] = run_child("xgboost", directory, args.xgb_rounds)
            report["sizes"].append(row)
            print(json.dumps(row), flush=True)
    report["docs_per_query"] = run_child("docs_per_query", "-")
    write_report(args.out, "scale", report, markdown(report))
    plot(report, Path(args.out) / "scale.png")
    print(markdown(report))


if __name__ == "__main__":
    main()
