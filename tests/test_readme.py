"""Every Python block of the README runs as written, from the repository
root, each in a fresh namespace. Blocks that read ../shared/data are skipped
when it is absent."""

import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(), re.S)


def test_the_readme_has_python_blocks():
    assert len(BLOCKS) >= 8


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index, tmp_path):
    code = BLOCKS[index]
    if "../shared/data" in code and not (REPO.parent / "shared" / "data" / "OHSUMED").is_dir():
        pytest.skip("this block reads ../shared/data, which is absent")
    previous = Path.cwd()
    os.chdir(REPO)
    try:
        exec(compile(code, f"README.md python block {index + 1}", "exec"), {"__name__": "readme"})
    finally:
        os.chdir(previous)
        for leftover in ("model.json", "ranker.json"):
            (REPO / leftover).unlink(missing_ok=True)
