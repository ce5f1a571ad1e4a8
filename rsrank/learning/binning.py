"""Step thresholds per feature and the bin codes of rows, for additive
ranking models whose feature shapes are sums of steps,
``f_j(x) = sum_b w_jb [x > t_jb]``.

Each step is a depth-1 tree, so every search engine can run it, but each
engine compares in float32 and with a rule of its own (Solr's trees send
``x <= threshold`` left, XGBoost's JSON sends ``x < split_condition`` to
"yes"). The thresholds are therefore float32 values of the training data,
and a row's code is counted on its float32 value: the number of a
feature's thresholds strictly below it, which is the number of its steps
that are on. A value equal to a threshold has that step off, on every
engine's side of the comparison as on this one.

* :func:`fit_thresholds` picks at most ``max_bins - 1`` thresholds per
  feature: every distinct value but the largest when there are few, else
  training values at evenly spaced quantiles.
* :func:`bin_codes` gives uint8 codes (``max_bins`` is at most 256), one per
  stored value for CSR rows (and one per feature for the implicit zeros) or
  one per cell for dense rows.
"""

import hashlib
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from .. import _kernels
from .._kernels import Rows, read_only
from ._compile import choose
from ._threads import SCORING_WORK_PER_THREAD, held_threads, numba_threads
from ._quantiles import (MAX_BINS, MISSING, as_float32, check_max_bins, coded_column_thresholds,
                         column_thresholds, has_missing_bin)
from ..reading._rowsample import RowSample

__all__ = ["MAX_BINS", "MISSING", "has_missing_bin", "fit_thresholds", "bin_codes", "bin_counts", "BinCodes",
           "StepEncoding", "PairEncoding", "step_indicators", "ValueSummary", "value_summary", "SortedColumns",
           "merged_thresholds", "coded_values", "code_maps", "take_columns"]


def _columns(X):
    """Each column's float32 values, the implicit zeros of a sparse ``X``
    included (as many as the column has)."""
    X = _by_columns(X)
    for j in range(X.shape[1]):
        yield _column(X, j)


def _by_columns(X):
    """``X`` as :func:`_column` reads it: CSC when sparse, a
    ``RowSample`` as it is, else an array."""
    if isinstance(X, RowSample):
        return X
    return sp.csc_matrix(X) if sp.issparse(X) else np.asarray(X)


def _column(X, j):
    """Column ``j``'s float32 values of ``X`` from :func:`_by_columns`, a
    sparse column's implicit zeros included."""
    if sp.issparse(X):
        stored = as_float32(X.data[X.indptr[j]:X.indptr[j + 1]])
        zeros = X.shape[0] - len(stored)
        return np.concatenate([stored, np.zeros(zeros, np.float32)]) if zeros else stored
    return as_float32(X.column(j) if isinstance(X, RowSample) else X[:, j])


def fit_thresholds(X, max_bins=32, n_threads=None):
    """Increasing float32 thresholds per feature, at most ``max_bins - 1``.

    A feature with at most ``max_bins`` distinct (float32) values gets
    every distinct value but the largest, so each value has a bin of its
    own. Otherwise the thresholds are the training values at the quantiles
    ``b / max_bins`` (``b = 1 .. max_bins - 1``, the smallest value with at
    least that share of the rows at or below it), without repeats and
    without the largest value, which no row exceeds. A constant feature
    gets none. NaN (a missing value) counts in no quantile: a feature with
    any NaN gets one more threshold, +inf, above which only NaN lies (the
    missing value's bin, :data:`MISSING`). Infinite values are refused.

    Each column is sorted once, its distinct values read off the sorted
    column; the columns are shared out among ``n_threads`` threads (None:
    :func:`~rsrank.learning._threads.held_threads`), which sort with the
    GIL released. Returns a list of float32 arrays, one per column of
    ``X``.
    """
    check_max_bins(max_bins)
    if X.ndim != 2:
        raise ValueError(f"X must be two-dimensional, got shape {X.shape}")
    if _is_coded(X):  # the same thresholds from the counts of the codes
        counts = X.code_counts()
        return [coded_column_thresholds(counts[j], X.column_table(j), max_bins)
                for j in range(X.shape[1])]
    n_threads = held_threads() if n_threads is None else n_threads
    if n_threads <= 1 or X.shape[1] < 2:
        return [column_thresholds(values, max_bins) for values in _columns(X)]
    X = _by_columns(X)  # each thread copies out its own column: as many in memory as threads
    with ThreadPoolExecutor(min(n_threads, X.shape[1])) as pool:
        return list(pool.map(lambda j: column_thresholds(_column(X, j), max_bins),
                             range(X.shape[1])))


