"""Bad input and faults: a table of damaged files and wrong command lines,
each run through the command line. Every case must end with exit code 2 and
one stderr line that names the path (and the line, where there is one) and
the problem, leave every input byte for byte as it was, and leave no
temporary file behind. Then: two processes racing on one --out, a rename
that fails, and a run killed while it writes its results."""

import gzip
import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import pytest

from rsrank import RSRank, load_letor
from rsrank.cli import main

from conftest import run_cli

GOOD = "2 qid:1 1:0.5 2:0.25 #docid = a\n0 qid:1 1:0.1 2:0.5 #docid = b\n1 qid:2 1:1 2:0 #docid = c\n"

# (name, file name, content, expected line or None, words the message must hold)
BAD_FILES = [
    ("huge label", "f.txt", "1e20 qid:1 1:0.5\n", 1, "not a relevance grade"),
    ("underscore label", "f.txt", GOOD + "1_0 qid:3 1:0.5\n", 4, "1_0"),
    ("underscore qid", "f.txt", "1 qid:1_0 1:0.5\n", 1, "1_0"),
    ("underscore value", "f.txt", "1 qid:1 1:0_5\n", 1, "0_5"),
    ("arabic digit qid", "f.txt", "1 qid:\u0662 1:0.5\n", 1, "U+0662"),
    ("hash inside a token", "f.txt", GOOD + "2#x qid:2 1:0.5\n", 4, "'#' inside the token"),
    ("qid beyond int64", "f.txt", "1 qid:9223372036854775808 1:0.5\n", 1, "64-bit"),
    ("index beyond int32", "f.txt", "1 qid:1 2147483648:0.5\n", 1, "32-bit"),
    ("index beyond a sane width", "f.txt", GOOD + "1 qid:3 2147483647:0.5\n", 4,
     "--n-features"),
    ("CR-only line endings", "f.txt", GOOD.replace("\n", "\r"), 1, "carriage return"),
    ("NBSP separator", "f.txt", "1 qid:1\u00a01:0.5\n", 1, "U+00A0"),
    ("LETOR 4.0 NULL", "f.txt", GOOD + "1 qid:3 1:NULL\n", 4, "NULL"),
    ("infinite value", "f.txt", "1 qid:1 1:inf\n", 1, "non-finite"),
    ("negative label", "f.txt", "-1 qid:1 1:0.5\n", 1, "negative"),
    ("fractional label", "f.txt", "1.5 qid:1 1:0.5\n", 1, "integer"),
    ("decreasing indices", "f.txt", "1 qid:1 2:0.5 1:0.5\n", 1, "increase"),
    ("missing qid", "f.txt", GOOD + "1 1:0.5\n", 4, "qid"),
    ("empty file", "f.txt", "", None, "no data rows"),
    ("truncated gzip", "f.txt.gz", gzip.compress("".join(
        f"{i % 3} qid:{i // 10} 1:{np.sin(i):.6f} 2:{np.cos(i):.6f}\n"
        for i in range(5000)).encode())[:20000], None, "truncated"),
    ("not gzip", "f.txt.gz", GOOD.encode(), None, "not gzip"),
    # a flipped bit in the stored CRC, then in the stored length
    ("gzip CRC", "f.txt.gz", gzip.compress(GOOD.encode())[:-8]
     + bytes([gzip.compress(GOOD.encode())[-8] ^ 1]) + gzip.compress(GOOD.encode())[-7:],
     None, "corrupt gzip data (CRC check failed"),
    ("gzip length", "f.txt.gz", gzip.compress(GOOD.encode())[:-4]
     + bytes([gzip.compress(GOOD.encode())[-4] ^ 1]) + gzip.compress(GOOD.encode())[-3:],
     None, "corrupt gzip data (Incorrect length"),
]


def digest(directory):
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(Path(directory).rglob("*")) if path.is_file()}


run = run_cli


def assert_one_line(code, err, *words):
    assert code == 2, err
    assert len(err) == 1, err
    assert "Traceback" not in err[0]
    for word in words:
        assert word in err[0], (word, err[0])


