"""How a fit views stored rows: as they are, scaled within each query
(:class:`Scaling`), or with each missing value standing for a fixed value
per feature (:class:`Filled`); a
:class:`~rsrank.reading.querydata.QueryData` makes the kernels'
:class:`Rows` of each view once."""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._kernels import Rows, read_only
from ..learning.preprocessing import query_normalize

__all__ = ["ROW_VIEWS", "Filled", "Scaling", "as_view", "fill_values", "filled", "has_missing",
           "matrix_rows"]


def matrix_rows(X):
    """:class:`Rows` of a checked matrix as it is (one query, offsets
    ``[0, n]``): the CSR triplet with an empty dense array, or empty CSR
    arrays with a C-ordered dense ``X``. No copy of an already CSR or
    C-contiguous ``X``, and ``X`` is never modified.

    The four arrays are read-only views, whether ``X`` is writable or not
    (a memory map of the cache, a frame's buffer): numba compiles a kernel
    once per array type, and writability is part of the type, so a fit on
    cached rows would otherwise compile every epoch kernel a second time."""
    offsets = np.array([0, X.shape[0]], dtype=np.int64)
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        arrays = X.data, X.indices, X.indptr, np.zeros((0, 0), X.dtype)
    else:
        X = np.ascontiguousarray(X)
        arrays = np.zeros(0, X.dtype), np.zeros(0, np.int32), np.zeros(0, np.int32), X
    return Rows(*map(read_only, arrays), offsets)


@dataclass(frozen=True)
class Scaling:
    """A view of the stored rows for the kernels: as they are (``"none"``,
    also for a global scaling, which enters the kernels as a factor per
    feature), or scaled within each query (``"query-zscore"``,
    ``"query-minmax"``)."""

    key: str = "none"

    def query_rows(self, X, groups):
        """The :class:`Rows` of ``X`` (in query order, queries in ``groups``)."""
        if self.key != "none":
            X = query_normalize(X, groups, self.key)
        return matrix_rows(X)._replace(offsets=groups.offsets)


def filled(X, fill):
    """A copy of ``X`` (dense or CSR) with each missing value (NaN) of
    column ``j`` replaced by ``fill[j]``; the caller's ``X`` is never
    written."""
    fill = np.asarray(fill, dtype=np.float64)
    if sp.issparse(X):
        X = X.copy()
        gaps = np.isnan(X.data)
        X.data[gaps] = fill[X.indices[gaps]]
        return X
    X = np.array(X, copy=True)
    rows, columns = np.nonzero(np.isnan(X))
    X[rows, columns] = fill[columns]
    return X


def has_missing(X):
    """Whether ``X`` (dense or CSR) holds a missing value (NaN)."""
    return bool(np.isnan(X.data if sp.issparse(X) else X).any())


def fill_values(X, missing):
    """What a missing value of each column of ``X`` stands for under the
    policy ``missing``: ``"zero"`` 0; ``"mean"`` the column's mean over its
    values (an absent CSR entry counts as its value 0; 0 for a column with
    no value)."""
    width = X.shape[1]
    if missing == "zero":
        return np.zeros(width)
    if missing != "mean":
        raise ValueError(f"missing must be 'refuse', 'zero' or 'mean', got {missing!r}")
    if sp.issparse(X):
        data, columns = X.data, X.indices
        gaps = np.isnan(data)
        totals = np.bincount(columns[~gaps], weights=data[~gaps], minlength=width)
        counts = X.shape[0] - np.bincount(columns[gaps], minlength=width)
    else:
        gaps = np.isnan(X)
        totals = np.where(gaps, 0.0, X).sum(axis=0, dtype=np.float64)
        counts = X.shape[0] - gaps.sum(axis=0)
    return np.divide(totals, counts, out=np.zeros(width), where=counts > 0)


@dataclass(frozen=True)
class Filled:
    """A view whose missing values (NaN) stand for a fixed value per
    feature (a linear model's ``missing="zero"`` or ``"mean"``), then
    ``base``'s view; ``fill`` is the float64 values' bytes (hashable)."""

    base: Scaling
    fill: bytes

    @property
    def key(self):
        return ("filled", self.base.key, self.fill)

    def query_rows(self, X, groups):
        if has_missing(X):
            X = filled(X, np.frombuffer(self.fill, dtype=np.float64))
        return self.base.query_rows(X, groups)


#: the view of the rows of each ``normalize``
ROW_VIEWS = {"none": Scaling(), "zscore": Scaling(), "minmax": Scaling(),
             "query-zscore": Scaling("query-zscore"), "query-minmax": Scaling("query-minmax")}


def as_view(view):
    """A view of the rows: ``view`` itself, or the view of a ``normalize`` name."""
    return ROW_VIEWS[view] if isinstance(view, str) else view
