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


SHELL_BLOCKS = re.findall(r"```bash\n(.*?)```", (REPO / "README.md").read_text(), re.S)


def test_the_readme_has_shell_blocks():
    assert len(SHELL_BLOCKS) >= 4
    assert "pip install" in SHELL_BLOCKS[0]  # the install lines, which .ci/run itself runs


@pytest.mark.slow
@pytest.mark.parametrize("index", range(1, len(SHELL_BLOCKS)))
def test_readme_shell_block_runs_verbatim(index, tmp_path):
    """Each command block after the install one, run as written by bash in a
    directory laid out as a clone (``../shared/data`` beside it), holding the
    bundled fold 1 as the ``train.txt``, ``vali.txt`` and ``test.txt`` the
    examples name, and a ``features.txt``."""
    import gzip
    import os
    import shutil

    shared = REPO.parent / "shared" / "data"
    if "../shared/data" in SHELL_BLOCKS[index] and not (shared / "OHSUMED").is_dir():
        pytest.skip("this block reads ../shared/data, which is absent")
    clone = tmp_path / "clone"
    clone.mkdir()
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(shared)
    fold = REPO / "rsrank" / "data" / "synthetic" / "Fold1"
    for split in ("train", "vali", "test"):
        with gzip.open(fold / f"{split}.txt.gz", "rb") as source:
            (clone / f"{split}.txt").write_bytes(source.read())
    (clone / "features.txt").write_text("".join(f"feature_{j}\n" for j in range(1, 46)))
    before = {p: p.stat().st_mtime_ns for p in clone.iterdir()}
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-e", "-c", SHELL_BLOCKS[index]], cwd=clone, env=env,
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    assert {p: p.stat().st_mtime_ns for p in before} == before  # the inputs untouched
    shutil.rmtree(clone)
