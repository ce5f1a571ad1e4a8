"""The documentation builds with warnings as errors (its gallery examples
run and draw), and the API reference covers every public name and every
RSRank parameter."""

import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rsrank import RSRank

REPO = Path(__file__).resolve().parents[2]


def test_every_rsrank_parameter_is_documented():
    doc = inspect.getdoc(RSRank)
    documented = {name for line in re.findall(r"^(\w+(?:, \w+)*) :", doc, re.M)
                  for name in line.split(", ")}
    parameters = set(inspect.signature(RSRank).parameters)
    assert parameters - documented == set()


def test_every_public_module_is_in_the_api_reference():
    pages = "".join(p.read_text() for p in (REPO / "docs" / "api").glob("*.rst"))
    from rsrank import ROOMS

    modules = {p.stem for p in (REPO / "rsrank").glob("*.py") if not p.stem.startswith("_")}
    modules |= {f"{room}.{module}" for room, held in ROOMS.items() for module in held}
    assert len(modules) > 30
    assert {m for m in modules if f"automodule:: rsrank.{m}\n" not in pages} == set()


@pytest.mark.slow
def test_the_documentation_builds_without_a_warning(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("sphinx_gallery")
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b",
                           "html", "-d", str(tmp_path / "doctrees"), str(REPO / "docs"),
                           str(tmp_path / "html")], capture_output=True, text=True,
                          timeout=1200, cwd=REPO)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert (tmp_path / "html" / "api" / "estimators.html").is_file()
    assert list((tmp_path / "html" / "_images").glob("sphx_glr_plot_*"))
