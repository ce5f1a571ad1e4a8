"""Where the time of one ``rsrank train`` goes, stage by stage, on the files
``scripts/bench_end_to_end.py --data DIR`` writes (MSLR-WEB30K's shape).

    python scripts/profile_stages.py --data DIR [--flags "--additive --interactions 10"]
        [--name stages] [--out results]

Runs ``rsrank train --train DIR/train.txt --vali DIR/vali.txt --test
DIR/test.txt --quiet FLAGS`` in this process and charges each second to the
innermost stage running then, so the stages add up to the wall time:

- **outside the fold**: reading the files, starting the run, evaluating on
  test and writing the results (everything outside ``fit_and_select``);
- the fold's **path** (on a sample of the training queries when they hold
  more than ``--path-rows``) and the **refit** of its choice on all rows
  (``refit_on_all``), each split into
  - **penalized fits** and **unpenalized fits** (relaxed refits, the path's
    point at strength 0), with their epochs and rows;
  - the **pair search** (kinds with pairs): its additive fit, its gains
    (``top_pairs``), its grids (``pair_grids``) and the rest (the rows it
    reads, the pair gradients);
  - **bin codes**: the thresholds and codes of each training set;
  - the **rest**: the path's edges, scoring every fit on vali, the
    selection.

Each stage also gets the highest resident memory of the process while it
ran (VmHWM, started afresh at each stage's start and end through Linux's
``/proc/self/clear_refs``; a column of dashes where the kernel refuses):
where the run's peak memory is reached, and what the stages around it hold.

The wrapped functions are reached through ``_bench.set_internal`` (its
allow-list names each); nothing else changes, so the run fits the same
models as ``rsrank train`` does. Writes ``NAME.md`` and ``NAME.json`` into
``--out``.
"""

import argparse
import shlex
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from _bench import command_line, internal, peak_rss_bytes, set_internal, write_report

#: the stage of what runs outside ``fit_and_select``
OUTSIDE = ("", "outside the fold (reading, test, writing)")


def restart_high_water():
    """Start this process's VmHWM afresh from its resident memory now;
    False where the kernel refuses (not Linux, or no such file)."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        return False
    return True

class Clock:
    """Charges the time of each wrapped call, less the wrapped calls inside
    it, to its stage; the phase is the refit once ``refit_on_all`` is on
    the stack, else the path."""

    def __init__(self):
        self.stack, self.seconds, self.calls = [], defaultdict(float), defaultdict(int)
        self.epochs, self.rows = defaultdict(int), defaultdict(set)
        self.peak, self.resets = defaultdict(int), restart_high_water()

    def charge_peak(self, key):
        """The resident memory's high-water mark since the last charge, to
        ``key``'s stage; the mark then starts afresh."""
        self.peak[key] = max(self.peak[key], peak_rss_bytes())
        self.resets = restart_high_water() and self.resets

    def phase(self):
        return ("refit on all rows" if "refit_on_all" in (n for n, _, _ in self.stack)
                else "path")

    def timed(self, name, stage, function):
        def run(*args, **kwargs):
            self.charge_peak(self.stack[-1][2] if self.stack else OUTSIDE)
            self.stack.append((name, [0.0], None))
            key = (self.phase(), self.stage(name, stage, args))
            self.stack[-1] = (name, self.stack[-1][1], key)
            start = time.perf_counter()
            try:
                result = function(*args, **kwargs)
            finally:
                spent = time.perf_counter() - start
                self.charge_peak(key)
                _, inner, _ = self.stack.pop()
                if self.stack:
                    self.stack[-1][1][0] += spent
            self.seconds[key] += spent - inner[0]
            self.calls[key] += 1
            if name == "fit_source":
                self.epochs[key] += int(result.n_iter)
                self.rows[key].add(int(getattr(args[1].data_source, "n_rows", 0) or 0))
            return result
        return run

    def stage(self, name, stage, args):
        if name == "fit_source":
            if any(n == "pair_search" for n, _, _ in self.stack):
                return "pair search: its additive fit"
            penalty = args[0].solver.penalty
            return "penalized fits" if penalty.l1 or penalty.group else "unpenalized fits"
        return stage


def _split(directory, split):
    """``directory``'s file of ``split``: ``split.txt``, else ``split.txt.gz``."""
    plain = directory / f"{split}.txt"
    packed = plain.with_suffix(".txt.gz")
    return str(packed if not plain.exists() and packed.exists() else plain)



def _timed_coding(clock, cls):
    """A subclass of the encoding ``cls`` whose ``coded`` is charged to the
    bin codes: still a class, which querydata also builds encodings from."""
    return type(cls.__name__, (cls,), {
        "coded": staticmethod(clock.timed(cls.__name__, "bin codes", cls.coded))})

