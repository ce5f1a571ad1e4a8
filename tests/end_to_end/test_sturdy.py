"""Real operations, class by class: worker processes (where they start, how
they end with their parent, what a failed start says), locks (whose owner
is always known), the cache (what identifies a file), options a model kind
would ignore, feature costs and model files. Each case: the exit code, one
line naming the path, flag or feature, inputs unchanged, nothing left
behind (files or processes)."""

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from rsrank import RSRank, load_letor
from rsrank.cli import main
from end_to_end.test_failures import (GOOD, assert_one_line, digest, run, running, train_argv,
                           worker_processes, write)

needs_proc = pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds processes in /proc")


@pytest.fixture
def small_folds(tmp_path):
    """Two LETOR folds of a few queries: quick to train in two workers."""
    root = tmp_path / "folds"
    rng = np.random.default_rng(0)
    for fold in (1, 2):
        (root / f"Fold{fold}").mkdir(parents=True)
        for split, first in (("train", 0), ("vali", 100), ("test", 200)):
            rows = []
            for q in range(first, first + 12):
                x = rng.uniform(size=(8, 5))
                y = np.digitize(x[:, 0] + 0.3 * rng.normal(size=8), [0.4, 0.8])
                rows += [f"{label} qid:{q} " + " ".join(f"{j + 1}:{v:.3f}"
                                                        for j, v in enumerate(row)) + "\n"
                         for label, row in zip(y, x)]
            write(root / f"Fold{fold}", f"{split}.txt", "".join(rows))
    return root


# -- worker processes -----------------------------------------------------------------


@needs_proc
def test_workers_start_from_a_directory_holding_a_folder_named_rsrank(tmp_path, small_folds):
    (tmp_path / "rsrank").mkdir()  # an earlier --out rsrank, or a clone's package folder
    before = digest(small_folds)
    child = subprocess.run([sys.executable, "-m", "rsrank", "train", str(small_folds), "--jobs",
                            "2", "--max-iter", "5", "--quiet", "--out", "run"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=300)
    assert child.returncode == 0, child.stderr
    assert "Traceback" not in child.stderr
    assert json.loads((tmp_path / "run" / "results.json").read_text())["folds"]
    assert digest(small_folds) == before


def test_a_worker_that_cannot_start_says_why(tmp_path, monkeypatch, capsys, small_folds):
    """A module the worker imports fails (here a broken cloudpickle on its
    path): the error is the worker's reason, not 'killed, or out of
    memory?'."""
    from rsrank.learning._workers import WorkerStartError, in_processes

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "cloudpickle.py").write_text("raise RuntimeError('this cloudpickle is broken')\n")
    monkeypatch.setenv("PYTHONPATH", str(broken))
    with pytest.raises(WorkerStartError, match="RuntimeError: this cloudpickle is broken"):
        list(in_processes(abs, [(-1,), (-2,)], 2))
    code, err = run(["train", small_folds, "--jobs", "2", "--max-iter", "2", "--quiet"], capsys)
    assert_one_line(code, err, "could not start", "this cloudpickle is broken",
                    "run without --jobs")


