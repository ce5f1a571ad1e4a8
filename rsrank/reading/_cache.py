"""A binary cache of parsed LETOR files: memory-mappable ``.npy`` arrays.

An entry is keyed by what the parse depends on: the source's resolved path,
size, modification time, inode and inode change time, a SHA-256 of its
first and last MiB and of 64 blocks between them, and the parse options
(``n_features``, ``dtype``, the query-size file). A changed source gets a
new key, and the stale entry of the same source is removed when the new
one is written. Entries are written into a staging directory
(``.KEY.staging-PID``) and renamed into place, so a reader never sees half
of one; staging directories whose process is gone (a kill) are removed by
the next write.

Nothing read back is trusted. ``meta.json`` carries a SHA-256 of itself and
of every array's header (dtype and shape); the entry must describe the file
asked for (path, size, times, inode, sampled hash, options); and the arrays
must form the CSR matrix the parser would have made: ``indptr`` from 0 to
the number of values and never decreasing, column indices in range and
increasing within a row, finite values, labels from 0 to 255, one label and
one qid per row. The kinds, lengths and ends are checked at every load; the
content when an array file is not the one the writer wrote: ``meta.json``
records each file's size, times and inode as written, and any change to its
bytes gives it a new inode change time; such a file must still hold what
was written, byte for byte (the CRC-32 of each array's content, computed at
memory speed, is in ``meta.json``), or the entry is not used. Entries are
written read-only, so that an editor or a careless script asks before it
changes one. A failed check removes the entry with one :class:`CacheWarning`
line, and the file is parsed (and cached) again.
``scripts/bench_cache.py`` measures what the checks cost against a parse
(``results/cache_check.md``).

The cache lives in ``.rsrank-cache`` beside the source when that directory
can be written, else in the user's cache directory (``$XDG_CACHE_HOME`` or
``~/.cache``, then ``rsrank``), or in a directory given by the caller.
"""

import hashlib
import json
import os
import re
import shutil
import sys
import time
import warnings
import zlib
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ._files import process_alive, resolved

__all__ = ["CacheWarning", "cache_directory", "cache_key", "load_cached", "store", "content_crc"]

_FORMAT = 4
_ARRAYS = ("data", "indices", "indptr", "y", "qid")
_BLOCK = 1 << 20
#: blocks of :data:`_SAMPLE` bytes hashed between a file's first and last MiB
_SAMPLES, _SAMPLE = 64, 4096
#: values checked at a time (bounded memory on files of any size)
_CHECK_BLOCK = 1 << 22
#: bytes given to one CRC-32 call
_CRC_BLOCK = 1 << 26
_LABEL_MAX = 255
#: staging directories of format 1 (no process id): removed when this old
_LEGACY_STAGING_AGE = 24 * 3600


class CacheWarning(UserWarning):
    """A cache entry failed a check and was removed; the file is parsed again."""


def user_cache_directory():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rsrank"


def cache_directory(path, cache):
    """Where the entries of ``path`` go: ``cache`` itself when it is a
    directory path, else beside the source when writable, else the user's
    cache directory."""
    if cache is not True:
        return Path(cache)
    beside = resolved(path).parent
    if os.access(beside, os.W_OK):
        return beside / ".rsrank-cache"
    return user_cache_directory()


