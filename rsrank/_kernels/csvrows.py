"""Splitting a block of a CSV file's lines that hold no quote, as bytes:
the fields of some columns found, number fields parsed, id fields hashed.

The kernels accept only the plainest text, which they can read exactly as
Python's ``line.split(",")`` and ``str.strip`` read it: printable ASCII
bytes, a ``\\r`` only before a line break, numbers of 1 to 15 digits.
Anything else makes :func:`split_fields` decline the block (status
:data:`DECLINED`), and the caller reads it as text, where each problem is
named.
"""

import numpy as np

from .build import njit

#: :func:`split_fields` read the block
READ = 0
#: it holds something only the text reader names or reads (a byte outside
#: printable ASCII, a field that is not digits where a number is due, a
#: short line that is not blank, a line over the bound)
DECLINED = 1

_SPACE, _COMMA, _CR, _LF = 32, 44, 13, 10
#: most digits a number field may have (``rsrank.clicks.log.DIGITS``)
MAX_DIGITS = 15
_FNV_OFFSET = np.uint64(14695981039346656037)
_FNV_PRIME = np.uint64(1099511628211)


@njit(cache=True)
def split_fields(buf, width, kinds, max_line, line, starts, ends, numbers):
    """Split the lines of ``buf`` (uint8, lines joined by ``\\n``).

    ``kinds[f]`` is what field ``f`` of a line is for: -1 nothing, ``2c``
    the ``c``-th id column, ``2c + 1`` the ``c``-th number column. A line
    with fewer than ``width`` fields must be blank (spaces only) and is
    skipped. Fills, per row kept, ``line`` (its line, from 0), the id
    fields' stripped ``starts`` and ``ends`` and the numbers; returns
    ``(status, rows)``.
    """
    n = buf.shape[0]
    rows = 0
    pos = 0
    number = 0
    while pos <= n:
        end = pos
        while end < n and buf[end] != _LF:
            end += 1
        stop = end  # the line without its \r
        if stop > pos and buf[stop - 1] == _CR:
            stop -= 1
        if stop - pos > max_line:
            return DECLINED, rows
        field, start, blank = 0, pos, True
        for i in range(pos, stop + 1):
            at_end = i == stop
            if not at_end:
                byte = buf[i]
                if byte < _SPACE or byte > 126:
                    return DECLINED, rows
                if byte != _SPACE:
                    blank = False
                if byte != _COMMA:
                    continue
            if field < kinds.shape[0] and kinds[field] >= 0:
                lo, hi = start, i
                while lo < hi and buf[lo] == _SPACE:
                    lo += 1
                while hi > lo and buf[hi - 1] == _SPACE:
                    hi -= 1
                kind = kinds[field]
                if kind % 2 == 0:
                    starts[rows, kind // 2] = lo
                    ends[rows, kind // 2] = hi
                else:
                    if hi == lo or hi - lo > MAX_DIGITS:
                        return DECLINED, rows
                    value = 0
                    for j in range(lo, hi):
                        digit = buf[j] - 48
                        if digit < 0 or digit > 9:
                            return DECLINED, rows
                        value = value * 10 + digit
                    numbers[rows, kind // 2] = value
            field += 1
            start = i + 1
        if field >= width:
            line[rows] = number
            rows += 1
        elif not blank:
            return DECLINED, rows
        number += 1
        pos = end + 1
    return READ, rows


@njit(cache=True)
def hash_fields(buf, starts, ends, out):
    """FNV-1a hash of each field ``buf[starts[i]:ends[i]]``."""
    for i in range(starts.shape[0]):
        h = _FNV_OFFSET
        for j in range(starts[i], ends[i]):
            h = (h ^ np.uint64(buf[j])) * _FNV_PRIME
        out[i] = h


@njit(cache=True)
def same_fields(buf, starts, ends, other):
    """Whether each field ``i`` holds the same bytes as field ``other[i]``."""
    for i in range(starts.shape[0]):
        k = other[i]
        length = ends[i] - starts[i]
        if ends[k] - starts[k] != length:
            return False
        a, b = starts[i], starts[k]
        for j in range(length):
            if buf[a + j] != buf[b + j]:
                return False
    return True
