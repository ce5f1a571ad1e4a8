"""A binary cache of parsed LETOR files: memory-mappable ``.npy`` arrays.

An entry is keyed by what the parse depends on: the source's resolved path,
size and modification time, a SHA-256 of its first and last MiB, and the
parse options (``n_features``, ``dtype``, the query-size file). A changed
source gets a new key, and the stale entry of the same source is removed
when the new one is written. Entries are written into a temporary directory
and renamed into place, so a reader never sees half of one.

The cache lives in ``.rsrank-cache`` beside the source when that directory
can be written, else in the user's cache directory (``$XDG_CACHE_HOME`` or
``~/.cache``, then ``rsrank``), or in a directory given by the caller.
"""

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

__all__ = ["cache_directory", "cache_key", "load_cached", "store"]

_FORMAT = 1
_ARRAYS = ("data", "indices", "indptr", "y", "qid")
_BLOCK = 1 << 20


def user_cache_directory():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rsrank"


def cache_directory(path, cache):
    """Where the entries of ``path`` go: ``cache`` itself when it is a
    directory path, else beside the source when writable, else the user's
    cache directory."""
    if cache is not True:
        return Path(cache)
    beside = Path(path).resolve().parent
    if os.access(beside, os.W_OK):
        return beside / ".rsrank-cache"
    return user_cache_directory()


def _file_stamp(path):
    path = Path(path)
    stat = path.stat()
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        digest.update(handle.read(_BLOCK))
        if stat.st_size > _BLOCK:
            handle.seek(max(stat.st_size - _BLOCK, _BLOCK))
            digest.update(handle.read(_BLOCK))
    return {"path": str(path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns,
            "sha256_ends": digest.hexdigest()}


def cache_key(path, n_features, dtype, query_file):
    """``(key, description)``: the entry name and what it was made from."""
    description = {"format": _FORMAT, "source": _file_stamp(path),
                   "n_features": None if n_features is None else int(n_features),
                   "dtype": np.dtype(dtype).name,
                   "query_file": None if query_file is None else _file_stamp(query_file)}
    text = json.dumps(description, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32], description


def load_cached(directory, key):
    """``(X, y, qid, meta)`` of an entry, memory-mapped read-only, or None."""
    entry = Path(directory) / key
    try:
        meta = json.loads((entry / "meta.json").read_text())
        arrays = {name: np.load(entry / f"{name}.npy", mmap_mode="r", allow_pickle=False)
                  for name in _ARRAYS}
    except (OSError, ValueError):
        return None
    X = sp.csr_matrix((arrays["data"], arrays["indices"], arrays["indptr"]),
                      shape=tuple(meta["shape"]), copy=False)
    X.has_sorted_indices = True
    return X, arrays["y"], arrays["qid"], meta


def store(directory, key, description, X, y, qid, warning=None):
    """Write an entry atomically and remove older entries of the same
    source. Returns the entry's path, or None when the directory cannot be
    written (the cache is an optimisation: it never fails a load)."""
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=directory))
    except OSError:
        return None
    try:
        X = sp.csr_matrix(X)
        for name, array in (("data", X.data), ("indices", X.indices), ("indptr", X.indptr),
                            ("y", y), ("qid", qid)):
            np.save(staging / f"{name}.npy", np.ascontiguousarray(array), allow_pickle=False)
        meta = dict(description, shape=list(X.shape), warning=warning)
        (staging / "meta.json").write_text(json.dumps(meta, indent=1))
        os.chmod(staging, 0o777 & ~_umask())
        target = directory / key
        try:
            os.rename(staging, target)
        except OSError:  # another process wrote the same entry first
            shutil.rmtree(staging, ignore_errors=True)
        _remove_older(directory, key, description["source"]["path"])
        return target
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        return None


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _remove_older(directory, key, source):
    for entry in directory.iterdir():
        if entry.name == key or entry.name.startswith(".") or not entry.is_dir():
            continue
        try:
            meta = json.loads((entry / "meta.json").read_text())
        except (OSError, ValueError):
            continue
        if meta.get("source", {}).get("path") == source:
            shutil.rmtree(entry, ignore_errors=True)
