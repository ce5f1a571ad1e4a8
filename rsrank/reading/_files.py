"""Outputs that never half-exist and never replace an input.

* :func:`atomic_write_bytes` and :func:`atomic_write_text` write every
  file the package writes, by the kind of what is at the path (as ``cp``
  and ``install`` treat their target): a new or regular file is written
  through a temporary sibling and one rename, so a reader sees the old file
  or the new one; a symbolic link to a regular file has its target replaced
  that way and stays a link; a character device or a FIFO (``/dev/null``,
  ``/dev/stdout``, a named pipe) is written through, never replaced; a
  directory, a block device, a socket or a link to nothing is refused in
  one line (:func:`check_output_target` says so before any work).
* :class:`ResultsDirectory` claims an output directory before the work
  starts and publishes it in one step when the work is done. The claim is
  git's lock-file protocol: ``.NAME.lock`` beside the target, made by one
  ``link`` of a file that already holds the process id, so of two runs only
  one holds it and the lock always names its owner; the other is told at
  once, before it trains anything, and a lock whose owner is gone is taken
  over. The results are written into a hidden
  staging directory and then renamed into place; replacing existing results
  (``overwrite``) swaps the two directories atomically with Linux's
  ``renameat2(RENAME_EXCHANGE)``, so the path holds the complete old results
  or the complete new ones at every instant. Every failure path removes the
  staging directory and the lock, and leftovers of a killed run (its process
  is gone) are removed by the next run. An existing directory is replaced
  only when it is provably one this package wrote: it holds the marker
  :data:`RESULTS_MARKER`, which lists every file published there, and
  nothing else; otherwise the error names what replacing it would delete.
* :func:`read_bounded_text` reads a small text file (a model, a list of
  names) with a size limit.
* :func:`not_a_file` says why an input path is not a file it can read.
"""

import ctypes
import errno
import json
import os
import re
import shutil
import stat
import time
from pathlib import Path

__all__ = ["OutputError", "atomic_write_text", "atomic_write_bytes", "read_bounded_text",
           "ResultsDirectory", "check_not_input", "check_output_target", "process_alive",
           "not_a_file", "make_parents", "remove_empty", "remove_own_tree", "RESULTS_MARKER",
           "claim_lock", "release_lock", "remove_stale", "resolved"]


class OutputError(ValueError):
    """An output that cannot or must not be written; the message names it."""


def _file_in_the_way(path):
    """The nearest existing ancestor of ``path`` when it is a file (so that
    nothing below it can exist), else None."""
    existing = next((p for p in Path(path).absolute().parents if p.exists()), None)
    return existing if existing is not None and not existing.is_dir() else None


def not_a_file(path, what=None):
    """The error for an input ``path`` that is not a file: a directory, a
    path through a file, or nothing there (``what``: which input, added in
    brackets)."""
    path = Path(path)
    suffix = f" ({what})" if what else ""
    if path.is_dir():
        return IsADirectoryError(f"{path}: a directory, not a file{suffix}")
    through = _file_in_the_way(path)
    if through is not None:
        return NotADirectoryError(f"{path}: {through} is a file, not a directory{suffix}")
    return FileNotFoundError(f"{path}: no such file{suffix}")


def make_parents(path):
    """Create the missing directories above ``path``; returns those it
    created, outermost first (:func:`remove_empty` takes them back). An
    ancestor that is a file is an :class:`OutputError`."""
    through = _file_in_the_way(path)
    if through is not None:
        raise OutputError(f"{path}: {through} is a file, not a directory")
    parent = Path(path).absolute().parent
    missing = []
    while not parent.exists():
        missing.append(parent)
        parent = parent.parent
    created = []
    for directory in reversed(missing):
        try:
            directory.mkdir()
        except FileExistsError:
            continue
        except OSError as error:
            remove_empty(created)
            raise OutputError(f"{path}: cannot create the directory {directory} "
                              f"({error.strerror})") from None
        created.append(directory)
    return created


