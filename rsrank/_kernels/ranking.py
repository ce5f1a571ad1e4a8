"""Pair losses, rankings of a query's scores, swap weights and label levels:
what the lambdas of a query (:mod:`.lambdas`) are made of."""

import numpy as np
from numba import types as nbtypes
from numba.extending import intrinsic

from .build import njit, python_twin

MODIFIED_HUBER, HINGE, LOGISTIC = 0, 1, 2


PAIR_LOSSES = {"modified_huber": MODIFIED_HUBER, "hinge": HINGE, "logistic": LOGISTIC}


@njit(cache=True)
def pair_loss(v, loss):
    """Loss of a pair whose preferred document leads by margin ``v``.

    ``MODIFIED_HUBER``: 0 for v >= 1, (1 - v)^2 for -1 <= v < 1, -4v below.
    ``HINGE``: max(0, 1 - v). ``LOGISTIC``: log(1 + exp(-v)).
    """
    if loss == MODIFIED_HUBER:
        if v >= 1.0:
            return 0.0
        if v >= -1.0:
            return (1.0 - v) * (1.0 - v)
        return -4.0 * v
    if loss == HINGE:
        return 1.0 - v if v < 1.0 else 0.0
    if v > 0.0:
        return np.log1p(np.exp(-v))
    return -v + np.log1p(np.exp(v))


@njit(cache=True)
def pair_loss_derivative(v, loss):
    """d pair_loss / d v."""
    if loss == MODIFIED_HUBER:
        if v >= 1.0:
            return 0.0
        if v >= -1.0:
            return -2.0 * (1.0 - v)
        return -4.0
    if loss == HINGE:
        return -1.0 if v < 1.0 else 0.0
    if v > 0.0:
        e = np.exp(-v)
        return -e / (1.0 + e)
    return -1.0 / (1.0 + np.exp(v))


@python_twin(lambda x: np.float64(x).view(np.uint64))
@intrinsic
def float_bits(typingctx, x):
    """The bits of a float64 as a uint64 (a bit cast, no conversion)."""
    if not isinstance(x, nbtypes.Float) or x.bitwidth != 64:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(nbtypes.uint64))

    return nbtypes.uint64(nbtypes.float64), codegen


#: Runs this long are insertion-sorted before :func:`ranked_order` merges them.
_SORT_RUN = 8


@njit(cache=True)
def ranked_order(scores):
    """Positions by decreasing score; equal scores keep their row order
    (``-0.0`` equals ``0.0``; NaNs come last, in row order): the order of
    ``np.argsort(-scores, kind="stable")``.

    A merge sort of integer keys whose ascending order is the scores'
    decreasing order, with the rows alongside: short runs by insertion,
    then merges without a branch on the comparison, which random scores
    would mispredict half of the time (``scripts/bench_lambdas.py`` times
    it against NumPy's stable argsort compiled by numba). The keys are the
    scores' bits (:func:`float_bits`; an array ``view`` would compile its
    error path's string formatting, seconds on the first run)."""
    n = scores.shape[0]
    keys = np.empty(n, dtype=np.uint64)
    rows = np.empty(n, dtype=np.int64)
    sign = np.uint64(0x8000000000000000)
    largest_positive = np.uint64(0x7FFFFFFFFFFFFFFF)
    for i in range(n):
        bits = float_bits(scores[i])
        if scores[i] != scores[i]:
            bits = np.uint64(0xFFFFFFFFFFFFFFFF)
        elif bits == sign:  # -0.0 ranks with 0.0
            bits = largest_positive
        elif bits < sign:  # x >= 0: the larger, the earlier
            bits = largest_positive - bits
        # x < 0: its bits grow with |x|, so they already rank it after 0 and later the lower
        keys[i] = bits
        rows[i] = i
    for lo in range(0, n, _SORT_RUN):
        hi = min(lo + _SORT_RUN, n)
        for i in range(lo + 1, hi):
            key, row, j = keys[i], rows[i], i
            while j > lo and keys[j - 1] > key:
                keys[j] = keys[j - 1]
                rows[j] = rows[j - 1]
                j -= 1
            keys[j] = key
            rows[j] = row
    if n <= _SORT_RUN:
        return rows
    other_keys = np.empty(n, dtype=np.uint64)
    other_rows = np.empty(n, dtype=np.int64)
    width = _SORT_RUN
    while width < n:
        for lo in range(0, n, 2 * width):
            mid, hi = min(lo + width, n), min(lo + 2 * width, n)
            i, j, o = lo, mid, lo
            while i < mid and j < hi:
                right = keys[j] < keys[i]  # equal keys: the left run first (stable)
                other_keys[o] = keys[j] if right else keys[i]
                other_rows[o] = rows[j] if right else rows[i]
                j += np.int64(right)
                i += 1 - np.int64(right)
                o += 1
            while i < mid:
                other_keys[o] = keys[i]
                other_rows[o] = rows[i]
                i += 1
                o += 1
            while j < hi:
                other_keys[o] = keys[j]
                other_rows[o] = rows[j]
                j += 1
                o += 1
        keys, other_keys = other_keys, keys
        rows, other_rows = other_rows, rows
        width *= 2
    return rows


