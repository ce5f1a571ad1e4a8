"""Scores and gradients of rows: CSR, dense and the bin codes of an additive
model."""

import numpy as np
from numba import prange

from .build import njit, twins
from .memory import PREFETCH_ROWS, prefetch_rows


# -- scores and gradients ------------------------------------------------------
#
# These loops only read X and accumulate; "reassoc" lets LLVM vectorise the
# dot-product reductions (about 3x faster on float32 rows) and "contract"
# allows fused multiply-adds. Neither assumes the absence of NaN or inf, so a
# diverging model still shows up in the finiteness check after each epoch.
_ARITHMETIC = {"reassoc", "contract"}
#
# A CSR row's column indices are cast to uint64 where they index: numba then
# leaves out the test for a negative index it makes on every signed one (a
# seventh of a CSR pass of scores and gradient).


@njit(cache=True, fastmath=_ARITHMETIC)
def csr_scores(data, indices, indptr, lo, hi, w, out):
    for r in range(lo, hi):
        total = 0.0
        for p in range(indptr[r], indptr[r + 1]):
            total += data[p] * w[np.uint64(indices[p])]
        out[r] = total


@njit(cache=True, fastmath=_ARITHMETIC)
def dense_scores(X, lo, hi, w, out):
    # four rows at a time: each weight is loaded once for the four, and the
    # four sums run side by side
    d = X.shape[1]
    r = lo
    while r + 4 <= hi:
        prefetch_rows(X, r + PREFETCH_ROWS, min(r + PREFETCH_ROWS + 4, hi))
        t0 = t1 = t2 = t3 = 0.0
        for c in range(d):
            wc = w[c]
            t0 += X[r, c] * wc
            t1 += X[r + 1, c] * wc
            t2 += X[r + 2, c] * wc
            t3 += X[r + 3, c] * wc
        out[r] = t0
        out[r + 1] = t1
        out[r + 2] = t2
        out[r + 3] = t3
        r += 4
    for row in range(r, hi):
        total = 0.0
        for c in range(d):
            total += X[row, c] * w[c]
        out[row] = total


@njit(cache=True, fastmath=_ARITHMETIC)
def csr_add_gradient(data, indices, indptr, lo, hi, lam, scale, grad):
    for r in range(lo, hi):
        coefficient = lam[r] * scale
        if coefficient != 0.0:
            for p in range(indptr[r], indptr[r + 1]):
                grad[np.uint64(indices[p])] += coefficient * data[p]


@njit(cache=True, fastmath=_ARITHMETIC)
def dense_add_gradient(X, lo, hi, lam, scale, grad):
    # four rows at a time: the gradient is read and written once for the four
    d = X.shape[1]
    r = lo
    while r + 4 <= hi:
        k0, k1 = lam[r] * scale, lam[r + 1] * scale
        k2, k3 = lam[r + 2] * scale, lam[r + 3] * scale
        if k0 != 0.0 or k1 != 0.0 or k2 != 0.0 or k3 != 0.0:
            for c in range(d):
                grad[c] += k0 * X[r, c] + k1 * X[r + 1, c] + k2 * X[r + 2, c] + k3 * X[r + 3, c]
        r += 4
    for row in range(r, hi):
        coefficient = lam[row] * scale
        if coefficient != 0.0:
            for c in range(d):
                grad[c] += coefficient * X[row, c]


# An additive model's rows are bin codes (rsrank.learning.binning): ``dense_codes``, one
# uint8 per cell, or ``stored_codes`` aligned with the CSR ``indices`` plus
# ``zero_codes``, the code of an implicit 0 per feature. Feature j has the
# steps ``w[bins[j]:bins[j + 1]]`` (step b on when the code exceeds b), and
# one slot per code from ``slots[j]``: its contribution at code c is the sum
# of its first c steps, ``table[slots[j] + c]`` (:func:`step_table`). The
# gradient of step b is the sum of the lambdas of the rows whose code
# exceeds b: a histogram of the lambdas by slot, then a suffix sum per
# feature moved onto the steps (:func:`suffix_sums`). Every code has a slot,
# code 0 included, so the loops over the rows have no branch.
#
# The slots are packed (``slots[j] = bins[j] + j``) or, for dense codes, one
# stride apart (``slots[j] = j * stride``, every feature given the room of the
# one with most codes; :meth:`rsrank.learning.binning.StepEncoding.rows` chooses). With
# a stride the row loops find each feature's slots by adding the stride, not
# by reading ``slots``, one load less per value. The lookups run as scalar
# sums, four per row, and without fastmath: reassociated, LLVM turns them
# into AVX-512 gathers, which were slower than scalar loads on the machine
# measured (``scripts/bench_additive.py``, ``results/additive_speed.md``).
# Indices are unsigned so that numba adds no wraparound test for negative
# ones.