def _is_coded(X):
    """Whether ``X`` is a training set's bin codes read as values (a coded
    ``RowSample``)."""
    return isinstance(X, RowSample) and X.coded


def coded_values(X, max_bins):
    """``(codes, table)``: dense ``X``'s uint8 codes on :func:`fit_thresholds`'
    ``max_bins`` bins, and per column the value that stands for each code,
    a ``(n_features, MAX_BINS)`` float32 table: bin ``b`` below the last
    threshold reads as its threshold ``t_b``, the bin above every threshold
    as the column's largest value, the missing value's bin as NaN, and a
    code no row has as +inf. Each stand-in is a training value of its own
    bin, so thresholds among those values (every fit's, on any of these
    rows) code the stand-ins as they code the values, and ``max_bins`` bins
    fitted on the stand-ins of all rows are the bins they stand for. Read
    as :class:`~rsrank.reading._rowsample.RowSample` ``(codes, table=table)``."""
    thresholds = fit_thresholds(X, max_bins)
    codes = bin_codes(X, thresholds).codes
    largest = as_float32(np.fmax.reduce(X, axis=0))  # NaN: no value; X as it is, no copy
    table = np.full((len(thresholds), MAX_BINS), np.inf, dtype=np.float32)
    for j, cuts in enumerate(thresholds):
        valued = len(cuts) - has_missing_bin(cuts)
        table[j, :valued] = cuts[:valued]
        if not np.isnan(largest[j]):
            table[j, valued] = largest[j]
        if has_missing_bin(cuts):
            table[j, len(cuts)] = np.nan
    return codes, table


# -- the same thresholds from data split over machines -------------------------
#
# fit_thresholds needs every value of a column at once. Across machines, each
# part of the rows sends its few distinct values (a column with more than
# max_bins of them cannot have few overall), and each quantile is found by
# bisection over the float32 values in their order, every round asking the
# parts how many of their values lie at or below each candidate. The result
# is fit_thresholds of all the rows together, and only O(features x bins)
# numbers travel per round (about 32 rounds).


class ValueSummary(NamedTuple):
    """A part's share of :func:`merged_thresholds`: per column its
    distinct float32 values when there are at most ``max_bins`` (else
    None), its smallest and largest value, and the part's rows."""
    few: list
    low: np.ndarray
    high: np.ndarray
    n_rows: int


def value_summary(X, max_bins):
    """The :class:`ValueSummary` of the rows ``X`` (one part of them)."""
    check_max_bins(max_bins)
    few, low, high = [], [], []
    for values in _columns(X):
        if not np.all(np.isfinite(values)):
            raise ValueError("X has NaN or infinite values (as float32)")
        distinct = np.unique(values)
        few.append(distinct if len(distinct) <= max_bins else None)
        low.append(distinct[0] if len(distinct) else np.inf)
        high.append(distinct[-1] if len(distinct) else -np.inf)
    return ValueSummary(few, np.array(low, np.float32), np.array(high, np.float32),
                        int(X.shape[0]))


class SortedColumns:
    """A part's columns in increasing order, to count its values at or
    below candidates (:meth:`count_at_most`) during the bisection."""

    def __init__(self, X):
        self.columns = [np.sort(values) for values in _columns(X)]

    def count_at_most(self, features, candidates):
        """Per feature of ``features``, the values at or below each of its
        row of float32 ``candidates``."""
        return np.array([np.searchsorted(self.columns[j], row, side="right")
                         for j, row in zip(features, candidates)], dtype=np.int64).reshape(
                             len(features), -1)


def _order_keys(values):
    """float32 values as int64 keys in the same order (-0.0 just below 0.0)."""
    bits = np.asarray(values, dtype=np.float32).view(np.int32).astype(np.int64)
    return np.where(bits >= 0, bits, -(bits & 0x7FFFFFFF) - 1)


