"""Query data built once: validated, in query order, with what every fit needs.

A :class:`QueryData` is to RSRank what ``Dataset`` is to LightGBM and
``DMatrix`` to XGBoost: the rows ``(X, y, qid)`` checked once and laid out
query after query once, with the order back to the input kept, the query
groups, the labels, the column sums and the fingerprint of the data. What
an objective derives from the labels (gains, ideal DCG, label levels, the
loss of the all-zero model) is computed on first use and kept, per
(gain, discount, cut-off), so a grid search or a set of seeds over the same
data prepares it once.

Dense ``X`` stays dense in its own dtype (float32 or float64) and sparse
``X`` stays CSR; neither is copied when its rows are already grouped by
query, nor are their labels when already contiguous int64. The object is
immutable: it has no setters, and nothing that trains on it writes into its
arrays.
"""

import contextlib
import hashlib
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_array

from .._kernels import Rows
from ._queries import QueryGroups, group_queries
from ._rowsample import RowSample
from ._views import as_view, filled, matrix_rows
from ..learning.binning import BinCodes, PairEncoding, StepEncoding, coded_values, fit_thresholds
from ..learning.preprocessing import column_moments, column_sums

__all__ = ["Preferences", "QueryData", "Rows", "check_labels", "check_preferences",
           "check_query_weight", "matrix_rows", "query_rows", "sample_queries"]


def query_rows(offsets, queries):
    """The rows, in order, of the queries at positions ``queries`` of the
    queries whose rows start at ``offsets`` (each query whole), without a
    loop over the queries: each row is its query's start plus its place."""
    offsets = np.asarray(offsets, dtype=np.int64)
    queries = np.asarray(queries, dtype=np.int64)
    starts, sizes = offsets[queries], offsets[queries + 1] - offsets[queries]
    before = np.cumsum(sizes) - sizes  # rows of the earlier queries in the answer
    return np.repeat(starts - before, sizes) + np.arange(int(sizes.sum()), dtype=np.int64)


def check_labels(y, n_rows):
    """``y`` as int64 relevance grades, one per row, or ``ValueError``."""
    if y is None:
        raise ValueError("RSRank requires y to be passed, but the target y is None: give one "
                         "relevance grade (0, 1, 2, ...) per row")
    y = np.asarray(y)
    if y.dtype.kind not in "iubf":
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"Unknown label type {y.dtype}: y must hold integer relevance "
                             "grades (0, 1, 2, ...)") from None
    if y.ndim != 1 or len(y) != n_rows:
        raise ValueError(f"y must be one label per row ({n_rows}), got shape {y.shape}")
    if y.dtype.kind not in "iub":
        if y.dtype.kind != "f" or not np.all(np.isfinite(y)) or np.any(y != np.round(y)):
            raise ValueError("y must hold integer relevance grades (0, 1, 2, ...); "
                             "got non-integer values")
    if len(y) and y.min() < 0:
        raise ValueError(f"y must hold non-negative relevance grades; found {y.min()}")
    return np.ascontiguousarray(y, dtype=np.int64)  # as X: no copy when it already is one


def check_query_weight(query_weight, offsets, order):
    """One weight per query from ``query_weight`` (one per input row, the
    same on every row of a query; rows ``order`` put them in query order),
    or ``ValueError``."""
    n_rows = len(order)
    weight = np.asarray(query_weight, dtype=np.float64)
    if weight.shape != (n_rows,):
        raise ValueError(f"query_weight must be one value per row ({n_rows}), got shape "
                         f"{weight.shape}")
    if n_rows and not (np.all(np.isfinite(weight)) and weight.min() >= 0):
        raise ValueError("query_weight must hold finite values >= 0")
    weight = weight[order]
    first = weight[offsets[:-1]]
    varies = np.flatnonzero(weight != np.repeat(first, np.diff(offsets)))
    if len(varies):
        raise ValueError(f"query_weight differs within a query (at row {order[varies[0]] + 1}): "
                         "it weighs whole queries, so give every row of a query the same value")
    return first