def table_size(rows):
    """Values in a table of one value per code of coded ``rows`` (an
    additive model's :func:`step_table` and each histogram): from the first
    slot to the last code of the last feature; 0 for linear rows."""
    if rows.bins.shape[0] < 2:
        return 0
    return int(rows.slots[-1] + rows.bins[-1] - rows.bins[-2] + 1)


@njit(cache=True)
def uniform_stride(slots):
    """The stride of ``slots`` when ``slots[j] = j * stride`` for every
    feature (at least two, the stride positive), else 0."""
    d = slots.shape[0]
    if d < 2 or slots[0] != 0 or slots[1] <= 0:
        return 0
    stride = slots[1]
    for j in range(d):
        if slots[j] != j * stride:
            return 0
    return stride


@njit(cache=True)
def step_table(w, bins, slots, table):
    """Each feature's contribution per code, ``table[slots[j] + c] =
    sum(w[bins[j]:bins[j] + c])``, into ``table`` (:func:`table_size`
    values; slots between features are left alone), which it returns."""
    for j in range(bins.shape[0] - 1):
        base = slots[j]
        total = 0.0
        table[base] = 0.0
        for b in range(bins[j + 1] - bins[j]):
            total += w[bins[j] + b]
            table[base + b + 1] = total
    return table


@njit(cache=True)
def strided_scores(codes, stride, lo, hi, table, out):
    """Scores of dense ``codes`` rows ``lo:hi``, feature j's slots at
    ``j * stride`` (a uint64); two rows at a time, four sums each."""
    d = codes.shape[1]
    two = stride + stride
    three = two + stride
    four = three + stride
    for r in range(lo, hi, 2):
        s = min(r + 1, hi - 1)  # an odd last row is summed twice
        t0 = t1 = t2 = t3 = u0 = u1 = u2 = u3 = 0.0
        base = np.uint64(0)
        j = 0
        while j + 4 <= d:
            t0 += table[base + codes[r, j]]
            u0 += table[base + codes[s, j]]
            t1 += table[base + stride + codes[r, j + 1]]
            u1 += table[base + stride + codes[s, j + 1]]
            t2 += table[base + two + codes[r, j + 2]]
            u2 += table[base + two + codes[s, j + 2]]
            t3 += table[base + three + codes[r, j + 3]]
            u3 += table[base + three + codes[s, j + 3]]
            base += four
            j += 4
        while j < d:
            t0 += table[base + codes[r, j]]
            u0 += table[base + codes[s, j]]
            base += stride
            j += 1
        out[r] = (t0 + t1) + (t2 + t3)
        out[s] = (u0 + u1) + (u2 + u3)


@njit(cache=True)
def slotted_scores(codes, slots, lo, hi, table, out):
    """Scores of dense ``codes`` rows ``lo:hi``, feature j's slots at
    ``slots[j]``."""
    d = codes.shape[1]
    for r in range(lo, hi):
        t0 = 0.0
        t1 = 0.0
        t2 = 0.0
        t3 = 0.0
        j = 0
        while j + 4 <= d:
            t0 += table[np.uint64(slots[j]) + codes[r, j]]
            t1 += table[np.uint64(slots[j + 1]) + codes[r, j + 1]]
            t2 += table[np.uint64(slots[j + 2]) + codes[r, j + 2]]
            t3 += table[np.uint64(slots[j + 3]) + codes[r, j + 3]]
            j += 4
        while j < d:
            t0 += table[np.uint64(slots[j]) + codes[r, j]]
            j += 1
        out[r] = (t0 + t1) + (t2 + t3)


@njit(cache=True)
def coded_scores(rows, lo, hi, table, out, stride):
    """Scores of rows ``lo:hi`` of coded rows by table lookups; ``stride``:
    :func:`uniform_stride` of their slots."""
    slots = rows.slots
    d = slots.shape[0]
    if rows.indptr.shape[0] == 0:
        if rows.dense_codes.shape[1] != d:  # the codes of some columns alone (or none)
            slotted_scores(rows.dense_codes, rows.column_slots, lo, hi, table, out)
        elif stride > 0:
            strided_scores(rows.dense_codes, np.uint64(stride), lo, hi, table, out)
        else:
            slotted_scores(rows.dense_codes, slots, lo, hi, table, out)
        return
    base = 0.0
    for j in range(d):
        base += table[slots[j] + rows.zero_codes[j]]
    for r in range(lo, hi):
        total = base
        for p in range(rows.indptr[r], rows.indptr[r + 1]):
            j = rows.indices[p]
            total += table[slots[j] + rows.stored_codes[p]] - table[slots[j] + rows.zero_codes[j]]
        out[r] = total


