"""LETOR files read in blocks of whole queries, every epoch, for training
that does not fit in memory (:func:`iter_letor_chunks`): the compiled
parser over pieces of the file, the line reader where a piece needs it, or
slices of the binary cache."""

import gzip
import re
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from . import _cache, _parser
from ._files import not_a_file
from ..learning._threads import threads
from ._csv import is_csv
from ._reading import (INDEX_MAX, INT64_MAX, PARALLEL_BYTES, LetorFormatError, cache_entry,
                       line_chunks, open_text, parse_checked, reading)

def _line_qid(path, number, text):
    tokens = text.split(None, 2)
    if len(tokens) < 2 or not tokens[1].startswith("qid:"):
        raise LetorFormatError(path, number, "missing 'qid:<integer>' after the label "
                               "(streaming needs a qid on every line)")
    # the rule of the other readers: an integer, of either sign, within 64 bits
    digits = tokens[1][4:]
    if not re.fullmatch(r"-?[0-9]+", digits) or abs(int(digits)) > INT64_MAX:
        raise LetorFormatError(path, number, f"malformed query id {tokens[1]!r} "
                               "(expected qid:<integer> within 64 bits)")
    return int(digits)


def iter_letor_chunks(path, queries_per_chunk=1000, *, n_features, dtype=np.float64,
                      cache=None):
    """Read a LETOR file as blocks of whole queries, in bounded memory.

    Parameters
    ----------
    path : path-like
        Plain or gzipped LETOR file; every line needs ``qid:`` and each
        query's rows must form one block (as in LETOR's files).
    queries_per_chunk : int
        Queries per block; memory holds one block's text and matrix.
    n_features : int
        Columns of every block (a larger index is an error).
    dtype : float64 or float32
    cache : True or path-like, optional
        When :func:`load_letor` has cached this file with the same
        ``n_features`` and ``dtype``, the blocks are sliced from the
        memory-mapped arrays instead of parsed (see :func:`load_letor`);
        only the block in use is read into memory.

    Yields
    ------
    X, y, qid
        As :func:`load_letor` returns them, for consecutive queries.

    Raises
    ------
    LetorFormatError
        As :func:`load_letor`, with the line in the whole file; also when a
        query's rows come back after another query started.
    """
    if is_csv(path):
        raise LetorFormatError(path, None, "a CSV file is read whole, not streamed: leave "
                               "--stream out, or write it as LETOR text "
                               "(rsrank.writers.write_letor)")
    path = Path(path)
    if not path.is_file():
        raise not_a_file(path)
    if queries_per_chunk < 1:
        raise ValueError(f"queries_per_chunk must be >= 1, got {queries_per_chunk}")
    if not (isinstance(n_features, (int, np.integer)) and 1 <= n_features <= INDEX_MAX):
        raise ValueError(f"n_features must be a positive integer up to {INDEX_MAX:,}, "
                         f"got {n_features!r}")
    entry = cache_entry(path, n_features, dtype, None, cache)
    hit = None if entry is None else _cache.load_cached(*entry)
    if hit is not None:
        yield from _cached_chunks(path, hit, queries_per_chunk)
        return
    yielded = 0
    try:
        for block in _compiled_blocks(path, queries_per_chunk, n_features, dtype):
            yield block
            yielded += 1
        return
    except _NeedsLines:
        pass
    # the line reader names the problem's line; the blocks already given are
    # the same as its first ones
    for number, block in enumerate(_line_blocks(path, queries_per_chunk, n_features, dtype)):
        if number >= yielded:
            yield block


class _NeedsLines(Exception):
    """The compiled parser declined part of a stream: the line reader takes over."""


#: Text read at a time by the compiled streaming reader.
_STREAM_CHUNK_BYTES = 16 << 20


