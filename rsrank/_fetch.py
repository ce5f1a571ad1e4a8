"""Public learning-to-rank data, one command away: :func:`fetch_letor`.

The registry (``rsrank/data/registry.json``, also ``data/registry.json`` at
the top of a source checkout) names each dataset, where its files are
published, the SHA-256 of every file and its licence. A fetch downloads every
file into a hidden staging directory beside the target, checks each file's
SHA-256 as soon as it is complete, and renames the directory into place only
when all are there: a failed or interrupted fetch leaves nothing behind, and
a dataset directory is always whole. A transfer cut off midway is resumed
where it stopped (an HTTP range request) a few times before giving up.

A fetch never takes more than the registry promises: each file stops at
its registry size (a server that sends more, or announces more, is cut off
and nothing is kept), the free space for the whole dataset is checked
before the first byte, concurrent fetches of one dataset take turns (a lock
file beside it, :func:`rsrank._files.claim_lock`), and staging directories
of killed fetches are removed by the next. A dataset already in the data
home is served only when every file has the registry's size and SHA-256
(hashed once; :data:`VERIFIED` remembers the files as they were checked, so
a later fetch hashes only what changed).
"""

import contextlib
import hashlib
import http.client
import json
import os
import re
import shutil
import sys
import urllib.error
import urllib.request
from pathlib import Path

from ._files import atomic_write_text, claim_lock, release_lock, remove_stale

__all__ = ["fetch_letor", "registry", "default_data_home", "DATA_HOME_ENV"]

REGISTRY = Path(__file__).parent / "data" / "registry.json"
#: the environment variable that moves the default data home
DATA_HOME_ENV = "RSRANK_DATA"
#: attempts at one file: the first and the resumptions of a cut-off transfer
ATTEMPTS = 4
_BLOCK = 1 << 16
#: in a fetched dataset directory: each file's size, times and inode when its
#: SHA-256 was last checked
VERIFIED = ".rsrank-verified"


def registry():
    """``{name: entry}`` of the datasets :func:`fetch_letor` knows."""
    return json.loads(REGISTRY.read_text(encoding="utf-8"))["datasets"]


def default_data_home():
    """Where fetched data goes: ``$RSRANK_DATA``, else the ``data/``
    directory at the top of a source checkout (beside this package), else
    ``~/rsrank_data``."""
    if os.environ.get(DATA_HOME_ENV):
        return Path(os.environ[DATA_HOME_ENV]).expanduser()
    checkout = Path(__file__).resolve().parent.parent / "data"
    if (checkout / "registry.json").exists() and os.access(checkout, os.W_OK):
        return checkout
    return Path.home() / "rsrank_data"


def _entry(name):
    known = registry()
    match = {key.lower(): key for key in known}.get(str(name).lower())
    if match is None:
        raise ValueError(f"no dataset {name!r} in the registry; known: {', '.join(known)}")
    return match, known[match]


