"""The walks of the training data through the code: stops, rooms and climbs.

    python scripts/walk_of_x.py [--out results] [--name walk_of_x] [--before COMMIT]

Traces (``sys.setprofile``) every call of a Python function of ``rsrank``
that is given the training data, while

* ``RSRank().fit(X, y, qid=qid)`` trains on the bundled data's Fold 1
  (``X`` a dense float64 array);
* ``RSRank().fit(X, y, qid=qid, eval_set=...)`` does (the step chosen
  among three on the validation queries);
* ``RSRankCV().fit(X, y, qid=qid, eval_set=...)`` walks its path;
* ``rsrank train`` runs on the bundled data with ``--folds 1``.

"The training data" starts as ``X`` (for ``rsrank train``: the path of the
training file) and grows with its copies: an array or sparse matrix of its
shape that a call carrying the data returns or keeps (the rows in query
order, the parsed file, a float32 copy). A value carries the data when it
shares memory with one of them, or holds one (a ``QueryData``, rows, a
tuple, dict or fold).
A **stop** is a function that receives the data (each counted once); a
**room** is a module with a stop; a **climb** is a call that carries the
data from a module up to one that imports it (directly or not): a callback
or a lower floor calling back into a higher one; a **re-entry** is a call of
a stop already on the call stack (a fit that calls a fit). numba kernels are not
Python frames and are not counted. The module graph is the one of
``scripts/module_map.py``.
"""

import argparse
import ast
import sys
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from _bench import command_line, write_report
from _code import PACKAGE, module_name, package_imports, report_at

ROOT = str(PACKAGE)
#: where the parameters become objects (objective, penalty, solver): the
#: pipeline's setup (in its room since the package has rooms), and
#: RSRank.solver() before there was one
SETUPS = {"fitting": ("setup",), "learning.fitting": ("setup",), "estimator": ("RSRank.solver",)}
#: where an estimator (an RSRank face, a clone included) is made
FACES = {"estimator": ("RSRank.__init__",)}


def import_graph():
    """Per module, the package modules it imports, directly or not."""
    direct = {}
    for path in PACKAGE.rglob("*.py"):
        module = module_name(path)
        direct[module] = set(package_imports(ast.parse(path.read_text()), module))
    closed = {}

    def reach(module, seen):
        for child in direct.get(module, ()):
            if child not in seen:
                seen.add(child)
                reach(child, seen)
        return seen
    for module in direct:
        closed[module] = reach(module, set())
    return closed


class Walk:
    """The tracer: which calls carry the data, and where they go."""

    def __init__(self, seed, shape, graph):
        self.arrays, self.path, self.shape, self.graph = [], None, shape, graph
        self.learn(seed)
        self.stops, self.calls, self.climbs, self.reentries = {}, 0, [], []
        self.setups = self.faces = 0

    def learn(self, value, depth=0):
        """Remember the copies of the data in ``value``: a 2-D array or a
        sparse matrix of its shape (a reordered or converted copy), also
        inside tuples, dicts and the package's objects."""
        if isinstance(value, str):
            self.path = self.path or value
        elif isinstance(value, np.ndarray):
            if value.ndim == 2 and value.shape == self.shape and not self.carries(value):
                self.arrays.append(value)
        elif sp.issparse(value):
            if value.shape == self.shape and not self.carries(value):
                self.arrays.append(value.data)
        elif depth < 3 and isinstance(value, (tuple, list)):
            for item in value[:8]:
                self.learn(item, depth + 1)
        elif depth < 3 and isinstance(value, dict):
            for item in list(value.values())[:16]:
                self.learn(item, depth + 1)
        elif depth < 3 and type(value).__module__.startswith(("rsrank", "sklearn.utils")):
            for item in list(getattr(value, "__dict__", {}).values())[:16]:
                self.learn(item, depth + 1)

    def carries(self, value, depth=0):
        if isinstance(value, str):
            return value == self.path
        if isinstance(value, np.ndarray):
            return value.size > 0 and any(np.may_share_memory(value, a) for a in self.arrays)
        if sp.issparse(value):
            return self.carries(getattr(value, "data", None), depth)
        if depth >= 3 or value is None or isinstance(value, (int, float, bool, bytes)):
            return False
        if isinstance(value, (tuple, list)):
            return any(self.carries(v, depth + 1) for v in value[:8])
        if isinstance(value, dict):
            return any(self.carries(v, depth + 1) for v in list(value.values())[:16])
        inner = getattr(value, "__dict__", None)
        if inner is not None and type(value).__module__.startswith(("rsrank", "sklearn.utils")):
            return any(self.carries(v, depth + 1) for v in list(inner.values())[:16])
        return False

    def arguments(self, frame):
        code = frame.f_code
        names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
        return [frame.f_locals[name] for name in names if name in frame.f_locals]

    def __call__(self, frame, event, arg):
        filename = frame.f_code.co_filename
        if not filename.startswith(ROOT):
            return
        if event == "call":
            if frame.f_code.co_qualname in SETUPS.get(module_name(filename), ()):
                self.setups += 1
            if frame.f_code.co_qualname in FACES.get(module_name(filename), ()):
                self.faces += 1
            if not any(self.carries(v) for v in self.arguments(frame)):
                return
            module = module_name(filename)
            stop = f"{module}.{frame.f_code.co_qualname}"
            self.calls += 1
            self.stops.setdefault(stop, module)
            above = frame.f_back
            while above is not None:
                if above.f_code is frame.f_code:  # the walk comes back through a stop
                    self.reentries.append(stop)
                    break
                above = above.f_back
            caller = frame.f_back
            while caller is not None and not caller.f_code.co_filename.startswith(ROOT):
                caller = caller.f_back
            if caller is not None:
                below = module_name(caller.f_code.co_filename)
                if below != module and below in self.graph.get(module, ()):
                    self.climbs.append(f"{below}.{caller.f_code.co_qualname} -> {stop}")
        elif event == "return" and any(self.carries(v) for v in self.arguments(frame)):
            # what a carrying call made: its result, and copies it kept (self.X = ...)
            self.learn(arg)
            for value in frame.f_locals.values():
                self.learn(value)

    def summary(self):
        rooms = sorted(set(self.stops.values()))
        return {"stops": list(self.stops), "n_stops": len(self.stops), "rooms": rooms,
                "n_rooms": len(rooms), "climbs": sorted(set(self.climbs)),
                "n_climbs": len(set(self.climbs)), "calls": self.calls,
                "reentries": sorted(set(self.reentries)), "n_reentries": len(self.reentries),
                "setups": self.setups, "faces": self.faces}