def _hangup_as_on_a_terminal():
    """SIGHUP's default action in the child, as under a terminal, even when
    the tests themselves run under nohup (which ignores it, and rsrank keeps
    a signal its caller ignores)."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _start_train_with_workers(out, small_folds):
    child = subprocess.Popen([sys.executable, "-m", "rsrank", "train", str(small_folds), "--jobs",
                              "2", "--max-iter", "1000000", "--weight-tol", "0", "--quiet",
                              "--out", str(out)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             start_new_session=True, preexec_fn=_hangup_as_on_a_terminal)
    workers, deadline = [], time.monotonic() + 120
    while len(workers) < 2 and child.poll() is None and time.monotonic() < deadline:
        workers = worker_processes(child.pid)
        time.sleep(0.05)
    assert len(workers) == 2, child.communicate(timeout=60)
    return child, workers


def _gone(pids, within=5.0):
    deadline = time.monotonic() + within
    while any(running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(running(pid) for pid in pids)


@needs_proc
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_terminated_run_stops_its_workers_and_leaves_nothing(signum, tmp_path, small_folds):
    out = tmp_path / "run"
    child, workers = _start_train_with_workers(out, small_folds)
    child.send_signal(signum)
    try:
        err = child.communicate(timeout=60)[1].strip().splitlines()
    finally:  # a run that did not stop is not left behind
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
    name = signal.Signals(signum).name
    assert (child.returncode, err) == (128 + signum, [f"rsrank train: terminated ({name})"])
    assert _gone(workers)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folds"]


def _catches(pid, signum):
    """Whether process ``pid`` has a handler for ``signum`` (/proc's SigCgt)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    return False


@needs_proc
def test_a_signal_the_caller_ignores_stays_ignored(tmp_path, small_folds):
    """nohup ignores SIGHUP so that a run outlives its terminal: rsrank must
    not turn it into an exit (SIGTERM still ends the run)."""
    child = subprocess.Popen([sys.executable, "-m", "rsrank", "train", str(small_folds),
                              "--max-iter", "1000000", "--weight-tol", "0", "--quiet", "--out",
                              str(tmp_path / "run")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    deadline = time.monotonic() + 120
    while not _catches(child.pid, signal.SIGTERM) and time.monotonic() < deadline:
        time.sleep(0.05)  # until the command has set its handlers
    child.send_signal(signal.SIGHUP)
    time.sleep(1.0)
    assert child.poll() is None, child.communicate()
    child.send_signal(signal.SIGTERM)
    err = child.communicate(timeout=60)[1].strip().splitlines()
    assert (child.returncode, err) == (128 + signal.SIGTERM,
                                       ["rsrank train: terminated (SIGTERM)"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folds"]


@needs_proc
def test_workers_end_when_their_parent_is_killed_outright(tmp_path, small_folds):
    child, workers = _start_train_with_workers(tmp_path / "run", small_folds)
    child.kill()  # SIGKILL: no handler runs in the parent
    child.communicate(timeout=60)
    assert _gone(workers), "workers outlived a killed parent"
    # the next run takes over what the killed one left (its lock, its staging)
    code = subprocess.run(train_argv(tmp_path / "run"), cwd=small_folds, capture_output=True,
                          timeout=300).returncode
    assert code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folds", "run"]


# -- locks ----------------------------------------------------------------------------


def _lock(out):
    return out.parent / f".{out.name}.lock"


def _finished_pid():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _old(path):
    os.utime(path, (time.time() - 3600, time.time() - 3600))
    return path


# (name, lock content or None for no lock, made old, expected exit code, words)
LOCK_CASES = [
    ("a dead owner's lock is taken over", lambda: f"{_finished_pid()}\n", False, 0, ()),
    ("an ownerless old lock is taken over", lambda: "", True, 0, ()),
    ("a fresh ownerless lock is respected", lambda: "", False, 2, ("another rsrank run",)),
    ("a live owner's lock is respected", lambda: f"{os.getpid()}\n", False, 2,
     ("another rsrank run", "lock")),
]


@pytest.mark.parametrize("name, content, old, code, words", LOCK_CASES,
                         ids=[case[0] for case in LOCK_CASES])
def test_locks(name, content, old, code, words, tmp_path, capsys, data_dir):
    out = tmp_path / "run"
    lock = write(tmp_path, _lock(out).name, content())
    if old:
        _old(lock)
    before = digest(data_dir)
    got, err = run(["train", "--train", data_dir / "train.txt", "--max-iter", "2", "--quiet",
                    "--out", out], capsys)
    if code == 0:
        assert got == 0, err
        assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "run"]
    else:
        assert_one_line(got, err, str(out), *words)
        assert lock.read_text() == content() or not content()  # untouched
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["data", lock.name])
    assert digest(data_dir) == before


def _disk_full_for(monkeypatch, function, inside):
    """``os.function`` fails with ENOSPC for a path whose name holds ``inside``."""
    real = getattr(os, function)

    def full(*args, **kwargs):
        if any(inside in str(a) for a in args[:2]):
            raise OSError(errno.ENOSPC, "No space left on device", str(args[-1]))
        return real(*args, **kwargs)

    monkeypatch.setattr(os, function, full)


@pytest.mark.parametrize("function, inside, words", [
    ("link", ".lock", ("cannot write in", "No space left on device")),
    ("mkdir", ".staging-", ("cannot write in", "No space left on device")),
    ("replace", ".staging-", ("cannot write the results", "No space left on device")),
], ids=["claiming the lock", "making the staging directory", "writing the results"])
def test_a_full_disk_names_out_and_leaves_no_lock(function, inside, words, tmp_path, capsys,
                                                  monkeypatch, data_dir):
    out = tmp_path / "run"
    _disk_full_for(monkeypatch, function, inside)
    code, err = run(["train", "--train", data_dir / "train.txt", "--max-iter", "2", "--quiet",
                     "--out", out], capsys)
    assert_one_line(code, err, str(out), *words)
    assert ".staging-" not in err[0]  # the hidden path is not the user's
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]
    monkeypatch.undo()  # space again: the next run is not blocked
    code, err = run(["train", "--train", data_dir / "train.txt", "--max-iter", "2", "--quiet",
                     "--out", out], capsys)
    assert code == 0, err


# -- the cache ------------------------------------------------------------------------


def _rewrite_keeping_size_and_mtime(path, change):
    stat = path.stat()
    data = bytearray(path.read_bytes())
    change(data)
    assert len(data) == stat.st_size
    with open(path, "r+b") as handle:  # in place: the same inode
        handle.write(data)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


@pytest.mark.parametrize("where", ["labels", "middle of a large file"])
def test_the_cache_does_not_serve_a_file_rewritten_in_place(where, tmp_path):
    """In a small file the hash sees the edit; in the middle of a large one
    the edit lies between the hashed blocks, and the inode change time,
    which the in-place write set and no user tool sets back, tells."""
    lines = [f"{q % 3} qid:{q} 1:{(q * 7) % 10 / 10:.1f} 2:0.{q % 10}\n" for q in range(1, 3000)]
    if where == "middle of a large file":
        lines = lines * 60  # several MiB
    path = write(tmp_path, "train.txt", "".join(lines))
    X, y, qid = load_letor(path, cache=True)
    first = X.toarray().copy(), y.copy()

    def change(data):
        at = len(data) // 2 + 10_000 if where != "labels" else 0  # between sampled blocks
        at = data.index(b"\n", at) + 1  # the start of a line: its label
        data[at:at + 1] = b"2" if data[at:at + 1] != b"2" else b"1"

    _rewrite_keeping_size_and_mtime(path, change)
    X, y, qid = load_letor(path, cache=True)
    assert not np.array_equal(y, first[1])
    X_parsed, y_parsed, _ = load_letor(path)
    np.testing.assert_array_equal(y, y_parsed)


# -- options a model kind would ignore --------------------------------------------------


@pytest.mark.parametrize("argv, words", [
    (["--additive", "--normalize", "query-zscore"], ("--normalize query-zscore", "--additive")),
    (["--max-bins", "8"], ("--max-bins", "--additive")),
], ids=["per-query scaling of an additive model", "bins of a linear model"])
@pytest.mark.parametrize("command", ["train", "path"])
def test_a_flag_the_kind_would_ignore_is_refused(command, argv, words, tmp_path, capsys,
                                                 data_dir):
    before = digest(data_dir)
    code, err = run([command, "--train", data_dir / "train.txt", *argv, "--out",
                     tmp_path / "run"], capsys)
    assert_one_line(code, err, *words)
    assert digest(data_dir) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]


def _queries():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    y = rng.integers(0, 3, size=120)
    return X, y, np.repeat(np.arange(12), 10)


@pytest.mark.parametrize("params, words", [
    (dict(additive=True, normalize="query-minmax"), "normalize='query-minmax'"),
    (dict(max_bins=8), "max_bins=8 applies to additive models"),
])
def test_the_api_refuses_a_parameter_the_kind_would_ignore(params, words):
    X, y, qid = _queries()
    with pytest.raises(ValueError, match=words):
        RSRank(max_iter=2, **params).fit(X, y, qid=qid)


@pytest.mark.parametrize("first, then, words", [
    (dict(additive=True, max_bins=32), dict(max_bins=8), "max_bins=32, now max_bins=8"),
    (dict(additive=True), dict(additive=False), "additive=True, now additive=False"),
    (dict(normalize="zscore"), dict(normalize="minmax"), "normalize='zscore'"),
])
def test_a_warm_start_refuses_a_model_shaped_otherwise(first, then, words):
    X, y, qid = _queries()
    model = RSRank(max_iter=2, warm_start=True, **first).fit(X, y, qid=qid)
    model.set_params(**then)
    with pytest.raises(ValueError, match=words):
        model.fit(X, y, qid=qid)
    if "additive" not in then:  # partial_fit goes on from the model too
        if not first.get("additive"):
            with pytest.raises(ValueError, match=words):
                model.partial_fit(X, y, qid=qid)


# -- feature costs and model files ----------------------------------------------------


def test_a_feature_cost_given_by_name_and_by_index_is_refused(tmp_path, capsys, data_dir):
    costs = write(tmp_path, "costs.txt", "f2 3\n1 2\n2 5\n")
    code, err = run(["train", "--train", data_dir / "train.txt", "--feature-costs", costs,
                     "--max-iter", "2", "--quiet"], capsys)
    assert_one_line(code, err, "'f2'", "twice")


def _additive_file(tmp_path):
    X, y, qid = _queries()
    path = tmp_path / "additive.json"
    RSRank(additive=True, max_bins=8, max_iter=5, learning_rate=0.1).fit(
        X, y, qid=qid).save(path)
    return path


def _edited(path, change):
    document = json.loads(path.read_text())
    change(document)
    edited = path.with_name("edited.json")
    edited.write_text(json.dumps(document))
    return edited


@pytest.mark.parametrize("change, words", [
    (lambda d: d["params"].update(additive=False), "parameters say additive=False"),
    (lambda d: d["params"].update(max_bins=4), "more than max_bins=4"),
    (lambda d: d["bin_counts"][0].__setitem__(0, 10 ** 30), "bin_counts"),
    (lambda d: d["thresholds"].__setitem__(0, [1e300]), "thresholds of feature 1"),
], ids=["params of another kind", "more thresholds than bins", "huge bin count",
        "threshold beyond float32"])
def test_a_model_file_that_contradicts_itself_is_one_line(change, words, tmp_path, capsys,
                                                          data_dir):
    path = _edited(_additive_file(tmp_path), change)
    before = path.read_bytes()
    code, err = run(["predict", path, data_dir / "train.txt"], capsys)
    assert_one_line(code, err, str(path), words)
    assert path.read_bytes() == before


def test_an_additive_model_on_a_narrower_file_names_its_features(tmp_path, capsys):
    X, y, qid = _queries()
    model = RSRank(additive=True, max_bins=8, max_iter=5, learning_rate=0.1).fit(X, y, qid=qid)
    model.set_feature_names(["bm25", "pagerank", "age", "clicks"])
    model.save(tmp_path / "m.json")
    used = [name for name, _ in model.selected_features()]
    assert {"age", "clicks"} <= set(used)
    narrow = write(tmp_path, "narrow.txt", GOOD)  # features 1 and 2 only
    assert main(["predict", str(tmp_path / "m.json"), str(narrow)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "2 of its 4 features" in err[0], err
    assert "age" in err[0] and "clicks" in err[0] and "bm25" not in err[0]