def _from_order_keys(keys):
    keys = np.asarray(keys, dtype=np.int64)
    bits = np.where(keys >= 0, keys, (-(keys + 1)) | -0x80000000).astype(np.int32)
    return bits.view(np.float32) + np.float32(0.0)  # -0.0 becomes 0.0


def merged_thresholds(summaries, max_bins, count_at_most):
    """:func:`fit_thresholds` of the rows of every part together, from the
    parts' :func:`value_summary` and ``count_at_most(features,
    candidates)``, which returns the values at or below each candidate
    summed over the parts (:meth:`SortedColumns.count_at_most` of each)."""
    check_max_bins(max_bins)
    n_rows = sum(summary.n_rows for summary in summaries)
    width = len(summaries[0].few)
    low = np.min([summary.low for summary in summaries], axis=0)
    high = np.max([summary.high for summary in summaries], axis=0)
    thresholds, many = [None] * width, []
    for j in range(width):
        parts = [summary.few[j] for summary in summaries]
        if all(part is not None for part in parts):
            distinct = np.unique(np.concatenate(parts))
            if len(distinct) <= max_bins:
                thresholds[j] = np.ascontiguousarray(distinct[:-1], dtype=np.float32)
                continue
        many.append(j)
    if many:
        # fit_thresholds' ranks: the smallest value with at least rank rows at or below it
        ranks = np.maximum(np.ceil(np.arange(1, max_bins) / max_bins * n_rows), 1)
        lo = np.repeat(_order_keys(low[many])[:, None], max_bins - 1, axis=1)
        hi = np.repeat(_order_keys(high[many])[:, None], max_bins - 1, axis=1)
        while np.any(lo < hi):
            mid = (lo + hi) // 2
            enough = count_at_most(many, _from_order_keys(mid)) >= ranks
            hi, lo = np.where(enough, mid, hi), np.where(enough, lo, mid + 1)
        for row, j in enumerate(many):
            cuts = np.unique(_from_order_keys(hi[row]))
            thresholds[j] = np.ascontiguousarray(cuts[cuts < high[j]], dtype=np.float32)
    return thresholds


def bin_counts(X, thresholds, codes=None):
    """The rows of ``X`` in each bin, per feature (one more than its
    thresholds); ``codes``: its :class:`BinCodes` under them, when known.
    Counted in one pass over the codes by the kernels' sums per code."""
    codes = bin_codes(X, thresholds) if codes is None else codes
    sizes = np.array([len(t) for t in thresholds], dtype=np.int64)
    bins = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    out = np.zeros(int(bins[-1]) + len(thresholds))
    ones = np.ones(codes.shape[0])
    if codes.dense:
        _kernels.code_sums(codes.codes, bins, ones, out)
    else:
        _kernels.stored_code_sums(codes.indices, codes.indptr, codes.codes, codes.zero_codes,
                                  bins, ones, out)
    counts = out.astype(np.int64)
    return [counts[bins[j] + j:bins[j + 1] + j + 1] for j in range(len(thresholds))]


class BinCodes:
    """Bin codes of rows: ``codes`` (uint8) and, for CSR rows, the CSR
    ``indices``/``indptr`` they align with and ``zero_codes``, the code of
    0.0 per feature (the implicit entries). ``dense`` tells which."""

    def __init__(self, codes, shape, indices=None, indptr=None, zero_codes=None):
        self.codes, self.shape = codes, shape
        self.indices, self.indptr, self.zero_codes = indices, indptr, zero_codes

    @property
    def dense(self):
        return self.indptr is None

    def toarray(self):
        """The codes as a dense ``(n_rows, n_features)`` uint8 array."""
        if self.dense:
            return self.codes
        out = np.repeat(self.zero_codes[None, :], self.shape[0], axis=0)
        rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
        out[rows, self.indices] = self.codes
        return out

    @property
    def nbytes(self):
        parts = [self.codes, self.indices, self.indptr, self.zero_codes]
        return sum(p.nbytes for p in parts if p is not None)


def _code(values, cuts):
    """Number of ``cuts`` strictly below each float32 value; a NaN takes the
    missing value's bin when the feature has one (:func:`has_missing_bin`:
    NaN sorts above +inf), else the bin of 0, as a value the training data
    never lacked is read as 0 when it is missing (a sparse row's absent
    value, an engine's missing feature)."""
    values = as_float32(values)
    if not has_missing_bin(cuts):
        values = np.where(np.isnan(values), np.float32(0.0), values)
    return np.searchsorted(cuts, values, side="left").astype(np.uint8)


