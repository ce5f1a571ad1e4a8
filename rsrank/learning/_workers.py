"""Tasks in worker processes, without a pool that needs a helper process.

Each worker is a fresh interpreter started in a session of its own, so a
Ctrl-C at the terminal reaches only this process, which then stops the
workers instead of each printing its own traceback. Tasks and results
travel pickled over the worker's
standard input and output, so no semaphore, shared memory or resource
tracker is involved: nothing is left to leak or to complain when a
process is killed. A worker's prints go to its standard error, which is
this process's, and the warnings a task raises come back with its outcome
and are raised again here, through this process's filters and display.
"""

import os
import pickle
import selectors
import struct
import subprocess
import sys
import warnings
from collections import deque
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

try:  # functions and classes of a script travel by value, as joblib sends them
    import cloudpickle
except ImportError:  # pragma: no cover - joblib before 1.5 kept its own copy
    try:
        from joblib.externals import cloudpickle
    except ImportError:
        cloudpickle = None

__all__ = ["in_processes", "worker_count", "WorkerStartError"]

_HEADER = struct.Struct("<Q")


def worker_count(n_jobs):
    """Workers for ``n_jobs`` as joblib reads it: None and 1 are none (run
    here), -1 one per core, -2 all but one, and so on."""
    if n_jobs is None or n_jobs == 1:
        return 0
    cores = os.cpu_count() or 1
    count = cores + 1 + n_jobs if n_jobs < 0 else n_jobs
    return 0 if count <= 1 else int(count)


def in_processes(function, tasks, n_workers):
    """``function(*task)`` for each task of the iterable ``tasks``, in the
    tasks' order, computed by up to ``n_workers`` worker processes (the
    iterable is read as workers become free). An exception of a task is
    raised here with the task's traceback as its ``__cause__`` text; a
    worker that dies raises :class:`BrokenProcessPool`."""
    pending, results, workers = iter(enumerate(tasks)), {}, []
    waiting = deque()  # idle workers
    busy = {}  # worker -> task index
    selector = selectors.DefaultSelector()
    next_out, exhausted = 0, False
    try:
        while True:
            # hand a task to every idle worker, starting workers as needed
            while not exhausted and (waiting or len(workers) < n_workers):
                item = next(pending, None)
                if item is None:
                    exhausted = True
                    break
                worker = waiting.popleft() if waiting else _start(workers, selector)
                _send(worker, (function, item[1]))
                busy[worker] = item[0]
            while next_out in results:
                outcome = results.pop(next_out)
                next_out += 1
                yield outcome
            if exhausted and not busy:
                return
            for key, _ in selector.select():
                worker = key.data
                status, value, caught = _receive(worker)
                index = busy.pop(worker)
                for message, category, filename, lineno in caught:
                    warnings.warn_explicit(message, category, filename, lineno)
                if status == "error":
                    error, text = value
                    raise error from _TaskTraceback(text)
                results[index] = value
                waiting.append(worker)
    finally:
        for worker in workers:
            _stop(worker)
        selector.close()


def _dumps(value):
    if cloudpickle is not None:
        return cloudpickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


class _TaskTraceback(Exception):
    """The traceback of a task that failed in a worker process."""


class WorkerStartError(BrokenProcessPool):
    """A worker process could not start; the message gives its reason."""


def _start(workers, selector):
    package_root = str(Path(__file__).resolve().parents[2])
    worker = subprocess.Popen([sys.executable, "-c", _WORKER, package_root, str(os.getpid())],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              start_new_session=True)
    workers.append(worker)
    selector.register(worker.stdout, selectors.EVENT_READ, worker)
    return worker


def _send(worker, message):
    data = _dumps(message)
    try:
        worker.stdin.write(_HEADER.pack(len(data)) + data)
        worker.stdin.flush()
    except OSError:
        raise _died(worker) from None


def _receive(worker):
    header = worker.stdout.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise _died(worker)
    (size,) = _HEADER.unpack(header)
    data = worker.stdout.read(size)
    if len(data) < size:
        raise _died(worker)
    outcome = pickle.loads(data)
    if outcome[0] == "startup":
        worker.wait()
        raise WorkerStartError(f"a worker process could not start: {outcome[1]}")
    return outcome


def _died(worker):
    try:
        code = worker.wait(timeout=5)
    except subprocess.TimeoutExpired:
        code = None
    how = (f"killed by signal {-code}" if code is not None and code < 0
           else f"exit status {code}")
    return BrokenProcessPool(f"worker process {worker.pid} ended ({how}) before its task was done")


def _stop(worker):
    if worker.poll() is None:
        worker.kill()
    for stream in (worker.stdin, worker.stdout):
        try:
            stream.close()
        except OSError:
            pass
    worker.wait()


#: The worker's program. The working directory leaves the path first (a
#: folder named rsrank there, a clone or an earlier --out, is not this
#: package); this very package goes first when the interpreter would find
#: another rsrank or none; a failure to start is sent back as its reason.
#: The worker ends when its parent does, however the parent ended.
_WORKER = """import os, pickle, struct, sys
if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]
try:
    import importlib.util
    from pathlib import Path
    spec = importlib.util.find_spec("rsrank")
    origin = getattr(spec, "origin", None)
    if origin is None or Path(origin).resolve().parents[1] != Path(sys.argv[1]):
        sys.path.insert(0, sys.argv[1])
    from rsrank.learning._workers import _serve
except BaseException as error:
    data = pickle.dumps(("startup", f"{type(error).__name__}: {error}", []))
    out = sys.stdout.buffer
    out.write(struct.pack("<Q", len(data)) + data)
    out.flush()
    sys.exit(3)
_serve(int(sys.argv[2]))
"""


def _end_with(parent):
    """End this process as soon as ``parent`` is gone: at once on Linux
    (the kernel's parent-death signal), else within half a second (a
    thread that watches the parent's id)."""
    import signal
    import threading
    import time

    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    if os.getppid() != parent:  # gone before the signal was set
        os._exit(1)
    threading.Thread(target=watch, daemon=True).start()


def _serve(parent):
    """A worker's loop: read a task, run it, write its outcome, until the
    input ends or ``parent`` does. Standard output becomes standard error,
    so that prints do not mix with the outcomes."""
    import traceback

    _end_with(parent)
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    source = sys.stdin.buffer
    while True:
        header = source.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        (size,) = _HEADER.unpack(header)
        message = source.read(size)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")  # the caller's filters decide what shows
            try:
                function, task = pickle.loads(message)
                outcome = ("ok", function(*task))
            except Exception as error:  # sent back whole: the caller raises it
                outcome = ("error", (error, traceback.format_exc()))
        raised = [(w.message, w.category, w.filename, w.lineno) for w in caught]
        try:
            data = _dumps((*outcome, raised))
            if outcome[0] == "error" or raised:
                pickle.loads(data)
        except Exception:  # an exception or warning that does not travel: its text does
            text = outcome[1][1] if outcome[0] == "error" else traceback.format_exc()
            error = outcome[1][0] if outcome[0] == "error" else None
            data = _dumps(("error", (RuntimeError(
                f"{type(error).__name__}: {error}" if error is not None
                else "a task's outcome could not be sent back"), text),
                [(str(m), UserWarning, f, n) for m, _, f, n in raised]))
        try:
            out.write(_HEADER.pack(len(data)) + data)
            out.flush()
        except OSError:  # the parent is gone: nobody waits for the outcome
            os._exit(1)
