"""Group rows by query: a stable order plus query offsets.

Every routine that works per query (metrics, kernels, the estimator) takes
the rows of one query as a contiguous block ``order[offsets[q]:offsets[q+1]]``.
Queries are ordered by qid value and rows keep their input order inside a
query, so the grouping does not depend on how the rows were shuffled between
queries.
"""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class QueryGroups:
    """Rows grouped by query.

    Attributes
    ----------
    order : ndarray of int64, shape (n_rows,)
        Row indices such that ``order[offsets[q]:offsets[q + 1]]`` are the rows
        of query ``q`` in their original relative order.
    offsets : ndarray of int64, shape (n_queries + 1,)
        Start of each query in ``order``; ``offsets[-1] == n_rows``.
    qids : ndarray, shape (n_queries,)
        The qid value of each query, increasing.
    in_order : bool
        ``order`` is known to be ``0, 1, ..., n_rows - 1``: the rows were
        already grouped (False: not known, and it may still be).
    """

    order: np.ndarray
    offsets: np.ndarray
    qids: np.ndarray
    in_order: bool = False

    @property
    def n_queries(self):
        return len(self.qids)

    @property
    def sizes(self):
        return np.diff(self.offsets)

    def row_query(self):
        """Query index (0..n_queries-1) of each position in ``order``."""
        return np.repeat(np.arange(self.n_queries, dtype=np.int64), self.sizes)


def group_queries(qid, n_rows=None):
    """Group rows by their per-row query id.

    Parameters
    ----------
    qid : array-like of shape (n_rows,), QueryGroups or None
        Query id of each row. Rows of one query need not be adjacent.
        ``None`` means all rows form a single query (``n_rows`` is then
        required). A ``QueryGroups`` is returned as it is (after a length
        check), so a caller evaluating the same queries often groups once.
    n_rows : int, optional
        Expected number of rows; a ``qid`` of another length is an error.

    Returns
    -------
    QueryGroups
    """
    if isinstance(qid, QueryGroups):
        if n_rows is not None and qid.offsets[-1] != n_rows:
            raise ValueError(f"qid groups {qid.offsets[-1]} rows but there are {n_rows} rows")
        return qid
    if qid is None:
        if n_rows is None:
            raise ValueError("qid=None needs n_rows")
        order = np.arange(n_rows, dtype=np.int64)
        if n_rows == 0:
            return QueryGroups(order, np.zeros(1, dtype=np.int64), order, True)
        offsets = np.array([0, n_rows], dtype=np.int64)
        return QueryGroups(order, offsets, np.zeros(1, dtype=np.int64), True)
    qid = np.asarray(qid)
    if qid.ndim != 1:
        raise ValueError(f"qid must be one-dimensional, got shape {qid.shape}")
    if n_rows is not None and len(qid) != n_rows:
        raise ValueError(f"qid has {len(qid)} entries but there are {n_rows} rows")
    missing = _missing_ids(qid)
    if len(missing):
        raise ValueError(f"qid at row {missing[0]} is {qid[missing[0]]} ({len(missing)} "
                         f"row{'s' if len(missing) > 1 else ''} without one): every row needs "
                         "a query id")
    in_order = qid.dtype.kind in "iuf" and not np.any(qid[1:] < qid[:-1])
    if in_order:
        # already in query order (as files are): the stable sort would keep it
        order, sorted_qid = np.arange(len(qid), dtype=np.int64), qid
    else:
        order = np.argsort(qid, kind="stable").astype(np.int64, copy=False)
        sorted_qid = qid[order]
    if len(qid):
        starts = np.flatnonzero(np.r_[True, sorted_qid[1:] != sorted_qid[:-1]])
    else:
        starts = np.zeros(0, dtype=np.int64)
    offsets = np.r_[starts, len(qid)].astype(np.int64)
    return QueryGroups(order, offsets, sorted_qid[starts], bool(in_order))


def _missing_ids(qid):
    """Rows whose query id is NaN, infinite or None."""
    if qid.dtype.kind in "fc":
        return np.flatnonzero(~np.isfinite(qid))
    if qid.dtype.kind == "O":
        return np.flatnonzero([value is None or (isinstance(value, float)
                                                 and not np.isfinite(value)) for value in qid])
    return np.zeros(0, dtype=np.int64)


def qid_from_group_sizes(sizes):
    """Per-row qid ``0, 0, ..., 1, 1, ...`` from consecutive query sizes."""
    sizes = np.asarray(sizes, dtype=np.int64)
    return np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
