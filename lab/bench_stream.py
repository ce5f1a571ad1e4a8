"""Train on a LETOR file larger than the memory the process may use.

    python scripts/bench_stream.py [--documents 300000] [--limit-mb 450]
        [--epochs 2] [--out results/stream.md]

Writes an MSLR-shaped LETOR text file (136 features, gzipped) to a temporary
directory, then runs three fresh processes:

1. load the whole file into memory under a budget of ``--limit-mb`` of
   address space (``RLIMIT_AS`` set to what the interpreter has mapped
   already plus the budget): expected to fail, which shows the file does
   not fit the budget. (``RLIMIT_DATA`` would not bound it: the parser's
   large arrays are shared anonymous mappings of their own, which that
   limit does not count.)
2. ``RSRank.fit_chunks`` over ``iter_letor_chunks`` under the same budget;
3. the same training in memory without a limit.

It reports whether 2 completed, its peak memory, and the largest difference
between the weights of 2 and 3 (same queries in the same order, no
shuffling), which should be at the level of floating-point rounding.
"""

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _bench import command_line, peak_rss_bytes, write_letor_text, write_report

REPO = Path(__file__).resolve().parents[1]
PARAMS = dict(learning_rate=1e-3, normalize="none", batch_size=1, ndcg_k=10, shuffle=False, eval_train=False, random_state=0)


def limit_memory(budget_bytes):
    """Cap the address space (every mapping: heap, anonymous and file
    maps, thread stacks) at what is mapped now plus ``budget_bytes``."""
    with open("/proc/self/status") as handle:
        fields = dict(line.split(":", 1) for line in handle)
    in_use = int(fields["VmSize"].split()[0]) * 1024
    limit = in_use + budget_bytes
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return in_use


def child(kind, path, budget, epochs, out):
    from rsrank import RSRank, iter_letor_chunks, load_letor

    RSRank(max_iter=1).fit(np.eye(3), [0, 1, 2])  # load the compiled kernels first
    result = {"kind": kind}
    if kind != "memory":
        result["mapped_before_bytes"] = limit_memory(budget)
    start = time.perf_counter()
    try:
        if kind == "load":
            X, y, qid = load_letor(path, n_features=136)
            result["loaded_rows"] = int(X.shape[0])
        elif kind == "stream":
            model = RSRank(max_iter=epochs, **PARAMS)
            model.fit_chunks(lambda: iter_letor_chunks(path, 100, n_features=136))
            np.save(out, model.coef_)
        else:
            X, y, qid = load_letor(path, n_features=136)
            model = RSRank(max_iter=epochs, **PARAMS).fit(X, y, qid=qid)
            np.save(out, model.coef_)
        result["completed"] = True
    except MemoryError:
        result["completed"] = False
        result["error"] = "MemoryError"
    result["seconds"] = time.perf_counter() - start
    result["peak_rss_bytes"] = peak_rss_bytes()
    print(json.dumps(result))


def run(kind, path, budget, epochs, out):
    completed = subprocess.run([sys.executable, __file__, "--child", kind, str(path),
                                str(budget), str(epochs), str(out)],
                               capture_output=True, text=True)
    lines = completed.stdout.strip().splitlines()
    if not lines:
        return {"kind": kind, "completed": False,
                "error": completed.stderr.strip().splitlines()[-1] if completed.stderr else "?"}
    return json.loads(lines[-1])


def main(argv=None):
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, path, budget, epochs, out = sys.argv[2:]
        child(kind, path, int(budget), int(epochs), out)
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=300_000)
    parser.add_argument("--limit-mb", type=int, default=450)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--out", default=str(REPO / "results"),
                        help="directory of stream.md/.json")
    args = parser.parse_args(argv)
    from rsrank.reading.synthetic import make_mslr_like

    budget = args.limit_mb * 2**20
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        path = tmp / "train.txt.gz"
        n_queries = max(1, round(args.documents * 31_531 / 3_771_125))
        data = make_mslr_like(n_documents=args.documents, n_queries=n_queries, random_state=0)
        start = time.perf_counter()
        write_letor_text(path, data.X, data.y, data.qid, digits=4)
        written = time.perf_counter() - start
        del data
        file_bytes = path.stat().st_size
        results = {kind: run(kind, path, budget, args.epochs, tmp / f"{kind}.npy")
                   for kind in ("load", "stream", "memory")}
        difference = None
        if results["stream"]["completed"] and results["memory"]["completed"]:
            a, b = np.load(tmp / "stream.npy"), np.load(tmp / "memory.npy")
            difference = float(np.max(np.abs(a - b)) / np.max(np.abs(b)))
    command = command_line()
    lines = ["# Streaming a file larger than the memory budget", "", f"Command: `{command}`", "",
             f"{args.documents:,} documents, {n_queries:,} queries, 136 features as LETOR text: "
             f"{file_bytes / 1e6:,.0f} MB gzipped (written in {written:.0f} s). Budget: "
             f"{args.limit_mb:,} MB of address space beyond what the interpreter maps after "
             f"loading numpy, scikit-learn and the compiled kernels (RLIMIT_AS). {args.epochs} "
             f"epochs, RSRank({', '.join(f'{k}={v}' for k, v in PARAMS.items())}), blocks of "
             "100 queries.", "",
             "| run | limit | completed | time | peak RSS |", "|---|---|---|---|---|"]
    for kind, label in (("load", "load_letor of the whole file"),
                        ("stream", "fit_chunks over iter_letor_chunks"),
                        ("memory", "load_letor + fit in memory")):
        r = results[kind]
        lines.append(f"| {label} | {'budget' if kind != 'memory' else 'none'} | "
                     f"{'yes' if r['completed'] else 'no: ' + r.get('error', '')} | "
                     f"{r.get('seconds', float('nan')):.1f} s | "
                     f"{r.get('peak_rss_bytes', 0) / 1e6:,.0f} MB |")
    lines += ["", "Largest weight difference between the streamed and the in-memory model, "
              f"relative to the largest weight: {difference!r}.", ""]
    write_report(args.out, "stream", {"documents": args.documents, "file_bytes": file_bytes,
                                      "budget_bytes": budget, "results": results,
                                      "relative_difference": difference}, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
