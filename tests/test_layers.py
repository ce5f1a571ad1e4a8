"""The tests by layer:

* ``tests/unit/<room>/test_<module>.py`` is the unit test of
  ``rsrank/<room>/<module>.py``, imports it directly, and starts no command
  line, process, cluster or bundled fold;
* ``tests/integration/`` crosses rooms through the public API, and runs no
  ``rsrank`` command line;
* ``tests/end_to_end/`` runs what a user runs: the command line, processes,
  the README's and the guide's blocks, the wheel, Dask, fetch, the docs.

``pytest tests/unit`` runs the unit layer alone."""

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
PACKAGE = TESTS.parent / "rsrank"
#: what a unit test may not reach: a process, the command line, a cluster
FORBIDDEN_MODULES = ("subprocess", "multiprocessing", "rsrank.cli", "rsrank.__main__",
                     "distributed", "dask", "rsrank.dask")
#: ... or the data on disk: the bundled folds, the shared LETOR sets
FORBIDDEN_NAMES = {"run_cli", "bundled_data_path", "load_letor_fold", "SHARED_DATA",
                   "bundled_root", "ohsumed_root"}


def reaches(source):
    """What ``source`` (a test file's text) reaches that a unit test may not,
    and the rsrank modules it imports, as ``(problems, modules)``."""
    problems, modules = set(), set()

    def forbidden(name):
        return any(name == m or name.startswith(m + ".") for m in FORBIDDEN_MODULES)

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                modules.add(alias.name)
                if forbidden(alias.name):
                    problems.add(f"imports {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.update([node.module] + [f"{node.module}.{a.name}" for a in node.names])
            if forbidden(node.module):
                problems.add(f"imports from {node.module}")
            problems.update(f"imports {a.name}" for a in node.names if a.name in FORBIDDEN_NAMES)
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_NAMES:
            problems.add(f"uses {node.id}")
        elif isinstance(node, ast.arg) and node.arg in FORBIDDEN_NAMES:
            problems.add(f"takes the fixture {node.arg}")
    return problems, modules


UNIT = sorted((TESTS / "unit").rglob("test_*.py"))
LAYERS = ("unit", "integration", "end_to_end")
#: what an integration test may not reach: the command line
COMMAND_LINE = ("rsrank.cli", "rsrank.__main__", "run_cli")


def test_every_test_file_sits_in_a_layer():
    files = {path.relative_to(TESTS) for path in TESTS.rglob("test_*.py")}
    stray = sorted(str(path) for path in files
                   if path.parts[0] not in LAYERS and path != Path("test_layers.py"))
    assert stray == []
    for layer in LAYERS:
        assert any(path.parts[0] == layer for path in files), layer


@pytest.mark.parametrize("path", sorted((TESTS / "integration").glob("test_*.py")),
                         ids=lambda p: p.name)
def test_an_integration_test_runs_no_command_line(path):
    problems, _ = reaches(path.read_text())
    assert not [p for p in problems if any(name in p for name in COMMAND_LINE)]


def test_the_unit_layer_holds_a_test_for_each_core_learning_room():
    names = {path.relative_to(TESTS / "unit").as_posix() for path in UNIT}
    for module in ("fitting", "feature_keys", "selection", "defaults", "binning",
                   "interactions"):
        assert f"learning/test_{module}.py" in names


@pytest.mark.parametrize("path", UNIT, ids=lambda p: p.relative_to(TESTS).as_posix())
def test_a_unit_test_mirrors_its_module_imports_it_and_starts_nothing(path):
    room, module = path.parent.name, path.stem.removeprefix("test_")
    assert (PACKAGE / room / f"{module}.py").is_file(), (
        f"{path.relative_to(TESTS)} names no module rsrank/{room}/{module}.py")
    problems, modules = reaches(path.read_text())
    assert f"rsrank.{room}.{module}" in modules, f"it does not import rsrank.{room}.{module}"
    assert not problems, f"a unit test {', '.join(sorted(problems))}"


def test_the_rule_finds_what_a_unit_test_may_not_reach():
    problems, modules = reaches(
        "import subprocess\nfrom conftest import run_cli\nfrom rsrank.learning import path\n"
        "def test_x(bundled_root):\n    load_letor_fold(bundled_root, 1)\n")
    assert problems == {"imports subprocess", "imports run_cli", "uses load_letor_fold",
                        "uses bundled_root", "takes the fixture bundled_root"}
    assert "rsrank.learning.path" in modules
    assert reaches("from rsrank.learning.selection import choose_fit\n")[0] == set()
