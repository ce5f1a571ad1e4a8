"""Every Python block of the README and of the documentation's pages runs as
written, saved as a script and run from the repository root in a fresh
process (as a user pastes it into a file: Dask's worker processes import
that script); every shell block after the README's install lines runs
verbatim in a directory laid out as a clone. Blocks that read
../shared/data are skipped when it is absent."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("**/*.md"))]


def _blocks(language):
    """``(page:index, code)`` of every ``language`` block of the pages."""
    return [(f"{page.relative_to(REPO)}:{i + 1}", code) for page in PAGES
            for i, code in enumerate(re.findall(rf"```{language}\n(.*?)```", page.read_text(),
                                                re.S))]


BLOCKS = _blocks("python")


def test_the_readme_has_python_blocks():
    assert len(BLOCKS) >= 8


SHARED = REPO.parent / "shared" / "data"


def _fetched(code, home):
    """The environment of a block: one that fetches data finds it in
    ``home``, made from ../shared/data (the tests never download), as a
    finished ``rsrank fetch`` leaves it; None to skip (no shared data)."""
    import gzip
    import os

    from rsrank.reading.datasets import registry

    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    if "fetch" not in code:
        return env
    if not (SHARED / "OHSUMED").is_dir():
        return None
    for name, entry in registry().items():
        if name in code:
            for rel in entry["files"]:
                (home / name / rel).parent.mkdir(parents=True, exist_ok=True)
                (home / name / rel).write_bytes(
                    gzip.decompress((SHARED / name / f"{rel}.gz").read_bytes()))
    return {**env, "RSRANK_DATA": str(home)}


@pytest.mark.parametrize("where, code", BLOCKS, ids=[w for w, _ in BLOCKS])
def test_readme_block_runs(where, code, tmp_path):
    if "../shared/data" in code and not (REPO.parent / "shared" / "data" / "OHSUMED").is_dir():
        pytest.skip("this block reads ../shared/data, which is absent")
    env = _fetched(code, tmp_path / "data")
    if env is None:
        pytest.skip("this block fetches real data, which the tests take from ../shared/data")
    script = tmp_path / f"block_{where.replace('/', '_').replace(':', '_')}.py"
    script.write_text(code)
    try:
        done = subprocess.run([sys.executable, str(script)], cwd=REPO, capture_output=True,
                              text=True, timeout=900, env=env)
    finally:
        for leftover in ("model.json", "ranker.json"):
            (REPO / leftover).unlink(missing_ok=True)
    assert done.returncode == 0, done.stderr[-3000:]


SHELL_BLOCKS = _blocks("bash")


def test_the_readme_has_shell_blocks():
    assert len(SHELL_BLOCKS) >= 4
    assert SHELL_BLOCKS[0][0] == "README.md:1"
    assert "pip install" in SHELL_BLOCKS[0][1]  # the install lines, which .ci/run itself runs


@pytest.mark.slow
@pytest.mark.parametrize("where, code", SHELL_BLOCKS[1:], ids=[w for w, _ in SHELL_BLOCKS[1:]])
def test_readme_shell_block_runs_verbatim(where, code, tmp_path):
    """Each command block after the install one, run as written by bash in a
    directory laid out as a clone (``../shared/data`` beside it), holding the
    bundled fold 1 as the ``train.txt``, ``vali.txt`` and ``test.txt`` the
    examples name, and a ``features.txt``."""
    import gzip
    import shutil

    shared = REPO.parent / "shared" / "data"
    if "../shared/data" in code and not (shared / "OHSUMED").is_dir():
        pytest.skip("this block reads ../shared/data, which is absent")
    clone = tmp_path / "clone"
    clone.mkdir()
    # the clone's environment, which the README's blocks activate: this one
    venv = Path(sys.prefix)
    if (venv / "bin" / "activate").is_file():
        (clone / ".venv").symlink_to(venv)
    else:  # not a virtual environment: an activate that puts its commands on PATH
        (clone / ".venv" / "bin").mkdir(parents=True)
        (clone / ".venv" / "bin" / "activate").write_text(
            f'export PATH="{Path(sys.executable).parent}:$PATH"\n')
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(shared)
    fold = REPO / "rsrank" / "data" / "synthetic" / "Fold1"
    for split in ("train", "vali", "test"):
        with gzip.open(fold / f"{split}.txt.gz", "rb") as source:
            (clone / f"{split}.txt").write_bytes(source.read())
    (clone / "features.txt").write_text("".join(f"feature_{j}\n" for j in range(1, 46)))
    env = _fetched(code, clone / "data")
    if env is None:
        pytest.skip("this block fetches real data, which the tests take from ../shared/data")
    before = {p: p.stat().st_mtime_ns for p in clone.iterdir()}
    done = subprocess.run(["bash", "-e", "-c", code], cwd=clone, env=env,
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    # no warning either: the README's OHSUMED run is the defaults on real data, where
    # full-batch steps make the loss swing while vali NDCG improves (not a divergence)
    assert "warning" not in done.stderr.lower(), done.stderr[-3000:]
    assert {p: p.stat().st_mtime_ns for p in before} == before  # the inputs untouched
    shutil.rmtree(clone)
