"""The wheel carries the bundled dataset: installed into a fresh virtual
environment, ``rsrank train`` runs from a directory outside the source tree."""

import os
import subprocess
import sys
import sysconfig
import venv
import warnings
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]


def run(command, **options):
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, **options)
    assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
    return done


@pytest.mark.slow
def test_wheel_installs_and_trains_outside_the_source_tree(tmp_path):
    wheels = tmp_path / "wheels"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
         "-w", str(wheels), str(REPO)])
    wheel = next(wheels.glob("rsrank-*.whl"))
    import zipfile

    with zipfile.ZipFile(wheel) as archive:  # pyproject says MIT: the text travels with it
        assert "MIT License" in archive.read("rsrank-0.1.0.dist-info/licenses/LICENSE").decode()
    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(target)
    python = target / "bin" / "python"
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--quiet", str(wheel)])
    # the dependencies (numpy, numba, ...) come from this environment's site-packages,
    # added after the new environment's own: rsrank itself is the wheel's
    site = run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    Path(site.stdout.strip(), "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    work = tmp_path / "elsewhere"
    work.mkdir()
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = run([str(python), "-c", "import rsrank; print(rsrank.__file__)"], cwd=work,
                env=environment)
    assert str(target) in where.stdout
    done = run([str(target / "bin" / "rsrank"), "train", "--max-iter", "3", "--folds", "1,2",
                "--quiet"], cwd=work, env=environment)
    assert "| mean ± std |" in done.stdout and "rsrank/data/synthetic" in done.stdout
    # the fetch registry travels with it, and fetched data goes to the user's home
    listed = run([str(target / "bin" / "rsrank"), "fetch", "--list"], cwd=work,
                 env={**environment, "HOME": str(tmp_path)})
    assert "OHSUMED" in listed.stdout and str(tmp_path / "rsrank_data") in listed.stdout


def test_every_module_compiles_without_a_warning():
    """A fresh interpreter (a worker, a first run) compiles the sources and
    would print a SyntaxWarning, such as an invalid escape in a docstring,
    on the user's terminal."""
    sources = sorted((REPO / "rsrank").rglob("*.py")) + sorted((REPO / "lab").glob("*.py"))
    sources += sorted((REPO / "scripts").glob("*.py"))
    assert len(sources) > 20
    for path in sources:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            compile(path.read_text(encoding="utf-8"), str(path), "exec")


def test_scripts_import_only_their_helpers_and_public_names():
    """Studies stay drivers: a study imports the ``lab/_*.py`` helpers and
    public names of public ``rsrank`` modules, never another script and
    never a private module or name (``_bench.internal`` is the one door
    to the internals a benchmark measures, by its allow-list)."""
    import ast

    scripts = REPO / "lab"
    others = {path.stem for path in scripts.glob("*.py") if not path.stem.startswith("_")}
    found = []
    for path in sorted(scripts.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                parts = node.module.split(".")
                names = [alias.name for alias in node.names]
                if parts[0] == "rsrank" and (any(p.startswith("_") for p in parts)
                                             or any(n.startswith("_") and n != "__version__"
                                                    for n in names)):
                    found.append(f"{path.name}: from {node.module} import {', '.join(names)}")
                if parts[0] in others:
                    found.append(f"{path.name}: imports the script {node.module}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    if (parts[0] == "rsrank" and any(p.startswith("_") for p in parts)) \
                            or parts[0] in others:
                        found.append(f"{path.name}: import {alias.name}")
    assert found == []


#: the benchmarks and studies: every one is run as users run it and asked for its help
SCRIPTS = sorted((REPO / "lab").glob("[a-z]*.py"))


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda path: path.stem)
def test_every_benchmark_and_study_imports_and_shows_its_help(path, capsys, monkeypatch):
    """A study nothing runs still fails here when the code under it moves:
    ``python scripts/NAME.py --help`` (the command its results pages
    record) imports ``lab/NAME.py`` (every name it takes at import is
    there, and nothing runs), whose ``main`` reads ``--help`` and exits 0,
    without running."""
    import runpy

    monkeypatch.syspath_prepend(str(REPO / "scripts"))
    monkeypatch.setattr(sys, "argv", [f"scripts/{path.name}", "--help"])
    with pytest.raises(SystemExit) as exited:
        runpy.run_path(str(REPO / "scripts" / path.name), run_name="__main__")
    assert exited.value.code in (0, None)
    assert capsys.readouterr().out.startswith("usage:")
    sys.modules.pop(path.stem, None)


def test_scripts_holds_one_entry_per_study_and_nothing_else():
    """``scripts/`` is where benchmarks and studies are run from: one short
    entry per study of ``lab/``, each handing its command line over, and no
    code of its own."""
    entries = {path.name for path in (REPO / "scripts").glob("[a-z]*.py")}
    assert entries == {path.name for path in SCRIPTS}
    for name in entries:
        text = (REPO / "scripts" / name).read_text()
        assert text.rstrip().endswith("from _lab import run\n\nrun(__file__)"), name
        assert len(text.splitlines()) <= 10, name
    assert sum(len(path.read_text().splitlines())
               for path in (REPO / "scripts").glob("*.py")) < 1000


def test_the_scripts_reach_the_internals_only_by_the_allow_list_and_use_all_of_it():
    import ast
    import sys

    sys.path.insert(0, str(REPO / "lab"))
    try:
        from _bench import INTERNALS
    finally:
        sys.path.pop(0)
    used = set()
    for path in sorted((REPO / "lab").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("internal", "set_internal")):
                module, name = (arg.value for arg in node.args[:2])
                assert (module, name) in INTERNALS, f"{path.name}: {module}.{name}"
                used.add((module, name))
    assert used == set(INTERNALS)
    # and each is there: a study nothing runs would otherwise break on a moved name
    import importlib

    missing = [f"rsrank.{module}.{name}" for module, name in INTERNALS
               if not hasattr(importlib.import_module(f"rsrank.{module}"), name)]
    assert missing == []


def test_every_name_a_script_imports_exists():
    """A study that nothing runs still fails here when a name it imports
    from ``rsrank`` (or from a ``lab/_*.py`` helper) is renamed or
    removed: each is looked up where the script looks for it, without
    running the script (whose peers, LightGBM and XGBoost, the tests do not
    need)."""
    import ast
    import importlib

    scripts = REPO / "lab"
    helpers = {path.stem: {node.name if not isinstance(node, ast.Assign) else target.id
                           for node in ast.parse(path.read_text()).body
                           if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Assign))
                           for target in (node.targets if isinstance(node, ast.Assign)
                                          else [node])
                           if not isinstance(node, ast.Assign) or isinstance(target, ast.Name)}
               | {alias.asname or alias.name for node in ast.parse(path.read_text()).body
                  if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
               for path in scripts.glob("_*.py")}
    missing, checked = [], 0
    for path in sorted(scripts.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                root = node.module.split(".")[0]
                if root == "rsrank":
                    module = importlib.import_module(node.module)
                    lacking = [a.name for a in node.names if not hasattr(module, a.name)
                               and not _is_module(f"{node.module}.{a.name}")]
                elif root in helpers:
                    lacking = [a.name for a in node.names if a.name not in helpers[root]]
                else:
                    continue
                checked += len(node.names)
                missing += [f"{path.name}: {node.module}.{name}" for name in lacking]
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "rsrank":
                        importlib.import_module(alias.name)
                        checked += 1
    assert checked > 100 and missing == []


def _is_module(name):
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def test_each_room_lists_its_public_modules_and_their_short_names_are_the_same_modules():
    """``rsrank.ROOMS`` names every public module of each room, and the short
    name users import (``rsrank.metrics``) is the room's module itself, so
    code, pickles and patches written against either name meet one object."""
    import importlib
    import pickle

    from rsrank import ROOMS

    for room, held in ROOMS.items():
        on_disk = {p.stem for p in (REPO / "rsrank" / room).glob("*.py")
                   if not p.stem.startswith("_")}
        if room != "clicks":  # the clicks room holds modules that never had a short name
            assert on_disk == set(held), room
        for module in held:
            short = importlib.import_module(f"rsrank.{module}")
            assert short is importlib.import_module(f"rsrank.{room}.{module}")
            assert short.__name__ == short.__spec__.name == f"rsrank.{room}.{module}"
    from rsrank.metrics import ndcg_per_query
    from rsrank.evaluation.metrics import ndcg_per_query as same

    assert ndcg_per_query is same
    # a model pickled when the learning modules sat at the top still loads
    from rsrank.learning.model import LinearModel

    model = LinearModel(np.array([1.0, 0.0, -2.0]))
    old = pickle.dumps(model, protocol=0).replace(b"rsrank.learning.model", b"rsrank.model")
    assert b"rsrank.model\n" in old
    np.testing.assert_array_equal(pickle.loads(old).coef, model.coef)
    # a name no room holds is still an ordinary ImportError
    with pytest.raises(ImportError):
        importlib.import_module("rsrank.no_such_module")


def test_every_script_imports():
    """Every benchmark and study is at least imported (its top level run,
    not its main): a name it reaches at import that moved or went is caught
    here though nothing runs the study. One fresh process imports them all;
    the peers (LightGBM, XGBoost) are imported only where a study runs them."""
    probe = (
        "import importlib.util, sys\n"
        "from pathlib import Path\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "failed = []\n"
        "for path in sorted(Path(sys.argv[1]).glob('*.py')):\n"
        "    spec = importlib.util.spec_from_file_location('script_' + path.stem, path)\n"
        "    try:\n"
        "        spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
        "    except BaseException as error:\n"
        "        failed.append(f'{path.name}: {type(error).__name__}: {error}')\n"
        "print(len(list(Path(sys.argv[1]).glob('*.py'))))\n"
        "print('\\n'.join(failed))\n")
    done = run([sys.executable, "-c", probe, str(REPO / "lab")], cwd=REPO)
    count, *failed = done.stdout.splitlines()
    assert int(count) > 40
    assert [line for line in failed if line] == []


def test_a_script_imported_again_by_a_spawned_process_does_not_run(monkeypatch):
    """A process that multiprocessing spawns (each worker of the Dask
    cluster of ``scripts/bench_dask.py``) runs the script again as
    ``__mp_main__``: the entry makes ``lab/`` importable there and runs
    nothing, where it once ran the study again in every worker, and the
    cluster failed to start."""
    import types

    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import _lab
    finally:
        sys.path.pop(0)
    ran = []
    monkeypatch.setitem(sys.modules, "lab_probe", types.SimpleNamespace(main=lambda: ran.append(1)))
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != str(_lab.LAB)])
    entry = compile("run('scripts/lab_probe.py')", "scripts/lab_probe.py", "exec")
    exec(entry, {"__name__": "__mp_main__", "run": _lab.run})  # as spawn runs it
    assert ran == [] and str(_lab.LAB) in sys.path
    with pytest.raises(SystemExit):
        exec(entry, {"__name__": "__main__", "run": _lab.run})  # as the command runs it
    assert ran == [1]


