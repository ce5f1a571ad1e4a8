"""Every output the package writes, given what a user already has at the
path: a link to their file, a link to nothing, a FIFO, a character device,
a directory of theirs with a file in it. Nothing is ever replaced or
deleted: a link stays a link (its target gets the output), a FIFO and a
device are written through, and the rest is refused in one line before any
work. Results directories are replaced (``--force``) only when they are
provably rsrank's own."""

import json
import os
import stat
import threading
from pathlib import Path

import numpy as np
import pytest

from rsrank import RSRank, load_letor
from rsrank.reading._files import (RESULTS_MARKER, OutputError, ResultsDirectory, atomic_write_bytes,
                           check_output_target, foreign_files)
from rsrank.cli import main

from conftest import run_cli

GOOD = ("2 qid:1 1:0.5 2:0.25 #docid = a\n0 qid:1 1:0.1 2:0.5 #docid = b\n"
        "1 qid:1 1:0.3 2:0.1 #docid = c\n1 qid:2 1:1 2:0 #docid = d\n"
        "0 qid:2 1:0.2 2:0.9 #docid = e\n2 qid:2 1:0.8 2:0.4 #docid = f\n")


run = run_cli


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """A LETOR file, a linear and an additive model of it, an ES featureset
    and two results directories to compare."""
    directory = tmp_path_factory.mktemp("inputs")
    data = directory / "train.txt"
    data.write_text(GOOD)
    (directory / "vali.txt").write_text(GOOD.replace("qid:1", "qid:3").replace("qid:2", "qid:4"))
    X, y, qid = load_letor(data)
    RSRank(max_iter=3).fit(X, y, qid=qid).save(directory / "linear.json")
    RSRank(max_iter=20, additive=True, max_bins=4).fit(X, y, qid=qid).save(
        directory / "additive.json")
    (directory / "featureset.json").write_text(json.dumps({"featureset": {"features": [
        {"name": name, "params": [], "template": {"match": {"f": "x"}}}
        for name in ("f1", "f2")]}}))
    for run_name in ("a", "b"):
        assert main(["train", "--train", str(data), "--vali", str(directory / "vali.txt"),
                     "--l1", "0", "--max-iter", "2", "--quiet",
                     "--out", str(directory / run_name)]) == 0
    return directory


def file_writers(inputs):
    """``(name, argv of OUT)`` of every command that writes a file."""
    data, linear, additive = inputs / "train.txt", inputs / "linear.json", inputs / "additive.json"
    vali = inputs / "vali.txt"
    return [
        ("predict", lambda out: ["predict", linear, data, "--out", out]),
        ("predict trec", lambda out: ["predict", linear, data, "--format", "trec", "--out", out]),
        ("export", lambda out: ["export", linear, "--format", "solr", "--out", out]),
        ("export subset", lambda out: ["export", linear, "--format", "elasticsearch",
                                       "--subset-featureset", inputs / "featureset.json", out]),
        ("plot", lambda out: ["plot", additive, "--out", out]),
        ("path plot", lambda out: ["path", "--train", data, "--vali", vali, "--l1", "0",
                                   "--max-iter", "2", "--plot", out]),
        ("compare plot", lambda out: ["compare", inputs / "a", inputs / "b", "--plot", out]),
    ]


WRITERS = ["predict", "predict trec", "export", "export subset", "plot", "path plot",
           "compare plot"]


def writer(inputs, name):
    return dict(file_writers(inputs))[name]


def test_the_table_names_every_writing_command(inputs):
    assert [name for name, _ in file_writers(inputs)] == WRITERS