def profile(directory, flags):
    """``(clock, wall seconds)`` of one ``rsrank train`` on ``directory``'s files."""
    from rsrank.cli import main as rsrank_main
    from rsrank.learning.binning import PairEncoding, StepEncoding

    clock = Clock()  # the wrapped functions stay wrapped for the rest of this process
    set_internal("evaluation.experiments", "fit_and_select", clock.timed(
        "fit_and_select", "rest", internal("evaluation.experiments", "fit_and_select")))
    set_internal("evaluation.experiments", "refit_on_all", clock.timed(
        "refit_on_all", "rest", internal("evaluation.experiments", "refit_on_all")))
    set_internal("learning.fitting", "fit_source", clock.timed(
        "fit_source", "fits", internal("learning.fitting", "fit_source")))
    set_internal("learning.fitting", "pair_search", clock.timed(
        "pair_search", "pair search: the rest", internal("learning.fitting", "pair_search")))
    set_internal("learning.fitting", "top_pairs", clock.timed(
        "top_pairs", "pair search: gains", internal("learning.fitting", "top_pairs")))
    set_internal("learning.fitting", "pair_grids", clock.timed(
        "pair_grids", "pair search: grids", internal("learning.fitting", "pair_grids")))
    # the classes querydata makes and codes with, their coding timed
    set_internal("reading.querydata", "StepEncoding", _timed_coding(clock, StepEncoding))
    set_internal("reading.querydata", "PairEncoding", _timed_coding(clock, PairEncoding))
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        files = [item for split in ("train", "vali", "test")
                 for item in (f"--{split}", _split(directory, split))]
        code = rsrank_main(["train", *files, "--out", str(Path(out) / "run"), "--quiet", *flags])
        wall = time.perf_counter() - start
        clock.charge_peak(OUTSIDE)
    if code:
        raise SystemExit(f"rsrank train exited with {code}")
    return clock, wall


def _mib(clock, key):
    """A stage's peak memory in MiB, or a dash where the peaks could not
    be started afresh (every stage would show the run's peak so far)."""
    return f"{clock.peak[key] / 2**20:,.0f} MiB" if clock.resets and key in clock.peak else "-"


def markdown(clock, wall, command, flags):
    inside = sum(clock.seconds.values())
    rows = sorted(clock.seconds.items(), key=lambda item: (item[0][0] != "path", -item[1]))
    lines = [f"# Where `rsrank train {' '.join(flags)}` spends its time", "",
             f"Command: `{command}`", "",
             "Each second is charged to the innermost stage running then (see the script's "
             "docstring), so the stages add up to the wall time.", "",
             "The peak memory of a stage is the process's highest resident memory while it "
             "ran (what earlier stages left included).", "",
             "| phase | stage | seconds | share of the wall time | calls | epochs | rows | "
             "peak memory |",
             "|---|---|---|---|---|---|---|---|",
             f"| | {OUTSIDE[1]} | {wall - inside:.1f} | "
             f"{(wall - inside) / wall:.2f} | | | | {_mib(clock, OUTSIDE)} |"]
    for (phase, stage), seconds in rows:
        key = (phase, stage)
        rows_seen = ", ".join(f"{n:,}" for n in sorted(clock.rows[key])) or ""
        lines.append(f"| {phase} | {stage} | {seconds:.1f} | {seconds / wall:.2f} | "
                     f"{clock.calls[key]} | {clock.epochs[key] or ''} | {rows_seen} | "
                     f"{_mib(clock, key)} |")
    top = max(clock.peak.values(), default=0)
    lines += [f"| | **all** | **{wall:.1f}** | 1.00 | | | | **{top / 2**20:,.0f} MiB** |", ""]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True,
                        help="a directory of train.txt, vali.txt and test.txt (or .txt.gz)")
    parser.add_argument("--flags", default="--additive --interactions 10",
                        help="the flags of rsrank train beside the files")
    parser.add_argument("--name", default="stages")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "results"))
    args = parser.parse_args(argv)
    flags = shlex.split(args.flags)
    clock, wall = profile(Path(args.data), flags)
    command = command_line()
    report = {"command": command, "flags": flags, "wall_s": wall,
              "peaks_by_stage": clock.resets,
              "peak_rss_bytes": {" / ".join(key).strip(" /"): peak
                                 for key, peak in clock.peak.items()},
              "stages": [{"phase": phase, "stage": stage, "seconds": seconds,
                          "calls": clock.calls[(phase, stage)],
                          "epochs": clock.epochs[(phase, stage)],
                          "rows": sorted(clock.rows[(phase, stage)])}
                         for (phase, stage), seconds in clock.seconds.items()]}
    text = markdown(clock, wall, command, flags)
    write_report(args.out, args.name, report, text)
    print(text)
    return 0
