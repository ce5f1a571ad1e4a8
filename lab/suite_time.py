"""How long the test command takes, whole, without the slow tests, and
by layer.

    python scripts/suite_time.py [--out results]

Runs the README's test command's pytest part (``python -m pytest -n auto``)
as a new machine does, with an empty numba cache (``NUMBA_CACHE_DIR`` a new
directory: every kernel compiled), then the same with ``-m "not slow"`` and
each layer of ``tests/`` alone (unit, integration, end to end) on the cache
that run left, each in a fresh process from the repository root,
and reports the wall seconds, the tests passed and skipped, the cores,
whether ``../shared/data`` is there (its tests are skipped without it), and
the ten slowest tests of the whole run, beside the seconds this machine
takes for 10**7 additions in a Python loop (machines differ by more than
twice in it, and the suite's time follows). Timings drift on shared
machines: run it on a quiet one.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench import SHARED_DATA, command_line, write_report

REPO = Path(__file__).resolve().parents[1]
#: the layers of tests/, each run alone
LAYERS = ("unit", "integration", "end_to_end")


def run(extra, cache):
    """``(seconds, summary line, slowest lines)`` of one pytest run with the
    numba cache in ``cache``."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "auto", "-q", "-p",
                           "no:cacheprovider", "--durations=10", *extra], cwd=REPO,
                          capture_output=True, text=True,
                          env={**os.environ, "NUMBA_CACHE_DIR": cache})
    seconds = time.perf_counter() - start
    lines = done.stdout.splitlines()
    summary = next((line for line in reversed(lines) if re.search(r"\d+ (passed|failed)", line)),
                   "")
    slowest = [line for line in lines if re.match(r"\s*\d+\.\d+s (call|setup|teardown)", line)]
    if done.returncode != 0:
        raise SystemExit(f"pytest {' '.join(extra)} failed:\n{done.stdout[-3000:]}")
    return seconds, summary.strip("= "), slowest


def python_loop_seconds(repeats=3):
    """The least seconds of 10**7 additions in a Python loop: how fast
    this machine runs Python, to compare suite times across machines."""
    times = []
    for _ in range(repeats):
        start, total = time.perf_counter(), 0
        for i in range(10 ** 7):
            total += i
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--name", default="suite_time")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as cache:
        whole = run([], cache)
        quick = run(["-m", "not slow"], cache)
        layers = {layer: run([f"tests/{layer}"], cache) for layer in LAYERS}
    shared = (SHARED_DATA / "OHSUMED").is_dir()
    loop = python_loop_seconds()
    report = {"command": command_line(), "cores": os.cpu_count(), "shared_data": shared,
              "python_loop_seconds": loop,
              "whole": {"seconds": whole[0], "summary": whole[1], "slowest": whole[2]},
              "not_slow": {"seconds": quick[0], "summary": quick[1]},
              "layers": {layer: {"seconds": seconds, "summary": summary}
                         for layer, (seconds, summary, _) in layers.items()}}
    markdown = "\n".join([
        "# How long the test command takes", "",
        f"`{command_line()}`: `python -m pytest -n auto` from the repository root on "
        f"{os.cpu_count()} cores, ../shared/data {'present' if shared else 'absent'} (its "
        "tests skip without it); the whole run starts from an empty numba cache, as on a new "
        "machine, and the run without the slow tests uses the cache it left. This machine "
        f"runs 10**7 additions in a Python loop in {loop:.2f} s.", "",
        "| run | wall seconds | result |", "|---|---|---|",
        f"| `pytest -n auto`, empty numba cache | {whole[0]:.0f} | {whole[1]} |",
        f"| `pytest -n auto -m \"not slow\"`, kernels cached | {quick[0]:.0f} | {quick[1]} |",
        *(f"| `pytest -n auto tests/{layer}`, kernels cached | {seconds:.0f} | {summary} |"
          for layer, (seconds, summary, _) in layers.items()),
        "",
        "The ten slowest tests of the whole run:", "", "```", *whole[2], "```"])
    write_report(args.out, args.name, report, markdown)
    print(markdown)


if __name__ == "__main__":
    main()
