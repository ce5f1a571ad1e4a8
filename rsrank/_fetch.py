"""Public learning-to-rank data, one command away: :func:`fetch_letor`.

The registry (``rsrank/data/registry.json``, also ``data/registry.json`` at
the top of a source checkout) names each dataset, where its files are
published, the SHA-256 of every file and its licence. A fetch downloads every
file into a hidden staging directory beside the target, checks each file's
SHA-256 as soon as it is complete, and renames the directory into place only
when all are there: a failed or interrupted fetch leaves nothing behind, and
a dataset directory is always whole. A transfer cut off midway is resumed
where it stopped (an HTTP range request) a few times before giving up.
"""

import contextlib
import hashlib
import http.client
import json
import os
import shutil
import sys
import urllib.error
import urllib.request
from pathlib import Path

__all__ = ["fetch_letor", "registry", "default_data_home", "DATA_HOME_ENV"]

REGISTRY = Path(__file__).parent / "data" / "registry.json"
#: the environment variable that moves the default data home
DATA_HOME_ENV = "RSRANK_DATA"
#: attempts at one file: the first and the resumptions of a cut-off transfer
ATTEMPTS = 4
_BLOCK = 1 << 16


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
    home = Path(data_home).expanduser() if data_home is not None else default_data_home()
    target = home / name
    files = entry["files"]
    if target.is_dir():
        missing = [rel for rel in files if not (target / rel).is_file()]
        if not missing:
            return target
        raise FileExistsError(f"{target} exists but lacks {missing[0]}: remove it and fetch "
                              "again")
    base = (url or entry["url"]).rstrip("/") + "/"
    home.mkdir(parents=True, exist_ok=True)
    staging = home / f".{name}.fetching-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    total = sum(spec["bytes"] for spec in files.values())
    try:
        with _bar(total, name, quiet) as bar:
            for rel, spec in files.items():
                _download(base + rel, staging / rel, spec["sha256"], bar)
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


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


def _download(url, path, sha256, bar):
    """``url`` into ``path``, resumed where a cut-off transfer stopped,
    then checked against ``sha256``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    done = 0
    for attempt in range(ATTEMPTS):
        try:
            done = _transfer(url, path, done, bar)
            break
        except (http.client.IncompleteRead, ConnectionError, TimeoutError) as error:
            if attempt == ATTEMPTS - 1:
                raise OSError(f"cannot download {url}: the transfer was cut off {ATTEMPTS} "
                              f"times ({error.__class__.__name__}); try again later, or pass "
                              "url= a mirror") from None
            done = path.stat().st_size if path.exists() else 0
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            digest.update(block)
    if digest.hexdigest() != sha256:
        raise ValueError(f"{url}: SHA-256 {digest.hexdigest()}, not the registry's {sha256}; "
                         "the file was changed or damaged on the way, and is not kept")


def _transfer(url, path, start, bar):
    """Append ``url``'s bytes from ``start`` on to ``path`` (from the start
    when the server ignores the range); returns the size reached."""
    request = urllib.request.Request(url, headers={"Range": f"bytes={start}-"} if start else {})
    try:
        response = urllib.request.urlopen(request, timeout=60)
    except urllib.error.HTTPError as error:
        raise OSError(f"cannot download {url}: HTTP {error.code} {error.reason}") from None
    except urllib.error.URLError as error:
        raise OSError(f"cannot download {url}: {error.reason}; check the connection, or "
                      "pass url= a mirror (rsrank fetch NAME --url URL)") from None
    with response:
        resumed = start and response.status == 206
        if bar is not None and start and not resumed:
            bar.update(-start)
        size = start if resumed else 0
        with open(path, "ab" if resumed else "wb") as handle:
            for block in iter(lambda: response.read(_BLOCK), b""):
                handle.write(block)
                size += len(block)
                if bar is not None:
                    bar.update(len(block))
        length = response.headers.get("Content-Length")
        if length is not None and size - (start if resumed else 0) < int(length):
            raise http.client.IncompleteRead(b"", int(length) - size)
    return size
