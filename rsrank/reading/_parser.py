"""numba kernels on bytes: LETOR/SVMlight text to arrays.

The grammar of one line: ``label [qid:Q] index:value ... [#comment]``, tokens
separated by spaces or tabs, ASCII digits, indices increasing from 1, LF or
CRLF line ends. A line that strays from it in any way (a NaN, an underscore,
a bare CR, a ``#`` glued to a token, ...) stops the fast parser, and the
caller hands the file to the line-by-line checker in :mod:`rsrank.reading.datasets`,
which names the line and the problem (or, for the few forms it accepts and
this grammar does not, reads the file itself). So the fast path never
decides what a file means on its own.

Values are exact: a decimal with at most 19 significant digits whose
mantissa is below 2**53 and whose power of ten is within 10**22 is one
correctly rounded multiplication or division of two exact doubles
(Clinger's fast path); every other value is marked and read afterwards
with Python's ``float()``. The result equals ``float(token)`` for every
token, stored in the output's dtype: float32 output is that double
rounded to nearest, as ``astype`` rounds it, without a float64 copy.

The text is cut into line-aligned blocks; a first pass bounds the rows and
stored values of each block by counting line ends and colons (branch-free,
so about a tenth of the parse), a second parses each block into its slice
of the output arrays, both over the blocks in parallel (the serial and
parallel builds are separate cached kernels, see
:func:`rsrank._kernels.twins`). Where blank lines, comment lines or colons
in comments left slack, the slices close up afterwards; a block never
writes past its bounds, even if the text changed between the passes.
"""

import errno
import mmap

import numpy as np
from numba import prange

from .._kernels.build import njit, twins

__all__ = ["parse_buffer", "parse_chunks", "line_aligned_starts"]

OK, BAD = 0, 1
_u = np.uint64  # an index numba need not test for a negative value
_OWN_MAPPING_BYTES = 4 << 20
_POW10 = np.array([10.0 ** k for k in range(23)])
_MANTISSA_LIMIT = 2 ** 53
_INDEX_MAX = 2 ** 31 - 1
_LABEL_MAX = 2 ** 31 - 1


@njit(cache=True)
def _is_space(c):
    return c == 32 or c == 9  # space, tab


@njit(cache=True)
def _is_digit(c):
    return 48 <= c <= 57


@njit(cache=True)
def _token_end(c):
    """A byte that may follow a token: space, tab, CR or LF."""
    return c == 32 or c == 9 or c == 10 or c == 13


@njit(cache=True)
def _parse_value(buf, i, end, pow10):
    """Parse ``[-+]digits[.digits][(e|E)[-+]digits]`` at ``buf[i]``.

    Returns ``(value, next position, exact, ok)``: ``exact`` is False when
    the fast path cannot give the correctly rounded double (the caller reads
    the token with ``float()``), ``ok`` False when the bytes are no number.
    """
    negative = False
    if i < end and (buf[_u(i)] == 45 or buf[_u(i)] == 43):  # '-' '+'
        negative = buf[_u(i)] == 45
        i += 1
    mantissa = np.uint64(0)
    digits = 0  # significant digits kept in the mantissa
    any_digit = False
    exponent = 0
    exact = True
    fraction = False
    while i < end:
        if buf[_u(i)] == 46 and not fraction:  # '.'
            fraction = True
            i += 1
            continue
        if not _is_digit(buf[_u(i)]):
            break
        any_digit = True
        if digits < 19:
            if mantissa != 0 or buf[_u(i)] != 48:
                digits += 1
            mantissa = mantissa * np.uint64(10) + np.uint64(buf[_u(i)] - 48)
            if fraction:
                exponent -= 1
        else:
            exact = False  # more digits than the fast path holds: float() reads it
        i += 1
    if not any_digit:
        return 0.0, i, False, False
    if i < end and (buf[_u(i)] == 101 or buf[_u(i)] == 69):  # 'e' 'E'
        i += 1
        exp_negative = False
        if i < end and (buf[_u(i)] == 45 or buf[_u(i)] == 43):
            exp_negative = buf[_u(i)] == 45
            i += 1
        if i >= end or not _is_digit(buf[_u(i)]):
            return 0.0, i, False, False
        value = 0
        while i < end and _is_digit(buf[_u(i)]):
            if value < 100000:
                value = value * 10 + (buf[_u(i)] - 48)
            i += 1
        exponent += -value if exp_negative else value
    if i < end and not _token_end(buf[_u(i)]):
        return 0.0, i, False, False
    if mantissa == 0:
        return -0.0 if negative else 0.0, i, exact, True
    if not exact or mantissa >= np.uint64(_MANTISSA_LIMIT) or exponent > 22 or exponent < -22:
        return 0.0, i, False, True
    result = float(mantissa)
    if exponent >= 0:
        result = result * pow10[exponent]
    else:
        result = result / pow10[-exponent]
    return -result if negative else result, i, True, True