def _compiled_blocks(path, queries_per_chunk, n_features, dtype):
    """:func:`iter_letor_chunks` by the compiled parser over chunks of the
    file's bytes; the rows of a query cut by a chunk's end wait for the
    next chunk. Raises :class:`_NeedsLines` at anything it does not accept
    (a grammar error, a line without qid, an index beyond ``n_features``, a
    non-finite value, a query whose rows come back later, no rows)."""
    opener = gzip.open if path.suffix == ".gz" else open
    finished = set()  # queries whose rows are all read
    pending = None  # (X, y, qid) read but not yet given, whole queries and the open one
    with reading(path), opener(path, "rb") as handle:
        for buf in line_chunks(handle, _STREAM_CHUNK_BYTES):
            blocks = 1 if len(buf) < PARALLEL_BYTES else 4 * threads(-1)
            parsed = _parser.parse_chunks(lambda: iter([buf]), blocks)
            if parsed is None:
                raise _NeedsLines
            labels, qid, indptr, indices, data, max_index = parsed
            if len(labels) == 0:
                continue  # comments and blank lines only
            if qid is None or max_index > n_features:
                raise _NeedsLines
            data = data.astype(dtype, copy=False)
            if not np.all(np.isfinite(data)):
                raise _NeedsLines
            X = sp.csr_matrix((data, indices, indptr), shape=(len(labels), n_features))
            X.has_sorted_indices = True
            starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
            runs = qid[starts]
            open_query = None if pending is None else pending[2][-1]
            if runs[0] != open_query and open_query is not None:
                finished.add(int(open_query))
            if (len(np.unique(runs)) < len(runs)
                    or any(int(q) in finished for q in runs)):
                raise _NeedsLines  # rows of a query that are not contiguous
            finished.update(int(q) for q in runs[:-1])
            if pending is not None:
                X = sp.vstack([pending[0], X], format="csr")
                labels = np.concatenate([pending[1], labels])
                qid = np.concatenate([pending[2], qid])
            out, pending = _whole_query_blocks(X, labels, qid, queries_per_chunk, final=False)
            yield from out
    if pending is None:
        raise _NeedsLines  # no rows: the line reader says so
    out, _ = _whole_query_blocks(*pending, queries_per_chunk, final=True)
    yield from out


def _whole_query_blocks(X, y, qid, queries_per_chunk, final):
    """Blocks of ``queries_per_chunk`` whole queries from the front of the
    rows, and the rows left over (None if none). The last query counts as
    whole only when ``final``."""
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    complete = len(starts) if final else len(starts) - 1
    bounds = np.r_[starts, len(qid)]
    out, lo = [], 0
    for first in range(0, complete - queries_per_chunk + 1, queries_per_chunk):
        hi = int(bounds[first + queries_per_chunk])
        out.append((X[lo:hi], y[lo:hi], qid[lo:hi]))
        lo = hi
    if final and lo < len(qid):
        out.append((X[lo:], y[lo:], qid[lo:]))
        lo = len(qid)
    left = None if lo == len(qid) else (X[lo:], y[lo:], qid[lo:])
    return out, left


def _line_blocks(path, queries_per_chunk, n_features, dtype):
    """:func:`iter_letor_chunks` line by line, with each problem's line."""
    import io

    def parse(block):
        source = io.BytesIO("".join(text for _, text in block).encode("utf-8"))
        return parse_checked(source, path, lambda: iter(block), n_features, dtype)

    block, finished, current, complete = [], set(), None, 0
    with reading(path), open_text(path) as handle:
        for number, text in enumerate(handle, start=1):
            if not text.split("#", 1)[0].strip():
                continue
            query = _line_qid(path, number, text)
            if query != current:
                if current is not None:
                    finished.add(current)
                    complete += 1
                if query in finished:
                    raise LetorFormatError(path, number, f"rows of query {query} are not "
                                           "contiguous; streaming needs each query in one "
                                           "block (sort the file by query)")
                if complete == queries_per_chunk:
                    yield parse(block)
                    block, complete = [], 0
                current = query
            block.append((number, text))
    if not block and current is None:
        raise LetorFormatError(path, None, "the file holds no data rows")
    if block:
        yield parse(block)


def _cached_chunks(path, hit, queries_per_chunk):
    X, y, qid, meta = hit
    if meta.get("warning"):
        raise LetorFormatError(path, None, "rows of a query are not contiguous; streaming needs "
                               "each query in one block (sort the file by query)")
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    bounds = np.r_[starts[::queries_per_chunk], len(qid)]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        yield X[lo:hi], np.asarray(y[lo:hi]), np.asarray(qid[lo:hi])