def fetch_letor(name, data_home=None, url=None, *, quiet=None):
    """Download a public learning-to-rank dataset once and return its
    directory (``Fold<k>`` directories, or the files of its layout), ready
    for :func:`rsrank.datasets.iter_letor_folds` and ``rsrank train``.

    Parameters
    ----------
    name : str
        A registry name (any case): ``rsrank fetch --list`` lists them.
    data_home : path-like, optional
        The directory that holds fetched datasets (default
        :func:`default_data_home`). A dataset already there is returned
        without any download.
    url : str, optional
        A mirror of the same files: the base URL that the registry's
        relative paths are appended to. The checksums still apply.
    quiet : bool, optional
        No progress bar (default: a bar on a terminal only).

    Raises
    ------
    ValueError
        An unknown name, or a file whose SHA-256 is not the registry's.
    OSError
        When a file cannot be downloaded (offline, a missing file), in one
        line that names the URL.
    """
    name, entry = _entry(name)
    if data_home is not None and not str(data_home).strip():
        raise ValueError("the data home is empty: give a directory, or leave it out for the "
                         "default")
    home = Path(data_home).expanduser() if data_home is not None else default_data_home()
    target = home / name
    files = entry["files"]
    if _served(target, files):
        return target
    base = (url or entry["url"]).rstrip("/") + "/"
    _make_home(home)
    lock = home / f".{name}.lock"

    def waiting(owner):
        if quiet is not True:
            print(f"rsrank fetch: waiting for another fetch of {name} (process {owner})",
                  file=sys.stderr, flush=True)

    try:
        claim_lock(lock, wait=True, on_wait=waiting)
    except OSError as error:
        raise _home_error(home, error) from None
    staging = home / f".{name}.fetching-{os.getpid()}"
    try:
        remove_stale(home, re.compile(rf"^\.{re.escape(name)}\.fetching-(?P<pid>\d+)$"))
        if _served(target, files):  # the fetch we waited for brought it
            return target
        total = sum(spec["bytes"] for spec in files.values())
        free = shutil.disk_usage(home).free
        if free < total:
            raise OSError(f"{home}: {name} needs {_size(total)} and the disk has "
                          f"{_size(free)} free; free some space or fetch into another "
                          "data home")
        try:
            staging.mkdir()
        except OSError as error:
            raise _home_error(home, error) from None
        with _bar(total, name, quiet) as bar:
            for rel, spec in files.items():
                _download(base + rel, staging / rel, spec, bar, home)
        _write_verified(staging, files)
        staging.rename(target)
        return target
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        release_lock(lock)


def _size(n_bytes):
    """``n_bytes`` for a reader: kB, MB or GB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:,.1f} {unit}"
    return f"{n_bytes / 1e3:,.1f} kB"


def _make_home(home):
    """Create the data home, or say in one line why it cannot be one."""
    if home.exists() and not home.is_dir():
        raise NotADirectoryError(f"{home}: the data home is a file, not a directory; give "
                                 "another data home")
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise _home_error(home, error) from None
    if not os.access(home, os.W_OK):
        raise PermissionError(f"{home}: cannot write in the data home (permission denied); "
                              "give another data home (--data-home, or $RSRANK_DATA)")


def _home_error(home, error):
    """An ``OSError`` met while writing in the data home, told of the home
    (not of a hidden staging path)."""
    told = type(error)(f"{home}: cannot write in the data home "
                       f"({error.strerror or error}); give another data home (--data-home, or "
                       "$RSRANK_DATA)")
    return told  # no errno set: it would replace the message with "[Errno N] ..."


def _stamp(path):
    stat = path.stat()
    return [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino]


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _served(target, files):
    """Whether ``target`` holds the dataset whole: every file of the
    registry's size, then of its SHA-256 (a file unchanged since it was last
    checked is not hashed again). False when there is nothing; an error
    that names the file when something else is there."""
    if not target.exists() and not target.is_symlink():
        return False
    if not target.is_dir():
        raise FileExistsError(f"{target}: exists and is not a directory; remove it or fetch "
                              "into another data home")
    for rel, spec in files.items():
        path = target / rel
        if not path.is_file():
            raise FileExistsError(f"{target}: exists but lacks {rel}: remove it and fetch again")
        if path.stat().st_size != spec["bytes"]:
            raise FileExistsError(f"{target}: {rel} has {path.stat().st_size:,} bytes, not the "
                                  f"registry's {spec['bytes']:,} (damaged, or another dataset): "
                                  "remove it and fetch again")
    try:
        verified = json.loads((target / VERIFIED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        verified = {}
    changed = False
    for rel, spec in files.items():
        path = target / rel
        if isinstance(verified, dict) and verified.get(rel) == [spec["sha256"]] + _stamp(path):
            continue
        digest = _sha256(path)
        if digest != spec["sha256"]:
            raise FileExistsError(f"{target}: {rel} has SHA-256 {digest}, not the registry's "
                                  f"{spec['sha256']} (damaged or changed): remove it and fetch "
                                  "again")
        changed = True
    if changed:
        try:
            _write_verified(target, files)
        except OSError:
            pass  # a read-only copy is hashed at every fetch
    return True


def _write_verified(directory, files):
    atomic_write_text(directory / VERIFIED, json.dumps(
        {rel: [spec["sha256"]] + _stamp(directory / rel) for rel, spec in files.items()},
        indent=1) + "\n")


@contextlib.contextmanager
def _bar(total, name, quiet):
    show = not quiet if quiet is not None else sys.stderr.isatty()
    if not show:
        yield None
        return
    from tqdm import tqdm

    with tqdm(total=total, unit="B", unit_scale=True, desc=name, file=sys.stderr,
              leave=False) as bar:
        yield bar


def _download(url, path, spec, bar, home):
    """``url`` into ``path``, resumed where a cut-off transfer stopped,
    never past the registry's size, then checked against its SHA-256."""
    path.parent.mkdir(parents=True, exist_ok=True)
    done = 0
    for attempt in range(ATTEMPTS):
        try:
            done = _transfer(url, path, done, bar, spec["bytes"])
            break
        except (http.client.IncompleteRead, ConnectionError, TimeoutError) as error:
            if attempt == ATTEMPTS - 1:
                raise OSError(f"cannot download {url}: the transfer was cut off {ATTEMPTS} "
                              f"times ({error.__class__.__name__}); try again later, or pass "
                              "url= a mirror") from None
            done = path.stat().st_size if path.exists() else 0
        except OSError as error:
            if error.filename is None and error.errno is None:
                raise
            raise _home_error(home, error) from None
    digest = _sha256(path)
    if digest != spec["sha256"]:
        raise ValueError(f"{url}: SHA-256 {digest}, not the registry's {spec['sha256']}; "
                         "the file was changed or damaged on the way, and is not kept")