@dataclass(frozen=True)
class Preferences:
    """Pairs of rows to learn from in place of the label pairs, grouped by
    query: query ``q`` owns pairs ``offsets[q]:offsets[q + 1]``; pair ``k``
    prefers the query's row ``better[k]`` (counted from the query's first
    row) to its row ``worse[k]``, weighing ``weight[k]``. With swap weights,
    a pair counts as if it came from a list of ``relevant[k]`` relevant
    documents (gain 1 each), whose ideal DCG normalizes it (None: one, the
    preferred document alone)."""

    offsets: np.ndarray
    better: np.ndarray
    worse: np.ndarray
    weight: np.ndarray
    relevant: object = None

    def subset(self, queries):
        """The preferences of the queries at positions ``queries`` (sorted)."""
        picked = query_rows(self.offsets, queries)
        sizes = np.diff(self.offsets)[np.asarray(queries, dtype=np.int64)]
        return Preferences(np.r_[0, np.cumsum(sizes)].astype(np.int64), self.better[picked],
                           self.worse[picked], self.weight[picked],
                           None if self.relevant is None else self.relevant[picked])

    def digest(self):
        return b"".join(part.tobytes() for part in (self.offsets, self.better, self.worse,
                                                      self.weight, self.relevant)
                        if part is not None)


def check_preferences(preferences, offsets, order):
    """:class:`Preferences` from ``(better, worse, weight[, relevant])``,
    input row numbers (from 0), a weight per pair and optionally the number
    of relevant documents of the list each pair comes from (rows ``order``
    put the input in query order, queries at ``offsets``), or
    ``ValueError``."""
    try:
        better, worse, weight, *relevant = preferences
        if len(relevant) > 1:
            raise ValueError
    except (TypeError, ValueError):
        raise ValueError("preferences must be (better, worse, weight[, relevant]): per pair the "
                         "row preferred, the row it is preferred to, the pair's weight, and "
                         "optionally the relevant documents of its list") from None
    better, worse = np.asarray(better), np.asarray(worse)
    weight = np.asarray(weight, dtype=np.float64)
    n_rows = len(order)
    if not (better.ndim == worse.ndim == weight.ndim == 1
            and len(better) == len(worse) == len(weight)):
        raise ValueError("preferences must be three 1-D arrays of the same length (better, "
                         f"worse, weight), got shapes {better.shape}, {worse.shape}, "
                         f"{weight.shape}")
    relevant = np.asarray(relevant[0]) if relevant else None
    if relevant is not None and (relevant.shape != better.shape or (len(relevant) and (
            relevant.dtype.kind not in "iu" or relevant.min() < 1))):
        raise ValueError("preferences: relevant must hold one integer >= 1 per pair, got "
                         f"shape {relevant.shape} and dtype {relevant.dtype}")
    for name, rows in (("better", better), ("worse", worse)):
        if len(rows) and (rows.dtype.kind not in "iu" or rows.min() < 0
                          or rows.max() >= n_rows):
            raise ValueError(f"preferences: {name} must hold row numbers from 0 to "
                             f"{n_rows - 1}")
    if len(weight) and not (np.all(np.isfinite(weight)) and weight.min() >= 0):
        raise ValueError("preferences: weight must hold finite values >= 0")
    same = np.flatnonzero(better == worse)
    if len(same):
        raise ValueError(f"preferences: pair {same[0]} prefers row {better[same[0]]} to itself")
    place = np.empty(n_rows, dtype=np.int64)
    place[order] = np.arange(n_rows)
    better, worse = place[better.astype(np.int64)], place[worse.astype(np.int64)]
    query = np.searchsorted(offsets, better, side="right") - 1
    apart = np.flatnonzero(np.searchsorted(offsets, worse, side="right") - 1 != query)
    if len(apart):
        k = apart[0]
        raise ValueError(f"preferences: pair {k} joins rows {order[better[k]]} and "
                         f"{order[worse[k]]} of different queries; a preference is within "
                         "one query")
    by_query = np.argsort(query, kind="stable")
    query, start = query[by_query], offsets[query[by_query]]
    return Preferences(np.searchsorted(query, np.arange(len(offsets))).astype(np.int64),
                       better[by_query] - start, worse[by_query] - start, weight[by_query],
                       None if relevant is None else relevant.astype(np.int64)[by_query])


