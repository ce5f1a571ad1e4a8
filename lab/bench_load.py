"""Loading a LETOR text file: RSRank's compiled parser against its line
reader, scikit-learn, XGBoost and LightGBM, on the same generated file.

    python scripts/bench_load.py [--rows 300000] [--digits 6] [--repeats 3] [--out results]
        [--name load]

Writes an MSLR-shaped file (136 features, values with ``--digits`` significant
digits: 17 is what Python's ``repr`` and ``rsrank.write_letor`` write, and
many such values are past the fast path's exact range,
``qid:`` on every line, ``#docid`` comments) and, for LightGBM, the same rows
without ``qid:`` plus a ``.query`` file. Every loader runs in a fresh
process (the time of its best run, and its peak resident memory above the
interpreter with the libraries imported), next to the size of the arrays
it returns. Writes ``NAME.md`` and ``NAME.json`` into ``--out``.
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

from _bench import command_line, internal, set_internal, write_report

REPO = Path(__file__).resolve().parents[1]
METHODS = ["rsrank", "rsrank-dense", "rsrank-gz", "rsrank-cache", "rsrank-line-reader",
           "xgboost", "lightgbm", "sklearn"]


def write_files(directory, rows, digits=6, seed=0):
    from rsrank.reading.synthetic import make_mslr_like

    n_queries = max(1, round(rows * 31_531 / 3_771_125))
    data = make_mslr_like(n_documents=rows, n_queries=n_queries, random_state=seed)
    plain, no_qid = [], []
    for row in range(len(data.y)):
        values = " ".join(f"{j}:{v:.{digits}g}" for j, v in enumerate(data.X[row], start=1))
        plain.append(f"{data.y[row]} qid:{data.qid[row]} {values} #docid = d{row}\n")
        no_qid.append(f"{data.y[row]} {values}\n")
    (directory / "data.txt").write_text("".join(plain))
    (directory / "lgb.txt").write_text("".join(no_qid))
    sizes = np.unique(data.qid, return_counts=True)[1]
    (directory / "lgb.txt.query").write_text("".join(f"{s}\n" for s in sizes))
    import gzip

    with open(directory / "data.txt", "rb") as source, \
            gzip.open(directory / "data.txt.gz", "wb", compresslevel=1) as target:
        target.write(source.read())
    return len(data.y), int(len(sizes))


def child(method, directory, repeats):
    """Runs in a fresh process; prints one JSON line."""
    sys.path.insert(0, str(REPO / "lab"))
    from _bench import peak_rss_bytes

    if method.startswith("touch-"):  # the byte count in place of the directory
        return first_touch(method, int(directory))
    directory = Path(directory)
    if method.startswith("rsrank"):
        from rsrank import load_letor

        if method == "rsrank-line-reader":
            set_internal("reading._reading", "_fast_parse", lambda *args: None)
        path = directory / ("data.txt.gz" if method == "rsrank-gz" else "data.txt")
        cache = directory / "cache" if method == "rsrank-cache" else None
        # load the compiled kernels (serial and parallel) before measuring
        warm = REPO / "rsrank" / "data" / "synthetic" / "Fold1" / "vali.txt.gz"
        load_letor(warm)
        internal("reading._parser", "parse_buffer")(internal("reading._reading", "_read_bytes")(str(warm), warm), 2)

        dense = "auto" if method == "rsrank-dense" else False

        def run():
            X, y, qid = load_letor(path, cache=cache, dense=dense)
            if dense:  # every line holds every feature: the values alone
                return X.nbytes + y.nbytes + qid.nbytes
            if cache is not None:  # memory-mapped: touch every page, as a fit would
                float(X.data.sum() + X.indices.sum() + y.sum() + qid.sum())
            return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes + y.nbytes + qid.nbytes
    elif method == "xgboost":
        import xgboost

        def run():
            matrix = xgboost.DMatrix(f"{directory / 'data.txt'}?format=libsvm", nthread=2)
            return matrix.num_nonmissing() * 12 + matrix.num_row() * 16
    elif method == "lightgbm":
        import lightgbm

        def run():
            dataset = lightgbm.Dataset(str(directory / "lgb.txt"),
                                       params={"verbosity": -1, "num_threads": 2})
            dataset.construct()
            return 0  # LightGBM keeps binned features, not the values
    elif method == "sklearn":
        from sklearn.datasets import load_svmlight_file

        def run():
            X, y, qid = load_svmlight_file(str(directory / "data.txt"), query_id=True)
            return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes + y.nbytes + qid.nbytes
    baseline = peak_rss_bytes()
    times, nbytes = [], 0
    for _ in range(repeats):
        start = time.perf_counter()
        nbytes = run()
        times.append(time.perf_counter() - start)
    print(json.dumps({"method": method, "seconds": min(times), "runs": len(times),
                      "array_bytes": nbytes, "peak_above_baseline": peak_rss_bytes() - baseline}))


def first_touch(method, nbytes):
    """Seconds to write one byte per page of ``nbytes`` of new memory, from
    NumPy's allocator or from the parser's own mapping."""
    _fresh = internal("reading._parser", "_fresh")
    start = time.perf_counter()
    allocate = np.empty if method == "touch-numpy" else _fresh
    array = allocate(nbytes, np.uint8)
    array[::4096] = 1
    print(json.dumps({"method": method, "seconds": time.perf_counter() - start}))


def run_child(method, directory, repeats):
    done = subprocess.run([sys.executable, __file__, "--child", method, str(directory),
                           str(repeats)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5,
                        help="alternating rounds of the compiled parser and XGBoost's, one "
                             "fresh process each, for the ratio of their times")
    parser.add_argument("--digits", type=int, default=6,
                        help="significant digits of the values written")
    parser.add_argument("--out", default=str(REPO / "results"))
    parser.add_argument("--name", default="load")
    parser.add_argument("--methods", default=",".join(METHODS),
                        help=f"comma-separated loaders (default: all of {','.join(METHODS)})")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child[0], args.child[1], int(args.child[2]))
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        rows, queries = write_files(directory, args.rows, args.digits)
        size = (directory / "data.txt").stat().st_size
        results = []
        for method in args.methods.split(","):
            repeats = 1 if method in ("sklearn", "rsrank-line-reader") else args.repeats
            if method == "rsrank-cache":  # written by another process, then read
                subprocess.run([sys.executable, "-c", "import sys; from rsrank import load_letor; "
                                "load_letor(sys.argv[1], cache=sys.argv[2])",
                                str(directory / "data.txt"), str(directory / "cache")],
                               check=True)
            results.append(run_child(method, directory, repeats))
            print(results[-1], flush=True)
        # a shared machine's slow spells move one loader's time against the
        # other's: alternate the two, and keep every round's ratio
        rounds = []
        for _ in range(args.rounds):
            ours = run_child("rsrank", directory, 1)["seconds"]
            theirs = run_child("xgboost", directory, 1)["seconds"]
            rounds.append({"rsrank_s": ours, "xgboost_s": theirs, "ratio": ours / theirs})
        # what a fresh process pays to touch memory the size of the arrays
        touch = {"numpy": [], "mapping": []}
        for _ in range(args.rounds):
            for kind in touch:
                touch[kind].append(run_child(f"touch-{kind}", results[0]["array_bytes"],
                                             1)["seconds"])
    import numba
    import lightgbm
    import sklearn
    import xgboost

    from rsrank import __version__

    by = {r["method"]: r for r in results}
    report = {"command": command_line(),
              "rows": rows, "queries": queries, "features": 136, "digits": args.digits,
              "file_bytes": size,
              "machine": f"{platform.machine()}, {numba.config.NUMBA_NUM_THREADS} cores",
              "versions": {"rsrank": __version__, "numba": numba.__version__,
                           "scikit-learn": sklearn.__version__, "xgboost": xgboost.__version__,
                           "lightgbm": lightgbm.__version__},
              "results": results, "alternating_rounds": rounds,
              "first_touch_s": touch}
    names = {"rsrank": "RSRank `load_letor` (compiled parser, all cores)",
             "rsrank-dense": "RSRank `load_letor(dense=\"auto\")`: a dense array (every line "
                             "holds every feature)",
             "rsrank-gz": "RSRank `load_letor`, the same file gzipped",
             "rsrank-cache": "RSRank `load_letor(cache=...)`, reading its cache (every page read)",
             "rsrank-line-reader": "RSRank's line reader (scikit-learn's parser plus checks)",
             "xgboost": "XGBoost `DMatrix(file?format=libsvm)`, 2 threads",
             "lightgbm": "LightGBM `Dataset(file).construct()` (.query file), 2 threads",
             "sklearn": "scikit-learn `load_svmlight_file(query_id=True)`"}
    lines = ["# Loading a LETOR text file", "",
             f"Command: `{report['command'].strip()}`", "",
             f"{report['machine']}; rsrank {__version__}, numba {numba.__version__}, "
             f"scikit-learn {sklearn.__version__}, XGBoost {xgboost.__version__}, LightGBM "
             f"{lightgbm.__version__}. One generated file: {rows:,} rows, {queries:,} queries, "
             f"136 features, values with {args.digits} significant digits, {size / 1e6:,.0f} MB "
             "of text. Each loader in a fresh process; "
             "time of the best run; peak memory above the process after its imports.", "",
             "| loader | seconds | MB/s | vs XGBoost | peak memory | arrays returned | "
             "peak / arrays |", "|---|---|---|---|---|---|---|"]
    for r in results:
        ratio = r["seconds"] / by["xgboost"]["seconds"]
        arrays = f"{r['array_bytes'] / 1e6:,.0f} MB" if r["array_bytes"] else ""
        per = f"{r['peak_above_baseline'] / r['array_bytes']:.2f}" if r["array_bytes"] else ""
        lines.append(f"| {names[r['method']]} | {r['seconds']:.2f} | {size / 1e6 / r['seconds']:,.0f} "
                     f"| {ratio:.2f}x | {r['peak_above_baseline'] / 1e6:,.0f} MB | {arrays} | {per} |")
    if rounds:
        ratios = [r["ratio"] for r in rounds]
        lines += ["", f"The compiled parser against XGBoost's over {len(rounds)} alternating "
                  "rounds (one run each, fresh processes): RSRank's time / XGBoost's, median "
                  f"{np.median(ratios):.2f}x, from {min(ratios):.2f}x to {max(ratios):.2f}x "
                  "(" + ", ".join(f"{r:.2f}" for r in ratios) + ")."]
    if touch["numpy"]:
        lines += ["", f"New memory the size of the arrays ({results[0]['array_bytes'] / 1e6:,.0f} "
                  "MB), one byte written per page in a fresh process, median of "
                  f"{len(touch['numpy'])} alternating rounds: NumPy's allocator (which asks for "
                  f"huge pages) {np.median(touch['numpy']):.2f} s, the parser's anonymous "
                  f"mapping {np.median(touch['mapping']):.2f} s."]
    text = "\n".join(lines) + "\n"
    out = Path(args.out)
    write_report(out, args.name, report, text)
    print(text)


if __name__ == "__main__":
    main()
