"""The main job's tables and every kind's weights, now and at an earlier commit, compared to the last digit.

    python scripts/main_job.py [--out results] [--name main_job] [--before COMMIT]

Runs ``rsrank train`` and ``rsrank train --additive`` on the bundled data
(the README's main job and its additive twin) in fresh processes and keeps
what they print, and fits ``RSRank`` of every kind (with a penalty, feature
costs, monotone directions and excluded features among them) on Fold1 of
the bundled data and of OHSUMED, early stopped on vali, keeping a digest of
each model's weights. With ``--before``, the same runs on the package as it
was at ``COMMIT`` (a temporary git worktree), and every line or digest that
differs is listed: a refactoring that keeps every behaviour lists none.
"""

import argparse
import difflib
import hashlib
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
from _bench import SHARED_DATA, command_line, write_report
from _code import report_at

from rsrank import RSRank, load_letor_fold
from rsrank.datasets import bundled_data_path  # its short name: --before runs it on older trees

JOBS = {"rsrank train": ["train"], "rsrank train --additive": ["train", "--additive"]}

#: the fits whose weights are compared, by name: RSRank's parameters
MODELS = {
    "linear": {},
    "linear, curvature step, l1": {"learning_rate": "curvature", "l1": 1e-3},
    "linear, costs, monotone, exclude": {"feature_costs": {0: 2.0, 3: 0.5}, "monotone": {1: 1},
                                         "exclude": [2], "l1": 1e-3, "truncation_period": 1},
    "additive": {"additive": True, "max_iter": 30},
    "additive, group penalty, relaxed": {"additive": True, "l1_group": 1e-3, "max_iter": 30,
                                         "relax": True},
    "interactions": {"additive": True, "interactions": 3, "max_iter": 30},
    "interactions, costs, auto step, relaxed": {
        "additive": True, "interactions": 2, "max_iter": 20, "l1_group": 1e-3, "relax": True,
        "feature_costs": {0: 2.0}, "learning_rate": "auto"},
}


def model_digests(shared):
    """Per data set and :data:`MODELS` entry: the epochs run and the first
    16 hex digits of the SHA-256 of the model's weights."""
    roots = {"bundled": bundled_data_path(), "OHSUMED": Path(shared) / "OHSUMED"}
    out = {}
    for data, root in roots.items():
        fold = load_letor_fold(root, 1)
        for name, params in MODELS.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fitted = RSRank(random_state=0, **params).fit(*fold.train[:2], qid=fold.train[2],
                                                              eval_set=fold.vali)
            weights = np.ascontiguousarray(fitted.model_.coef, dtype=np.float64).tobytes()
            out[f"{data}: {name}"] = (f"{fitted.n_iter_} epochs, "
                                      f"{hashlib.sha256(weights).hexdigest()[:16]}")
    return out


def run(argv):
    done = subprocess.run([sys.executable, "-m", "rsrank", *argv], capture_output=True,
                          text=True, check=True)
    # the first line names the data directory, which depends on the checkout
    return done.stdout.splitlines()[1:]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--name", default="main_job")
    parser.add_argument("--shared", default=str(SHARED_DATA), help="the shared data "
                        "directory, which holds OHSUMED (default: ../shared/data)")
    parser.add_argument("--before", metavar="COMMIT",
                        help="also run the jobs on the package as it was at COMMIT")
    args = parser.parse_args(argv)
    outputs = {name: run(job) for name, job in JOBS.items()}
    models = model_digests(args.shared)
    report = (report_at(args.before, "main_job.py", "--shared", args.shared) if args.before
              else None)
    before = report["outputs"] if report else None
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
    lines += ["## Every kind's weights (`RSRank().fit` on Fold1, early stopped on vali)", "",
              "| data: fit | now |" + (f" at `{args.before}` |" if report else ""),
              "|---|---|" + ("---|" if report else "")]
    for name, digest in models.items():
        lines.append(f"| {name} | {digest} |" + (
            f" {'the same' if report['models'].get(name) == digest else report['models'].get(name)} |"
            if report else ""))
    write_report(args.out, args.name, {"command": command_line(), "outputs": outputs,
                                       "models": models,
                                       "before": {"commit": args.before, "outputs": before,
                                                  "models": report and report["models"]}},
                 "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
