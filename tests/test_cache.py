"""The binary cache of parsed files: the same arrays, faster, invalidated by
a change of the source, never written beside a read-only input."""

import os
import shutil
import time

import numpy as np
import pytest

from rsrank import NonContiguousQueryWarning, iter_letor_chunks, load_letor
from rsrank.cli import main


@pytest.fixture
def letor_file(tmp_path, bundled_root):
    path = tmp_path / "data" / "train.txt.gz"
    path.parent.mkdir()
    shutil.copy(bundled_root / "Fold1" / "train.txt.gz", path)
    return path


def same(a, b):
    (Xa, ya, qa), (Xb, yb, qb) = a[:3], b[:3]
    assert Xa.shape == Xb.shape
    for name in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(getattr(Xa, name), getattr(Xb, name))
    np.testing.assert_array_equal(ya, yb)
    np.testing.assert_array_equal(qa, qb)


def test_cache_returns_the_parsed_arrays_and_is_reused(letor_file):
    parsed = load_letor(letor_file)
    first = load_letor(letor_file, cache=True)
    entries = list((letor_file.parent / ".rsrank-cache").iterdir())
    assert len(entries) == 1
    second = load_letor(letor_file, cache=True)
    same(parsed, first)
    same(parsed, second)
    assert not second[0].data.flags.writeable  # a read-only memory map
    assert list((letor_file.parent / ".rsrank-cache").iterdir()) == entries


def test_a_changed_source_is_parsed_again(letor_file):
    load_letor(letor_file, cache=True)
    import gzip

    text = gzip.open(letor_file, "rt").read().replace("qid:1 ", "qid:1 ", 1)
    lines = text.splitlines(keepends=True)
    with gzip.open(letor_file, "wt") as handle:
        handle.writelines(lines[:-5])  # fewer rows
    os.utime(letor_file, ns=(time.time_ns(), time.time_ns() + 10**9))
    again = load_letor(letor_file, cache=True)
    assert again[0].shape[0] == len(lines) - 5
    same(again, load_letor(letor_file))
    assert len(list((letor_file.parent / ".rsrank-cache").iterdir())) == 1  # stale one removed


def test_options_are_part_of_the_key(letor_file):
    wide = load_letor(letor_file, n_features=60, cache=True)
    narrow = load_letor(letor_file, cache=True)
    assert wide[0].shape[1] == 60 and narrow[0].shape[1] == 45
    single = load_letor(letor_file, dtype=np.float32, cache=True)
    assert single[0].dtype == np.float32


def test_read_only_input_falls_back_to_the_user_cache(letor_file, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # root ignores chmod
    load_letor(letor_file, cache=True)
    assert not (letor_file.parent / ".rsrank-cache").exists()
    assert len(list((tmp_path / "user-cache" / "rsrank").iterdir())) == 1


def test_warnings_come_back_from_the_cache(tmp_path):
    path = tmp_path / "split.txt"
    path.write_text("1 qid:1 1:0.5\n0 qid:2 1:0.1\n2 qid:1 1:0.9\n")
    for _ in range(2):
        with pytest.warns(NonContiguousQueryWarning, match="line 3"):
            load_letor(path, cache=tmp_path / "c")


def test_streaming_reads_the_cache(letor_file):
    from_text = list(iter_letor_chunks(letor_file, 7, n_features=45))
    load_letor(letor_file, n_features=45, cache=True)
    from_cache = list(iter_letor_chunks(letor_file, 7, n_features=45, cache=True))
    assert len(from_text) == len(from_cache)
    for a, b in zip(from_text, from_cache):
        same(a, b)


def test_cli_cache_gives_the_same_results(tmp_path, bundled_root, capsys):
    root = tmp_path / "folds"
    shutil.copytree(bundled_root, root)
    argv = ["train", str(root), "--folds", "1", "--max-iter", "5", "--quiet"]
    assert main(argv) == 0
    plain = capsys.readouterr().out
    for _ in range(2):  # writes the cache, then reads it
        assert main(argv + ["--cache", str(tmp_path / "cache")]) == 0
        assert capsys.readouterr().out.replace(" --cache " + str(tmp_path / "cache"), "") == plain
    assert len(list((tmp_path / "cache").iterdir())) == 3