@njit(cache=True)
def coded_add_histogram(rows, lo, hi, lam, scale, grad, stride):
    """Add ``scale * lam[r]`` of rows ``lo:hi`` to each feature's slot of the
    row's code (``grad[slots[j] + code]``); ``stride``: :func:`uniform_stride`
    of the slots. For CSR rows only the stored values move a lambda away
    from the feature's zero code: a query's lambdas sum to 0, so its
    implicit zeros add nothing."""
    slots = rows.slots
    dense = rows.indptr.shape[0] == 0
    strided = stride > 0
    if dense and rows.dense_codes.shape[1] != slots.shape[0]:  # some columns alone (or none)
        slots = rows.column_slots
        strided = False
    d = slots.shape[0]
    codes = rows.dense_codes
    step = np.uint64(stride)
    for r in range(lo, hi):
        coefficient = lam[r] * scale
        if coefficient == 0.0:
            continue
        if dense and strided:
            base = np.uint64(0)
            for j in range(d):
                grad[base + codes[r, j]] += coefficient
                base += step
        elif dense:
            for j in range(d):
                grad[np.uint64(slots[j]) + codes[r, j]] += coefficient
        else:
            for p in range(rows.indptr[r], rows.indptr[r + 1]):
                j = rows.indices[p]
                grad[slots[j] + rows.stored_codes[p]] += coefficient
                grad[slots[j] + rows.zero_codes[j]] -= coefficient


@njit(cache=True)
def suffix_sums(grad, bins, slots):
    """Each feature's histogram over its slots into its steps' gradient, in
    place: ``grad[bins[j] + b]`` becomes the sum of the slots of the codes
    above ``b``. The steps' gradient fills ``grad[:bins[-1]]``; the rest is
    left over."""
    for j in range(bins.shape[0] - 1):
        top = slots[j] + bins[j + 1] - bins[j]
        for s in range(top - 1, slots[j], -1):
            grad[s] += grad[s + 1]
        # moved down, lowest first: each source lies above its destination
        for b in range(bins[j + 1] - bins[j]):
            grad[bins[j] + b] = grad[slots[j] + b + 1]


@njit(cache=True)
def coded_scores_all(rows, w, table, out):
    """Scores of every coded row at steps ``w``."""
    step_table(w, rows.bins, rows.slots, table)
    n = rows.dense_codes.shape[0] if rows.indptr.shape[0] == 0 else rows.indptr.shape[0] - 1
    coded_scores(rows, 0, n, table, out, uniform_stride(rows.slots))
    return out


#: rows per block of :func:`_linear_scores` (a multiple of the four rows
#: that :func:`dense_scores` sums at a time)
_SCORE_BLOCK = 256


