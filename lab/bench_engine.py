"""The engine's setup and memory against its epoch and its arrays.

    python scripts/bench_engine.py [--rows 200000] [--train-rows 300000]
        [--vali-rows 100000] [--repeats 5] [--out results]

Two measurements, each in fresh processes:

* **Setup of a fit.** ``make_mslr_like`` rows (136 float32 features,
  MSLR-WEB30K's query sizes), trained with ``RSRank()``'s defaults (full
  batch, z-score, training NDCG each epoch). One epoch costs
  ``(T(11 epochs) - T(1 epoch)) / 10``; the setup of a fit is
  ``T(1 epoch)`` less one epoch, in epochs. Measured for the first fit in a
  fresh process (numba's cache warm, the import not counted), and over
  repeated fits (the fastest of ``--repeats``, as timings on a shared
  machine only err upwards), given the arrays ``(X, y, qid)`` and given a
  :class:`~rsrank.QueryData` built once.
* **Peak memory of** ``rsrank train --train T --vali V`` on LETOR text
  files of ``--train-rows`` and ``--vali-rows`` such rows, above the same
  command on a file of 100 rows (the interpreter, numba and the libraries),
  against the float32 arrays of train and vali. Peak is the process's
  VmHWM.

Writes ``engine.json`` and ``engine.md`` into ``--out``.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _bench import peak_rss_bytes, write_letor_text, write_report

N_FEATURES = 136


def mslr_rows(n_rows, seed):
    from rsrank.reading.synthetic import make_mslr_like

    return make_mslr_like(n_documents=n_rows, n_queries=max(2, round(n_rows / 120)),
                          random_state=seed)


def fit_child(n_rows, repeats):
    """Runs in a fresh process; prints one JSON line."""
    from rsrank import QueryData, RSRank

    data = mslr_rows(n_rows, seed=0)
    X, y, qid = data.X, data.y, data.qid

    def fit_seconds(source, epochs):
        start = time.perf_counter()
        if isinstance(source, QueryData):
            RSRank(max_iter=epochs, random_state=0).fit(source)
        else:
            RSRank(max_iter=epochs, random_state=0).fit(X, y, qid=qid)
        return time.perf_counter() - start

    first = fit_seconds("arrays", 1)
    one = [fit_seconds("arrays", 1) for _ in range(repeats)]
    eleven = [fit_seconds("arrays", 11) for _ in range(repeats)]
    start = time.perf_counter()
    built = QueryData(X, y, qid)
    build = time.perf_counter() - start
    fit_seconds(built, 1)  # the first fit on it prepares the objective's arrays
    one_built = [fit_seconds(built, 1) for _ in range(repeats)]
    eleven_built = [fit_seconds(built, 11) for _ in range(repeats)]
    print(json.dumps({"first_fit_s": first, "fit1_s": float(np.min(one)),
                      "fit11_s": float(np.min(eleven)), "build_s": build,
                      "fit1_built_s": float(np.min(one_built)),
                      "fit11_built_s": float(np.min(eleven_built))}))


def write_rows(path, n_rows, seed):
    """LETOR text of ``n_rows`` rows; the seed also sets the qids apart, so
    that train and vali share no query."""
    data = mslr_rows(n_rows, seed)
    write_letor_text(path, data.X, data.y, data.qid + seed * 10**7, digits=6)


def train_child(train, vali, out):
    """Runs in a fresh process: ``rsrank train``, then one JSON line."""
    from rsrank.cli import main

    code = main(["train", "--train", train, "--vali", vali, "--out", out, "--quiet"])
    print(json.dumps({"exit": code, "peak_rss_bytes": peak_rss_bytes()}))


def child(*args):
    done = subprocess.run([sys.executable, __file__, "--child", *map(str, args)], check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def markdown(report):
    s = report["setup"]
    m = report["memory"]
    return "\n".join([
        "# The engine's setup and memory", "",
        f"`RSRank()` defaults (full batch, z-score, training NDCG each epoch) on "
        f"{s['rows']:,} `make_mslr_like` rows x {N_FEATURES} float32 features; the fastest of "
        f"{s['repeats']} fits. One epoch: {s['epoch_s'] * 1e3:.1f} ms with arrays, "
        f"{s['epoch_built_s'] * 1e3:.1f} ms on a built QueryData.", "",
        "| fit | seconds | setup (s) | setup in epochs | target |",
        "|---|---|---|---|---|",
        f"| first fit in a fresh process, arrays | {s['first_fit_s']:.3f} | "
        f"{s['first_setup_s']:.3f} | {s['first_setup_epochs']:.2f} | at most 2 |",
        f"| repeated fit, arrays | {s['fit1_s']:.3f} | {s['setup_s']:.3f} | "
        f"{s['setup_epochs']:.2f} | at most 0.5 |",
        f"| repeated fit, QueryData built once ({s['build_s']:.3f} s to build) | "
        f"{s['fit1_built_s']:.3f} | {s['setup_built_s']:.3f} | {s['setup_built_epochs']:.2f} "
        "| at most 0.5 |", "",
        f"The first fit costs {s['first_fit_s'] - s['fit1_s']:.3f} s more than a repeated one: "
        "numba loading the compiled kernels from its cache, once per process, whatever the "
        "size of the data.", "",
        f"`rsrank train --train --vali` on {m['train_rows']:,} + {m['vali_rows']:,} rows of "
        f"LETOR text: peak {m['peak_bytes'] / 2**20:,.0f} MiB, {m['base_bytes'] / 2**20:,.0f} "
        f"MiB on a 100-row file, so {m['above_bytes'] / 2**20:,.0f} MiB above it: "
        f"**{m['ratio']:.2f}x** the {m['arrays_bytes'] / 2**20:,.0f} MiB of float32 arrays of "
        "train and vali (target: at most 2x).", ""])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--train-rows", type=int, default=300_000)
    parser.add_argument("--vali-rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "results"))
    args = parser.parse_args(argv)

    child("fit", 1000, 1)  # numba's cache, warm
    f = child("fit", args.rows, args.repeats)
    epoch = (f["fit11_s"] - f["fit1_s"]) / 10
    epoch_built = (f["fit11_built_s"] - f["fit1_built_s"]) / 10
    setup = {"rows": args.rows, "repeats": args.repeats, **f, "epoch_s": epoch,
             "epoch_built_s": epoch_built, "first_setup_s": f["first_fit_s"] - epoch,
             "setup_s": f["fit1_s"] - epoch, "setup_built_s": f["fit1_built_s"] - epoch_built}
    setup["first_setup_epochs"] = setup["first_setup_s"] / epoch
    setup["setup_epochs"] = setup["setup_s"] / epoch
    setup["setup_built_epochs"] = setup["setup_built_s"] / epoch_built
    print(json.dumps(setup), flush=True)

    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        for name, rows, seed in [("train", args.train_rows, 1), ("vali", args.vali_rows, 2),
                                 ("tiny", 100, 3), ("tiny-vali", 100, 4)]:
            write_rows(scratch / f"{name}.txt", rows, seed)
        base = child("train", scratch / "tiny.txt", scratch / "tiny-vali.txt",
                     scratch / "out-tiny")
        big = child("train", scratch / "train.txt", scratch / "vali.txt", scratch / "out-big")
    arrays = (args.train_rows + args.vali_rows) * N_FEATURES * 4
    memory = {"train_rows": args.train_rows, "vali_rows": args.vali_rows,
              "peak_bytes": big["peak_rss_bytes"], "base_bytes": base["peak_rss_bytes"],
              "above_bytes": big["peak_rss_bytes"] - base["peak_rss_bytes"],
              "arrays_bytes": arrays}
    memory["ratio"] = memory["above_bytes"] / arrays
    report = {"setup": setup, "memory": memory}
    write_report(args.out, "engine", report, markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, *rest = sys.argv[2:]
        if kind == "fit":
            fit_child(int(rest[0]), int(rest[1]))
        else:
            train_child(*rest)
    else:
        main()
