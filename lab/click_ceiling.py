"""How much of the gap from naive click training to the better skyline the
labels of the shown documents themselves close, beside the debiased path,
read from the click studies' committed results (``click_study.py``'s
JSON files; nothing is trained).

A learner of the shown documents' clicks sees no more than their labels
tell: where ``rsrank train`` on the expert labels of exactly those
documents (``skyline-shown``) closes little of the gap to the ranker
trained on every training document's label (``skyline``), the rest of the
gap is in documents that the log never showed.

    python scripts/click_ceiling.py [--studies clicks_lists ...] [--out results]
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import command_line, write_report  # noqa: E402
from _click_models import pooled  # noqa: E402

STUDIES = ("clicks_lists", "clicks_lists_ohsumed", "clicks_lists_generated",
           "clicks_other_simulators")


def closures(runs):
    """Per (dataset, log) where the better skyline is above naive: the
    share of that gap closed by the debiased path and by the shown
    documents' labels."""
    groups = {}
    for run in runs:
        groups.setdefault((run["dataset"], run["log"]), []).append(run)
    rows = []
    for (dataset, log), group in groups.items():
        means = {m: float(pooled(group, m).mean())
                 for m in ("naive", "debiased", "skyline-shown", "skyline")}
        gap = max(means["skyline"], means["skyline-shown"]) - means["naive"]
        if gap > 0:
            rows.append((dataset, log, gap, (means["debiased"] - means["naive"]) / gap,
                         (means["skyline-shown"] - means["naive"]) / gap))
    return rows


def summarize(found):
    lines = ["| study | data | logs | gap (mean) | closed by debiased | closed by the shown "
             "documents' labels |", "|---|---|---|---|---|---|"]
    every = []
    for study, rows in found.items():
        for dataset in dict.fromkeys(r[0] for r in rows):
            mine = [r for r in rows if r[0] == dataset]
            every.extend(mine)
            lines.append(f"| {study} | {dataset} | {len(mine)} | "
                         f"{np.mean([r[2] for r in mine]):.4f} | "
                         f"{np.mean([r[3] for r in mine]):.2f} | "
                         f"{np.mean([r[4] for r in mine]):.2f} |")
    lines.append("")
    for label, keep in (("real sets", lambda r: r[0] != "many-grades"),
                        ("generated", lambda r: r[0] == "many-grades"), ("all", lambda r: True)):
        mine = [r for r in every if keep(r)]
        if mine:
            lines.append(f"- {label}, {len(mine)} logs: debiased closes "
                         f"{np.mean([r[3] for r in mine]):.2f} of the gap, the shown "
                         f"documents' labels {np.mean([r[4] for r in mine]):.2f}.")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", nargs="+", default=list(STUDIES))
    parser.add_argument("--results", default=str(Path(__file__).resolve().parent.parent
                                                  / "results"))
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    found = {study: closures(json.loads((Path(args.results) / f"{study}.json").read_text())
                             ["runs"]) for study in args.studies}
    text = summarize(found)
    print(text)
    if args.out:
        write_report(args.out, "clicks_ceiling", {"command": command_line(argv),
                                                 "studies": {s: [list(r) for r in rows]
                                                             for s, rows in found.items()}},
                     text)


if __name__ == "__main__":
    main()
