"""Feature scaling for rankers: global statistics and per-query normalisation.

A linear ranker needs features on comparable scales: with BM25 in tens,
PageRank near 1e-6 and document lengths in thousands, a gradient step is
dominated by the widest feature and the model learns little else. Two kinds
of scaling exist, and they differ in where the model can run:

* **global** (``"zscore"``, ``"minmax"``): one offset and one scale per
  feature, fitted on the training rows. A search engine applies it to one
  document at a time, so the model stays deployable (Solr's
  ``StandardNormalizer``/``MinMaxNormalizer``, the Elasticsearch/OpenSearch
  LTR ``feature_normalizers``, or folded into the weights).
* **per query** (``"query-zscore"``, ``"query-minmax"``): each feature is
  scaled by the statistics of the documents of the same query, as LETOR's
  ``QueryLevelNorm`` files are. It needs every candidate of the query at
  scoring time, which an engine scoring one document cannot compute.

:class:`QueryScaler` is the per-query transformer for scikit-learn
pipelines (it receives ``qid`` through metadata routing); global scaling in
a pipeline is scikit-learn's ``StandardScaler`` or ``MinMaxScaler``.
:class:`~rsrank.RSRank` applies either kind itself with its ``normalize``
parameter, so that validation data, model files and exports follow.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ..reading._queries import group_queries
from ..reading._rowsample import RowSample
from .defaults import GLOBAL_NORMALIZERS, NORMALIZERS

__all__ = ["NORMALIZERS", "QueryScaler", "global_scaling", "query_normalize"]



def _safe_scale(scale, offset):
    """Scales of (nearly) constant features become 1: such a feature carries
    no ranking signal, and dividing by its rounding noise would blow it up
    (the rule of scikit-learn's scalers)."""
    scale = np.asarray(scale, dtype=np.float64).copy()
    tiny = 10 * np.finfo(np.float64).eps * np.maximum(np.abs(offset), 1.0)
    scale[~(scale > tiny)] = 1.0
    return scale


def check_csr(X):
    """``X`` itself, dense or a well-formed sparse matrix; else a
    ``ValueError`` that says what is wrong. The kernels index with a CSR
    matrix's column indices and row pointers as they are: a negative or
    too large one would read or write outside the arrays."""
    if sp.issparse(X):
        try:
            X.check_format(full_check=True)
        except ValueError as error:
            raise ValueError(f"X is not a valid sparse matrix ({error}): its column indices must "
                             f"lie in 0..{X.shape[1] - 1} and its indptr must rise from 0 to its "
                             "number of stored values") from None
    return X


def column_moments(X):
    """Per-column ``(count, sum, sum of squares, min, max)`` of dense or CSR
    ``X``, counting the implicit zeros of a sparse matrix. Moments of
    several blocks add up (min and max combine), which is how a stream of
    query blocks is summarised without loading it."""
    from .. import _kernels

    if isinstance(X, RowSample):
        return _by_blocks(column_moments, X)
    n_rows = X.shape[0]
    if sp.issparse(X):
        X = check_csr(sp.csr_matrix(X))
        stored, total, squares, low, high = _kernels.stored_column_moments(
            _kernels.read_only(X.data), _kernels.read_only(X.indices), X.shape[1])
        has_zero = stored < n_rows  # an implicit zero somewhere in the column
        low[has_zero] = np.minimum(low[has_zero], 0.0)
        high[has_zero] = np.maximum(high[has_zero], 0.0)
        return n_rows, total, squares, low, high
    return (n_rows,) + _kernels.dense_column_moments(_dense_rows(X))


def column_sums(X):
    """The first three of :func:`column_moments`, ``(count, sum, sum of
    squares)`` per column: all that a z-score scaling, the fingerprint and
    the search for NaN and infinite values need. On dense rows a pass
    without the smallest and largest values takes about three quarters of
    the time."""
    from .. import _kernels

    if sp.issparse(X):
        return column_moments(X)[:3]
    if isinstance(X, RowSample):
        return _by_blocks(column_sums, X)
    rows = _dense_rows(X)
    return (rows.shape[0],) + _kernels.dense_column_sums(rows)


def _dense_rows(X):
    """Dense ``X`` as the column kernels take it: numbers (anything else as
    float64), C-ordered, a read-only view (one build per dtype)."""
    from .. import _kernels

    X = np.asarray(X)
    if X.dtype.kind not in "fiub":
        X = X.astype(np.float64)
    return _kernels.read_only(np.ascontiguousarray(X))


def _by_blocks(moments, sample):
    """``moments`` (:func:`column_sums` or :func:`column_moments`) of a
    ``RowSample``, a block of rows at a
    time."""
    total = None
    for _, _, block in sample.blocks():
        part = moments(block)
        total = part if total is None else combine_moments(total, part)
    return moments(sample[0:0]) if total is None else total


def combine_moments(a, b):
    """Moments of two blocks' rows together (see :func:`column_moments`;
    or :func:`column_sums`, whose three add up alike)."""
    sums = (a[0] + b[0], a[1] + b[1], a[2] + b[2])
    return sums if len(a) == 3 else sums + (np.minimum(a[3], b[3]), np.maximum(a[4], b[4]))


def scaling_from_moments(moments, method, extremes=None):
    """``(offset, scale)`` of global scaling ``method`` from column moments:
    ``"zscore"`` gives the mean and the population standard deviation,
    ``"minmax"`` the minimum and the range. Constant features get scale 1.

    ``moments`` is :func:`column_moments`' five, or for ``"zscore"``
    :func:`column_sums`' three; ``extremes()`` then gives the smallest and
    largest values for the message of a scaling that overflows."""
    count, total, squares = moments[:3]
    if count == 0:
        raise ValueError("cannot fit a feature scaling on zero rows")
    if len(moments) == 5:
        extremes = lambda: moments[3:]  # noqa: E731
    if method == "zscore":
        offset = total / count
        with np.errstate(over="ignore", invalid="ignore"):
            spread = np.sqrt(np.maximum(squares / count - offset * offset, 0.0))
        _check_finite_scaling(method, offset, spread, extremes)
        return offset, _safe_scale(spread, offset)
    if method == "minmax":
        low, high = moments[3:]
        with np.errstate(over="ignore", invalid="ignore"):
            spread = high - low
        _check_finite_scaling(method, low, spread, extremes)
        return low.copy(), _safe_scale(spread, low)
    raise ValueError(f"global scaling must be one of {GLOBAL_NORMALIZERS}, got {method!r}")


def _check_finite_scaling(method, offset, spread, extremes):
    """``ValueError`` naming the first feature whose values are finite but
    whose scaling overflows float64 (values near 1e155 and beyond square to
    infinity; a range over 1.8e308 has no float64): its scaled values would
    be 0, or unscaled, silently. ``extremes()``: the columns' smallest and
    largest values, for the message."""
    bad = np.flatnonzero(~(np.isfinite(offset) & np.isfinite(spread)))
    if len(bad):
        j = int(bad[0])
        low, high = extremes()
        raise ValueError(f"feature {j + 1} has values from {low[j]:.3g} to {high[j]:.3g}: its "
                         f"{method} scaling overflows float64; divide it by a constant or take "
                         f"its log before training ({len(bad)} such feature"
                         f"{'s' if len(bad) > 1 else ''})")


def global_scaling(X, method):
    """``(offset, scale)`` per feature such that ``(x - offset) / scale`` is
    the z-score (``"zscore"``) or lies in [0, 1] (``"minmax"``) on ``X``.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_rows, n_features)
    method : {"zscore", "minmax"}

    Returns
    -------
    offset, scale : ndarray of float64, shape (n_features,)
        ``scale`` is 1 for a constant feature.
    """
    return scaling_from_moments(column_moments(X), method)


def query_normalize(X, qid, method="minmax"):
    """Scale every feature within each query.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_rows, n_features)
    qid : array-like of shape (n_rows,)
        Query of each row; rows of a query need not be adjacent.
    method : {"minmax", "zscore"} or {"query-minmax", "query-zscore"}
        ``"minmax"`` maps each feature of a query to [0, 1] (LETOR's
        QueryLevelNorm); ``"zscore"`` to mean 0 and standard deviation 1. A
        feature that is constant within a query becomes 0 there.

    Returns
    -------
    ndarray of shape (n_rows, n_features)
        Dense (a shift makes the zeros of a sparse ``X`` non-zero), float32
        for float32 input and float64 otherwise, rows in the input order.
    """
    method = method.removeprefix("query-")
    if method not in ("minmax", "zscore"):
        raise ValueError(f"method must be 'minmax' or 'zscore', got {method!r}")
    dtype = np.float32 if X.dtype == np.float32 else np.float64
    dense = check_csr(X).toarray() if sp.issparse(X) else np.asarray(X)
    groups = group_queries(qid, n_rows=dense.shape[0])
    out = np.zeros(dense.shape, dtype=dtype)
    if dense.shape[0] == 0:
        return out
    ordered = dense[groups.order].astype(np.float64, copy=False)
    starts = groups.offsets[:-1]
    sizes = groups.sizes[:, None]
    if method == "minmax":
        offset = np.minimum.reduceat(ordered, starts, axis=0)
        spread = np.maximum.reduceat(ordered, starts, axis=0) - offset
    else:
        offset = np.add.reduceat(ordered, starts, axis=0) / sizes
        centred = ordered - np.repeat(offset, groups.sizes, axis=0)
        spread = np.sqrt(np.add.reduceat(centred * centred, starts, axis=0) / sizes)
    constant = ~(spread > 10 * np.finfo(np.float64).eps * np.maximum(np.abs(offset), 1.0))
    spread[constant] = np.inf  # constant within the query: 0 after scaling
    rows = np.repeat(np.arange(len(starts)), groups.sizes)
    out[groups.order] = (ordered - offset[rows]) / spread[rows]
    return out


class QueryScaler(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Scale each feature within each query (per-query min-max or z-score).

    The transformer for a scikit-learn ``Pipeline`` before
    :class:`~rsrank.RSRank`. It receives ``qid`` through metadata routing
    (it requests it for ``fit``, ``transform`` and therefore
    ``fit_transform``), so ``fit``, ``predict`` and ``score`` of the
    pipeline need ``qid=...`` and routing on
    (``sklearn.set_config(enable_metadata_routing=True)``, or
    :func:`rsrank.evaluation.model_selection.fit_search`). It learns nothing from the
    training rows: each query is scaled by its own documents.

    Such a model cannot run in a search engine that scores one document at
    a time (it needs every candidate of the query); use a global scaling
    (``StandardScaler``, ``RSRank(normalize="zscore")``) for deployment.

    Parameters
    ----------
    method : {"minmax", "zscore"}, default="minmax"
        ``"minmax"`` is LETOR's QueryLevelNorm: each feature of a query is
        mapped to [0, 1], a feature constant within the query to 0.
    """

    __metadata_request__fit = {"qid": True}
    __metadata_request__transform = {"qid": True}

    def __init__(self, method="minmax"):
        self.method = method

    def fit(self, X, y=None, *, qid=None):
        """Check ``X`` and record its width; the scaling has no fitted state."""
        if self.method not in ("minmax", "zscore"):
            raise ValueError(f"method must be 'minmax' or 'zscore', got {self.method!r}")
        validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32])
        return self

    def transform(self, X, *, qid=None):
        """Per-query scaled copy of ``X`` (dense, rows in input order)."""
        check_is_fitted(self, "n_features_in_")
        if qid is None:
            raise ValueError(
                "QueryScaler.transform needs qid=... (the query of every row); in a "
                "Pipeline or a search, enable metadata routing "
                "(sklearn.set_config(enable_metadata_routing=True)) and pass qid, or use "
                "rsrank.model_selection.fit_search")
        X = validate_data(self, X, reset=False, accept_sparse="csr",
                          dtype=[np.float64, np.float32])
        return query_normalize(X, qid, self.method)

    def fit_transform(self, X, y=None, *, qid=None):
        return self.fit(X, y, qid=qid).transform(X, qid=qid)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.requires_fit = True
        return tags