@njit(cache=True)
def _parse_uint(buf, i, end, limit):
    """ASCII digits at ``buf[i]`` as an integer up to ``limit``; returns
    ``(value, next position, ok)``."""
    if i >= end or not _is_digit(buf[_u(i)]):
        return 0, i, False
    value = 0
    while i < end and _is_digit(buf[_u(i)]):
        digit = buf[_u(i)] - 48
        if value > (limit - digit) // 10:  # checked before it could overflow
            return 0, i, False
        value = value * 10 + digit
        i += 1
    return value, i, True


@njit(cache=True)
def _skip_line(buf, i, end):
    """Position after the end of the line (a comment), or -1 at a bare CR:
    other readers would take it for a line break."""
    while i < end and buf[_u(i)] != 10:
        if buf[_u(i)] == 13 and (i + 1 >= end or buf[_u(i + 1)] != 10):
            return -1
        i += 1
    return i + 1


@njit(cache=True)
def _parse_block(buf, lo, hi, fill, pow10, labels, qids, has_qid, row_nnz, indices, data,
                 row0, nnz0, row_end, nnz_end):
    """Parse the lines of ``buf[lo:hi]`` (whole lines) into rows ``row0...``
    and values ``nnz0...`` of the output arrays (``fill``; False only
    counts). Rows go to ``row0 ... row_end - 1`` and values to
    ``nnz0 ... nnz_end - 1``, the bounds :func:`_count_lines` gave for the
    block; a block that would need more (its text changed since that pass)
    stops with ``BAD`` before it writes past them.

    Returns ``(rows, values, rows with qid, max index, status)``.
    """
    i = lo
    rows = 0
    nnz = 0
    with_qid = 0
    max_index = 0
    while i < hi:
        # leading blanks, blank lines and comment lines
        while i < hi and _is_space(buf[_u(i)]):
            i += 1
        if i >= hi:
            break
        c = buf[_u(i)]
        if c == 10:
            i += 1
            continue
        if c == 13:
            if i + 1 < hi and buf[_u(i + 1)] == 10:
                i += 2
                continue
            return rows, nnz, with_qid, max_index, BAD  # bare CR
        if c == 35:  # '#'
            i = _skip_line(buf, i, hi)
            if i < 0:
                return rows, nnz, with_qid, max_index, BAD
            continue
        # label: digits with an optional '.0...'
        label, i, ok = _parse_uint(buf, i, hi, np.int64(_LABEL_MAX))
        if not ok:
            return rows, nnz, with_qid, max_index, BAD
        if i < hi and buf[_u(i)] == 46:
            i += 1
            while i < hi and buf[_u(i)] == 48:
                i += 1
        if i < hi and not _token_end(buf[_u(i)]):
            return rows, nnz, with_qid, max_index, BAD
        row = row0 + rows
        if row >= row_end:  # more rows than the first pass counted: the text changed
            return rows, nnz, with_qid, max_index, BAD
        if fill:
            labels[row] = label
        # optional qid
        j = i
        while j < hi and _is_space(buf[_u(j)]):
            j += 1
        row_has_qid = False
        if j > i and j + 4 <= hi and buf[_u(j)] == 113 and buf[_u(j + 1)] == 105 and buf[_u(j + 2)] == 100 \
                and buf[_u(j + 3)] == 58:  # 'qid:'
            query, j, ok = _parse_uint(buf, j + 4, hi, np.int64(2 ** 62))
            if not ok or (j < hi and not _token_end(buf[_u(j)])):
                return rows, nnz, with_qid, max_index, BAD
            row_has_qid = True
            with_qid += 1
            if fill:
                qids[row] = query
            i = j
        if fill:
            has_qid[row] = row_has_qid
        # features
        previous = 0
        count = 0
        while True:
            start = i
            while i < hi and _is_space(buf[_u(i)]):
                i += 1
            if i >= hi or buf[_u(i)] == 10:
                i += 1
                break
            if buf[_u(i)] == 13:
                if i + 1 < hi and buf[_u(i + 1)] == 10:
                    i += 2
                    break
                return rows, nnz, with_qid, max_index, BAD
            if i == start:
                return rows, nnz, with_qid, max_index, BAD  # tokens must be separated
            if buf[_u(i)] == 35:  # a comment after whitespace
                i = _skip_line(buf, i, hi)
                if i < 0:
                    return rows, nnz, with_qid, max_index, BAD
                break
            index, i, ok = _parse_uint(buf, i, hi, np.int64(_INDEX_MAX))
            if not ok or index <= previous or i >= hi or buf[_u(i)] != 58:
                return rows, nnz, with_qid, max_index, BAD
            previous = index
            value, after, exact, ok = _parse_value(buf, i + 1, hi, pow10)
            if not ok:
                return rows, nnz, with_qid, max_index, BAD
            position = nnz0 + nnz + count
            if position >= nnz_end:
                return rows, nnz, with_qid, max_index, BAD
            if fill:
                if exact:
                    indices[position] = index - 1
                    data[position] = value
                else:  # float() reads it later: its column waits in the value's slot
                    # and its byte offset from the block's start, negated, in the index's
                    indices[position] = lo - i - 1
                    data[position] = index - 1
            i = after
            count += 1
            if index > max_index:
                max_index = index
        if fill:
            row_nnz[row] = count
        rows += 1
        nnz += count
    return rows, nnz, with_qid, max_index, OK