def _too_large(url, limit):
    return ValueError(f"{url}: larger than the registry's {limit:,} bytes; not the registry's "
                      "file (a wrong --url?), stopped and not kept")


def _transfer(url, path, start, bar, limit):
    """Append ``url``'s bytes from ``start`` on to ``path`` (from the start
    when the server ignores the range), refusing more than ``limit`` bytes
    in all; returns the size reached."""
    request = urllib.request.Request(url, headers={"Range": f"bytes={start}-"} if start else {})
    try:
        response = urllib.request.urlopen(request, timeout=60)
    except urllib.error.HTTPError as error:
        raise OSError(f"cannot download {url}: HTTP {error.code} {error.reason}") from None
    except urllib.error.URLError as error:
        raise OSError(f"cannot download {url}: {error.reason}; check the connection, or "
                      "pass url= a mirror (rsrank fetch NAME --url URL)") from None
    except http.client.RemoteDisconnected:
        raise
    except http.client.HTTPException as error:
        raise OSError(f"cannot download {url}: the server's answer is not HTTP "
                      f"({error.__class__.__name__}); check the URL (--url)") from None
    with response:
        resumed = start and response.status == 206
        if bar is not None and start and not resumed:
            bar.update(-start)
        size = start if resumed else 0
        length = response.headers.get("Content-Length")
        if length is not None and length.strip().isdigit() and size + int(length) > limit:
            raise _too_large(url, limit)
        with open(path, "ab" if resumed else "wb") as handle:
            while True:
                block = response.read(min(_BLOCK, limit + 1 - size))
                if not block:
                    break
                size += len(block)
                if size > limit:
                    raise _too_large(url, limit)
                handle.write(block)
                if bar is not None:
                    bar.update(len(block))
        if length is not None and length.strip().isdigit() and \
                size - (start if resumed else 0) < int(length):
            raise http.client.IncompleteRead(b"", int(length) - size)
    return size
