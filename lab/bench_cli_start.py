"""How long the ``rsrank`` command takes before it prints anything, and what it imports.

    python scripts/bench_cli_start.py [--out results] [--repeats 7] [--before COMMIT]

Runs ``rsrank --version``, ``rsrank --help``, ``rsrank fetch --list``,
``rsrank train --help`` and ``rsrank train --nosuch`` (a usage error:
an option mistyped) in fresh interpreters (``python -m rsrank``, as the
installed script runs it) and records for each the fastest wall time of
``--repeats``, the ``rsrank`` modules it imported and whether
scikit-learn, SciPy or numba were among its imports. The peers in the same run: a bare interpreter
(``python -c pass``) and one that imports NumPy, SciPy, scikit-learn and
numba (what every command needs to compute). ``--before COMMIT`` also
times that commit's package, checked out into a temporary directory, the
commands taking turns within each repeat.

Writes ``cli_start.json`` and ``cli_start.md`` into ``--out``.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bench import command_line, write_report

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("sklearn", "scipy", "numba")
COMMANDS = {"rsrank --version": ["--version"], "rsrank --help": ["--help"],
            "rsrank fetch --list": ["fetch", "--list"], "rsrank train --help": ["train", "--help"],
            "rsrank train --nosuch": ["train", "--nosuch"]}
#: runs the command, then reports what it imported on stderr's last line
PROBE = ("import sys, json\n"
         "sys.argv = ['rsrank'] + sys.argv[1:]\n"
         "from rsrank.__main__ import main\n"
         "try:\n    main()\nexcept SystemExit:\n    pass\n"
         "sys.stderr.write('\\n' + json.dumps(sorted(m for m in sys.modules "
         "if m.split('.')[0] in ('rsrank', 'sklearn', 'scipy', 'numba'))))\n")


def run(argv, root):
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True,
                          cwd=root)
    return time.perf_counter() - start, json.loads(done.stderr.strip().splitlines()[-1])


def timed(argv, root, repeats):
    best, modules = min(run(argv, root) for _ in range(repeats))
    return {"seconds": best, "rsrank_modules": sum(m.split(".")[0] == "rsrank" for m in modules),
            "heavy": sorted({m.split(".")[0] for m in modules} & set(HEAVY))}


def bare(code, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        times.append(time.perf_counter() - start)
    return min(times)


def checkout(commit, into):
    archive = subprocess.run(["git", "archive", commit, "rsrank"], cwd=REPO, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)
    return into


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--before", default=None, help="a commit to time beside this code")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        roots = {"now": str(REPO)}
        if args.before:
            roots[f"at {args.before[:12]}"] = checkout(args.before, scratch)
        rows = {label: {root: timed(argv, path, args.repeats) for root, path in roots.items()}
                for label, argv in COMMANDS.items()}
    peers = {"python -c pass": bare("pass", args.repeats),
             "import numpy, scipy, sklearn, numba": bare(
                 "import numpy, scipy.sparse, sklearn.base, numba", args.repeats)}
    lines = ["# How long `rsrank` takes to start", "",
             f"`{command_line()}`: each "
             "command in a fresh interpreter, the fastest of "
             f"{args.repeats} runs; the modules it imported; peers in the same run.", "",
             "| command | code | seconds | x bare python | rsrank modules | scikit-learn, SciPy "
             "or numba imported |", "|---|---|---|---|---|---|"]
    base = peers["python -c pass"]
    for label, by_root in rows.items():
        for root, row in by_root.items():
            lines.append(f"| `{label}` | {root} | {row['seconds']:.3f} | "
                         f"{row['seconds'] / base:.1f} | {row['rsrank_modules']} | "
                         f"{', '.join(row['heavy']) or 'none'} |")
    for label, seconds in peers.items():
        lines.append(f"| `{label}` (peer) | - | {seconds:.3f} | {seconds / base:.1f} | - | - |")
    write_report(args.out, "cli_start", {"commands": rows, "peers": peers,
                                         "repeats": args.repeats}, "\n".join(lines))


if __name__ == "__main__":
    main()