def _file_stamp(path):
    """What identifies one version of a file: its resolved path, size,
    modification time, inode and inode change time (which no user-level
    tool sets back: a file rewritten in place with its size and mtime kept
    still gets a new one, as git's index relies on), and a SHA-256 of its
    first and last MiB and of :data:`_SAMPLES` blocks spread between them."""
    path = Path(path)
    stat = path.stat()
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        digest.update(handle.read(_BLOCK))
        if stat.st_size > _BLOCK:
            middle = stat.st_size - 2 * _BLOCK
            for k in range(_SAMPLES if middle > 0 else 0):
                handle.seek(_BLOCK + middle * k // _SAMPLES)
                digest.update(handle.read(_SAMPLE))
            handle.seek(max(stat.st_size - _BLOCK, _BLOCK))
            digest.update(handle.read(_BLOCK))
    return {"path": str(resolved(path)), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns,
            "ctime_ns": stat.st_ctime_ns, "inode": stat.st_ino, "device": stat.st_dev,
            "sha256_sampled": digest.hexdigest()}


def cache_key(path, n_features, dtype, query_file):
    """``(key, description)``: the entry name and what it was made from."""
    description = {"format": _FORMAT, "source": _file_stamp(path),
                   "n_features": None if n_features is None else int(n_features),
                   "dtype": np.dtype(dtype).name,
                   "query_file": None if query_file is None else _file_stamp(query_file)}
    text = json.dumps(description, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32], description


def load_cached(directory, key, description):
    """``(X, y, qid, meta)`` of the entry ``key`` for ``description``,
    memory-mapped read-only; None when there is none, or when it fails a
    check (it is then removed, with a :class:`CacheWarning`)."""
    entry = Path(directory) / key
    if not (entry / "meta.json").exists():
        return None
    try:
        return _checked(entry, description)
    except (OSError, ValueError, KeyError, TypeError) as error:
        shutil.rmtree(entry, ignore_errors=True)
        warnings.warn(f"{entry}: cache entry of {description['source']['path']} failed a "
                      f"check ({error}); removed, the file is parsed again", CacheWarning,
                      stacklevel=3)
        return None


def _digest(meta):
    """SHA-256 of ``meta`` without its own ``checksum``."""
    body = {name: value for name, value in meta.items() if name != "checksum"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def _checked(entry, description):
    meta = json.loads((entry / "meta.json").read_text())
    if not isinstance(meta, dict) or meta.get("checksum") != _digest(meta):
        raise ValueError("meta.json does not match its checksum")
    if {name: meta.get(name) for name in description} != description:
        raise ValueError("it describes another file or other options")
    arrays = {}
    for name in _ARRAYS:
        array = np.load(entry / f"{name}.npy", mmap_mode="r", allow_pickle=False)
        header = meta["arrays"][name]
        if array.dtype.str != header["dtype"] or list(array.shape) != header["shape"]:
            raise ValueError(f"{name}.npy: header {array.dtype.str} {list(array.shape)} "
                             f"against {header['dtype']} {header['shape']} in meta.json")
        arrays[name] = array
    n_rows, width = meta["shape"]
    _check_layout(arrays, n_rows, width, description)
    written = meta.get("written")
    if not isinstance(written, dict) or any(
            written.get(name) != _array_stamp(entry / f"{name}.npy") for name in _ARRAYS):
        for name in _ARRAYS:  # touched since it was written: its content must be the same
            if content_crc(arrays[name]) != meta["arrays"][name].get("crc32"):
                raise ValueError(f"{name}.npy changed since it was written (its CRC-32 is not "
                                 "the one in meta.json)")
        _check_values(arrays, n_rows, width)
    X = sp.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]),
                      shape=(n_rows, width), copy=False)
    X.has_sorted_indices = True
    return X, arrays["y"], arrays["qid"], meta


def content_crc(array):
    """The CRC-32 of an array's bytes, read in blocks (a memory map is not
    loaded whole)."""
    flat = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    crc = 0
    for lo in range(0, len(flat), _CRC_BLOCK):
        crc = zlib.crc32(flat[lo:lo + _CRC_BLOCK], crc)
    return crc


def _array_stamp(path):
    """What changes whenever an array file's bytes do: its size,
    modification time, inode and inode change time."""
    stat = os.stat(path)
    return [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino]


def _check_layout(arrays, n_rows, width, description):
    """``ValueError`` unless the arrays have the kinds, lengths and ends of
    the CSR matrix, labels and qids the parser makes."""
    data, indices, indptr = arrays["data"], arrays["indices"], arrays["indptr"]
    y, qid = arrays["y"], arrays["qid"]
    expected = {"data": np.dtype(description["dtype"])}
    for name, array in arrays.items():
        if array.ndim != 1:
            raise ValueError(f"{name}.npy is not one-dimensional")
        if name in expected and array.dtype != expected[name]:
            raise ValueError(f"{name}.npy holds {array.dtype}, not {expected[name]}")
        if name != "data" and array.dtype.kind not in "iu":
            raise ValueError(f"{name}.npy holds {array.dtype}, not integers")
    n_features = description["n_features"]
    if n_rows < 0 or width < 0 or (n_features is not None and width != n_features):
        raise ValueError(f"shape {n_rows} x {width} for {n_features} features")
    if len(indptr) != n_rows + 1 or len(y) != n_rows or len(qid) != n_rows:
        raise ValueError(f"{len(indptr)} row pointers, {len(y)} labels and {len(qid)} qids "
                         f"for {n_rows} rows")
    if len(data) != len(indices) or indptr[0] != 0 or indptr[-1] != len(data):
        raise ValueError("row pointers do not span the stored values")