@njit(cache=True)
def _count_lines(buf, lo, hi):
    """Upper bounds of the rows and stored values of ``buf[lo:hi]``, without
    parsing: line ends (one more for an unfinished last line), and colons
    that do not follow a ``d`` (every value's colon follows a digit; a
    ``qid:`` colon follows a ``d``). Blank lines, comment lines and colons
    in comments make the bounds loose, never short. One branch-free pass
    over the bytes, which the compiler vectorises."""
    newlines = 0
    colons = 0
    previous = np.uint8(0)
    for i in range(lo, hi):
        c = buf[i]
        newlines += c == 10
        colons += (c == 58) & (previous != 100)
        previous = c
    if hi > lo and buf[hi - 1] != 10:
        newlines += 1
    return newlines, colons


def _count_blocks(buf, starts):
    """Upper bounds of rows and values per block (see :func:`_count_lines`)."""
    n = len(starts) - 1
    out = np.zeros((n, 2), dtype=np.int64)
    for b in prange(n):
        rows, colons = _count_lines(buf, starts[b], starts[b + 1])
        out[b, 0] = rows
        out[b, 1] = colons
    return out


def _fill_blocks(buf, starts, row_starts, nnz_starts, pow10, labels, qids, has_qid, row_nnz,
                 indices, data, result):
    """Parse every block into its slice; ``result[b]`` gets the block's rows,
    values, rows with qid, max index and status."""
    n = len(starts) - 1
    for b in prange(n):
        rows, nnz, with_qid, max_index, status = _parse_block(
            buf, starts[b], starts[b + 1], True, pow10, labels, qids, has_qid, row_nnz,
            indices, data, row_starts[b], nnz_starts[b], row_starts[b + 1],
            nnz_starts[b + 1])
        result[b, 0] = rows
        result[b, 1] = nnz
        result[b, 2] = with_qid
        result[b, 3] = max_index
        result[b, 4] = status