def remove_empty(directories):
    """Remove each of ``directories`` that is still empty, innermost first."""
    for directory in reversed(directories):
        try:
            directory.rmdir()
        except OSError:
            pass


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_text(path, text):
    """Write ``text`` as UTF-8 (see :func:`atomic_write_bytes`)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def check_output_target(path, flag=None):
    """What is at ``path``, as an output: ``"new"`` (nothing), ``"file"`` (a
    regular file), ``"link"`` (a symbolic link to a regular file), or
    ``"through"`` (a character device or a FIFO, or a link to one: written
    through, never replaced). A directory, a block device, a socket or a
    link to nothing raises :class:`OutputError` (``IsADirectoryError`` for a
    directory, ``NotADirectoryError`` for a path through a file) in one line
    that names the path (and ``flag``, the option that gave it)."""
    path = Path(path)
    named = f"{flag} {path}" if flag else str(path)
    try:
        link = stat.S_ISLNK(os.lstat(path).st_mode)
    except FileNotFoundError:
        return "new"
    except NotADirectoryError:
        through = _file_in_the_way(path)
        raise NotADirectoryError(f"{named}: {through} is a file, not a directory") from None
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise OutputError(f"{named}: a symbolic link to {os.readlink(path)}, which does not "
                          "exist; give the target itself or remove the link") from None
    except OSError as error:
        raise OutputError(f"{named}: cannot use it as an output ({error.strerror})") from None
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(f"{named}: is a directory; give a file name")
    if stat.S_ISREG(mode):
        return "link" if link else "file"
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return "through"
    kind = "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) \
        else "not a file"
    raise OutputError(f"{named}: {kind}; rsrank writes only files, character devices and "
                      "FIFOs: give a file name")


def _through_descriptor(path):
    """Whether following the links of ``path`` passes through a process's
    open descriptors (``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``)."""
    hop = Path(os.path.abspath(path))
    for _ in range(40):  # the kernel's own limit on a chain of links
        if str(hop).startswith(("/proc/", "/dev/fd/")):
            return True
        if not hop.is_symlink():
            return False
        hop = Path(os.path.abspath(hop.parent / os.readlink(hop)))
    return False


def atomic_write_bytes(path, data):
    """Write ``data`` to ``path`` whole or not at all, never replacing what
    is not a regular file (see :func:`check_output_target`).

    A new or regular file is written through a temporary sibling and one
    rename; the temporary file is removed on every failure, a new file gets
    the permissions the user's umask gives and a replaced one keeps its
    own. A symbolic link keeps pointing where it did: the file it points to
    is replaced that way. A character device or a FIFO is opened and
    written, as ``cp`` writes to one."""
    path = Path(path)
    kind = check_output_target(path)
    if kind == "link":
        target = Path(os.path.realpath(path))
        if not _through_descriptor(path) and target.exists() and os.path.samefile(target, path):
            return atomic_write_bytes(target, data)
        # a link to an open descriptor (/dev/stdout to a file the shell opened,
        # perhaps to append): what the descriptor is must not change
        kind = "through"
    if kind == "through":
        # a file behind a descriptor is appended to, as the shell's ">>" or
        # ">" left it: opening it to write afresh would empty it
        append = stat.S_ISREG(os.stat(path).st_mode)
        try:
            with open(path, "ab" if append else "wb") as handle:
                handle.write(data)
        except OSError as error:
            raise _about(path, error) from None
        return
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        with open(tmp, "xb") as handle:
            handle.write(data)
        if kind == "file":
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
        os.replace(tmp, path)
    except OSError as error:
        _remove(tmp)
        raise _about(path, error) from None
    except BaseException:
        _remove(tmp)
        raise


def _remove(path):
    """Remove ``path`` if it is there (a path through a file has nothing to remove)."""
    try:
        path.unlink(missing_ok=True)
    except NotADirectoryError:
        pass


def _about(path, error):
    """``error``, raised on a temporary sibling of ``path``, told of ``path``:
    a directory that is missing or is a file, or the system's reason."""
    parent = path.absolute().parent
    through = _file_in_the_way(path)
    if through is not None:
        return NotADirectoryError(f"{path}: {through} is a file, not a directory")
    if not parent.is_dir():
        return FileNotFoundError(f"{path}: the directory {parent} does not exist")
    told = type(error)(f"{path}: cannot write it ({error.strerror or error})")
    # the path and the reason, for whoever tells it again (ResultsDirectory); an
    # errno or filename set would replace the message with "[Errno N] ..."
    told.target, told.reason = str(path), error.strerror or str(error)
    return told