def traced(seed, shape, run):
    walk = Walk(seed, shape, import_graph())
    sys.setprofile(walk)
    try:
        run()
    finally:
        sys.setprofile(None)
    return walk.summary()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--name", default="walk_of_x")
    parser.add_argument("--before", metavar="COMMIT",
                        help="also walk the package as it was at COMMIT, side by side")
    args = parser.parse_args(argv)
    before = report_at(args.before, "walk_of_x.py")["walks"] if args.before else None
    warnings.simplefilter("ignore")
    from rsrank import RSRank, RSRankCV, load_letor
    from rsrank.cli import main as cli
    from rsrank.reading.datasets import bundled_data_path

    fold = Path(bundled_data_path()) / "Fold1"
    X, y, qid = load_letor(fold / "train.txt.gz")
    X = X.toarray()
    vali = load_letor(fold / "vali.txt.gz")
    RSRank(max_iter=2).fit(X, y, qid=qid)  # compiled before the walks
    walks = {
        "RSRank().fit(X, y, qid=qid)": traced(X, X.shape, lambda: RSRank().fit(X, y, qid=qid)),
        "RSRank().fit(X, y, qid=qid, eval_set=vali)": traced(
            X, X.shape, lambda: RSRank().fit(X, y, qid=qid, eval_set=vali)),
        "RSRankCV().fit(X, y, qid=qid, eval_set=vali)": traced(
            X, X.shape, lambda: RSRankCV().fit(X, y, qid=qid, eval_set=vali)),
        "rsrank train --folds 1": traced(
            str(fold / "train.txt.gz"), X.shape,
            lambda: cli(["train", str(fold.parent), "--folds", "1", "--quiet"])),
    }
    lines = ["# The walks of the training data through the code", "",
             f"`{command_line()}`: every Python function of `rsrank` that receives the "
             "training data (or what is made from it) is a stop, each module with a stop a "
             "room, and each call that carries the data up to a module that imports the "
             "caller's (a callback, or a lower floor calling a higher one) a climb. numba "
             "kernels are not Python frames and are not counted. A re-entry is a call of a "
             "stop that is already on the call stack (the walk coming back up through a "
             "function it passed: a fit that calls a fit). The last columns count the "
             "times the parameters became objects (`fitting.setup`, before it "
             "`RSRank.solver`) and the estimators made (`RSRank.__init__`: faces of fits, "
             "and clones).", "",
             "| walk | stops | rooms | climbs | re-entries | calls | parameters made objects "
             "| estimators made |",
             "|---|---|---|---|---|---|---|---|"]
    columns = ("n_stops", "n_rooms", "n_climbs", "n_reentries", "calls", "setups", "faces")
    for name, walk in walks.items():
        cells = [str(walk[c]) for c in columns]
        if before is not None and name in before:
            cells = [f"{before[name].get(c, '-')} → {walk[c]}" for c in columns]
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    if before is not None:
        lines += ["", f"Each cell: at commit `{args.before}` → now."]
    for name, walk in walks.items():
        lines += ["", f"## `{name}`", "", "Rooms: " + ", ".join(f"`{r}`" for r in walk["rooms"]),
                  "", "Stops, in the order first reached: " + " → ".join(
                      f"`{s}`" for s in walk["stops"]), ""]
        lines.append("Climbs: " + ("; ".join(f"`{c}`" for c in walk["climbs"]) or "none"))
        lines += ["", "Re-entered: " + (", ".join(f"`{c}`" for c in walk["reentries"])
                                        or "none")]
    write_report(args.out, args.name, {"command": command_line(), "walks": walks,
                                       "before": {"commit": args.before, "walks": before}},
                 "\n".join(lines))
    for name, walk in walks.items():
        print(f"{name}: {walk['n_stops']} stops, {walk['n_rooms']} rooms, "
              f"{walk['n_climbs']} climbs, {walk['n_reentries']} re-entries")


if __name__ == "__main__":
    main()
