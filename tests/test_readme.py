"""Every Python block of the README runs as written, saved as a script and
run from the repository root in a fresh process (as a user pastes it into a
file: Dask's worker processes import that script). Blocks that read
../shared/data are skipped when it is absent."""

import re
import subprocess
import sys
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
    script = tmp_path / f"readme_block_{index + 1}.py"
    script.write_text(code)
    try:
        done = subprocess.run([sys.executable, str(script)], cwd=REPO, capture_output=True,
                              text=True, timeout=900)
    finally:
        for leftover in ("model.json", "ranker.json"):
            (REPO / leftover).unlink(missing_ok=True)
    assert done.returncode == 0, done.stderr[-3000:]
