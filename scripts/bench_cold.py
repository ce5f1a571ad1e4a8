"""The first run after an install against the next ones.

    python scripts/bench_cold.py [--out results] [--repeats 3]

Each measurement is a fresh process. *Cold* points numba's cache at an empty
directory (``NUMBA_CACHE_DIR``), as after ``pip install``: every kernel the
run calls compiles. *Warm* runs again on the cache the cold run left.
Measured:

* ``rsrank train`` on the bundled data (the main job, its default grid),
  wall time of the whole command;
* ``import rsrank`` plus one small fit (``RSRank(max_iter=5)`` on 200
  rows), in the same way;
* the number of kernel signatures the cold ``rsrank train`` compiled.

Writes ``cold.json`` and ``cold.md`` into ``--out``; times are the fastest
of ``--repeats`` (a shared machine only errs upwards).
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench import write_report

SMALL_FIT = ("import numpy as np, rsrank; rng = np.random.default_rng(0); "
             "rsrank.RSRank(max_iter=5).fit(rng.normal(size=(200, 5)), rng.integers(0, 3, 200), "
             "qid=np.repeat(np.arange(20), 10))")
TRAIN = "from rsrank.cli import main; raise SystemExit(main(['train', '--quiet']))"


def run(code, cache_dir):
    """Seconds of ``python -c code`` with numba's cache in ``cache_dir``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def cold_and_warm(code, repeats):
    cold, warm, compiled = [], [], 0
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as cache:
            cold.append(run(code, cache))
            compiled = sum(1 for _ in Path(cache).rglob("*.nbc"))
            warm.append(run(code, cache))
    return {"cold": min(cold), "warm": min(warm), "compiled_signatures": compiled}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    report = {"cores": os.cpu_count(),
              "rsrank train (bundled data)": cold_and_warm(TRAIN, args.repeats),
              "import rsrank + a small fit": cold_and_warm(SMALL_FIT, args.repeats)}
    lines = [f"Cores: {os.cpu_count()}. Fresh processes; cold = an empty numba cache, as "
             "after an install; fastest of the repeats.", "",
             "| run | cold (s) | warm (s) | kernel signatures compiled cold |", "|---|---|---|---|"]
    for name, row in report.items():
        if isinstance(row, dict):
            lines.append(f"| {name} | {row['cold']:.1f} | {row['warm']:.1f} | "
                         f"{row['compiled_signatures']} |")
    print("\n".join(lines))
    write_report(Path(args.out), "cold", report, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