@pytest.fixture
def model_file(tmp_path_factory):
    directory = tmp_path_factory.mktemp("model")
    X, y, qid = load_letor(write(directory, "train.txt", GOOD))
    RSRank(max_iter=2).fit(X, y, qid=qid).save(directory / "model.json")
    return directory / "model.json"


def write(directory, name, content):
    path = Path(directory) / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


@pytest.mark.parametrize("name, file_name, content, line, words", BAD_FILES,
                         ids=[case[0] for case in BAD_FILES])
def test_bad_file(name, file_name, content, line, words, tmp_path, capsys, model_file):
    data = tmp_path / "data"
    data.mkdir()
    path = write(data, file_name, content)
    before = digest(tmp_path)
    where = f"{path}, line {line}:" if line else f"{path}:"
    commands = [["info", path], ["train", "--train", path, "--quiet", "--max-iter", "2"],
                ["predict", model_file, path], ["evaluate", model_file, path]]
    for argv in commands:
        code, err = run(argv, capsys)
        assert_one_line(code, err, where, words)
    assert digest(tmp_path) == before
    assert not [p for p in tmp_path.rglob(".*")], "temporary files left behind"


def test_huge_labels_are_refused_by_the_gain_not_dropped(tmp_path, capsys, model_file):
    path = write(tmp_path, "f.txt", "0 qid:1 1:0.5\n1024 qid:1 1:0.1\n1 qid:2 1:1\n0 qid:2 1:0\n")
    code, err = run(["train", "--train", path, "--quiet", "--max-iter", "2"], capsys)
    assert_one_line(code, err, f"{path}, line 2: label 1024 is above 255", "at most 255")
    # held out of train as vali: the line is the file's, not the split's row
    code, err = run(["train", "--train", path, "--quiet", "--max-iter", "2",
                     "--vali-fraction", "0.5"], capsys)
    assert_one_line(code, err, f"{path}, line 2: label 1024")
    code, err = run(["evaluate", model_file, path], capsys)
    assert_one_line(code, err, f"{path}, line 2: label 1024", "--convention sklearn")
    code, err = run(["evaluate", model_file, path, "--convention", "sklearn"], capsys)
    assert code == 0  # gain = label takes it


def test_float32_overflow_names_the_line(tmp_path):
    from rsrank import LetorFormatError

    path = write(tmp_path, "f.txt", GOOD + "1 qid:3 1:1e39\n")
    with pytest.raises(LetorFormatError, match=r"f\.txt, line 4: .*overflows float32"):
        load_letor(path, dtype=np.float32)


