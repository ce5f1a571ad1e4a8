"""Public learning-to-rank data, one command away: :func:`fetch_letor`.

The registry (``rsrank/data/registry.json``, also ``data/registry.json`` at
the top of a source checkout) names each dataset, where its files are
published, a checksum of every file and its licence. A file's checksum is
its SHA-256, or its git blob id (SHA-1 of ``blob <size>\\0`` and the bytes:
the id a git commit's tree gives the file, which pins the bytes a
repository serves at that commit). A fetch downloads every file into a
hidden staging directory beside the target, checks each file's checksum as
soon as it is complete, and renames the directory into place only when all
are there: a failed or interrupted fetch leaves nothing behind, and a
dataset directory is always whole. A transfer cut off midway is resumed
where it stopped (an HTTP range request) a few times before giving up. A
file the registry lists twice under one checksum (LETOR's Fold k vali is
Fold k+1's test) is downloaded once.

A fetch never takes more than the registry promises: each file stops at
its registry size (or at :data:`MAX_UNSIZED` and the server's length when
the size is not published; a server that sends more, or announces more, is
cut off and nothing is kept), the free space for the whole dataset is
checked before the first byte, concurrent fetches of one dataset take turns
(a lock file beside it, :func:`rsrank.reading._files.claim_lock`), and staging
directories of killed fetches are removed by the next. A dataset already in
the data home is served only when every file has the registry's size and
checksum (hashed once; :data:`VERIFIED` remembers the files as they were
checked, so a later fetch hashes only what changed).
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

__all__ = ["fetch_letor", "registry", "default_data_home", "DATA_HOME_ENV", "dataset_bytes",
           "checksum_of", "unpack_archive"]

REGISTRY = Path(__file__).resolve().parents[1] / "data" / "registry.json"
#: the environment variable that moves the default data home
DATA_HOME_ENV = "RSRANK_DATA"
#: attempts at one file: the first and the resumptions of a cut-off transfer
ATTEMPTS = 4
_BLOCK = 1 << 16
#: the most bytes a file whose size the registry does not give may have (the
#: server's Content-Length bounds it too)
MAX_UNSIZED = 1 << 30
#: in a fetched dataset directory: each file's size, times and inode when its
#: checksum was last checked
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
    checkout = Path(__file__).resolve().parents[2] / "data"
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
    for :func:`rsrank.reading.datasets.iter_letor_folds` and ``rsrank train``.

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
        An unknown name, or a file whose checksum is not the registry's.
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
    files = _expected_files(entry, target)
    if _served(target, files):
        return target
    base = (url or entry.get("url") or "").rstrip("/") + "/"
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
        if _served(target, _expected_files(entry, target)):  # the fetch we waited for
            return target
        total, exact = dataset_bytes(entry)
        free = shutil.disk_usage(home).free
        if free < total:
            raise OSError(f"{home}: {name} needs {'' if exact else 'about '}{_size(total)} and "
                          f"the disk has {_size(free)} free; free some space or fetch into "
                          "another data home")
        try:
            staging.mkdir()
        except OSError as error:
            raise _home_error(home, error) from None
        if "archive" in entry:
            with _bar(entry["archive"]["bytes"], name, quiet) as bar:
                files = _fetch_archive(entry, url, staging, bar, home)
            _write_verified(staging, files)
            staging.rename(target)
            return target
        with _bar(total, name, quiet) as bar:
            fetched = {}  # a file the registry lists twice (one blob) is downloaded once
            for rel, spec in files.items():
                same = fetched.get(checksum_of(spec))
                if same is not None:
                    (staging / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(same, staging / rel)
                    continue
                _download(base + rel, staging / rel, spec, bar, home)
                fetched[checksum_of(spec)] = staging / rel
        _write_verified(staging, files)
        staging.rename(target)
        return target
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        release_lock(lock)


def _expected_files(entry, target):
    """The files a dataset directory must hold, with their checksums: the
    registry's, or for a dataset published as an archive, what the fetch
    that unpacked it recorded (None when there is no such record: then a
    directory already there is not served)."""
    if "archive" not in entry:
        return entry["files"]
    try:
        recorded = json.loads((target / VERIFIED).read_text(encoding="utf-8"))
        return {rel: {"sha256": value[0], "bytes": value[1]} for rel, value in recorded.items()}
    except (OSError, ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None


def _fetch_archive(entry, url, staging, bar, home):
    """Download the dataset's archive into ``staging``, check its SHA-256,
    unpack the files of its ``layout`` (nothing outside ``staging``, no link
    or device, at most ``max_unpacked`` bytes), and return their checksums
    (``{rel: {"sha256", "bytes"}}``) for the record."""
    spec = entry["archive"]
    archive = staging / f".archive.{spec['format']}"
    _download(url or spec["url"], archive, spec, bar, home)  # bounded, then its SHA-256
    unpack_archive(archive, staging, spec["format"], entry["layout"],
                   strip=spec.get("strip", ""), max_bytes=spec["max_unpacked"])
    archive.unlink()
    return {rel: {"sha256": _sha256(staging / rel), "bytes": (staging / rel).stat().st_size}
            for rel in entry["layout"]}


def _archive_members(archive, form):
    """``[(name, size, is a regular file, open)]`` of a zip or tar.gz archive."""
    if form == "zip":
        import zipfile

        handle = zipfile.ZipFile(archive)
        return handle, [(info.filename, info.file_size, not info.is_dir(),
                         lambda info=info: handle.open(info))
                        for info in handle.infolist() if not info.is_dir()]
    if form == "tar.gz":
        import tarfile

        handle = tarfile.open(archive, "r:gz")
        members = []
        for info in handle.getmembers():
            if info.isdir():
                continue
            members.append((info.name, info.size, info.isreg(),
                            lambda info=info: handle.extractfile(info)))
        return handle, members
    raise ValueError(f"archive format {form!r}: zip or tar.gz")


def unpack_archive(archive, directory, form, layout, *, strip="", max_bytes):
    """Unpack into ``directory`` the regular files of ``archive`` (``form``
    zip or tar.gz) below ``strip``, refusing before anything is written a
    member that would land outside ``directory`` (an absolute path, ``..``),
    a link or a device, and more than ``max_bytes`` in all; then check that
    every file of ``layout`` (paths relative to ``directory``) is there."""
    import zipfile
    import tarfile

    try:
        handle, members = _archive_members(archive, form)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as error:
        raise ValueError(f"{archive.name}: not a readable {form} archive ({error})") from None
    with handle:
        chosen, total = [], 0
        for name, size, regular, opener in members:
            parts = name.replace("\\", "/").split("/")
            if name.startswith(("/", "\\")) or ".." in parts or ":" in parts[0]:
                raise ValueError(f"the archive holds {name!r}, a path outside the dataset; "
                                 "nothing is unpacked")
            if not regular:
                raise ValueError(f"the archive holds {name!r}, a link or a device, not a file; "
                                 "nothing is unpacked")
            rel = "/".join(part for part in parts if part and part != ".")
            if strip and not (rel + "/").startswith(strip.rstrip("/") + "/"):
                continue
            rel = rel[len(strip.rstrip("/")) + 1:] if strip else rel
            total += size
            chosen.append((rel, opener))
        if total > max_bytes:
            raise ValueError(f"the archive unpacks to {_size(total)}, more than the registry's "
                             f"{_size(max_bytes)}; nothing is unpacked")
        lacking = [rel for rel in layout if rel not in {r for r, _ in chosen}]
        if lacking:
            shown = sorted({rel.split("/")[0] for rel, _ in chosen})[:5]
            raise ValueError(f"the archive lacks {lacking[0]} (it holds {', '.join(shown)}"
                             f"{' ...' if len(shown) == 5 else ''}); nothing is unpacked")
        for rel, opener in chosen:
            target = Path(directory) / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with opener() as source, open(target, "xb") as out:
                shutil.copyfileobj(source, out, 1 << 20)


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


def _hashed(digest, path):
    """``digest`` (a hashlib object) updated with the bytes of ``path``, as hex."""
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _sha256(path):
    return _hashed(hashlib.sha256(), path)


def _git_blob(path):
    """The git blob id of a file: SHA-1 of ``blob <size>\\0`` and its bytes,
    the name git (and GitHub) give the file in a commit's tree."""
    return _hashed(hashlib.sha1(f"blob {Path(path).stat().st_size}\0".encode()), path)