def read_bounded_text(path, limit, what):
    """The UTF-8 text of ``path``, refusing files over ``limit`` bytes (a
    device such as /dev/zero, or the wrong file) and binary files, with a
    ``ValueError`` that names the path."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{path}: is a directory, not a {what}")
    if not path.exists():
        raise not_a_file(path, what)
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path}: larger than {limit:,} bytes; not a {what}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not a {what}: not UTF-8 text (byte {error.start})") from None


def resolved(path):
    """``Path(path).resolve()``, with a loop of symbolic links an
    :class:`OutputError` that names the path (Python before 3.13 raises a
    bare ``RuntimeError``)."""
    try:
        return Path(path).resolve()
    except (RuntimeError, OSError) as error:
        if isinstance(error, OSError) and error.errno != errno.ELOOP:
            raise
        raise OutputError(f"{path}: a loop of symbolic links; remove the links or choose "
                          "another path") from None


def check_not_input(out, inputs):
    """Raise :class:`OutputError` when ``out`` is an input, holds one or lies
    inside one (the same file under another name counts)."""
    target = resolved(out)
    for path in inputs:
        source = resolved(path)
        same = target == source or (target.exists() and source.exists()
                                    and os.path.samefile(target, source))
        if same and target.is_dir():
            raise OutputError(f"{out}: is the input {path}, which replacing it would delete; "
                              "choose another path")
        if same:
            raise OutputError(f"{out}: would overwrite the input {path}; choose another path")
        if source.is_relative_to(target):
            raise OutputError(f"{out}: holds the input {path}, which replacing it would "
                              "delete; choose another path")
        if target.is_relative_to(source):
            raise OutputError(f"{out}: lies inside the input {path}; choose another path")


def _exchange(a, b):
    """Swap two paths atomically (Linux ``renameat2`` with ``RENAME_EXCHANGE``)."""
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        raise OSError(errno.ENOSYS, "renameat2 is not available")
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), str(a), None, str(b))


def process_alive(pid):
    """Whether a process with this id is running (one of another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


#: a lock without a valid process id (from an rsrank before locks held their
#: owner from the start) is taken over when it is this old
_OWNERLESS_LOCK_AGE = 60


def _claim(lock):
    """Create ``lock`` holding this process's id, or raise FileExistsError.

    The id is written to a private sibling first, and the lock appears by
    one ``link``, which fails when the lock exists: a lock is never empty,
    so its owner is always known (a full disk fails the private write and
    leaves no lock)."""
    own = lock.with_name(f"{lock.name}.{os.getpid()}")
    try:
        with open(own, "x") as handle:
            handle.write(f"{os.getpid()}\n")
        os.link(own, lock)
    finally:
        _remove(own)
    return lock


def _lock_owner(lock):
    """The process id a lock holds, or None when it holds none."""
    try:
        return int(lock.read_text().split()[0])
    except (ValueError, IndexError):
        return None


def _take_over_if_dead(lock):
    """Remove ``lock`` when its owner is gone (or when it names none and is
    older than :data:`_OWNERLESS_LOCK_AGE`). The lock is first renamed to a
    name of this process's own, so that of two runs that find the same dead
    lock only one removes it; a live lock taken by a race is put back."""
    try:
        owner = _lock_owner(lock)
        if owner is not None and process_alive(owner):
            return
        if owner is None and time.time() - lock.stat().st_mtime < _OWNERLESS_LOCK_AGE:
            return
        aside = lock.with_name(f"{lock.name}.stale-{os.getpid()}")
        os.rename(lock, aside)
    except FileNotFoundError:
        return
    taken = _lock_owner(aside)
    if taken is not None and taken != owner and process_alive(taken):
        try:  # another run claimed the path meanwhile: its lock goes back
            os.link(aside, lock)
        except FileExistsError:
            pass
    _remove(aside)


def remove_stale(directory, pattern):
    """Remove the entries of ``directory`` whose names match ``pattern`` (a
    compiled regular expression with a ``pid`` group: the names this
    package gives its staging files and directories) and whose process is
    gone: what a killed run left."""
    try:
        entries = list(Path(directory).iterdir())
    except OSError:
        return
    for entry in entries:
        match = pattern.match(entry.name)
        if match and not process_alive(int(match.group("pid"))):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                _remove(entry)


def claim_lock(lock, *, wait=False, on_wait=None, poll=0.2):
    """Claim the lock file ``lock`` (git's protocol, see :func:`_claim`); a
    lock whose owner is gone is taken over. When a live process holds it:
    ``FileExistsError``, or with ``wait`` sleep until it is released
    (``on_wait(owner pid)`` is called once, first)."""
    lock = Path(lock)
    told = False
    while True:
        _take_over_if_dead(lock)
        try:
            return _claim(lock)
        except FileExistsError:
            if not wait:
                raise
        if not told and on_wait is not None:
            on_wait(_lock_owner(lock))
            told = True
        time.sleep(poll)


def release_lock(lock):
    """Remove a lock this process claimed."""
    _remove(Path(lock))


def _names_inside(error, directory):
    """Whether ``error`` names a path inside ``directory``."""
    directory = str(Path(directory).absolute())
    return any(str(Path(name).absolute()).startswith(directory + os.sep)
               for name in (error.filename, error.filename2, getattr(error, "target", None))
               if name)


#: the file that marks a directory as results rsrank wrote, listing its files
RESULTS_MARKER = ".rsrank-results"


def _files_under(directory):
    """Every entry under ``directory`` that is not a directory (files,
    links, devices), and every empty directory, as relative POSIX paths;
    links are not followed."""
    directory = Path(directory)
    found = []
    for root, dirs, files in os.walk(directory):
        here = Path(root).relative_to(directory)
        links = [d for d in dirs if os.path.islink(os.path.join(root, d))]
        found.extend((here / name).as_posix() for name in files + links)
        if not dirs and not files and here != Path("."):
            found.append(here.as_posix() + "/")
    return found


def foreign_files(directory):
    """What ``directory`` holds that rsrank did not write there: a list
    (empty when it holds only what its :data:`RESULTS_MARKER` lists), or
    None when it has no valid marker (it is not rsrank's)."""
    try:
        with open(Path(directory) / RESULTS_MARKER, encoding="utf-8") as handle:
            listed = json.load(handle)
        if not os.path.isfile(Path(directory) / RESULTS_MARKER) or listed.get(
                "written_by") != "rsrank":
            return None
        listed = set(listed["files"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return sorted(name for name in _files_under(directory)
                  if name != RESULTS_MARKER and name not in listed)


def _some(names, shown=3):
    """``names`` as a short phrase: the first few and how many more."""
    if not names:
        return "nothing"
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    count = f"{len(names)} file{'s' if len(names) != 1 else ''}"
    return f"{count} ({', '.join(names[:shown])}{more})"


def remove_own_tree(path, pattern):
    """Remove the directory ``path`` only when its name matches ``pattern``
    (a compiled regular expression of the names this package gives its
    staging directories) and it is a directory, not a link to one."""
    path = Path(path)
    if pattern.match(path.name) and path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)


class ResultsDirectory:
    """Claim ``out`` now, fill a staging directory, publish it atomically.

    Use as a context manager around the work; call :meth:`publish` when the
    staging directory (``self.staging``) holds everything. Leaving the
    block without publishing (an error, Ctrl-C) removes the staging
    directory; the lock is released either way.

    Parameters
    ----------
    out : path-like
        The results directory to create (or to replace with ``overwrite``).
    overwrite : bool
        Replace an existing results directory (never a file).
    inputs : list of path-like
        Paths the results must not replace or sit inside.
    """

    def __init__(self, out, *, overwrite=False, inputs=()):
        if not str(out).strip():
            raise OutputError("the output path is empty")
        self.out = Path(out)
        self.overwrite = overwrite
        self.inputs = list(inputs)
        self.staging = None
        self._lock = None
        self._created = []

    # -- claiming --------------------------------------------------------------

    def __enter__(self):
        self.check()  # before anything is made, and again under the lock
        self._created = make_parents(self.out)  # taken back if nothing is published
        parent = resolved(self.out).parent
        try:
            self._remove_stale(parent)
            self._lock = _claim(parent / f".{self.out.name}.lock")
        except FileExistsError:
            self._release()
            raise OutputError(f"{self.out}: another rsrank run is writing it (lock "
                              f"{parent / f'.{self.out.name}.lock'}); wait for it or choose "
                              "another path") from None
        except OSError as error:
            self._release()
            raise OutputError(f"{self.out}: cannot write in {parent} ({error.strerror})") \
                from None
        try:
            self.check()
            self.staging = parent / f".{self.out.name}.staging-{os.getpid()}"
            self.staging.mkdir(mode=0o777)  # the umask applies, as to any new directory
        except OSError as error:
            self._release()
            raise OutputError(f"{self.out}: cannot write in {parent} ({error.strerror})") \
                from None
        except BaseException:
            self._release()
            raise
        return self

    def check(self):
        """Refuse ``out`` as claiming it would, where it holds something this
        run may not replace: the commands call it before reading their data
        too, so that a taken path fails at once rather than after the
        reading."""
        check_not_input(self.out, self.inputs)
        if self.out.is_symlink() or (self.out.exists() and not self.out.is_dir()):
            raise OutputError(f"{self.out}: exists and is not a results directory; choose "
                              "another path")
        if not self.out.exists() or not any(self.out.iterdir()):
            return  # nothing there, or an empty directory: nothing is lost
        foreign = foreign_files(self.out)
        if not self.overwrite:
            if foreign is None:
                raise OutputError(f"{self.out}: exists and is not a results directory rsrank "
                                  "wrote; choose another path")
            raise OutputError(f"{self.out}: exists; choose another path or pass --force")
        if foreign is None:
            held = sorted(_files_under(self.out))
            raise OutputError(f"{self.out}: not a results directory rsrank wrote (no "
                              f"{RESULTS_MARKER}), so --force does not replace it: it would "
                              f"delete {_some(held)}; remove it yourself or choose another "
                              "path")
        if foreign:
            them = "them" if len(foreign) > 1 else "it"
            raise OutputError(f"{self.out}: holds {_some(foreign)} that rsrank did not write; "
                              f"--force would delete {them}: move {them} out or choose another "
                              "path")

    def _remove_stale(self, parent):
        """Staging directories and locks left by runs whose process is gone."""
        remove_stale(parent, re.compile(rf"^\.{re.escape(self.out.name)}\.(staging-|old-|lock\."
                                        rf"|lock\.stale-)(?P<pid>\d+)$"))
        _take_over_if_dead(parent / f".{self.out.name}.lock")

    # -- publishing ------------------------------------------------------------

    def publish(self):
        """Move the staging directory to ``out`` in one step, with the
        marker that lists what it holds."""
        self.check()
        listed = sorted(_files_under(self.staging))
        with open(self.staging / RESULTS_MARKER, "x", encoding="utf-8") as handle:
            json.dump({"written_by": "rsrank", "files": listed}, handle, indent=1)
        if not self.out.exists():
            os.rename(self.staging, self.out)
        else:
            try:
                _exchange(self.staging, self.out)
            except OSError as error:
                if error.errno not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
                    raise
                # no atomic exchange here: two renames, the old results kept
                # aside until the new ones are in place
                aside = self.out.with_name(f".{self.out.name}.old-{os.getpid()}")
                os.rename(self.out, aside)
                try:
                    os.rename(self.staging, self.out)
                except BaseException:
                    os.rename(aside, self.out)
                    raise
                os.rename(aside, self.staging)
            shutil.rmtree(self.staging, ignore_errors=True)  # the old results
        self.staging = None

    def __exit__(self, kind, error, traceback):
        staging = self.staging
        if self.staging is not None:
            shutil.rmtree(self.staging, ignore_errors=True)
            self.staging = None
        self._release()
        if isinstance(error, OSError) and not isinstance(error, OutputError) and staging \
                and _names_inside(error, staging):
            # a write into the hidden staging directory failed: say so of --out
            reason = getattr(error, "reason", None) or error.strerror or error
            raise OutputError(f"{self.out}: cannot write the results ({reason})") from None
        return False

    def _release(self):
        if self._lock is not None:
            self._lock.unlink(missing_ok=True)
            self._lock = None
        remove_empty(self._created)  # the directories made for results that never came
