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
* the number of kernel signatures the cold ``rsrank train`` compiled;
* how long after the cold run its child processes went on compiling the
  parallel kernels (``rsrank.learning._compile``); the warm run starts after them.

``--baseline REV`` also times the cold and warm ``rsrank train`` of the
package as it was at git revision ``REV`` (a temporary worktree first on
``PYTHONPATH``), interleaved with the current one, so that the two share
the machine's state of the moment.

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

from _bench import REPO, write_report

SMALL_FIT = ("import numpy as np, rsrank; rng = np.random.default_rng(0); "
             "rsrank.RSRank(max_iter=5).fit(rng.normal(size=(200, 5)), rng.integers(0, 3, 200), "
             "qid=np.repeat(np.arange(20), 10))")
TRAIN = "from rsrank.cli import main; raise SystemExit(main(['train', '--quiet']))"


def run(code, cache_dir, source=None):
    """Seconds of ``python -c code`` with numba's cache in ``cache_dir`` (and
    the package imported from ``source`` when given)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(source), env.get("PYTHONPATH", "")])
    start = time.perf_counter()
    # from the cache directory: the working directory comes first on sys.path
    subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=cache_dir,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def compiling_aside(timeout=300):
    """Seconds until no ``python -m rsrank.learning._compile`` process is left (the
    parallel kernels a first run has compiled in child processes)."""
    start = time.perf_counter()
    while time.perf_counter() - start < timeout:
        busy = False
        for entry in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                busy = busy or b"rsrank.learning._compile" in entry.read_bytes()
            except OSError:
                continue
        if not busy:
            break
        time.sleep(0.1)
    return time.perf_counter() - start


def cold_and_warm(code, repeats, sources=(None,)):
    """Fastest cold and warm times per source (None: the current package),
    the sources taking turns within each repeat; the warm run starts once
    the cold run's child processes are done (``aside``: how long after the
    cold run that was)."""
    times = {source: {"cold": [], "warm": [], "aside": [], "compiled_signatures": 0}
             for source in sources}
    for _ in range(repeats):
        for source in sources:
            with tempfile.TemporaryDirectory() as cache:
                times[source]["cold"].append(run(code, cache, source))
                times[source]["aside"].append(compiling_aside())
                times[source]["compiled_signatures"] = sum(1 for _ in Path(cache).rglob("*.nbc"))
                times[source]["warm"].append(run(code, cache, source))
    return {source: {"cold": min(t["cold"]), "warm": min(t["warm"]),
                     "aside": min(t["aside"]), "compiled_signatures": t["compiled_signatures"]}
            for source, t in times.items()}


def worktree(revision, directory):
    """A checkout of ``revision`` in ``directory`` (removed by the caller)."""
    subprocess.run(["git", "worktree", "add", "--detach", str(directory), revision],
                   check=True, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = {**os.environ, "PYTHONPATH": str(directory)}
    found = subprocess.run([sys.executable, "-c", "import rsrank; print(rsrank.__file__)"],
                           env=env, check=True, capture_output=True, text=True,
                           cwd=directory.parent).stdout
    if not Path(found.strip()).resolve().is_relative_to(Path(directory).resolve()):
        raise SystemExit(f"the baseline imports {found.strip()}, not the worktree's package")
    return directory


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline", help="git revision to time rsrank train against")
    args = parser.parse_args(argv)
    report = {"cores": os.cpu_count()}
    with tempfile.TemporaryDirectory() as scratch:
        sources = (None,)
        if args.baseline:
            sources = (None, worktree(args.baseline, Path(scratch) / "baseline"))
        try:
            train = cold_and_warm(TRAIN, args.repeats, sources)
        finally:
            if args.baseline:
                subprocess.run(["git", "worktree", "remove", "--force", str(sources[1])],
                               cwd=REPO, check=False)
        report["rsrank train (bundled data)"] = train[None]
        if args.baseline:
            report[f"rsrank train (bundled data), rsrank at {args.baseline}"] = train[sources[1]]
    report["import rsrank + a small fit"] = cold_and_warm(SMALL_FIT, args.repeats)[None]
    lines = [f"Cores: {os.cpu_count()}. Fresh processes; cold = an empty numba cache, as "
             "after an install; fastest of the repeats.", "",
             "| run | cold (s) | warm (s) | compiling aside after the cold run (s) | "
             "kernel signatures compiled cold |", "|---|---|---|---|---|"]
    for name, row in report.items():
        if isinstance(row, dict):
            lines.append(f"| {name} | {row['cold']:.1f} | {row['warm']:.1f} | "
                         f"{row['aside']:.1f} | {row['compiled_signatures']} |")
    print("\n".join(lines))
    write_report(Path(args.out), "cold", report, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