#: the checksums a registry file may carry: name -> (how to compute it, how to say it)
CHECKSUMS = {"sha256": (_sha256, "SHA-256"), "git_blob": (_git_blob, "git blob id")}


def checksum_of(spec):
    """``(algorithm, expected value)`` of a registry file's checksum."""
    algorithm = next((name for name in CHECKSUMS if name in spec), None)
    if algorithm is None:
        raise ValueError(f"a registry file without a checksum ({', '.join(CHECKSUMS)}): {spec}")
    return algorithm, spec[algorithm]


def _mismatch(path, spec):
    """None when ``path`` has the checksum ``spec`` names, else ``(what,
    found, expected)``."""
    algorithm, expected = checksum_of(spec)
    compute, what = CHECKSUMS[algorithm]
    found = compute(path)
    return None if found == expected else (what, found, expected)


def dataset_bytes(entry):
    """``(bytes, exact)`` of a registry dataset: the sum of its files' sizes,
    or its ``approx_bytes`` when some size is not published (for an archive:
    the archive and about what it unpacks to)."""
    if "archive" in entry:
        return entry["archive"]["bytes"] + entry.get("approx_bytes", 0), False
    files = entry["files"].values()
    if all("bytes" in spec for spec in files):
        return sum(spec["bytes"] for spec in files), True
    return entry.get("approx_bytes", 0), False