def _check_values(arrays, n_rows, width):
    """``ValueError`` unless every value is what the parser makes: row
    pointers never decreasing, labels 0 to 255, column indices in range and
    increasing within a row, finite values (one pass over the arrays)."""
    data, indices, indptr, y = arrays["data"], arrays["indices"], arrays["indptr"], arrays["y"]
    for lo in range(0, n_rows, _CHECK_BLOCK):
        block = np.asarray(indptr[lo:lo + _CHECK_BLOCK + 1])
        if np.any(np.diff(block) < 0):
            raise ValueError("row pointers decrease")
        labels = np.asarray(y[lo:lo + _CHECK_BLOCK])
        if labels.size and (labels.min() < 0 or labels.max() > _LABEL_MAX):
            raise ValueError(f"a label outside 0..{_LABEL_MAX}")
    for lo in range(0, len(data), _CHECK_BLOCK):
        hi = min(lo + _CHECK_BLOCK, len(data))
        columns = np.asarray(indices[lo:hi]).astype(np.int64)
        if columns.min() < 0 or columns.max() >= width:
            raise ValueError(f"a column index outside 0..{width - 1}")
        if np.any(np.isinf(data[lo:hi])):  # NaN is a missing value a file may hold
            raise ValueError("an infinite value")
        # column indices increase within each row: a step down only where a row starts
        steps = np.diff(columns, prepend=indices[lo - 1] if lo else -1)
        first, last = np.searchsorted(indptr, [lo, hi])
        row_start = np.zeros(hi - lo, dtype=bool)
        row_start[np.asarray(indptr[first:last]) - lo] = True
        if np.any((steps <= 0) & ~row_start):
            raise ValueError("column indices not increasing within a row")


def complete_csr(X):
    """The CSR matrix of a dense ``X`` that stores every value, zeros
    included, as the parser gives a file whose every line holds every
    feature (``scipy.sparse.csr_matrix(X)`` would drop the zeros)."""
    X = np.ascontiguousarray(X)
    n_rows, width = X.shape
    indices = np.tile(np.arange(width, dtype=np.int32), n_rows)
    indptr = np.arange(n_rows + 1, dtype=np.int64) * width
    matrix = sp.csr_matrix((X.reshape(-1), indices, indptr), shape=X.shape)
    matrix.has_sorted_indices = True
    return matrix


def store(directory, key, description, X, y, qid, warning=None):
    """Write an entry atomically and remove older entries of the same
    source, and staging directories left by killed writers. Returns the
    entry's path, or None when the directory cannot be written (the cache
    is an optimisation: it never fails a load)."""
    directory = Path(directory)
    staging = directory / f".{key}.staging-{os.getpid()}"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        _remove_abandoned(directory)
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(mode=0o700)
    except OSError:
        return None
    try:
        X = X if sp.issparse(X) else complete_csr(X)
        arrays, written = {}, {}
        for name, array in (("data", X.data), ("indices", X.indices), ("indptr", X.indptr),
                            ("y", y), ("qid", qid)):
            array = np.ascontiguousarray(array)
            np.save(staging / f"{name}.npy", array, allow_pickle=False)
            os.chmod(staging / f"{name}.npy", 0o444 & ~_umask())
            arrays[name] = {"dtype": array.dtype.str, "shape": list(array.shape),
                            "crc32": content_crc(array)}
            written[name] = _array_stamp(staging / f"{name}.npy")
        meta = dict(description, shape=list(X.shape), warning=warning, arrays=arrays,
                    written=written)
        meta["checksum"] = _digest(meta)
        (staging / "meta.json").write_text(json.dumps(meta, indent=1))
        os.chmod(staging / "meta.json", 0o444 & ~_umask())
        os.chmod(staging, 0o777 & ~_umask())
        target = directory / key
        try:
            os.rename(staging, target)
        except OSError:  # another process wrote the same entry first
            shutil.rmtree(staging, ignore_errors=True)
        _remove_older(directory, key, description["source"]["path"])
        return target
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(sys.exc_info()[1], OSError):
            return None
        raise


_KEY = re.compile(r"^[0-9a-f]{32}$")
_STAGING = re.compile(r"^\.[0-9a-f]{32}\.staging-(\d+)$")
_LEGACY_STAGING = re.compile(r"^\.[0-9a-f]{32}\.[^.]+$")


def _remove_abandoned(directory):
    """Staging directories whose writer is gone: its process id is not
    running, or, for format 1's names without one, a day old."""
    for entry in directory.iterdir():
        match = _STAGING.match(entry.name)
        try:
            if match:
                abandoned = not process_alive(int(match.group(1)))
            elif _LEGACY_STAGING.match(entry.name) and entry.is_dir():
                abandoned = time.time() - entry.stat().st_mtime > _LEGACY_STAGING_AGE
            else:
                continue
        except OSError:
            continue
        if abandoned:
            shutil.rmtree(entry, ignore_errors=True)


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _remove_older(directory, key, source):
    for entry in directory.iterdir():
        if entry.name == key or not _KEY.match(entry.name) or not entry.is_dir() \
                or entry.is_symlink():
            continue
        try:
            meta = json.loads((entry / "meta.json").read_text())
        except (OSError, ValueError):
            continue
        if meta.get("source", {}).get("path") == source:
            shutil.rmtree(entry, ignore_errors=True)
