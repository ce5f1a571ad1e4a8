"""The one error edge of the commands: a mistake, a missing file, a bad
line, a dead worker or a full memory is one line and exit 2; Ctrl-C, SIGTERM
and SIGHUP unwind (workers stopped, partial outputs and locks removed) and
exit 130 or 128 + the signal; warnings are one line per kind."""

import contextlib
import os
import signal
import sys
import warnings
from concurrent.futures import BrokenExecutor

from ..reading._files import remove_empty
from ..reading._text import LetorFormatError
from ..learning._blas import serial_blas
from ..learning._interrupts import interruption
from ..learning._workers import WorkerStartError

# this module imports no numerical library: a command that needs none (``fetch``)
# starts in a tenth of a second


class UsageError(ValueError):
    """A mistake in the command line itself."""


#: Directories created for this command's output files (``--out a/b/f``):
#: those still empty when it ends are removed
MADE_DIRECTORIES = []


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: unwinds like a Ctrl-C (workers stopped, partial
    results and locks removed), then ends with ``128 + signal``."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _terminate(signum, _frame):
    raise Terminated(signum)


@contextlib.contextmanager
def _termination_unwinds():
    """While the command runs, SIGTERM and SIGHUP (a batch scheduler, a
    closed terminal, ``timeout``) raise :class:`Terminated` instead of
    ending the process where it stands."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # a signal the caller ignores stays ignored: nohup ignores SIGHUP so that
    # the run outlives the terminal
    previous = {signum: signal.signal(signum, _terminate)
                for signum in (signal.SIGTERM, signal.SIGHUP)
                if signal.getsignal(signum) is not signal.SIG_IGN}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _interrupted_exit(command, interruption):
    if isinstance(interruption, Terminated):
        name = signal.Signals(interruption.signum).name
        print(f"rsrank {command}: terminated ({name})", file=sys.stderr)
        return 128 + interruption.signum
    print(f"rsrank {command}: interrupted", file=sys.stderr)
    return 130


def run(args):
    """Run ``args.run(args)`` (a parsed command line) inside the edge; returns
    the exit status."""
    caught = []

    def one_line(message, category, *_args, **_kwargs):
        caught.append((category.__name__, str(message)))

    try:
        # BLAS on one thread for the whole command, between fits too (its waiting threads
        # would share the cores with the next fit's)
        with warnings.catch_warnings(), _termination_unwinds(), serial_blas():
            warnings.simplefilter("default")
            warnings.showwarning = one_line
            return args.run(args)
    except BrokenPipeError:
        # the reader closed the pipe (| head): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except (OSError, LetorFormatError, ValueError, EOFError) as error:
        if args.debug:
            raise
        text = str(error) if not isinstance(error, EOFError) else (
            f"input ended early ({error}); is a .gz file truncated?")
        print(f"rsrank {args.command}: error: {text}", file=sys.stderr)
        return 2
    except WorkerStartError as error:
        if args.debug:
            raise
        print(f"rsrank {args.command}: error: {error}; run without --jobs to see it in "
              "this process", file=sys.stderr)
        return 2
    except BrokenExecutor as error:
        if args.debug:
            raise
        print(f"rsrank {args.command}: error: a worker process died (killed, or out of "
              f"memory?): {error}; run again, with fewer --jobs", file=sys.stderr)
        return 2
    except MemoryError:
        if args.debug:
            raise
        print(f"rsrank {args.command}: error: out of memory; use --stream for training files "
              "larger than memory, or a machine with more", file=sys.stderr)
        return 2
    except KeyboardInterrupt as error:
        return _interrupted_exit(args.command, error)
    except SystemError as error:
        # Ctrl-C (or a signal) while a compiled kernel runs: the kernel
        # returns with the interrupt pending, which CPython reports as a
        # SystemError whose cause is the KeyboardInterrupt
        found = interruption(error)
        if found is None:
            raise
        return _interrupted_exit(args.command, found)
    finally:
        remove_empty(MADE_DIRECTORIES)
        MADE_DIRECTORIES.clear()
        # one line per kind of warning: the first of its kind, and how many
        # fits (folds, grid points) gave one like it
        firsts = {}
        for category, message in caught:
            firsts.setdefault(category, message)
        for category, first in firsts.items():
            repeats = sum(kind == category for kind, _ in caught)
            more = f" (and {repeats - 1} more like it)" if repeats > 1 else ""
            print(f"rsrank {args.command}: warning: {category}: {first}{more}", file=sys.stderr)