count_blocks_serial, count_blocks_parallel = twins(_count_blocks)
fill_blocks_serial, fill_blocks_parallel = twins(_fill_blocks)


def line_aligned_starts(buf, n_blocks):
    """Block boundaries at line starts, about equal in bytes."""
    size = len(buf)
    starts = [0]
    for b in range(1, n_blocks):
        cut = max(b * size // n_blocks, starts[-1])
        window = 1 << 12  # a few lines; doubled while a line is longer
        while cut < size:
            newline = np.flatnonzero(buf[cut:min(size, cut + window)] == 10)
            if len(newline):
                starts.append(cut + int(newline[0]) + 1)
                break
            cut += window
            window = min(2 * window, 1 << 20)
    starts.append(size)
    return np.unique(np.asarray(starts, dtype=np.int64))


def _compact(arrays, starts, used):
    """Close the gaps the bounds left: block ``b`` holds ``used[b]`` items
    from ``starts[b]``; they move down to follow the previous block's, and
    the arrays shrink in place to the total."""
    arrays = list(arrays)
    end = 0
    for b in range(len(used)):
        lo, n = int(starts[b]), int(used[b])
        if lo != end:
            for a in arrays:
                a[end:end + n] = a[lo:lo + n]  # moves down: overlap is safe
        end += n
    for k, a in enumerate(arrays):
        try:
            a.resize(end, refcheck=False)
        except ValueError:  # not the owner of its memory: a copy
            arrays[k] = a[:end].copy()
    return arrays


def _fresh(n, dtype):
    """A zero-filled array of ``n`` items in its own anonymous mapping.

    NumPy asks for transparent huge pages for large arrays. Where the
    kernel hands those out only on request (``madvise``), a huge page is
    often guest memory the host has never backed, and faulting it in is
    several times slower than reusing ordinary pages: the first touch of
    the output, not the parse, then dominated a fresh process's load (see
    ``scripts/bench_load.py``). A mapping of its own gets ordinary pages,
    as a C++ parser's ``malloc`` does, and is returned to the system with
    the last array that uses it. Arrays below NumPy's huge-page size (4 MiB)
    come from NumPy, so that many small files do not use up the process's
    mappings. Memory refused raises MemoryError, as NumPy's arrays do
    (the mapping itself raises OSError ENOMEM)."""
    dtype = np.dtype(dtype)
    if n * dtype.itemsize < _OWN_MAPPING_BYTES:
        return np.zeros(n, dtype=dtype)
    try:
        mapping = mmap.mmap(-1, n * dtype.itemsize)
    except OSError as error:
        if error.errno != errno.ENOMEM:
            raise
        raise MemoryError(f"cannot map {n * dtype.itemsize:,} bytes for the parsed "
                          "values") from error
    return np.frombuffer(mapping, dtype=dtype)


def parse_buffer(buf, n_blocks, dtype=np.float64):
    """Parse LETOR text ``buf`` (a uint8 array); see :func:`parse_chunks`."""
    return parse_chunks(lambda: iter([buf]), n_blocks, dtype)


def _chunk_blocks(buf, n_blocks):
    starts = line_aligned_starts(buf, n_blocks)
    parallel = len(starts) > 2
    count = count_blocks_parallel if parallel else count_blocks_serial
    fill = fill_blocks_parallel if parallel else fill_blocks_serial
    return starts, count, fill


#: a block's byte offsets must fit the int32 index slot (see _parse_block)
_BLOCK_BYTES_MAX = 2 ** 31 - 1


def _read_inexact(buf, starts, nnz_starts, indices, data):
    """Read with ``float()`` the values of one chunk that the fast path
    marked inexact: each marked slot holds minus its token's offset from its
    block's start in ``indices`` and its column in ``data``. The tokens are
    found together (a token ends at the chunk's first space, tab, CR or LF
    after its start), so a file of 17-digit values costs one ``float()`` per
    value, not a Python loop over its bytes."""
    text = memoryview(buf)
    for lo in range(int(nnz_starts[0]), int(nnz_starts[-1]), _INEXACT_BATCH):
        hi = min(lo + _INEXACT_BATCH, int(nnz_starts[-1]))
        positions = lo + np.flatnonzero(indices[lo:hi] < 0)  # slack holds zeros
        if not len(positions):
            continue
        block = np.searchsorted(nnz_starts, positions, side="right") - 1
        begins = np.asarray(starts, dtype=np.int64)[block] - indices[positions]
        # the bytes from the first token's start to the last one's end hold every end
        first, last = int(begins.min()), int(begins.max())
        last += _token_length(buf, last)
        stops = first + np.flatnonzero(_token_ends(buf[first:last]))
        ends = np.append(stops, last)[np.searchsorted(stops, begins)]
        values = np.fromiter((float(bytes(text[b:e]))
                              for b, e in zip(begins.tolist(), ends.tolist())),
                             dtype=np.float64, count=len(positions))
        indices[positions] = data[positions].astype(np.int64)
        with np.errstate(over="ignore"):  # beyond float32: inf, which the caller refuses
            data[positions] = values


#: inexact values read together (bounding the memory of their offsets), and
#: the bytes searched at once for a token's end
_INEXACT_BATCH = 1 << 16
_TOKEN_SCAN = 4096


def _token_ends(chunk):
    """Per byte, whether it ends a token: space, tab, CR or LF."""
    return (chunk == 32) | (chunk == 9) | (chunk == 10) | (chunk == 13)


def _token_length(buf, start):
    """Bytes from ``start`` to the next space, tab, CR or LF (or the end)."""
    end = start
    while end < len(buf):
        chunk = buf[end:end + _TOKEN_SCAN]
        found = np.flatnonzero(_token_ends(chunk))
        if len(found):
            return end + int(found[0]) - start
        end += len(chunk)
    return len(buf) - start


def parse_chunks(chunks, n_blocks, dtype=np.float64, dense=False):
    """Parse LETOR text given as consecutive chunks that end at line ends.

    ``chunks()`` is called twice and must give the same chunks both times:
    a first pass bounds the rows and values of every block, the output
    arrays are allocated once, and a second pass fills them, so memory holds
    the arrays and one chunk of text.

    Returns ``(labels, qids or None, indptr, indices, data, max index)`` with
    ``indices`` int32 and ``data`` of ``dtype`` (float64 or float32),
    ``float(token)`` rounded once to it, or ``None`` when any line strays
    from the grammar (the caller then reads the file line by line).

    With ``dense``, a text whose every line holds every feature from 1 to
    the largest, in order, gives ``indptr`` and ``indices`` None and
    ``data`` the rows one after another (a C-ordered array of ``max index``
    columns, flattened): the column indices are kept one chunk at a time,
    so memory never holds an int32 beside every value. Any other text gives
    the arrays above: from the first chunk that breaks the pattern, the
    indices go to one array for all values, as without ``dense``.
    """
    bounds = []
    for buf in chunks():
        starts, count, _ = _chunk_blocks(buf, n_blocks)
        if len(starts) > 1 and np.max(np.diff(starts)) > _BLOCK_BYTES_MAX:
            return None
        bounds.append(count(buf, starts))
    buf = None  # the first pass's chunk goes before the second pass reads its own
    bounds = np.concatenate(bounds) if bounds else np.zeros((0, 2), dtype=np.int64)
    row_starts = np.r_[0, np.cumsum(bounds[:, 0])].astype(np.int64)
    nnz_starts = np.r_[0, np.cumsum(bounds[:, 1])].astype(np.int64)
    rows, nnz = int(row_starts[-1]), int(nnz_starts[-1])
    labels = _fresh(rows, np.int64)
    qids = _fresh(rows, np.int64)
    has_qid = _fresh(rows, np.bool_)
    row_nnz = _fresh(rows, np.int64)
    indices = None if dense else _fresh(nnz, np.int32)
    data = _fresh(nnz, dtype)
    counts = np.zeros((len(bounds), 5), dtype=np.int64)
    complete = []  # while dense: the value ranges of the chunks of complete lines so far
    width = None
    block = 0
    for buf in chunks():
        starts, _, fill = _chunk_blocks(buf, n_blocks)
        n = len(starts) - 1
        if block + n > len(bounds):
            return None  # the chunks changed between the passes
        row_bounds = row_starts[block:block + n + 1]
        nnz_bounds = nnz_starts[block:block + n + 1]
        done = counts[block:block + n]
        if dense:  # this chunk's values alone, numbered from 0
            lo, hi = int(nnz_bounds[0]), int(nnz_bounds[-1])
            own, values, nnz_bounds = _fresh(hi - lo, np.int32), data[lo:hi], nnz_bounds - lo
        else:
            own, values = indices, data
        fill(buf, starts, row_bounds, nnz_bounds, _POW10, labels, qids, has_qid, row_nnz, own,
             values, done)
        if np.any(done[:, 4] != OK):
            return None
        _read_inexact(buf, starts, nnz_bounds, own, values)
        if dense:
            whole = _complete_width(done, bounds[block:block + n],
                                    row_nnz[row_bounds[0]:row_bounds[-1]], width)
            if whole:
                width = whole
                complete.append((lo, hi))
            else:  # indices from here on; a complete chunk's are its columns in turn
                indices = _fresh(nnz, np.int32)
                for start, end in complete:
                    indices[start:end] = np.arange(end - start) % width
                indices[lo:hi] = own
                dense = False
        block += n
    if block != len(bounds):
        return None
    if dense:
        if width:
            return _finished(labels, qids, counts, None, None, data, rows)
        indices = _fresh(nnz, np.int32)  # no lines at all
    if np.any(counts[:, :2] != bounds):  # blank or comment lines, colons in comments
        row_arrays = _compact((labels, qids, has_qid, row_nnz), row_starts, counts[:, 0])
        labels, qids, has_qid, row_nnz = row_arrays
        indices, data = _compact((indices, data), nnz_starts, counts[:, 1])
        rows = len(labels)
    indptr = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(row_nnz, out=indptr[1:])
    return _finished(labels, qids, counts, indptr, indices, data, rows)


def _complete_width(done, bounds, row_nnz, width):
    """The number of features of every row of a parsed chunk when each
    holds all of them, from 1 in order, and it is ``width`` (or ``width``
    is None); else 0. ``done`` is the chunk's blocks' counts, ``bounds``
    their first pass's: slack there (blank or comment lines) makes the
    values move, so such a chunk is not complete either. Indices increase
    along a line, so ``w`` values of a line whose largest index is at most
    ``w`` are the indices 1 to ``w``."""
    if len(row_nnz) == 0 or np.any(done[:, :2] != bounds):
        return 0
    first = int(row_nnz[0])
    if first == 0 or (width is not None and first != width):
        return 0
    if int(done[:, 3].max()) != first or np.any(row_nnz != first):
        return 0
    return first


def _finished(labels, qids, counts, indptr, indices, data, rows):
    """The result of :func:`parse_chunks`, or None for lines with and
    without qid mixed, or a float32 value slot that had to hold a column
    index beyond 2**24."""
    with_qid = int(counts[:, 2].sum())
    if 0 < with_qid < rows:
        return None  # some lines with qid, some without
    max_index = int(counts[:, 3].max()) if len(counts) else 0
    if data.dtype.itemsize < 8 and max_index > 2 ** 24:
        return None  # a float32 slot held an inexact value's column only up to 2**24
    return labels, (qids if with_qid else None), indptr, indices, data, max_index
