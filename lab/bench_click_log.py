"""Reading a click log: wall time and peak memory of
:func:`rsrank.clicks.read_click_log` on generated sessions logs of growing
size, each read in a fresh process (its peak resident memory, less that
of a process that only imports the package, is the read's).

Each log: sessions of 10 documents of 50-session queries, clicks with a
chance of 0.2, one row per shown document (``session,qid,docid,position,
click``, about 23 bytes a row).

    python scripts/bench_click_log.py [--rows 1000000 10000000] [--out results]
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import command_line, write_report  # noqa: E402

_READ = """
import json, resource, sys, time
from rsrank.clicks import read_click_log
start = time.perf_counter()
log = read_click_log(sys.argv[1]) if sys.argv[1] != "-" else None
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "entries": 0 if log is None else len(log.qid)}))
"""


def write_log(path, rows, seed=0):
    """A sessions log of ``rows`` rows (rounded to whole sessions of 10)."""
    rng = np.random.default_rng(seed)
    with open(path, "w") as out:
        out.write("session,qid,docid,position,click\n")
        for start in range(0, rows, 1_000_000):
            k = np.arange(start, min(start + 1_000_000, rows))
            session, position = k // 10, k % 10 + 1
            query = session // 50
            docid = query * 40 + (position - 1) + (session % 3) * 10
            click = (rng.random(len(k)) < 0.2).astype(int)
            out.write("\n".join(f"{s},{q},{d},{p},{c}" for s, q, d, p, c in
                                zip(session, query, docid, position, click)) + "\n")


def read_in_a_process(path):
    done = subprocess.run([sys.executable, "-c", _READ, str(path)], check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    baseline = read_in_a_process("-")["peak_kb"]
    rows_out = []
    with tempfile.TemporaryDirectory() as scratch:
        for rows in args.rows:
            path = Path(scratch) / f"log{rows}.csv"
            write_log(path, rows)
            found = read_in_a_process(path)
            size = path.stat().st_size
            path.unlink()
            extra = (found["peak_kb"] - baseline) * 1024
            rows_out.append({"rows": rows, "bytes": size, "seconds": found["seconds"],
                             "peak_bytes": extra, "bytes_per_row": extra / rows,
                             "entries": found["entries"]})
            print(rows_out[-1], flush=True)
    lines = ["| rows | file (MB) | read (s) | rows per second | peak memory above the import "
             "(MB) | per row (bytes) |", "|---|---|---|---|---|---|"]
    lines += [f"| {r['rows']:,} | {r['bytes'] / 1e6:.0f} | {r['seconds']:.1f} | "
              f"{r['rows'] / r['seconds']:,.0f} | {r['peak_bytes'] / 1e6:,.0f} | "
              f"{r['bytes_per_row']:.0f} |" for r in rows_out]
    markdown = "\n".join(lines) + "\n"
    print(markdown)
    if args.out:
        write_report(args.out, "click_log", {"command": command_line(argv),
                                             "baseline_peak_kb": baseline, "rows": rows_out},
                     markdown)


if __name__ == "__main__":
    main()