def bin_codes(X, thresholds, n_threads=None, out=None):
    """The :class:`BinCodes` of ``X`` under ``thresholds`` (from
    :func:`fit_thresholds`): per value, how many of its feature's
    thresholds its float32 value exceeds (:func:`_code`'s), computed by the
    kernels a row at a time (``scripts/bench_codes.py``: on 227,045 rows of
    136 float32 features with 31 thresholds each, 0.24 times the time of
    NumPy's searchsorted a column at a time, 0.12 on two threads), blocks of rows on
    ``n_threads`` threads (None: :func:`~rsrank.learning._threads.held_threads`).
    ``out``: for dense ``X``, a C-ordered uint8 array of its rows and at
    least its columns whose first columns take the codes (the rest are
    left as they are), rather than an array of their own. A
    ``RowSample`` is coded a block of rows at
    a time, never copied whole; one of codes read as values, by mapping
    each code (:func:`code_maps`)."""
    if X.shape[1] != len(thresholds):
        raise ValueError(f"X has {X.shape[1]} features, the thresholds {len(thresholds)}")
    if any(len(cuts) >= MAX_BINS for cuts in thresholds):
        raise ValueError(f"a feature has more than {MAX_BINS - 1} thresholds")
    if _is_coded(X):
        return _recoded(X, thresholds, out)
    sizes = np.array([len(c) for c in thresholds], dtype=np.int64)
    cuts, lasts, starts = _kernels.code_layout(thresholds)
    missing = np.array([has_missing_bin(c) for c in thresholds], dtype=np.bool_)
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        codes = np.empty(X.nnz, dtype=np.uint8)
        args = (read_only(_numbers(X.data)), X.indices, cuts, lasts, starts, sizes, missing,
                codes)
        _coded(_kernels.stored_codes_serial, _kernels.stored_codes_parallel, n_threads, args)
        zero_codes = np.array([_code(np.zeros(1), c)[0] for c in thresholds], dtype=np.uint8)
        return BinCodes(codes, X.shape, X.indices.copy(), X.indptr.copy(), zero_codes)
    out = _checked_out(out, X.shape)
    for lo, hi, block in (X.blocks() if isinstance(X, RowSample) else [(0, X.shape[0], X)]):
        args = (read_only(_numbers(np.asarray(block))), cuts, lasts, starts, sizes, missing,
                out[lo:hi])  # the kernel fills the block's columns
        _coded(_kernels.dense_codes_serial, _kernels.dense_codes_parallel, n_threads, args)
    return BinCodes(out if out.shape == X.shape else out[:, :X.shape[1]], X.shape)


def _checked_out(out, shape):
    """``out`` of :func:`bin_codes` (None: a new array of ``shape``)."""
    if out is None:
        return np.empty(shape, dtype=np.uint8)
    if (out.dtype != np.uint8 or out.ndim != 2 or not out.flags.c_contiguous
            or out.shape[0] != shape[0] or out.shape[1] < shape[1]):
        raise ValueError(f"out must be a C-ordered uint8 array of {shape[0]} rows and at "
                         f"least {shape[1]} columns")
    return out


def code_maps(X, thresholds):
    """``(maps, same)`` of a coded ``RowSample``: per column, the code under
    ``thresholds`` of each of its codes' values (a ``(n_features, 256)``
    uint8 array), and whether every map leaves the codes rows have as they
    are over all the base's rows."""
    maps = np.zeros((X.shape[1], MAX_BINS), dtype=np.uint8)
    same = X.whole
    for j, cuts in enumerate(thresholds):
        values = X.column_table(j)
        maps[j] = _code(values, cuts)
        held = ~np.isposinf(values)  # the codes rows have
        same = same and np.array_equal(maps[j][held], np.flatnonzero(held))
    return maps, same