def _linear_scores(data, indices, indptr, X, w, out):
    """``out = X @ w`` in float64 without converting ``X``; rows in parallel
    in the parallel build."""
    dense = indptr.shape[0] == 0
    n = X.shape[0] if dense else indptr.shape[0] - 1
    for block in prange((n + _SCORE_BLOCK - 1) // _SCORE_BLOCK):
        lo = block * _SCORE_BLOCK
        hi = min(lo + _SCORE_BLOCK, n)
        if dense:
            dense_scores(X, lo, hi, w, out)
        else:
            csr_scores(data, indices, indptr, lo, hi, w, out)
    return out


linear_scores_serial, linear_scores_parallel = twins(_linear_scores)


# -- bin codes -----------------------------------------------------------------
#
# A value's code is the number of its feature's thresholds strictly below its
# float32 value (NumPy's searchsorted(cuts, value, side="left")). A NaN takes
# the bin past every threshold when the feature has a missing value's bin
# (``missing``; its last threshold is +inf, which NaN sorts above), else it is
# read as 0. Feature ``j``'s ``sizes[j]`` thresholds fill the rows
# ``starts[j]:starts[j + 1]`` of ``cuts`` (one row of :data:`CODE_BLOCK` per
# block, at least one, the last padded with +inf, which is below no value),
# and ``lasts[j]`` holds the last threshold of each of its rows but the last
# (+inf after them). A value counts the rows wholly below it among
# ``lasts[j]``, then the thresholds of the next row: two loops without a
# branch, their length read from the arrays' shapes (a constant length is
# unrolled into scalar compares; a run-time one gives vector compares).

#: Thresholds counted at a time (:func:`dense_codes`)
CODE_BLOCK = 32


@njit(cache=True, inline="always")
def _value_code(value, cuts, lasts, j, start, size, missing):
    if value != value:  # rare: a branch the CPU predicts
        if missing:
            return size
        value = np.float32(0.0)
    below = 0
    for k in range(lasts.shape[1]):
        below += np.int32(lasts[j, k] < value)
    row = cuts[start + below]
    count = 0
    for k in range(row.shape[0]):
        count += np.int32(row[k] < value)
    return below * CODE_BLOCK + count


def code_layout(thresholds):
    """``(cuts, lasts, starts)`` of each feature's ascending float32
    ``thresholds`` as the code kernels read them (the layout above)."""
    blocks = np.array([max(1, -(-len(c) // CODE_BLOCK)) for c in thresholds], dtype=np.int64)
    starts = np.r_[0, np.cumsum(blocks)].astype(np.int64)
    cuts = np.full((starts[-1], CODE_BLOCK), np.inf, dtype=np.float32)
    lasts = np.full((len(thresholds), max(1, blocks.max(initial=1) - 1)), np.inf,
                    dtype=np.float32)
    flat = cuts.reshape(-1)  # a view: the rows one after another
    for j, c in enumerate(thresholds):
        flat[starts[j] * CODE_BLOCK:starts[j] * CODE_BLOCK + len(c)] = c
        lasts[j, :blocks[j] - 1] = cuts[starts[j]:starts[j + 1] - 1, -1]
    return cuts, lasts, starts


#: rows (and stored values) per block of :func:`_dense_codes` (and
#: :func:`_stored_codes`), the blocks shared out among the parallel build's
#: threads
_CODE_ROWS = 256


def _dense_codes(X, cuts, lasts, starts, sizes, missing, out):
    """The bin code of every value of the 2-D ``X`` into ``out`` (uint8,
    X's shape), a row at a time; blocks of rows in parallel in the parallel
    build (each value's code is its own: the same codes on any threads)."""
    n = X.shape[0]
    for block in prange((n + _CODE_ROWS - 1) // _CODE_ROWS):
        for i in range(block * _CODE_ROWS, min(block * _CODE_ROWS + _CODE_ROWS, n)):
            for j in range(X.shape[1]):
                out[i, j] = _value_code(np.float32(X[i, j]), cuts, lasts, j, starts[j],
                                        sizes[j], missing[j])


def _stored_codes(data, indices, cuts, lasts, starts, sizes, missing, out):
    """The bin code of every stored value of CSR rows (``data``, their
    column ``indices``) into ``out`` (uint8, one per value); blocks of
    values in parallel in the parallel build."""
    n = data.shape[0]
    for block in prange((n + _CODE_ROWS - 1) // _CODE_ROWS):
        for p in range(block * _CODE_ROWS, min(block * _CODE_ROWS + _CODE_ROWS, n)):
            j = indices[p]
            out[p] = _value_code(np.float32(data[p]), cuts, lasts, j, starts[j], sizes[j],
                                 missing[j])


dense_codes_serial, dense_codes_parallel = twins(_dense_codes)
stored_codes_serial, stored_codes_parallel = twins(_stored_codes)


@njit(cache=True)
def code_counts(base, rows, columns, out):
    """Add to ``out[c, k]`` the rows among ``rows`` of ``base`` (uint8
    codes, C-ordered) whose code in column ``columns[c]`` is ``k``: every
    column's counts in one pass over the rows, each row's codes read
    together, where a column at a time reads every row's line of memory
    for each column."""
    for i in range(rows.shape[0]):
        row = base[rows[i]]
        for c in range(columns.shape[0]):
            out[c, row[columns[c]]] += 1


#: rows of a block of :func:`mapped_columns`: its codes stay in cache while
#: each column is written
_MAPPED_ROWS = 512


@njit(cache=True)
def mapped_columns(base, rows, columns, maps, out):
    """``out[c, i] = maps[c, base[rows[i], columns[c]]]``: the codes of
    ``rows`` a column to a row of ``out``, each mapped by its column's
    map, a block of rows at a time (read once from memory, written a
    column at a time)."""
    for lo in range(0, rows.shape[0], _MAPPED_ROWS):
        hi = min(lo + _MAPPED_ROWS, rows.shape[0])
        for c in range(columns.shape[0]):
            j, line, target = columns[c], maps[c], out[c]
            for i in range(lo, hi):
                target[i] = line[base[rows[i], j]]