def bad_invocations(tmp_path, data_dir, model_file):
    train = data_dir / "train.txt"
    existing = write(tmp_path, "existing.txt", "keep me\n")
    folder = tmp_path / "folder"
    folder.mkdir(exist_ok=True)
    return [
        (["train", "--train", train, "--l1", "nan"], "nan"),
        (["train", "--train", train, "--learning-rate", "-1"], "-1"),
        (["train", "--n-features", "-3"], "-3"),
        (["train", "--train", train, "--out", ""], "empty"),
        (["train", "--folds", "1,1", "--max-iter", "1", "--quiet"], "repeat"),
        (["train", "--train", train, "--out", existing, "--force"], "not a results directory"),
        (["train", "--train", train, "--out", data_dir, "--force"], "input"),
        # a run that fails takes back the directories it made for --out
        (["train", "--train", write(tmp_path, "huge.txt", "300 qid:1 1:1\n0 qid:1 1:0\n"
                                    "1 qid:2 1:1\n0 qid:2 1:0\n"),
          "--out", tmp_path / "missing" / "run"], "huge.txt, line 1: label 300"),
        (["predict", model_file, tmp_path / "nothere.txt", "--out", tmp_path / "made" / "f"],
         "no such file"),
        # a model file that is not there, for every command that reads one
        (["predict", tmp_path / "gone.json", train], "gone.json: no such file (RSRank model file)"),
        (["export", tmp_path / "gone.json", "--format", "solr"],
         "gone.json: no such file (RSRank model file)"),
        (["plot", tmp_path / "gone.json", "--out", tmp_path / "s.png"],
         "gone.json: no such file (RSRank model file)"),
        (["train", "--train", train, "--vali-fraction", "1.5"], "1.5"),
        (["predict", model_file, train, "--out", train], "input"),
        (["predict", model_file, train, "--out", folder], "is a directory"),
        (["evaluate", "--scores", folder, train], "is a directory"),
        (["evaluate", "--scores", "/dev/zero", train], "longer than"),
        (["evaluate", "/dev/zero", train], "larger than"),
        (["evaluate", write(tmp_path, "binary.json", bytes(range(256))), train], "UTF-8"),
        (["export", model_file, "--format", "solr", "--out", model_file], "input"),
        (["train", "--train", train, "--feature-names", write(tmp_path, "names.txt", "a\na\n")],
         "twice"),
        # the flag, not the internal parameter it becomes
        (["train", "--train", train, "--jobs", "0"], "argument --jobs: '0'"),
        (["train", "--train", train, "--stream", "0"], "argument --stream: '0'"),
        (["train", "--train", train, "--patience", "-1"], "argument --patience: '-1'"),
        # what the path is, not "no such file"
        (["train", "--train", folder], f"{folder}: a directory, not a file (train split)"),
        (["train", "--train", existing / "train.txt"],
         f"{existing} is a file, not a directory (train split)"),
        (["train", "--train", train, "--out", existing / "run"],
         f"{existing} is a file, not a directory"),
        (["evaluate", model_file, folder], f"{folder}: a directory, not a file"),
        # the data given in place of the model
        (["predict", train, model_file], f"{train}: LETOR data, not an RSRank model file"),
        # replacing the data's directory or a file in it; an output beside them is fine
        (["train", data_dir, "--out", data_dir, "--force"], "is the input"),
        (["train", data_dir, "--out", tmp_path, "--force"], "holds the input"),
        (["train", data_dir, "--out", data_dir / "train.txt", "--force"], "not a results"),
    ]


def test_bad_invocations(tmp_path, capsys, data_dir, model_file):
    for argv, word in bad_invocations(tmp_path, data_dir, model_file):
        before = digest(tmp_path) | digest(model_file.parent)
        code, err = run(argv, capsys)
        assert code == 2, (argv, err)
        assert err and "Traceback" not in "\n".join(err), (argv, err)
        assert word in err[-1], (argv, err)
        assert digest(tmp_path) | digest(model_file.parent) == before, argv
        assert not [p for p in tmp_path.rglob(".*")], argv
        assert not (tmp_path / "missing").exists() and not (tmp_path / "made").exists(), argv


def test_out_gets_its_missing_directories(tmp_path, capsys, data_dir, model_file):
    train = data_dir / "train.txt"
    assert main(["train", "--train", str(train), "--max-iter", "2", "--quiet",
                 "--out", str(tmp_path / "runs" / "a" / "run")]) == 0
    assert (tmp_path / "runs" / "a" / "run" / "results.json").is_file()
    assert main(["predict", str(model_file), str(train), "--out",
                 str(tmp_path / "out" / "b" / "scores.txt")]) == 0
    assert len((tmp_path / "out" / "b" / "scores.txt").read_text().split()) == 72
    capsys.readouterr()


def test_model_file_of_the_wrong_json_types_is_one_line(tmp_path, capsys, model_file, data_dir):
    document = json.loads(model_file.read_text())
    for key, value in (("fitted", []), ("params", []), ("coef", "x"), ("format_version", "1")):
        broken = dict(document, **{key: value})
        path = write(tmp_path, "broken.json", json.dumps(broken))
        code, err = run(["predict", path, data_dir / "train.txt"], capsys)
        assert_one_line(code, err, str(path))


def test_unreachable_scheduler_is_one_line(capsys, data_dir, monkeypatch):
    import rsrank.cli.train

    monkeypatch.setattr(rsrank.cli.train, "SCHEDULER_TIMEOUT", "1s")  # the same error, sooner
    code, err = run(["train", "--train", data_dir / "train.txt", "--quiet",
                     "--scheduler", "tcp://127.0.0.1:9"], capsys)
    assert_one_line(code, err)