@pytest.mark.parametrize("name", WRITERS)
def test_a_link_to_a_file_keeps_pointing_there_and_its_file_gets_the_output(
        name, inputs, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / "theirs.png"
    target.write_text("keep me\n")
    os.chmod(target, 0o640)
    link = tmp_path / "link.png"
    link.symlink_to(target)
    code, err = run(writer(inputs, name)(link), capsys)
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_bytes() != b"keep me\n" and target.stat().st_size > 0
    assert oct(stat.S_IMODE(target.stat().st_mode)) == oct(0o640)  # its own permissions
    assert sorted(p.name for p in elsewhere.iterdir()) == ["theirs.png"]  # no temporary left


@pytest.mark.parametrize("name", WRITERS)
def test_a_link_to_nothing_is_refused_before_any_work(name, inputs, tmp_path, capsys):
    link = tmp_path / "link.png"
    link.symlink_to(tmp_path / "nowhere" / "file")
    code, err = run(writer(inputs, name)(link), capsys)
    assert code == 2 and len(err) == 1, err
    assert "a symbolic link to" in err[0] and "does not exist" in err[0]
    assert link.is_symlink() and not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("name", WRITERS)
def test_a_fifo_is_written_through_not_replaced(name, inputs, tmp_path, capsys):
    fifo = tmp_path / "pipe.png"
    os.mkfifo(fifo)
    received = []

    def read():
        with open(fifo, "rb") as handle:
            received.append(handle.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    code, err = run(writer(inputs, name)(fifo), capsys)
    reader.join(timeout=60)
    assert code == 0, err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert received and len(received[0]) > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe.png"]


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
@pytest.mark.parametrize("name", WRITERS)
def test_a_device_is_written_through_not_replaced(name, inputs, tmp_path, capsys):
    device = tmp_path / "null"  # the null device's numbers: a /dev/null of our own
    os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    code, err = run(writer(inputs, name)(device), capsys)
    assert code == 0, err
    mode = os.lstat(device).st_mode
    assert stat.S_ISCHR(mode) and os.lstat(device).st_rdev == os.makedev(1, 3)


@pytest.mark.parametrize("name", WRITERS)
def test_a_directory_of_the_users_is_refused_and_kept(name, inputs, tmp_path, capsys):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n")
    code, err = run(writer(inputs, name)(folder), capsys)
    assert code == 2 and len(err) == 1, err
    assert "is a directory" in err[0]
    assert [p.name for p in folder.iterdir()] == ["notes.txt"]
    assert (folder / "notes.txt").read_text() == "mine\n"


def test_the_library_writes_through_the_same_edge(inputs, tmp_path):
    model = RSRank.load(inputs / "linear.json")
    target = tmp_path / "model.json"
    target.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    model.save(link)
    assert link.is_symlink() and RSRank.load(target).n_features_in_ == 2
    (tmp_path / "dangling").symlink_to(tmp_path / "none")
    with pytest.raises(OutputError, match="a symbolic link to"):
        model.save(tmp_path / "dangling")
    assert (tmp_path / "dangling").is_symlink() and not (tmp_path / "none").exists()
    sock_path = tmp_path / "s"
    import socket

    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        with pytest.raises(OutputError, match="a socket"):
            atomic_write_bytes(sock_path, b"x")
    assert check_output_target(tmp_path / "new") == "new"
    assert check_output_target(target) == "file" and check_output_target(link) == "link"
    with pytest.raises(IsADirectoryError, match="is a directory"):
        check_output_target(tmp_path)


# -- results directories ---------------------------------------------------------------------


def directory_writers(inputs):
    data, vali = inputs / "train.txt", inputs / "vali.txt"
    return {
        "train": lambda out, *more: ["train", "--train", data, "--vali", vali, "--l1", "0",
                                     "--max-iter", "2", "--quiet", "--out", out, *more],
        "path": lambda out, *more: ["path", "--train", data, "--vali", vali, "--l1", "0",
                                    "--max-iter", "2", "--out", out, *more],
    }


def tree(directory):
    return {p.relative_to(directory).as_posix(): p.read_bytes() if p.is_file() else None
            for p in sorted(Path(directory).rglob("*"))}


@pytest.mark.parametrize("command", ["train", "path"])
def test_force_never_deletes_a_directory_rsrank_did_not_write(command, inputs, tmp_path,
                                                             capsys):
    make = directory_writers(inputs)[command]
    experiments = tmp_path / "experiments"
    (experiments / "old").mkdir(parents=True)
    (experiments / "notes.txt").write_text("a month of notes\n")
    (experiments / "old" / "model.bin").write_bytes(b"\x00" * 10)
    before = tree(experiments)
    for more in ([], ["--force"]):
        code, err = run(make(experiments, *more), capsys)
        assert code == 2 and len(err) == 1, err
        assert tree(experiments) == before
    assert "not a results directory rsrank wrote" in err[0]
    assert "would delete 2 files (notes.txt, old/model.bin)" in err[0]
    # a link to it, and a device, are not results directories either
    link = tmp_path / "link"
    link.symlink_to(experiments)
    code, err = run(make(link, "--force"), capsys)
    assert code == 2 and "exists and is not a results directory" in err[0]
    assert link.is_symlink() and tree(experiments) == before
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code, err = run(make(fifo, "--force"), capsys)
    assert code == 2 and "exists and is not a results directory" in err[0]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["experiments", "fifo", "link"]


@pytest.mark.parametrize("command", ["train", "path"])
def test_force_replaces_its_own_results_but_not_a_file_put_among_them(command, inputs,
                                                                      tmp_path, capsys):
    make = directory_writers(inputs)[command]
    out = tmp_path / "run"
    out.mkdir()  # an empty directory loses nothing: no --force needed
    assert run(make(out), capsys)[0] == 0
    marker = json.loads((out / RESULTS_MARKER).read_text())
    assert sorted(marker["files"]) == sorted(
        p.relative_to(out).as_posix() for p in out.rglob("*")
        if p.is_file() and p.name != RESULTS_MARKER)
    assert foreign_files(out) == []
    assert run(make(out), capsys)[0] == 2  # exists: --force asked for
    assert run(make(out, "--force"), capsys)[0] == 0
    (out / "my_analysis.ipynb").write_text("{}")
    before = tree(out)
    code, err = run(make(out, "--force"), capsys)
    assert code == 2 and len(err) == 1
    assert "holds 1 file (my_analysis.ipynb) that rsrank did not write" in err[0]
    assert tree(out) == before


def test_a_results_directory_is_only_claimed_whole(tmp_path):
    out = tmp_path / "run"
    with ResultsDirectory(out) as claim:
        (claim.staging / "sub").mkdir()
        (claim.staging / "sub" / "a").write_text("1")
        claim.publish()
    assert json.loads((out / RESULTS_MARKER).read_text())["files"] == ["sub/a"]
    (out / "sub" / "extra").mkdir()  # even an empty directory of the user's counts
    assert foreign_files(out) == ["sub/extra/"]
    (out / "sub" / "extra").rmdir()
    (out / RESULTS_MARKER).write_text("not json")
    assert foreign_files(out) is None
    with pytest.raises(OutputError, match="no .rsrank-results"):
        ResultsDirectory(out, overwrite=True).__enter__()
    assert (out / "sub" / "a").read_text() == "1"


def test_path_with_a_bad_plot_is_refused_before_the_work(inputs, tmp_path, capsys,
                                                         monkeypatch):
    make = directory_writers(inputs)["path"]
    code, err = run(make(tmp_path / "run", "--plot", tmp_path / "p.xyz"), capsys)
    assert code == 2 and len(err) == 1 and "cannot write .xyz pictures" in err[0]
    assert sorted(tmp_path.iterdir()) == []
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # matplotlib not installed
    for argv in (make(tmp_path / "run", "--plot", tmp_path / "p.png"),
                 ["compare", inputs / "a", inputs / "b", "--plot", tmp_path / "p.png"],
                 ["plot", inputs / "additive.json", "--out", tmp_path / "p.png"]):
        code, err = run(argv, capsys)
        assert code == 2 and len(err) == 1 and "pip install 'rsrank[plot]'" in err[0], err
    assert sorted(tmp_path.iterdir()) == []


def test_a_full_disk_leaves_no_half_picture(inputs, tmp_path, capsys):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    full = tmp_path / "full.png"
    full.symlink_to("/dev/full")
    code, err = run(["plot", inputs / "additive.json", "--out", full], capsys)
    assert code == 2 and len(err) == 1 and "No space left on device" in err[0]
    assert full.is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == ["full.png"]


def test_an_eval_set_of_nan_is_refused_as_the_training_data_is():
    rng = np.random.default_rng(0)
    X, y, qid = rng.random((60, 3)), rng.integers(0, 3, 60), np.repeat(np.arange(6), 10)
    X_val = X.copy()
    X_val[:, 1] = np.nan
    with pytest.raises(ValueError, match=r"eval_set has missing values \(NaN\) in 1 feature"):
        RSRank(max_iter=3).fit(X, y, qid=qid, eval_set=(X_val, y, qid))
    with pytest.raises(ValueError, match="eval_set has missing values"):
        RSRank(max_iter=3).fit_chunks(lambda: iter([(X, y, qid)]), eval_set=(X_val, y, qid))
    # an additive model scores a missing value: its eval_set may hold one
    RSRank(max_iter=3, additive=True).fit(X, y, qid=qid, eval_set=(X_val, y, qid))


def test_too_many_vali_cv_folds_are_told_in_the_options_words(inputs, capsys):
    data = inputs / "train.txt"
    code, err = run(["train", "--train", data, "--vali", inputs / "vali.txt", "--vali-cv", "5",
                     "--max-iter", "2", "--quiet"], capsys)
    assert code == 2 and len(err) == 1
    assert "--vali-cv 5" in err[0] and "there are 2" in err[0] and "n_splits" not in err[0]


def test_dev_stdout_writes_to_what_the_shell_opened(inputs, tmp_path):
    """``--out /dev/stdout``: a pipe, a file the shell emptied (``>``) and a
    file it appends to (``>>``, whose earlier lines stay) get the scores."""
    import shlex
    import subprocess
    import sys

    if not os.path.exists("/dev/stdout"):
        pytest.skip("no /dev/stdout")
    command = " ".join(shlex.quote(str(a)) for a in [
        sys.executable, "-m", "rsrank", "predict", inputs / "linear.json",
        inputs / "train.txt", "--out", "/dev/stdout"])
    log = tmp_path / "log.txt"
    log.write_text("earlier line\n")
    subprocess.run(f"{command} >> {shlex.quote(str(log))}", shell=True, check=True,
                   stderr=subprocess.DEVNULL)
    lines = log.read_text().splitlines()
    assert lines[0] == "earlier line" and len(lines) == 7
    subprocess.run(f"{command} > {shlex.quote(str(log))}", shell=True, check=True,
                   stderr=subprocess.DEVNULL)
    assert log.read_text().splitlines() == lines[1:]
    piped = subprocess.run(f"{command} | cat", shell=True, check=True, capture_output=True,
                           text=True)
    assert piped.stdout.splitlines() == lines[1:]
    assert stat.S_ISLNK(os.lstat("/dev/stdout").st_mode) or stat.S_ISCHR(
        os.lstat("/dev/stdout").st_mode)
