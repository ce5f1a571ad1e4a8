"""Worker processes for the folds (rsrank.learning._workers): order, errors, deaths,
and nothing left running."""

import os
import signal
import sys
import time
import warnings

import pytest

from rsrank.learning._workers import cloudpickle, in_processes, worker_count

# pytest imports this file by path: its functions travel by value, as a script's do
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def square_after(x, pause):
    time.sleep(pause)
    return x * x, os.getpid()


def fails_on_three(x):
    if x == 3:
        raise ValueError(f"task {x} is bad")
    return x


def dies_on_two(x):
    if x == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return x


def warns_on_one(x):
    if x == 1:
        warnings.warn(f"task {x} warns", RuntimeWarning)
    return x


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as handle:  # a zombie is not running
        return handle.read().split(")")[-1].split()[0] != "Z"


def test_results_come_in_task_order_from_several_processes():
    # the first task is the slowest, so later ones finish first
    tasks = [(x, 0.4 if x == 0 else 0.0) for x in range(7)]
    out = list(in_processes(square_after, tasks, 3))
    assert [value for value, _ in out] == [x * x for x in range(7)]
    pids = {pid for _, pid in out}
    assert os.getpid() not in pids and 2 <= len(pids) <= 3
    assert not any(alive(pid) for pid in pids)


def test_a_task_error_is_raised_here_with_the_workers_traceback():
    with pytest.raises(ValueError, match="task 3 is bad") as caught:
        list(in_processes(fails_on_three, [(x,) for x in range(6)], 2))
    assert "fails_on_three" in str(caught.value.__cause__)


def test_a_killed_worker_is_a_broken_pool_naming_the_signal():
    from concurrent.futures.process import BrokenProcessPool

    with pytest.raises(BrokenProcessPool, match="killed by signal 9"):
        list(in_processes(dies_on_two, [(x,) for x in range(5)], 2))


def test_leaving_early_stops_the_workers():
    results = in_processes(square_after, [(x, 0.0) for x in range(10)], 2)
    _, pid = next(results)
    results.close()
    assert not alive(pid)


def test_worker_count_reads_n_jobs_as_joblib_does():
    cores = os.cpu_count() or 1
    assert worker_count(None) == worker_count(1) == 0
    assert worker_count(3) == 3
    assert worker_count(-1) == (cores if cores > 1 else 0)
    assert worker_count(-cores) == 0


def test_a_tasks_warnings_are_raised_here_once():
    with pytest.warns(RuntimeWarning, match="task 1 warns") as caught:
        assert list(in_processes(warns_on_one, [(x,) for x in range(4)], 2)) == [0, 1, 2, 3]
    assert len([w for w in caught if "task 1 warns" in str(w.message)]) == 1


def test_the_command_shows_a_workers_warning_as_its_own_one_line(tmp_path):
    import subprocess

    from rsrank.reading.synthetic import make_raw_features
    from rsrank.evaluation.writers import write_letor

    data = make_raw_features(60, random_state=0)
    write_letor(tmp_path / "raw.txt", data.X, data.y, data.qid)
    # raw features without scaling at a large step: the loss diverges in the worker
    run = subprocess.run([sys.executable, "-m", "rsrank.cli", "train", str(tmp_path / "raw.txt"),
                          "--jobs", "2", "--normalize", "none", "--learning-rate", "0.1",
                          "--l1", "0", "--max-iter", "10", "--quiet"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rsrank train: warning: DivergenceWarning")
    assert "| NDCG@1 |" in run.stdout  # and the table still comes