def _served(target, files):
    """Whether ``target`` holds the dataset whole: every file of the
    registry's size, then of its checksum (a file unchanged since it was last
    checked is not hashed again). False when there is nothing; an error
    that names the file when something else is there."""
    if not target.exists() and not target.is_symlink():
        return False
    if files is None:  # an archive's dataset without the record of its unpacking
        raise FileExistsError(f"{target}: exists, but no fetch recorded what it unpacked there "
                              f"({VERIFIED}); remove it and fetch again, or use it as it is")
    if not target.is_dir():
        raise FileExistsError(f"{target}: exists and is not a directory; remove it or fetch "
                              "into another data home")
    for rel, spec in files.items():
        path = target / rel
        if not path.is_file():
            raise FileExistsError(f"{target}: exists but lacks {rel}: remove it and fetch again")
        if "bytes" in spec and path.stat().st_size != spec["bytes"]:
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
        if isinstance(verified, dict) and verified.get(rel) == [checksum_of(spec)[1]] + _stamp(
                path):
            continue
        wrong = _mismatch(path, spec)
        if wrong is not None:
            what, found, expected = wrong
            raise FileExistsError(f"{target}: {rel} has {what} {found}, not the registry's "
                                  f"{expected} (damaged or changed): remove it and fetch again")
        changed = True
    if changed:
        try:
            _write_verified(target, files)
        except OSError:
            pass  # a read-only copy is hashed at every fetch
    return True


def _write_verified(directory, files):
    atomic_write_text(directory / VERIFIED, json.dumps(
        {rel: [checksum_of(spec)[1]] + _stamp(directory / rel) for rel, spec in files.items()},
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
    never past the registry's size, then checked against its checksum."""
    path.parent.mkdir(parents=True, exist_ok=True)
    done = 0
    for attempt in range(ATTEMPTS):
        try:
            done = _transfer(url, path, done, bar, spec.get("bytes", MAX_UNSIZED))
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
    wrong = _mismatch(path, spec)
    if wrong is not None:
        what, found, expected = wrong
        raise ValueError(f"{url}: {what} {found}, not the registry's {expected}; the file was "
                         "changed or damaged on the way, and is not kept")


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
