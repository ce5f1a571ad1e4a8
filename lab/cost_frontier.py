"""The cost frontier on OHSUMED's fold 1: the linear and the additive path
with a cost per feature by the text it is computed on.

    python scripts/cost_frontier.py [--root ../shared/data/OHSUMED] [--out results/cost_frontier]

Runs ``rsrank path ROOT --fold 1 [--additive] --learning-rate curvature
--feature-costs OUT/ohsumed_costs.txt --out OUT/KIND --force`` for each kind
and ends each ``OUT/KIND/path.md`` with the footer of every results page (the
commit, the machine, the versions and this command), so the page dates
itself. The costs file is the study's input and stays as it is.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

from _bench import REPO, SHARED_DATA, provenance, stamp_markdown

KINDS = {"linear": [], "additive": ["--additive"]}


def run_path(root, out, kind):
    """``rsrank path`` for one kind, written to ``out/kind``. It runs in the
    repository with the paths relative to it, so that the command its page
    records names no directory of the machine that ran it."""
    root, out = (os.path.relpath(Path(p).resolve(), REPO) for p in (root, out))
    costs = Path(out) / "ohsumed_costs.txt"
    command = [sys.executable, "-m", "rsrank.cli", "path", str(root), "--fold", "1",
               *KINDS[kind], "--learning-rate", "curvature", "--feature-costs", str(costs),
               "--out", str(Path(out) / kind), "--force"]
    subprocess.run(command, check=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    return REPO / out / kind / "path.md"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(SHARED_DATA / "OHSUMED"))
    parser.add_argument("--out", default=str(REPO / "results" / "cost_frontier"))
    parser.add_argument("--kinds", default=",".join(KINDS))
    args = parser.parse_args()
    footer = stamp_markdown(provenance())
    for kind in args.kinds.split(","):
        page = run_path(args.root, args.out, kind)
        page.write_text(page.read_text().rstrip("\n") + "\n" + footer)
        print(f"wrote {page}")


if __name__ == "__main__":
    main()