def _recoded(X, thresholds, out):
    """:func:`bin_codes` of a coded ``RowSample``: each of its codes mapped to
    the code its value takes under ``thresholds``, a block of rows at a
    time. Where every column's map leaves its codes as they are (the bins
    they were coded on, over all their rows), ``out`` takes the codes as
    they are; a new ``out`` is never made then, the sample's own codes are
    returned."""
    width = X.shape[1]
    maps, same = code_maps(X, thresholds)
    if same and out is None:
        return BinCodes(X.base, X.shape)
    out = _checked_out(out, X.shape)
    if same:
        out[:, :width] = X.base
    else:
        columns = np.arange(width)[None, :]
        for lo, hi, block in X.code_blocks():
            out[lo:hi, :width] = maps[columns, block]
    return BinCodes(out if out.shape[1] == width else out[:, :width], X.shape)


def _coded(serial, parallel, n_threads, args):
    """Runs a codes kernel on ``n_threads`` threads (None: those held),
    one when its values are too few to share: its parallel build wherever
    they are that many, on one thread too, as numba compiles its count
    loops to faster code than the serial build's (2.5 times as fast on one
    thread, 227,045 rows of 136 float32 features at 32 bins)."""
    n = held_threads() if n_threads is None else n_threads
    many = args[0].size >= SCORING_WORK_PER_THREAD
    n = min(n, max(1, args[0].size // SCORING_WORK_PER_THREAD))
    with numba_threads(n):
        choose(serial, parallel, max(n, 2) if many else n, args)(*args)


def _numbers(values):
    """``values`` as the code kernels read them: float32, float64 and
    integers as they are, anything else in float32 (:func:`~rsrank.learning._quantiles.as_float32`)."""
    if values.dtype in (np.float32, np.float64) or values.dtype.kind in "iu":
        return values
    return as_float32(values)


class StepEncoding:
    """The steps of an additive model: per feature its thresholds (from
    :func:`fit_thresholds`), laid out as one weight vector, feature ``j``'s
    steps at ``bins[j]:bins[j + 1]``.

    :meth:`rows` gives the kernels' :class:`~rsrank._kernels.Rows` of a
    matrix as bin codes; :meth:`indicators` gives the same rows as the 0/1
    step indicators ``[x > t_jb]``, on which a linear model is the additive
    one (the kernels never build them; tests and the curvature do)."""

    #: no pairs of features (:class:`PairEncoding` has some)
    pairs = np.zeros((0, 2), dtype=np.int64)
    grids = ()
    n_pairs = 0

    def __init__(self, thresholds, counts=None):
        self.thresholds = [np.ascontiguousarray(t, dtype=np.float32) for t in thresholds]
        #: training rows per bin and feature (one more than its thresholds), or None
        self.counts = None if counts is None else [np.asarray(c, dtype=np.int64) for c in counts]
        if self.counts is not None and [len(c) for c in self.counts] != [
                len(t) + 1 for t in self.thresholds]:
            raise ValueError("bin counts must have one more value than each feature's thresholds")
        if any(len(t) >= MAX_BINS for t in self.thresholds):
            raise ValueError(f"a feature has more than {MAX_BINS - 1} thresholds")
        self.bins = np.r_[0, np.cumsum([len(t) for t in self.thresholds])].astype(np.int64)
        digest = hashlib.sha256(self.bins.tobytes())
        for cuts in self.thresholds:
            digest.update(cuts.tobytes())
        self.key = digest.hexdigest()

    @classmethod
    def fit(cls, X, max_bins=32):
        """The thresholds of :func:`fit_thresholds` and the rows of ``X`` in
        each bin (for pictures of the shapes over the data)."""
        thresholds = fit_thresholds(X, max_bins)
        return cls(thresholds, bin_counts(X, thresholds))

    @property
    def n_features(self):
        """The features of the rows it encodes."""
        return len(self.thresholds)

    @property
    def n_columns(self):
        """The code columns (each with its own steps): one per feature here."""
        return len(self.thresholds)

    @property
    def n_steps(self):
        return int(self.bins[-1])

    def feature_of_step(self):
        """The column of every step (its feature, for one-feature steps)."""
        return np.repeat(np.arange(self.n_columns), np.diff(self.bins))

    @classmethod
    def coded(cls, X, max_bins=32, n_threads=None):
        """``(encoding, codes)``: :meth:`fit`'s encoding of ``X`` and the
        :class:`BinCodes` of ``X`` it counted its bins with, which
        :meth:`rows` takes rather than code ``X`` again: a fit codes its
        training rows once, not twice (at a quarter of MSLR-WEB30K's shape
        ``--additive --interactions 10`` took 69 s and 1.33 GB, 73 s and
        1.49 GB before). The thresholds and codes on ``n_threads`` threads
        (None: those held, :func:`~rsrank.learning._threads.held_threads`)."""
        thresholds = fit_thresholds(X, max_bins, n_threads)
        codes = bin_codes(X, thresholds, n_threads)
        return cls(thresholds, bin_counts(X, thresholds, codes)), codes

    def rows(self, X, offsets=None, codes=None):
        """:class:`~rsrank._kernels.Rows` of ``X`` (in query order, queries
        at ``offsets``; None: one query) as bin codes (``codes``: the
        :class:`BinCodes` of ``X`` under these thresholds, when known)."""
        codes = bin_codes(X, self.thresholds) if codes is None else codes
        offsets = (np.array([0, X.shape[0]], dtype=np.int64) if offsets is None
                   else np.asarray(offsets, dtype=np.int64))
        empty = (np.zeros(0), np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros((0, 0)))
        # one array type per field for the kernels (writable, one index dtype), so that
        # read-only or 64-bit-indexed input compiles no variant of its own
        bins = np.array(self.bins, dtype=np.int64)
        if codes.dense:
            return Rows(*empty, offsets, np.ascontiguousarray(codes.codes),
                        np.zeros(0, np.uint8), np.zeros(0, np.uint8), bins,
                        self.strided_slots() if self.stride_fits() else self.slots)
        index = np.int32 if len(codes.indices) < 2**31 else np.int64
        return Rows(np.zeros(0), codes.indices.astype(index, copy=False),
                    codes.indptr.astype(index, copy=False), np.zeros((0, 0)), offsets,
                    np.zeros((0, 0), np.uint8), codes.codes, codes.zero_codes, bins,
                    np.array(self.slots, dtype=np.int64))

    def query_rows(self, X, groups):
        """:meth:`rows` of ``X`` in query order, queries in ``groups`` (the
        view protocol of :meth:`rsrank.reading.querydata.QueryData.rows`)."""
        return self.rows(X, groups.offsets)

    @property
    def slots(self):
        """Where each feature's codes start in a table of one value per code,
        packed: ``bins[j] + j`` (feature j has one more code than steps)."""
        return (self.bins[:-1] + np.arange(self.n_columns)).astype(np.int64)

    @property
    def stride(self):
        """The most codes of any feature (at least 1), rounded up to an odd
        number: a stride of a power of two puts every feature's slots at
        one or two offsets within a page, where the table's loads and the
        histogram's stores alias (a pair's 16 x 16 grid has 256 codes; with
        a stride of 257 an epoch of ``--interactions 10`` at 255 bins took
        7.5 ms on 50,000 rows where 256 took 10.9-22.6 ms, by the process,
        on one machine; 1.08x as long in the median on another:
        ``results/stride.md``)."""
        return (int(np.diff(self.bins).max(initial=0)) + 1) | 1

    def strided_slots(self):
        """Slots one :attr:`stride` apart, ``j * stride``: each feature has
        the room of the one with most codes, and the kernels find its slots
        without reading them (:func:`rsrank._kernels.uniform_stride`)."""
        return np.arange(self.n_columns, dtype=np.int64) * self.stride

    def stride_fits(self):
        """Whether dense rows take :meth:`strided_slots`: when their tables
        are at most twice as long as packed ones (every batch of an epoch
        builds the table and sums a histogram of that length)."""
        return self.n_columns * self.stride <= 2 * (self.n_steps + self.n_columns)

    def indicators(self, X):
        """The dense ``(n_rows, n_steps)`` float64 0/1 matrix ``[x_j > t_jb]``
        of ``X``."""
        return step_indicators(bin_codes(X, self.thresholds).toarray(), self.bins)


class PairEncoding(StepEncoding):
    """The steps of an additive model with pairwise interactions: each
    feature's thresholds as in :class:`StepEncoding`, then one more code
    column per pair of features ``(a, b)``: the index of the row's cell on
    the pair's grid, ``code_a * n_b + code_b``, where ``code_a`` counts the
    grid cuts of ``a`` below the row's float32 value (as for a feature's
    own thresholds) and ``n_b`` is the number of ``b``'s grid bins. The
    cell index is a column whose thresholds are ``0, 1, ..., n_a n_b - 2``,
    so the kernels read a pair as one more coded column: its values per
    cell are the running sums of its steps (the first cell 0), any table
    of cell values.

    Parameters
    ----------
    thresholds : list of float32 arrays
        Each feature's thresholds (its one-feature steps).
    pairs : array of shape (n_pairs, 2)
        The features of each pair, ``a < b``.
    grids : list of (cuts_a, cuts_b)
        Each pair's grid: increasing float32 cuts of both features.
    counts : list of int arrays, optional
        Training rows per bin of each feature, then per cell of each pair.
    """

    def __init__(self, thresholds, pairs, grids, counts=None):
        self.pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        self.grids = [(np.ascontiguousarray(a, dtype=np.float32),
                       np.ascontiguousarray(b, dtype=np.float32)) for a, b in grids]
        width = len(thresholds)
        if len(self.grids) != len(self.pairs):
            raise ValueError(f"{len(self.pairs)} pairs but {len(self.grids)} grids")
        if len(self.pairs) and (np.any(self.pairs < 0) or np.any(self.pairs >= width)
                                or np.any(self.pairs[:, 0] >= self.pairs[:, 1])):
            raise ValueError(f"each pair must be two feature indices a < b in 0..{width - 1}")
        if len({tuple(pair) for pair in self.pairs.tolist()}) != len(self.pairs):
            raise ValueError("a pair of features is given twice")
        cells = []
        for cuts_a, cuts_b in self.grids:
            n_cells = (len(cuts_a) + 1) * (len(cuts_b) + 1)
            if n_cells > MAX_BINS:
                raise ValueError(f"a pair's grid has {n_cells} cells, more than {MAX_BINS}")
            for cuts in (cuts_a, cuts_b):
                finite = cuts[:-1] if has_missing_bin(cuts) else cuts
                if not np.all(np.isfinite(finite)) or np.any(np.diff(cuts) <= 0):
                    raise ValueError("a pair's grid cuts must be increasing finite values "
                                     "(and +inf last: the missing value's bin)")
            cells.append(np.arange(n_cells - 1, dtype=np.float32))
        self.width = width
        super().__init__(list(thresholds) + cells, counts)
        digest = hashlib.sha256(self.key.encode())
        digest.update(self.pairs.tobytes())
        for cuts_a, cuts_b in self.grids:
            digest.update(np.int64([len(cuts_a)]).tobytes() + cuts_a.tobytes() + cuts_b.tobytes())
        self.key = digest.hexdigest()

    @classmethod
    def fit(cls, X, pairs, max_bins=32, pair_bins=8, thresholds=None, grids=None):
        """The one-feature thresholds of ``X`` (``thresholds``, when given,
        else :func:`fit_thresholds`), each pair's grid (``grids``, when
        given, else the quantile cuts of at most ``pair_bins`` bins of its
        features), and the rows of ``X`` per bin and per cell."""
        return cls.coded(X, pairs, max_bins, pair_bins, thresholds, grids)[0]

    @classmethod
    def coded(cls, X, pairs, max_bins=32, pair_bins=8, thresholds=None, grids=None,
              step_codes=None):
        """``(encoding, codes)`` as :meth:`StepEncoding.coded`, of
        :meth:`fit`'s encoding; ``step_codes``: the :class:`BinCodes` of
        ``X`` under ``thresholds``, when known, to which a dense matrix's
        codes add only its cells (a cell's code is its index)."""
        thresholds = fit_thresholds(X, max_bins) if thresholds is None else thresholds
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        if grids is None:
            used = np.unique(pairs)
            coarse = dict(zip(used.tolist(), fit_thresholds(take_columns(X, used), pair_bins)))
            grids = [(coarse[a], coarse[b]) for a, b in pairs.tolist()]
        encoding = cls(thresholds, pairs, grids)
        codes = encoding.codes(X, step_codes)
        counts = bin_counts(None, encoding.thresholds, codes)
        return cls(thresholds, pairs, grids, counts), codes

    def codes(self, X, step_codes=None):
        """The :class:`BinCodes` of ``X`` under this encoding: those of
        :meth:`augment`'s matrix, which for dense ``X`` are its step codes
        (``step_codes``, when known) and a code per pair, the row's cell
        index, side by side. No augmented copy of a dense ``X`` is made
        (at a quarter of MSLR-WEB30K's shape, scoring the 186,807 vali rows
        through that copy made the peak of ``--additive --interactions 10``
        1,233 MiB, against 1,180 MiB without it, for the same model)."""
        if sp.issparse(X) or self.n_pairs == 0:
            return bin_codes(self.augment(X), self.thresholds)
        if X.shape[1] != self.width:
            raise ValueError(f"X has {X.shape[1]} features, the encoding {self.width}")
        out = np.empty((X.shape[0], self.width + self.n_pairs), dtype=np.uint8)
        if step_codes is not None and step_codes.dense:
            out[:, :self.width] = step_codes.codes
        else:  # coded into its first columns: no array of the features' codes beside it
            bin_codes(X, self.thresholds[:self.width], out=out)
        del step_codes
        self._fill_cells(X, out[:, self.width:])  # a cell's code is its index
        return BinCodes(out, out.shape)

    @property
    def n_features(self):
        return self.width

    @property
    def n_pairs(self):
        return len(self.pairs)

    def grid_shape(self, p):
        """``(n_a, n_b)``: the bins of pair ``p``'s grid along each feature."""
        cuts_a, cuts_b = self.grids[p]
        return len(cuts_a) + 1, len(cuts_b) + 1

    def cells(self, X):
        """Each row's cell per pair, an ``(n_rows, n_pairs)`` int array."""
        out = np.zeros((X.shape[0], self.n_pairs), dtype=np.int64)
        self._fill_cells(X, out)
        return out

    def _fill_cells(self, X, out):
        """:meth:`cells` written into ``out`` (uint8 where a matrix's codes
        take them: no array of every row's cells in int64 beside them)."""
        if _is_coded(X):  # every pair's two columns mapped from their codes, in one pass
            both = X.take_columns(self.pairs.reshape(-1))
            grids = [cuts for grid in self.grids for cuts in grid]
            codes = both.mapped_columns(code_maps(both, grids)[0])
            for p, (_, cuts_b) in enumerate(self.grids):
                out[:, p] = codes[2 * p].astype(np.int64) * (len(cuts_b) + 1) + codes[2 * p + 1]
            return
        X = sp.csc_matrix(X) if sp.issparse(X) else X
        for p, ((a, b), (cuts_a, cuts_b)) in enumerate(zip(self.pairs.tolist(), self.grids)):
            column_a, column_b = (take_columns(X, [j]) for j in (a, b))
            column_a = column_a.toarray() if sp.issparse(column_a) else column_a
            column_b = column_b.toarray() if sp.issparse(column_b) else column_b
            out[:, p] = (_code(column_a.ravel(), cuts_a).astype(np.int64) * (len(cuts_b) + 1)
                         + _code(column_b.ravel(), cuts_b))

    def augment(self, X):
        """``X`` with one more column per pair: the row's cell index."""
        if self.n_pairs == 0:
            return X
        if X.shape[1] != self.width:
            raise ValueError(f"X has {X.shape[1]} features, the encoding {self.width}")
        cells = self.cells(X)
        if sp.issparse(X):
            return sp.hstack([sp.csr_matrix(X), sp.csr_matrix(cells.astype(X.dtype))],
                             format="csr")
        return np.ascontiguousarray(np.column_stack([np.asarray(X), cells.astype(X.dtype)]))

    def rows(self, X, offsets=None, codes=None):
        return super().rows(X, offsets, self.codes(X) if codes is None else codes)

    def indicators(self, X):
        return super().indicators(self.augment(X))


def take_columns(X, columns):
    """Columns of ``X`` (dense or sparse) as a matrix of its kind."""
    columns = np.asarray(columns, dtype=np.int64)
    if sp.issparse(X):
        return sp.csc_matrix(X)[:, columns]
    if isinstance(X, RowSample):  # those columns alone copied out
        return np.asarray(X.take_columns(columns))
    return np.asarray(X)[:, columns]


def step_indicators(codes, bins):
    """The 0/1 step indicators of dense ``codes``: column ``bins[j] + b`` is 1
    where feature ``j``'s code exceeds ``b``."""
    out = np.zeros((codes.shape[0], int(bins[-1])))
    for j in range(len(bins) - 1):
        out[:, bins[j]:bins[j + 1]] = codes[:, j:j + 1] > np.arange(bins[j + 1] - bins[j])
    return out