def test_the_paper_studys_relaxed_frontier_refits_each_sparse_point_on_its_support(
        bundled_root, monkeypatch):
    """reproduce_paper's frontier refits every sparse point on its support
    from a copy of the fold with those columns: a fold became a dataclass
    and the copy, made as from a mapping, crashed the study after an hour
    of its run while ``--help`` still worked."""
    monkeypatch.syspath_prepend(str(REPO / "lab"))
    from _paper import rsrank_frontier_fold

    from rsrank.reading.datasets import load_letor_fold

    fold = load_letor_fold(bundled_root, 1)
    plain, relaxed = rsrank_frontier_fold(fold, {"max_iter": 5}, 0, [0.5, 0.05])
    assert len(plain) == 2 and relaxed
    assert all(0 < point["n_nonzero"] < fold.train[0].shape[1] for point in relaxed)
    sys.modules.pop("_paper", None)


def test_a_study_against_a_report_made_with_before_compares_with_that_reports_runs(tmp_path,
                                                                                 monkeypatch):
    """``recipe_study.py --before FILE`` sets each method beside the same
    method of FILE's runs. FILE made with ``--before`` itself holds its own
    baseline as ``before:METHOD``: that is not FILE's run and is not taken
    (it was, as ``before:before:METHOD``, and its column compared FILE with
    its own baseline)."""
    import json

    monkeypatch.syspath_prepend(str(REPO / "lab"))
    import recipe_study as study

    def slot(values, kept):
        return {"per_query": values, "mean": sum(values) / len(values), "n_queries": len(values),
                "mean_nonzero": kept}

    older = {"table": {"toy": {"seeds": 1, "methods": {
        "cli": slot([0.5, 0.7], 3.0), "before:cli": slot([0.1, 0.1], 9.0)}}}}
    (tmp_path / "older.json").write_text(json.dumps(older))
    table = {"toy": {"seeds": 1, "methods": {"cli": slot([0.6, 0.7], 2.0)}}}
    study.add_before(table, tmp_path / "older.json")
    assert sorted(table["toy"]["methods"]) == ["before:cli", "cli"]
    assert table["toy"]["methods"]["before:cli"]["per_query"] == [0.5, 0.7]
    lines = study.against_before(table)
    assert lines[-3] == "| data | cli |"
    assert lines[-1].startswith("| toy | +0.0500 (p=") and lines[-1].endswith("3.0 / 2.0 |")
    sys.modules.pop("recipe_study", None)


