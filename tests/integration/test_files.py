"""Outputs that never half-exist and never replace an input (rsrank.reading._files)."""

import os

import pytest

from rsrank.reading._files import (OutputError, ResultsDirectory, atomic_write_bytes,
                           atomic_write_text, check_not_input, read_bounded_text)


def test_atomic_writes_replace_whole_files_with_the_umask(tmp_path):
    target = tmp_path / "f.txt"
    atomic_write_text(target, "é\n")
    assert target.read_bytes() == "é\n".encode()
    atomic_write_bytes(target, b"\x00\x01")
    assert target.read_bytes() == b"\x00\x01"
    mask = os.umask(0o027)
    try:
        atomic_write_bytes(tmp_path / "g", b"x")
    finally:
        os.umask(mask)
    assert oct((tmp_path / "g").stat().st_mode & 0o777) == oct(0o640)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt", "g"]
    with pytest.raises(IsADirectoryError):
        atomic_write_text(tmp_path, "x")


def test_an_interrupted_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "f.txt"
    target.write_text("old\n")

    def interrupted(*_):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_bytes(target, b"new\n")
    assert target.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_bounded_reads_refuse_large_binary_and_directories(tmp_path):
    (tmp_path / "ok").write_text("abc")
    assert read_bounded_text(tmp_path / "ok", 3, "names file") == "abc"
    with pytest.raises(ValueError, match="larger than 2 bytes; not a names file"):
        read_bounded_text(tmp_path / "ok", 2, "names file")
    (tmp_path / "bin").write_bytes(b"a\xff")
    with pytest.raises(ValueError, match="not UTF-8 text \\(byte 1\\)"):
        read_bounded_text(tmp_path / "bin", 10, "names file")
    with pytest.raises(ValueError, match="is a directory"):
        read_bounded_text(tmp_path, 10, "names file")


def test_an_output_may_not_be_hold_or_sit_in_an_input(tmp_path):
    data = tmp_path / "data"
    (data / "Fold1").mkdir(parents=True)
    (data / "train.txt").write_text("1 qid:1 1:1\n")
    os.link(data / "train.txt", tmp_path / "alias.txt")
    for out, why in [(data, "is the input .*, which replacing it would delete"),
                     (data / "Fold1" / "run", "lies inside"),
                     (tmp_path, "holds the input"), (tmp_path / "alias.txt", "would overwrite")]:
        with pytest.raises(OutputError, match=why):
            check_not_input(out, [data / "train.txt"] if out.name == "alias.txt" else [data])
    check_not_input(tmp_path / "run", [data])
    # the inputs as files: an output beside them in their directory is fine, one holding them not
    check_not_input(data / "Fold1" / "run", [data / "train.txt"])
    with pytest.raises(OutputError, match="holds the input .*train.txt, which replacing it"):
        check_not_input(data, [data / "train.txt"])


def test_results_appear_whole_and_replace_old_results_in_one_step(tmp_path):
    out = tmp_path / "run"
    with ResultsDirectory(out) as claim:
        (claim.staging / "a").write_text("1")
        assert not out.exists()
        with pytest.raises(OutputError, match="another rsrank run is writing it"):
            ResultsDirectory(out).__enter__()
        claim.publish()
    assert (out / "a").read_text() == "1"
    with pytest.raises(OutputError, match="exists; choose another path or pass --force"):
        ResultsDirectory(out).__enter__()
    with ResultsDirectory(out, overwrite=True) as claim:
        (claim.staging / "b").write_text("2")
        claim.publish()
    assert sorted(p.name for p in out.iterdir()) == [".rsrank-results", "b"]
    with ResultsDirectory(out, overwrite=True) as claim:  # left without publishing
        (claim.staging / "c").write_text("3")
    assert sorted(p.name for p in out.iterdir()) == [".rsrank-results", "b"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_a_failed_write_names_the_target_not_its_temporary_sibling(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    cases = [(tmp_path / "missing" / "m.json", FileNotFoundError,
              f"{tmp_path / 'missing' / 'm.json'}: the directory {tmp_path / 'missing'} does "
              "not exist"),
             (afile / "m.json", NotADirectoryError,
              f"{afile / 'm.json'}: {afile} is a file, not a directory"),
             (afile / "deeper" / "m.json", NotADirectoryError,
              f"{afile / 'deeper' / 'm.json'}: {afile} is a file, not a directory")]
    for target, kind, message in cases:
        with pytest.raises(kind) as caught:
            atomic_write_text(target, "{}")
        assert str(caught.value).startswith(message), caught.value
        assert ".tmp" not in str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]