# -- results directories: races, failed renames, killed runs ----------------------------


def train_argv(out, *extra):
    return [sys.executable, "-m", "rsrank.cli", "train", "--folds", "1", "--max-iter", "5",
            "--quiet", "--out", str(out), *extra]


def test_two_processes_racing_on_one_out(tmp_path):
    out = tmp_path / "run"
    runs = [subprocess.Popen(train_argv(out), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for _ in range(2)]
    results = [(run.wait(timeout=300), run.stderr.read()) for run in runs]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    loser = next(err for code, err in results if code == 2)
    assert loser.count("\n") == 1 and str(out) in loser
    assert json.loads((out / "results.json").read_text())["folds"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


@pytest.mark.slow
def test_force_replaces_results_in_one_step(tmp_path):
    out = tmp_path / "run"
    subprocess.run(train_argv(out), check=True, capture_output=True, timeout=300)
    seen_missing = []
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            try:
                json.loads((out / "results.json").read_text())
            except (OSError, ValueError):
                seen_missing.append(True)
            time.sleep(0.0005)  # a look every half millisecond, leaving the cores to the runs

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        for _ in range(3):
            subprocess.run(train_argv(out, "--force"), check=True, capture_output=True,
                           timeout=300)
    finally:
        stop.set()
        watcher.join()
    assert not seen_missing
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_a_failing_rename_keeps_the_old_results(tmp_path, capsys, monkeypatch):
    import rsrank.reading._files

    out = tmp_path / "run"
    assert main(["train", "--folds", "1", "--max-iter", "2", "--quiet", "--out", str(out)]) == 0
    before = digest(out)

    def broken(*_):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(rsrank.reading._files, "_exchange", broken)
    capsys.readouterr()
    code, err = run(["train", "--folds", "1", "--max-iter", "3", "--quiet", "--out", out,
                     "--force"], capsys)
    assert_one_line(code, err, "Input/output error")
    assert digest(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    monkeypatch.setattr(rsrank.reading._files.os, "rename", broken)
    code, err = run(["train", "--folds", "1", "--max-iter", "2", "--quiet", "--out",
                     tmp_path / "fresh"], capsys)
    assert_one_line(code, err, "Input/output error")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


@pytest.mark.slow
def test_a_run_killed_while_writing_leaves_nothing_that_blocks_the_next(tmp_path):
    out = tmp_path / "run"
    killed = subprocess.run([sys.executable, "-c", f"""
import os, signal
from rsrank.reading._files import ResultsDirectory
claim = ResultsDirectory({str(out)!r}).__enter__()
(claim.staging / "results.json").write_text('{{"half": ')
os.kill(os.getpid(), signal.SIGKILL)
"""], capture_output=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL
    assert not out.exists() and any(p.name.startswith(".run.") for p in tmp_path.iterdir())
    done = subprocess.run(train_argv(out), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "results.json").read_text())["folds"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


@pytest.mark.slow
def test_results_respect_the_umask(tmp_path):
    out = tmp_path / "run"
    done = subprocess.run(["bash", "-c", "umask 022 && " + " ".join(train_argv(out))],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert oct(os.stat(out).st_mode & 0o777) == oct(0o755)
    assert oct(os.stat(out / "results.json").st_mode & 0o777) == oct(0o644)


def test_a_full_disk_while_writing_keeps_the_old_results(tmp_path, capsys, monkeypatch):
    import errno

    import rsrank.cli.train

    out = tmp_path / "run"
    assert main(["train", "--folds", "1", "--max-iter", "2", "--quiet", "--out", str(out)]) == 0
    before = digest(out)
    real = rsrank.cli.train.write_experiment

    def full(experiment, directory, **options):
        real(experiment, directory, **options)  # half of it, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device", str(directory / "results.md"))

    monkeypatch.setattr(rsrank.cli.train, "write_experiment", full)
    capsys.readouterr()
    code, err = run(["train", "--folds", "1", "--max-iter", "3", "--quiet", "--out", out,
                     "--force"], capsys)
    assert_one_line(code, err, "No space left on device")
    assert digest(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_a_dead_worker_process_is_one_line(capsys, monkeypatch, data_dir):
    from concurrent.futures.process import BrokenProcessPool

    import rsrank.cli.train

    def dies(*_, **__):
        raise BrokenProcessPool("A task has failed to un-serialize")

    monkeypatch.setattr(rsrank.cli.train, "run_letor_folds", dies)
    code, err = run(["train", "--train", data_dir / "train.txt", "--jobs", "2"], capsys)
    assert_one_line(code, err, "worker process died")


def test_atomic_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    from rsrank.reading._files import atomic_write_text

    target = write(tmp_path, "scores.txt", "old\n")

    def refuse(*_):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError):
        atomic_write_text(target, "new\n")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scores.txt"]


def test_ctrl_c_inside_a_kernel_is_an_interrupt(monkeypatch, capsys):
    """A SIGINT that lands while a numba kernel runs comes back as the
    SystemError 'returned a result with an exception set', chained to the
    KeyboardInterrupt: it must end as an interrupt (130), not exit 1."""
    import rsrank.cli as cli
    import rsrank.cli.info

    def interrupted_kernel(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise SystemError("CPUDispatcher(<function _epoch>) returned a result with an "
                              "exception set")

    def other_error(args):
        raise SystemError("something else")

    monkeypatch.setattr(rsrank.cli.info, "run", interrupted_kernel)
    assert cli.main(["info"]) == 130
    assert capsys.readouterr().err.strip() == "rsrank info: interrupted"
    monkeypatch.setattr(rsrank.cli.info, "run", other_error)
    with pytest.raises(SystemError, match="something else"):
        cli.main(["info"])


class _ImportFails:
    """A finder that makes importing one module raise ``error()``."""

    def __init__(self, name, error):
        self.name, self.error = name, error

    def find_spec(self, name, path=None, target=None):
        if name == self.name:
            raise self.error()
        return None


def _set_name_wrapped_interrupt():
    # what Python raises when the SIGINT lands in a class's __set_name__
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt as interrupt:
        error = RuntimeError("Error calling __set_name__ on '_Column' instance 'style'")
        error.__cause__ = interrupt
        return error


@pytest.mark.parametrize("error, expected", [
    (KeyboardInterrupt, 130),
    (_set_name_wrapped_interrupt, 130),
    (lambda: RuntimeError("a library that fails to import"), None),
])
def test_an_interrupt_that_the_imports_wrap_is_an_interrupt(monkeypatch, capsys, error,
                                                            expected):
    """The command's module is imported after the command line is read: an
    interrupt there, bare or wrapped by the library being imported, ends as
    one line and exit 130; any other import error is not taken for one."""
    import rsrank.cli as cli

    monkeypatch.delitem(sys.modules, "rsrank.cli.info", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_ImportFails("rsrank.cli.info", error)]
                        + sys.meta_path)
    if expected is None:
        with pytest.raises(RuntimeError, match="fails to import"):
            cli.main(["info"])
        return
    assert cli.main(["info"]) == expected
    assert capsys.readouterr().err.strip() == "rsrank: interrupted"


#: the child's start: an import of ``{module}`` writes a byte and stalls there
#: (an interruptible sleep), so that the SIGINT the test sends on that byte
#: lands inside that import on any machine, however fast or loaded
STALLED_START = """
import sys, time

class Stall:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            sys.meta_path.remove(self)
            sys.stdout.write("."); sys.stdout.flush()
            time.sleep(60)
        return None

sys.meta_path.insert(0, Stall())
from rsrank.__main__ import main
sys.exit(main())
"""


@pytest.mark.parametrize("module", ["rsrank.cli", "numpy", "sklearn.base"])
def test_ctrl_c_while_the_command_still_imports_is_an_interrupt(module):
    """The command's first second is spent importing NumPy, scikit-learn and
    numba: a SIGINT there ends as one anywhere later does. (The command line
    itself first, then the command's modules, which it imports on use.)"""
    # a terminal's default for SIGINT (a test runner's worker may ignore it, and a child
    # would inherit that)
    child = subprocess.Popen([sys.executable, "-c", STALLED_START.format(module=module),
                              "info"], stderr=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert child.stdout.read(1) == ".", f"the command never imported {module}"
    child.send_signal(signal.SIGINT)
    err = child.communicate(timeout=60)[1].strip().splitlines()
    assert child.returncode == 130, err
    assert err == ["rsrank: interrupted"], err


def worker_processes(parent):
    """Pids of the rsrank worker processes that ``parent`` started."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            command = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and b"rsrank.learning._workers" in command:
            found.append(int(stat.parent.name))
    return found


def running(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.parametrize("how", ["ctrl-c", "a worker killed"])
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the workers in /proc")
def test_folds_in_worker_processes_end_in_one_line_and_leave_nothing(how, tmp_path):
    """--jobs 2 runs the folds in two worker processes. A Ctrl-C at the
    terminal (SIGINT to the foreground process group) while they start, or
    one of them killed: one line, the interrupt's or the error's exit code,
    no traceback from any process, no worker left, no --out."""
    out = tmp_path / "run"
    child = subprocess.Popen(
        [sys.executable, "-m", "rsrank.cli", "train", "--jobs", "2", "--quiet", "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    workers, deadline = [], time.monotonic() + 120
    while len(workers) < 2 and child.poll() is None and time.monotonic() < deadline:
        workers = worker_processes(child.pid)
        time.sleep(0.05)
    assert len(workers) == 2, child.communicate(timeout=120)
    if how == "ctrl-c":
        os.killpg(child.pid, signal.SIGINT)
    else:
        os.kill(workers[0], signal.SIGKILL)
    err = child.communicate(timeout=120)[1].strip().splitlines()
    if how == "ctrl-c":
        assert (child.returncode, err) == (130, ["rsrank train: interrupted"])
    else:
        assert child.returncode == 2 and len(err) == 1, err
        assert "worker process" in err[0] and "killed by signal 9" in err[0], err
        assert "fewer --jobs" in err[0]
    assert not any(running(pid) for pid in workers)
    assert list(tmp_path.iterdir()) == []


# (name, content): files the whole-file reader and the streaming reader must
# treat alike: the same rows, or a refusal at the same line
READER_CASES = [
    ("negative qid", "1 qid:-3 1:0.5\n0 qid:-3 1:0.2\n1 qid:4 1:0.1\n0 qid:4 1:0.3\n"),
    ("qid beyond int64", "1 qid:-9223372036854775808 1:0.5\n"),
    ("control character line", "1 qid:1 1:0.5\n\x01\n0 qid:1 1:0.2\n"),
    ("blank and comment lines", "# head\n\n1 qid:1 1:0.5 # a\n\n0 qid:1 1:0.2\n"),
    ("CRLF line ends", "1 qid:1 1:0.5\r\n0 qid:1 1:0.2\r\n"),
    ("tab separators", "1\tqid:1\t1:0.5\n0\tqid:1\t1:0.2\n"),
    ("plus-signed qid", "1 qid:+1 1:0.5\n0 qid:+1 1:0.2\n"),
    ("missing qid on one line", "1 qid:1 1:0.5\n0 1:0.2\n"),
    ("index zero", "1 qid:1 0:0.5\n"),
    ("fractional label", "1.5 qid:1 1:0.5\n"),
]


@pytest.mark.parametrize("name, content", READER_CASES, ids=[c[0] for c in READER_CASES])
def test_the_whole_file_and_streaming_readers_agree(name, content, tmp_path):
    from rsrank import LetorFormatError, iter_letor_chunks

    path = write(tmp_path, "f.txt", content)

    def outcome(read):
        try:
            X, y, qid = read()
        except LetorFormatError as error:
            return ("refused", error.line)
        return ("read", X.toarray().tolist(), y.tolist(), qid.tolist())

    def streamed():
        chunks = list(iter_letor_chunks(path, 1000, n_features=1))
        return (sp.vstack([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks]),
                np.concatenate([c[2] for c in chunks]))

    whole = outcome(lambda: load_letor(path, n_features=1)[:3])
    assert outcome(streamed) == whole
