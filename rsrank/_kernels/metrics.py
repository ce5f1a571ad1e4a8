"""NDCG of many queries at once: ideal DCG and NDCG@k."""

import numpy as np
from numba import prange

from .build import njit, twins
from .ranking import ranked_order, top_order


#: distinct gains a query may have for ideal_dcg's counting path
_FEW_GAINS = 16


@njit(cache=True)
def ideal_dcg(gains, offsets, discount):
    """Ideal DCG of every query at the cut-off encoded in ``discount``.

    Graded labels give a query few distinct gains: each is counted, and the
    documents of one gain fill consecutive ideal positions, whose discounts
    a prefix sum gives at once (O(n) per query instead of a sort). A query
    with more than ``_FEW_GAINS`` distinct gains is ranked by
    :func:`ranked_order` (numba's own sorts would add seconds to the first
    compilation)."""
    n_queries = offsets.shape[0] - 1
    out = np.zeros(n_queries)
    reach = discount.shape[0]
    prefix = np.zeros(reach + 1)
    for p in range(reach):
        prefix[p + 1] = prefix[p] + discount[p]
    values = np.empty(_FEW_GAINS)
    counts = np.empty(_FEW_GAINS, dtype=np.int64)
    for q in range(n_queries):
        lo, hi = offsets[q], offsets[q + 1]
        distinct = 0
        for i in range(lo, hi):
            g = gains[i]
            # a search of fixed length with selects, not an early exit: the
            # gains of a query come in no order, and a branch per value
            # would be mispredicted about once a document
            d = -1
            for t in range(distinct):
                d = t if values[t] == g else d
            if d < 0:
                if distinct == _FEW_GAINS:
                    distinct = -1
                    break
                d = distinct
                values[d] = g
                counts[d] = 0
                distinct += 1
            counts[d] += 1
        total = 0.0
        if distinct < 0:  # many distinct gains: sort them
            ranked = ranked_order(gains[lo:hi])
            for p in range(min(hi - lo, reach)):
                total += gains[lo + ranked[p]] * discount[p]
        else:
            order = ranked_order(values[:distinct])
            position = 0
            for d in order:
                if position >= reach:
                    break
                end = min(position + counts[d], reach)
                total += values[d] * (prefix[end] - prefix[position])
                position += counts[d]
        out[q] = total
    return out


def _ndcg_at(scores, gains, offsets, discount, k, ideal, empty, short_zero, out):
    """NDCG@``k`` of every query into ``out``, rows laid out query after
    query: the top ``k`` by :func:`top_order` (ties in row order), ``gains``
    and ``discount`` (one value per place) of the evaluation's convention,
    ``ideal`` each query's ideal DCG@k. A query with ideal DCG 0 scores
    ``empty``; with ``short_zero`` a query of fewer than ``k`` documents
    scores 0 (LETOR's rule). Queries in parallel in the parallel build."""
    n_queries = offsets.shape[0] - 1
    for q in prange(n_queries):
        lo, hi = offsets[q], offsets[q + 1]
        if short_zero and hi - lo < k:
            out[q] = 0.0
        elif ideal[q] <= 0.0:
            out[q] = empty
        else:
            top = min(k, hi - lo)
            order = top_order(scores[lo:hi], top)
            total = 0.0
            for p in range(top):
                total += gains[lo + order[p]] * discount[p]
            out[q] = total / ideal[q]
    return out


ndcg_at_serial, ndcg_at_parallel = twins(_ndcg_at)


@njit(cache=True)
def grouped_order(values, offsets):
    """Each query's rows (``offsets``) by decreasing ``values``, ties in row
    order: indices into ``values``, query after query (what
    ``np.lexsort((-values, query))`` gives, one :func:`ranked_order` per
    query instead of a sort of all rows)."""
    out = np.empty(values.shape[0], dtype=np.int64)
    for q in range(offsets.shape[0] - 1):
        lo, hi = offsets[q], offsets[q + 1]
        order = ranked_order(values[lo:hi])
        for k in range(hi - lo):
            out[lo + k] = lo + order[k]
    return out
