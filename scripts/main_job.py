"""The main job's tables, now and at an earlier commit, compared to the last digit.

    python scripts/main_job.py [--out results] [--name main_job] [--before COMMIT]

Runs ``rsrank train`` and ``rsrank train --additive`` on the bundled data
(the README's main job and its additive twin) in fresh processes and keeps
what they print. With ``--before``, the same commands run on the package as
it was at ``COMMIT`` (a temporary git worktree), and every line that
differs is listed: a refactoring that keeps every behaviour lists none.
"""

import argparse
import difflib
import subprocess
import sys

from _bench import command_line, write_report
from _code import report_at

JOBS = {"rsrank train": ["train"], "rsrank train --additive": ["train", "--additive"]}


def run(argv):
    done = subprocess.run([sys.executable, "-m", "rsrank", *argv], capture_output=True,
                          text=True, check=True)
    # the first line names the data directory, which depends on the checkout
    return done.stdout.splitlines()[1:]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--name", default="main_job")
    parser.add_argument("--before", metavar="COMMIT",
                        help="also run the jobs on the package as it was at COMMIT")
    args = parser.parse_args(argv)
    outputs = {name: run(job) for name, job in JOBS.items()}
    before = report_at(args.before, "main_job.py")["outputs"] if args.before else None
    lines = ["# The main job, to the last digit", "", f"`{command_line()}`", ""]
    for name, output in outputs.items():
        lines += [f"## `{name}`", ""]
        if before is not None:
            changed = [line for line in difflib.unified_diff(before[name], output, lineterm="",
                                                             n=0)
                       if line[:1] in "+-" and not line.startswith(("+++", "---"))]
            lines += [f"At commit `{args.before}` and now: "
                      + ("the same, line for line." if not changed else
                         f"{len(changed)} lines differ:"), ""]
            if changed:
                lines += ["```", *changed, "```", ""]
        lines += output + [""]
    write_report(args.out, args.name, {"command": command_line(), "outputs": outputs,
                                       "before": {"commit": args.before, "outputs": before}},
                 "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