def test_the_recipe_study_reports_the_mean_features_beside_the_mean_ndcg(monkeypatch):
    """The guide quotes a study's mean over its datasets, of the test NDCG@10
    and of the features kept: both are in the page's last table row (the
    mean of the rows above it), and a method without feature counts (a tree
    ensemble's) gets none."""
    monkeypatch.syspath_prepend(str(REPO / "lab"))
    import recipe_study

    def result(values, nonzero):
        return {"values": values, "seconds": 1.0,
                "info": [] if nonzero is None else [{"nonzero": n} for n in nonzero]}

    runs = [("raw", 0, 5, {"cli": result([0.5, 0.7], [2, 4]),
                            "lightgbm": result([0.4, 0.5], None)}),
            ("few-queries", 0, 40, {"cli": result([0.9, 0.8], [10, 12]),
                                    "lightgbm": result([0.7, 0.9], None)})]
    page = recipe_study.markdown(recipe_study.summarize(runs, baseline="lightgbm"), [],
                                 baseline="lightgbm")
    rows = {line.split(" | ")[0]: line for line in page.splitlines() if line.startswith("| ")}
    assert rows["| raw (2, 5)"].startswith("| raw (2, 5) | 0.6000 (+p=")
    assert rows["| raw (2, 5)"].split(" | ")[1].endswith(", 3.0")
    assert rows["| mean over datasets"] == "| mean over datasets | 0.7250, 7.0 | 0.6250 |"
    sys.modules.pop("recipe_study", None)


def test_the_stage_profile_charges_each_stage_the_peak_memory_reached_in_it(monkeypatch):
    """``profile_stages.py`` gives each stage the highest resident memory
    while it ran: a stage that touches 200 MiB and frees them shows them,
    the stage after it and the stage around both do not."""
    monkeypatch.syspath_prepend(str(REPO / "lab"))
    import profile_stages

    clock = profile_stages.Clock()
    if not clock.resets:
        pytest.skip("this kernel does not start a process's VmHWM afresh")

    def big():
        return float(np.ones(200 * 2**20 // 8).sum())

    def small():
        return float(np.ones(1000).sum())

    def around():
        return (clock.timed("top_pairs", "pair search: gains", big)(),
                clock.timed("pair_grids", "pair search: grids", small)())

    clock.timed("fit_and_select", "rest", around)()
    peak = clock.peak
    gains, grids, rest = (peak[("path", stage)] for stage in (
        "pair search: gains", "pair search: grids", "rest"))
    assert gains - max(grids, rest) > 150 * 2**20
    assert profile_stages.OUTSIDE in peak  # what ran before the fold
    sys.modules.pop("profile_stages", None)