@njit(cache=True)
def ranked_order_from(scores, hint):
    """:func:`ranked_order`, starting from ``hint``, the ranking of the
    query's previous scores (or ``-1`` everywhere: none yet), which it
    overwrites with the new one and returns.

    Between two epochs a query's scores move little, so its last ranking is
    nearly sorted: an insertion sort finishes in O(n + inversions). Past
    ``8 n`` moves, or on a NaN, it hands over to the merge sort. Either way
    the result is the one order by decreasing score, ties by row, that
    :func:`ranked_order` gives."""
    n = scores.shape[0]
    usable = n > 0 and hint[0] >= 0
    for i in range(n):
        if scores[i] != scores[i]:
            usable = False
    if usable:
        budget = 8 * n
        for p in range(1, n):
            x = hint[p]
            value = scores[x]
            j = p
            while j > 0:
                other = hint[j - 1]
                if value > scores[other] or (value == scores[other] and x < other):
                    hint[j] = other
                    j -= 1
                    budget -= 1
                else:
                    break
            hint[j] = x
            if budget < 0:
                usable = False
                break
    if not usable:
        order = ranked_order(scores)
        for i in range(n):
            hint[i] = order[i]
    return hint


@njit(cache=True)
def top_order(scores, k):
    """Positions of the ``k`` highest scores in ranked order (ties by row
    order, as :func:`ranked_order`), followed by the other positions in row
    order. Only the first ``k`` places of a ranking carry a discount under a
    cut-off, so the rest need no sorting: O(n k) at worst, about O(n) on
    shuffled scores, against O(n log n) for a full sort."""
    n = scores.shape[0]
    if k >= n:
        return ranked_order(scores)
    top = np.empty(k, dtype=np.int64)
    count = 0
    for i in range(n):
        value = scores[i]
        if count == k and value <= scores[top[k - 1]]:
            continue
        # insert after every kept entry with a score >= value (stable)
        p = count if count < k else k - 1
        while p > 0 and scores[top[p - 1]] < value:
            if p < k:
                top[p] = top[p - 1]
            p -= 1
        top[p] = i
        if count < k:
            count += 1
    out = np.empty(n, dtype=np.int64)
    chosen = np.zeros(n, dtype=np.bool_)
    for p in range(k):
        out[p] = top[p]
        chosen[top[p]] = True
    p = k
    for i in range(n):
        if not chosen[i]:
            out[p] = i
            p += 1
    return out


@njit(cache=True)
def swap_weight(gain_a, gain_b, position_a, position_b, discount, inv_ideal):
    """|Delta NDCG| of swapping the documents at two 0-based positions."""
    return inv_ideal * abs(gain_a - gain_b) * abs(discount[position_a] - discount[position_b])


@njit(cache=True)
def swap_weight_matrix(scores, gains, discount, inv_ideal):
    """``W[i, j]`` = |Delta NDCG| of swapping rows i and j of one query."""
    n = scores.shape[0]
    order = ranked_order(scores)
    position = np.empty(n, dtype=np.int64)
    for p in range(n):
        position[order[p]] = p
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            out[i, j] = swap_weight(gains[i], gains[j], position[i], position[j], discount,
                                    inv_ideal)
    return out


@njit(cache=True)
def pair_loss_and_derivative(v, loss):
    """``(pair_loss(v), d pair_loss / dv)`` in one evaluation of the branches."""
    if loss == MODIFIED_HUBER:
        if v >= 1.0:
            return 0.0, 0.0
        if v >= -1.0:
            return (1.0 - v) * (1.0 - v), -2.0 * (1.0 - v)
        return -4.0 * v, -4.0
    return pair_loss(v, loss), pair_loss_derivative(v, loss)


@njit(cache=True)
def label_range(labels):
    """The smallest and largest of one or more labels, by a loop (``min()``
    and ``max()`` would compile numba's generic reductions, about a second
    of a first run)."""
    low = high = labels[0]
    for r in range(1, labels.shape[0]):
        v = labels[r]
        low = v if v < low else low
        high = v if v > high else high
    return low, high


@njit(cache=True)
def label_levels(labels, levels):
    """Number the distinct labels of one query 0, 1, ... in increasing order
    into ``levels`` (one per row) and return how many there are. Labels are
    small non-negative integers, so a table replaces a sort."""
    n = labels.shape[0]
    if n == 0:
        return 0
    low, high = label_range(labels)
    slot = np.zeros(high - low + 1, dtype=np.int64)
    for r in range(n):
        slot[labels[r] - low] = 1
    count = 0
    for v in range(high - low + 1):
        present = slot[v]
        slot[v] = count
        count += present
    for r in range(n):
        levels[r] = slot[labels[r] - low]
    return count