def column_names(X):
    """A DataFrame's column names when they are all strings, else None
    (scikit-learn's rule for ``feature_names_in_``)."""
    columns = getattr(X, "columns", None)
    if columns is None:
        return None
    names = list(columns)
    if names and all(isinstance(name, str) for name in names):
        return names
    return None


class QueryData:
    """Rows of queries, validated and put in query order once.

    Parameters
    ----------
    X : {array-like, sparse matrix, DataFrame} of shape (n_rows, n_features)
        One row per query-document pair. float32 stays float32; CSR stays
        sparse; anything else becomes float64. NaN is a missing value
        (additive models give it a bin of its own; linear ones refuse it);
        infinite values are refused.
    y : array-like of shape (n_rows,)
        Non-negative integer relevance grades.
    qid : array-like of shape (n_rows,), optional
        Query id per row; rows of a query need not be adjacent. None: all
        rows form one query.
    feature_names : list of str, optional
        Names of the columns; a DataFrame's string columns by default.
    query_weight : array-like of shape (n_rows,), optional
        A weight per query, given on each of its rows (the same on all):
        the query's pair losses count that many times in the objective,
        and its metric that many times in the mean of a validation set.
        None: every query weighs 1.
    preferences : tuple (better, worse, weight[, relevant]) of arrays, optional
        Pairs of rows to learn from instead of the pairs the labels order:
        per pair the number (from 0, in the input's order) of the row
        preferred, of the row of the same query it is preferred to, and the
        pair's weight (its loss counts that many times; see
        :func:`rsrank._kernels.preference_lambdas`); with swap weights, each
        pair is normalized by the ideal DCG of ``relevant`` documents of
        gain 1 (default one: the preferred document alone). ``y`` then
        serves metrics only. Click logs train this way
        (:func:`rsrank.clicks.click_preferences`).

    Attributes
    ----------
    X : ndarray or csr_matrix
        The rows in query order (queries by increasing qid, rows of a query
        in their input order).
    y : ndarray of int64
        The labels in that order.
    order : ndarray of int64
        ``X[i]`` is input row ``order[i]``.
    offsets : ndarray of int64, shape (n_queries + 1,)
        Query ``q`` owns rows ``offsets[q]:offsets[q + 1]``.
    qids : ndarray, shape (n_queries,)
        The qid of each query, increasing.
    feature_names : list of str or None
    query_weights : ndarray of float64, shape (n_queries,), or None
        Each query's weight (None: all 1).
    preferences : Preferences or None
        The pairs to learn from, by query (None: the labels' pairs).
    names_from_columns : bool
        The names came from a DataFrame's columns.
    """

    rows_in_memory = True  #: the rows are here: an additive model's bins and pairs can be fitted

    def __init__(self, X, y, qid=None, *, feature_names=None, query_weight=None,
                 preferences=None):
        names_from_columns = False
        if feature_names is None:
            feature_names = column_names(X)
            names_from_columns = feature_names is not None
        X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32], order="C",
                        ensure_all_finite=False)
        # the column sums (which a z-score scaling and the fingerprint use) find NaN and
        # inf in the same pass over X; only then does the full check run, to say what
        # it found
        sums = column_sums(X)
        if not all(np.all(np.isfinite(part)) for part in sums[1:]):
            # a sum may overflow, finitely; NaN is a missing value, which the
            # model kinds take or refuse (infinite values are refused here)
            with np.errstate(over="ignore", invalid="ignore"):
                check_array(X, accept_sparse="csr", dtype=None, ensure_all_finite="allow-nan")
        y = check_labels(y, X.shape[0])
        groups = group_queries(qid, n_rows=X.shape[0])
        order = groups.order
        identity = groups.in_order or np.array_equal(order, np.arange(len(order)))
        if not identity:
            X, y = X[order], y[order]
        if sp.issparse(X):
            X = sp.csr_matrix(X)
            if X.indices.dtype != np.int32 or X.indptr.dtype != np.int32:
                # one index dtype for the kernels (scipy picks int64 only past 2**31 values)
                if X.nnz < 2**31:
                    X.indices = X.indices.astype(np.int32)
                    X.indptr = X.indptr.astype(np.int32)
        weights = (None if query_weight is None else
                   check_query_weight(query_weight, groups.offsets, order))
        preferred = (None if preferences is None else
                     check_preferences(preferences, groups.offsets, order))
        self._build(X, y, order, groups.offsets, groups.qids, feature_names,
                    names_from_columns, weights, preferred)
        self._memo["sums"] = sums  # sums do not depend on the order of the rows
        if identity:  # the stored rows' own grouping (groups) can share the order
            self._memo["groups"] = QueryGroups(order, self._offsets, self._qids, True)

    def _build(self, X, y, order, offsets, qids, feature_names, names_from_columns,
               query_weights=None, preferences=None):
        if feature_names is not None:
            feature_names = [str(name) for name in feature_names]
            if len(feature_names) != X.shape[1]:
                raise ValueError(f"{len(feature_names)} feature names for {X.shape[1]} features")
        self._X, self._y, self._order = X, y, order
        self._offsets, self._qids = offsets, qids
        self._feature_names, self._names_from_columns = feature_names, names_from_columns
        self._query_weights = query_weights
        self._preferences = preferences
        self._memo = {}
        self._after_coding = None

    @classmethod
    def _from_grouped(cls, X, y, order, offsets, qids, feature_names, names_from_columns,
                      query_weights=None, preferences=None):
        self = cls.__new__(cls)
        self._build(X, y, order, offsets, qids, feature_names, names_from_columns,
                    query_weights, preferences)
        return self

    # -- what it holds --------------------------------------------------------

    @property
    def X(self):
        if isinstance(self._X, _ValuesGone):
            raise RuntimeError(_ValuesGone.MESSAGE)
        return self._X

    y = property(lambda self: self._y)
    order = property(lambda self: self._order)
    offsets = property(lambda self: self._offsets)
    qids = property(lambda self: self._qids)
    feature_names = property(lambda self: self._feature_names)
    names_from_columns = property(lambda self: self._names_from_columns)
    query_weights = property(lambda self: self._query_weights)
    preferences = property(lambda self: self._preferences)

    @property
    def short_list(self):
        """How NDCG@k scores a query shorter than k on this data: None for
        the convention's rule, ``"truncate"`` (on what it holds) for
        weighted queries, which are lists of clicks
        (:func:`rsrank.clicks.session_lists`) and not queries that LETOR's
        rule would zero."""
        return None if self._query_weights is None else "truncate"

    @property
    def n_rows(self):
        return int(self._X.shape[0])

    @property
    def n_features(self):
        return int(self._X.shape[1])

    @property
    def n_queries(self):
        return len(self._offsets) - 1

    @property
    def n_stored(self):
        """Feature values stored: the non-zeros of CSR, every cell of dense
        rows (the work of one pass over the data)."""
        return int(self._X.nnz if sp.issparse(self._X) else self._X.size)

    @property
    def sizes(self):
        return np.diff(self._offsets)

    @property
    def groups(self):
        """The :class:`~rsrank.reading._queries.QueryGroups` of the rows as stored
        (in query order), for :mod:`rsrank.evaluation.metrics`."""
        return self.memo("groups", lambda: QueryGroups(
            np.arange(self.n_rows, dtype=np.int64), self._offsets, self._qids, True))

    def __repr__(self):
        kind = "CSR" if sp.issparse(self._X) else "dense"
        return (f"QueryData({self.n_queries} queries, {self.n_rows} rows, {self.n_features} "
                f"features, {kind} {self._X.dtype})")

    def memo(self, key, make):
        """The value kept under ``key``, made by ``make()`` on first use.
        Everything kept is derived from the data and never changes."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    def forget(self):
        """Drop everything :meth:`memo` keeps (an additive model's bin
        codes of the rows, among others), to be made again on demand: a
        fold's training rows once its model is chosen."""
        self._memo.clear()

    @contextlib.contextmanager
    def holding(self, key, value):
        """Within it, :meth:`memo` gives ``value`` under ``key`` (made
        elsewhere: the pairs of a search that a path on a sample of these
        queries shares with them); afterwards the key is as it was."""
        missing = object()
        before = self._memo.get(key, missing)
        self._memo[key] = value
        try:
            yield self
        finally:
            if before is missing:
                self._memo.pop(key, None)
            else:
                self._memo[key] = before

    def let_values_go_once_coded(self, then=None):
        """Let the rows' values go as soon as they are next coded into bins
        (the :meth:`step_encoding` or :meth:`pair_encoding` made next), and
        call ``then()`` after (to drop the caller's own reference): the
        last fit on these rows, a run's refit on all its training rows,
        then holds their bin codes alone. Their shape and what was derived
        from them stay; :attr:`X` refuses afterwards."""
        self._after_coding = (lambda: None) if then is None else then

    def keep_codes_alone(self, max_bins, then=None):
        """Replace the rows' values by their uint8 codes on ``max_bins``
        quantile bins fitted on them, read from then on as the training
        value that stands for each bin
        (:func:`~rsrank.learning.binning.coded_values`), and call ``then()``
        (to drop the caller's own reference to the values). Every fit of an
        additive kind on these rows or on samples of them then reads codes
        alone: thresholds among the stand-ins code them as they would the
        values, and ``max_bins`` bins on all the rows are the bins they
        were coded on, whose codes :meth:`step_encoding` takes as they are.
        A quarter of the memory of float32 values; only dense rows, and
        only once. Returns whether the values were replaced. What was
        derived from the values (:attr:`sums`, the fingerprint) stays."""
        if sp.issparse(self._X) or not isinstance(self._X, np.ndarray):
            return False
        codes, table = coded_values(self._X, max_bins)
        self._X = RowSample(codes, table=table)
        if then is not None:
            then()
        return True

    def _coded(self, encoding, codes):
        """``encoding``, its rows (of ``codes``) kept for the kernels; the
        values let go when they were to go once coded."""
        self._memo[("rows", encoding.key)] = encoding.rows(self._X, self.groups.offsets, codes)
        then, self._after_coding = self._after_coding, None
        if then is not None:
            self._X = _ValuesGone(self._X)
            then()
        return encoding

    # -- derived once ---------------------------------------------------------

    def filled(self, fill):
        """The same queries with each missing value (NaN) of feature ``j``
        replaced by ``fill[j]`` (a new matrix; this one is kept)."""
        return QueryData._from_grouped(filled(self._X, fill), self._y, self._order,
                                       self._offsets, self._qids, self._feature_names,
                                       self._names_from_columns, self._query_weights,
                                       self._preferences)

    def rows(self, view="none"):
        """The :class:`Rows` the kernels read, made once per ``view`` (a
        model's :attr:`~rsrank.learning.model.LinearModel.view`, or its name): the
        stored rows, the rows scaled within each query, or an additive
        model's bin codes (a :class:`~rsrank.learning.binning.StepEncoding`)."""
        view = as_view(view)
        return self.memo(("rows", view.key), lambda: view.query_rows(self._X, self.groups))

    def rows_held(self, view="none"):
        """:meth:`rows` of ``view`` when they are made already, else None."""
        return self._memo.get(("rows", as_view(view).key))

    def step_encoding(self, max_bins):
        """The :class:`~rsrank.learning.binning.StepEncoding` of ``max_bins`` bins per
        feature fitted on the rows, made once per bin count (a path fits
        the same data many times)."""
        def make():  # and its rows, from the codes its counts were made of
            return self._coded(*StepEncoding.coded(self._X, max_bins))
        return self.memo(("steps", max_bins), make)

    def pair_encoding(self, max_bins, pairs, pair_bins):
        """The :class:`~rsrank.learning.binning.PairEncoding` of :meth:`step_encoding`'s
        thresholds and ``pairs``: feature indices (grids of at most
        ``pair_bins`` quantile bins), or ``(pairs, grids)`` as the pair
        search gives them; made once per setting. The features' codes it
        reads are its rows' first columns: when :meth:`step_encoding` was
        not made before, they are coded straight into them, and no array of
        them is made or kept beside (at a quarter of MSLR-WEB30K's shape,
        74 MiB fewer through the refit on all rows, and 74 MiB fewer at
        its start, where both were held)."""
        grids = None
        if isinstance(pairs, tuple):
            pairs, grids = pairs
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        key = ("pairs", max_bins, pairs.tobytes(), pair_bins, None if grids is None else
               b"".join(cuts.tobytes() for grid in grids for cuts in grid))
        def make():  # the pairs' cells beside the features' codes, kept as its rows
            steps = self._memo.get(("steps", max_bins))
            if steps is None:  # the features' codes made into the pairs' array alone
                encoding, codes = PairEncoding.coded(self._X, pairs, max_bins, pair_bins,
                                                     fit_thresholds(self._X, max_bins),
                                                     grids)
                self._memo[("steps", max_bins)] = StepEncoding(
                    encoding.thresholds[:encoding.width], encoding.counts[:encoding.width])
            else:
                rows = self.rows(steps)
                known = (BinCodes(rows.dense_codes, self._X.shape)
                         if rows.indptr.shape[0] == 0 else None)
                encoding, codes = PairEncoding.coded(self._X, pairs, max_bins, pair_bins,
                                                     steps.thresholds, grids, known)
                del rows, known
            return self._coded(encoding, codes)
        return self.memo(key, make)

    @property
    def missing_features(self):
        """The features with a missing value (NaN) somewhere."""
        return np.flatnonzero(np.isnan(self.sums[1]))

    @property
    def n_mixed_queries(self):
        """Queries with two or more labels (with :attr:`preferences`, with a
        preference of positive weight): those with a pair to learn from."""
        def make():
            if self._preferences is not None:
                weighted = np.flatnonzero(self._preferences.weight > 0)
                query = np.searchsorted(self._preferences.offsets, weighted, side="right") - 1
                return len(np.unique(query))
            starts = self._offsets[:-1][self.sizes > 0]
            if len(starts) == 0:
                return 0
            return int(np.count_nonzero(np.maximum.reduceat(self.y, starts)
                                        != np.minimum.reduceat(self.y, starts)))
        return self.memo("mixed", make)

    @property
    def sums(self):
        """Per-column ``(count, sum, sum of squares)`` of the rows (see
        :func:`rsrank.learning.preprocessing.column_sums`): the pass that validation
        makes anyway."""
        return self.memo("sums", lambda: column_sums(self._X))

    @property
    def moments(self):
        """Per-column ``(count, sum, sum of squares, min, max)`` of the rows
        (see :func:`rsrank.learning.preprocessing.column_moments`): a pass of its
        own, made on first use (a min-max scaling, the advice after a
        divergence). Validation's pass gives :attr:`sums` alone, which the
        default z-score scaling needs: on 468,598 x 136 float32 it saves
        about 7 ms of a fit's setup, and a min-max scaling pays about 24 ms
        for this one."""
        return self.memo("moments", lambda: column_moments(self._X))

    @property
    def fingerprint(self):
        """A cheap digest of the data: shapes, the sum of the feature values
        (from :attr:`sums`; missing values left out) and a hash of the
        labels and query sizes in query order."""
        def make():
            digest = hashlib.sha256()
            digest.update(np.ascontiguousarray(self._y))  # its bytes, without a copy
            digest.update(self.sizes.astype(np.int64).tobytes())
            if self._query_weights is not None:
                digest.update(self._query_weights.tobytes())
            if self._preferences is not None:
                digest.update(self._preferences.digest())
            return {"n_rows": self.n_rows, "n_features": self.n_features,
                    "n_queries": self.n_queries,
                    "feature_sum": float(np.nansum(self.sums[1])),
                    "labels_and_sizes_sha256": digest.hexdigest()}
        return self.memo("fingerprint", make)

    # -- parts ----------------------------------------------------------------

    def subset(self, queries, copy=True):
        """The :class:`QueryData` of the queries at positions ``queries``
        (indices into :attr:`qids`), in increasing position, without
        grouping or validating again. ``copy`` False: dense rows are not
        copied but read from these a block at a time as they are used
        (a ``RowSample``: a pair search's
        sample, whose values it needs only to code them). Rows that are
        codes read as values (:meth:`keep_codes_alone`) give a sample of
        their codes, never a copy of values."""
        queries = np.unique(np.asarray(queries, dtype=np.int64))
        sizes = self.sizes[queries]
        rows = query_rows(self._offsets, queries)
        offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
        weights = None if self._query_weights is None else self._query_weights[queries]
        preferences = (None if self._preferences is None else
                       self._preferences.subset(queries))
        if isinstance(self._X, RowSample):  # a sample of a sample: of the same rows
            X = self._X.take(rows)  # codes read as values stay codes
            X = np.asarray(X) if copy and not X.coded else X
        elif copy or sp.issparse(self._X):
            X = self._X[rows]
        else:
            X = RowSample(self._X, rows)
        return QueryData._from_grouped(X, self._y[rows], self._order[rows],
                                       offsets, self._qids[queries], self._feature_names,
                                       self._names_from_columns, weights, preferences)

    def in_input_order(self, values):
        """``values`` given per stored row, put back in the input's row
        order."""
        out = np.empty_like(values)
        out[self._order] = values
        return out


class _ValuesGone:
    """What a :class:`QueryData` holds for its rows' values once they went
    (:meth:`QueryData.let_values_go_once_coded`): their shape and dtype."""

    MESSAGE = ("these rows' values were let go once they were coded into bins "
               "(QueryData.let_values_go_once_coded); read the data again to use them")
    ndim = 2

    def __init__(self, X):
        self.shape, self.dtype = X.shape, X.dtype
        self.nnz = self.size = X.nnz if sp.issparse(X) else X.size

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError(self.MESSAGE)

    def __getitem__(self, key):
        raise RuntimeError(self.MESSAGE)


def sample_queries(data, rows, seed=0, *, reach=True):
    """The positions, in increasing order, of the queries of ``data`` (a
    :class:`QueryData`) that a seeded random order of them (``seed``)
    takes: up to the first whose rows reach ``rows`` in all (``reach``),
    else those whose rows fit within ``rows`` (at least one), so that a
    sample taken again is the same sample."""
    order = np.random.default_rng(seed).permutation(data.n_queries)
    total = np.cumsum(data.sizes[order])
    taken = (int(np.searchsorted(total, rows)) + 1 if reach
             else max(int(np.searchsorted(total, rows, side="right")), 1))
    return np.sort(order[:taken])
