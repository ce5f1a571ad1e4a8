"""numba kernels on plain arrays: swap weights, pair losses, lambdas,
truncation, and whole training epochs.

Conventions shared by every kernel:

* rows are grouped by query: query ``q`` owns rows ``offsets[q]:offsets[q+1]``
  of ``X`` (CSR ``data, indices, indptr`` or a C-contiguous dense array), of
  ``gains`` and of ``labels``;
* ``discount[p]`` is the discount of 0-based position ``p`` and is 0 from the
  cut-off on; ``cutoff`` is the number of positions that can carry weight;
* ``inv_ideal[q]`` is ``1 / ideal DCG`` of query ``q`` at that cut-off (0
  when the query has no relevant document);
* ``X`` is only read. Weights, scores and lambdas are float64 whatever the
  dtype of ``X``.

All kernels are compiled with ``cache=True``. Each parallel kernel is its
serial twin compiled with ``parallel=True``: in an epoch, the queries of a
batch are dealt to a fixed number of gradient rows (a ``prange`` over the
rows), so threads write disjoint rows of ``scores``, ``lam`` and the
gradient, and the rows are added up in order after the loop: both builds
give the same weights bit for bit.
"""

import types
from collections import namedtuple
from pathlib import Path

import numpy as np
from numba import njit, prange
from numba import types as nbtypes
from numba.extending import intrinsic

def variant(function, suffix, **constants):
    """A copy of ``function`` named with ``suffix`` whose globals hold
    ``constants`` in place of the module's: numba reads a global as a
    constant and drops the branches it rules out before compiling, so each
    variant compiles only its own code (the linear epoch never compiles the
    additive model's table lookups). The name keeps the variants apart in
    numba's on-disk cache. Without ``constants`` the copy shares the
    module's globals."""
    namespace = dict(function.__globals__, **constants) if constants else function.__globals__
    copy = types.FunctionType(function.__code__, namespace, function.__name__ + suffix,
                              function.__defaults__, function.__closure__)
    copy.__qualname__ = function.__qualname__ + suffix
    copy.__module__ = function.__module__
    return copy


def twins(function):
    """``(serial, parallel)`` builds of one kernel, both cached on disk.

    numba's cache indexes a kernel by its qualified name, line and argument
    types, not by ``parallel=True``: two builds of one Python function share
    cache entries, and whichever compiled first is loaded for both. The
    parallel build is therefore made from a copy of the function with its
    own name (:func:`variant`)."""
    return (njit(cache=True)(function),
            njit(cache=True, parallel=True)(variant(function, "_parallel")))


MODIFIED_HUBER, HINGE, LOGISTIC = 0, 1, 2
#: Below this many ranked places a query keeps the pair loop.
PREFIX_MIN_TOP = 32
#: Pair-loop partners per label level that one prefix-sum pass costs.
PREFIX_COST_PER_LEVEL = 12
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
def label_levels(labels, levels):
    """Number the distinct labels of one query 0, 1, ... in increasing order
    into ``levels`` (one per row) and return how many there are. Labels are
    small non-negative integers, so a table replaces a sort."""
    n = labels.shape[0]
    if n == 0:
        return 0
    low, high = labels.min(), labels.max()
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


@njit(cache=True)
def query_levels(gains, labels, discount, loss, levels):
    """:func:`label_levels` where :func:`sorted_query_lambdas` gives the
    query's lambdas (see :func:`prefix_sums_apply`); 0, with ``levels``
    untouched, where it does not."""
    n = labels.shape[0]
    if n == 0 or not prefix_sums_apply(gains, labels, discount, n, loss):
        return 0
    return label_levels(labels, levels)


@njit(cache=True)
def all_query_levels(gains, labels, offsets, discount, loss, levels, n_levels):
    """:func:`query_levels` of every query, into ``levels`` (one per row) and
    ``n_levels`` (one per query)."""
    for q in range(offsets.shape[0] - 1):
        lo, hi = offsets[q], offsets[q + 1]
        n_levels[q] = query_levels(gains[lo:hi], labels[lo:hi], discount, loss, levels[lo:hi])


@njit(cache=True)
def sorted_query_lambdas(scores, gains, labels, discount, cutoff, inv_ideal, loss, unit_weights,
                         lam):
    """:func:`query_lambdas` for the modified Huber and hinge losses in
    O(n log n + n L) instead of O(n * cutoff), L the number of labels.

    For ``delta = s_a - s_b >= 0`` between a document ``a`` ranked above
    ``b``, and ``sigma`` the sign of ``y_a - y_b``, both losses are a
    polynomial in ``delta`` over every pair plus a correction for the pairs
    with ``delta >= 1`` only:

    * modified Huber: ``sigma phi'(sigma delta) = -2 sigma + 2 delta - 2 h``
      and ``phi(sigma delta) = 1 - 2 sigma delta + delta^2 - h^2``, with
      ``h = delta - 1`` (0 at ``delta = 1``, so either side of the boundary
      agrees);
    * hinge: ``sigma phi'(sigma delta) = -sigma + [sigma > 0]`` and
      ``phi(sigma delta) = 1 - sigma delta + [sigma > 0] h``.

    A pair's step is that times ``Z |g_a - g_b| (d_a - d_b)`` (or 1 with
    unit weights). So each document's sum over its partners on one label
    level is a combination of sums of 1, s, s^2, d, d s, d s^2 over the
    partners below it, above it, and those at least 1 away below and above.
    Per level these are differences of running sums over the level's
    documents in rank order, read at the place of the document and at two
    pointers that only move down the ranking as the document does. The
    boundary test is the pair loop's own (a difference against 1).

    Requires gains non-decreasing in the label and a non-increasing
    discount (the caller checks); returns the query's loss.
    """
    levels = np.empty(scores.shape[0], dtype=np.int64)
    n_levels = label_levels(labels, levels)
    return ranked_lambdas(ranked_order(scores), scores, gains, levels, n_levels, discount,
                           cutoff, inv_ideal, loss, unit_weights, lam)


@njit(cache=True, inline="always")
def _level_terms(S, end, P, Be, Bf, sp, dp, sigma, huber, unit_weights):
    """One label level's share of a document's step and loss in
    :func:`ranked_lambdas`, before the pair weight: ``end``, ``P``, ``Be``
    and ``Bf`` are the level's rows of running sums at its end and at the
    places p, e and f."""
    # sums of u s^k over the partners below (b), at least 1 below (c),
    # above (a) and at least 1 above (f), with u = d_p - d_partner, or
    # u = 1 below and -1 above with unit weights
    if unit_weights:
        b0, b1, b2 = S[end, 0] - S[P, 0], S[end, 1] - S[P, 1], S[end, 2] - S[P, 2]
        c0, c1, c2 = S[end, 0] - S[Be, 0], S[end, 1] - S[Be, 1], S[end, 2] - S[Be, 2]
        a0, a1 = -S[P, 0], -S[P, 1]
        f0, f1 = -S[Bf, 0], -S[Bf, 1]
    else:
        b0 = dp * (S[end, 0] - S[P, 0]) - (S[end, 3] - S[P, 3])
        b1 = dp * (S[end, 1] - S[P, 1]) - (S[end, 4] - S[P, 4])
        b2 = dp * (S[end, 2] - S[P, 2]) - (S[end, 5] - S[P, 5])
        c0 = dp * (S[end, 0] - S[Be, 0]) - (S[end, 3] - S[Be, 3])
        c1 = dp * (S[end, 1] - S[Be, 1]) - (S[end, 4] - S[Be, 4])
        c2 = dp * (S[end, 2] - S[Be, 2]) - (S[end, 5] - S[Be, 5])
        a0, a1 = dp * S[P, 0] - S[P, 3], dp * S[P, 1] - S[P, 4]
        f0, f1 = dp * S[Bf, 0] - S[Bf, 3], dp * S[Bf, 1] - S[Bf, 4]
    # the partners above enter with the opposite sign of their step
    if huber:
        step = (2.0 * (sp - sigma) * (b0 - a0) - 2.0 * (b1 - a1)
                - 2.0 * ((sp - 1.0) * c0 - c1) + 2.0 * ((sp + 1.0) * f0 - f1))
        value = (b0 - 2.0 * sigma * (sp * b0 - b1) + (sp * sp * b0 - 2.0 * sp * b1 + b2)
                 - ((sp - 1.0) * (sp - 1.0) * c0 - 2.0 * (sp - 1.0) * c1 + c2))
    else:
        step = -sigma * (b0 - a0) + (c0 if sigma > 0.0 else f0)
        value = b0 - sigma * (sp * b0 - b1)
        if sigma > 0.0:
            value += (sp - 1.0) * c0 - c1
    return step, value


@njit(cache=True)
def ranked_lambdas(order, scores, gains, levels, n_levels, discount, cutoff, inv_ideal, loss,
                    unit_weights, lam):
    """:func:`sorted_query_lambdas` given the ranking ``order`` and each
    row's label level (:func:`label_levels`)."""
    n = scores.shape[0]
    L = n_levels
    # ints: each place's level (and a sentinel), then per level the first
    # row of its running sums and the rows the places p, e and f point at
    ints = np.zeros(n + 1 + 5 * L, dtype=np.int64)
    level = ints[:n + 1]
    first = ints[n + 1:n + 1 + L]
    last = ints[n + 1 + L:n + 1 + 2 * L]
    at_p = ints[n + 1 + 2 * L:n + 1 + 3 * L]
    at_e = ints[n + 1 + 3 * L:n + 1 + 4 * L]
    at_f = ints[n + 1 + 4 * L:]
    for r in range(n):
        last[levels[r]] += 1
    row = 0
    for q in range(L):
        first[q] = row
        row += last[q] + 1
        last[q] = first[q]
    # per level, over its documents in rank order: running sums of the
    # monomials 1, s, s^2, d, d s, d s^2 (row first[q] + k: its first k)
    S = np.empty((n + L, 6))
    s = np.empty(n + 1)
    level_gain = np.zeros(L)
    for q in range(L):
        S[first[q], :] = 0.0
    for p in range(n):
        r = order[p]
        q = levels[r]
        level[p] = q
        level_gain[q] = gains[r]
        sp = scores[r]
        s[p] = sp
        dp = 0.0 if unit_weights or p >= cutoff else discount[p]
        k = last[q]
        S[k + 1, 0] = S[k, 0] + 1.0
        S[k + 1, 1] = S[k, 1] + sp
        S[k + 1, 2] = S[k, 2] + sp * sp
        S[k + 1, 3] = S[k, 3] + dp
        S[k + 1, 4] = S[k, 4] + dp * sp
        S[k + 1, 5] = S[k, 5] + dp * sp * sp
        last[q] = k + 1
    s[n] = -np.inf  # stops the pointer e at the end without a bounds test
    for q in range(L):
        at_p[q] = at_e[q] = at_f[q] = first[q]
    huber = loss == MODIFIED_HUBER
    total = 0.0
    e = 0  # first place below p with s_p - s_e >= 1
    f = 0  # first place above p with s_f - s_p < 1
    for p in range(n):
        sp, lp = s[p], level[p]
        dp = 0.0 if unit_weights or p >= cutoff else discount[p]
        if p > 0:
            at_p[level[p - 1]] += 1
        # the pointers move about one place per document: two steps without
        # a branch, then a loop for the rest
        for _ in range(2):
            move = np.int64(sp - s[e] < 1.0)
            at_e[level[e]] += move
            e += move
            move = np.int64(s[f] - sp >= 1.0)
            at_f[level[f]] += move
            f += move
        while e < n and sp - s[e] < 1.0:
            at_e[level[e]] += 1
            e += 1
        while s[f] - sp >= 1.0:
            at_f[level[f]] += 1
            f += 1
        acc = 0.0
        # the levels below the document's own (sigma = +1), then those above
        for q in range(lp):
            weight = 1.0 if unit_weights else inv_ideal * (level_gain[lp] - level_gain[q])
            step, value = _level_terms(S, last[q], at_p[q], at_e[q], at_f[q], sp, dp, 1.0,
                                       huber, unit_weights)
            acc += weight * step
            total += weight * value
        for q in range(lp + 1, L):
            weight = 1.0 if unit_weights else inv_ideal * (level_gain[q] - level_gain[lp])
            step, value = _level_terms(S, last[q], at_p[q], at_e[q], at_f[q], sp, dp, -1.0,
                                       huber, unit_weights)
            acc += weight * step
            total += weight * value
        lam[order[p]] = acc
    return total


@njit(cache=True)
def prefix_sums_apply(gains, labels, discount, n, loss):
    """Whether :func:`sorted_query_lambdas` gives this query's lambdas: a
    loss it handles, gains non-decreasing in the label, a non-increasing
    discount."""
    if loss == LOGISTIC:
        return False
    for p in range(1, min(n, discount.shape[0])):
        if discount[p] > discount[p - 1]:
            return False
    # the smallest and largest gain of each label, then in label order
    low = labels.min()
    size = labels.max() - low + 1
    smallest = np.full(size, np.inf)
    largest = np.full(size, -np.inf)
    for r in range(n):
        v = labels[r] - low
        smallest[v] = min(smallest[v], gains[r])
        largest[v] = max(largest[v], gains[r])
    previous = -np.inf
    for v in range(size):
        if smallest[v] == np.inf:
            continue  # no document with this label
        if smallest[v] < previous:
            return False
        previous = largest[v]
    return True


_NO_RANKING = np.empty(0, dtype=np.int64)


def query_lambdas(scores, gains, labels, discount, cutoff, inv_ideal, loss, unit_weights, lam):
    """:func:`query_lambdas_from` without a previous ranking or levels (not a
    kernel of its own: one less to compile on the first run)."""
    return query_lambdas_from(scores, gains, labels, discount, cutoff, inv_ideal, loss,
                              unit_weights, lam, _NO_RANKING, _NO_RANKING, -1)


@njit(cache=True)
def query_lambdas_from(scores, gains, labels, discount, cutoff, inv_ideal, loss, unit_weights,
                       lam, hint, levels, n_levels):
    """Pair loss of one query and its derivative per document.

    Every pair with ``labels[i] > labels[j]`` costs
    ``W_ij * pair_loss(scores[i] - scores[j])`` with ``W_ij`` the swap weight
    in the current ranking (or 1 with ``unit_weights``). ``lam[i]`` receives
    ``sum_j dL/ds_i``. The work goes to whichever of two algorithms is
    cheaper for the query: the pair loop over the top ``cutoff`` places
    (O(n * cutoff), :func:`pair_loop_lambdas`) or prefix sums over the whole
    ranking (O(n log n + n L), :func:`sorted_query_lambdas`; modified Huber
    and hinge losses only). Both give the same result to rounding.

    ``levels`` and ``n_levels`` are the query's :func:`query_levels`, which
    do not change from epoch to epoch (``n_levels = -1``: not computed yet;
    they are then computed here). The prefix sums rank the query starting
    from ``hint``, its previous ranking (see :func:`ranked_order_from`),
    when ``hint`` has one place per document; it is updated.

    Returns the query's loss; ``lam`` is overwritten.
    """
    n = scores.shape[0]
    if n < 2 or (inv_ideal == 0.0 and not unit_weights):
        for r in range(n):
            lam[r] = 0.0
        return 0.0
    # both algorithms write every lam[r]
    top = n if unit_weights else min(n, cutoff)
    if top > PREFIX_MIN_TOP and loss != LOGISTIC:
        if n_levels < 0:
            levels = np.empty(n, dtype=np.int64)
            n_levels = query_levels(gains, labels, discount, loss, levels)
        # the pair loop costs about top * n, the prefix sums n log n + n L
        if n_levels > 0 and top > PREFIX_COST_PER_LEVEL * n_levels + np.log2(n):
            order = (ranked_order_from(scores, hint) if hint.shape[0] == n
                     else ranked_order(scores))
            return ranked_lambdas(order, scores, gains, levels, n_levels, discount, cutoff,
                                   inv_ideal, loss, unit_weights, lam)
    return pair_loop_lambdas(scores, gains, labels, discount, cutoff, inv_ideal, loss,
                             unit_weights, lam)


@njit(cache=True)
def pair_loop_lambdas(scores, gains, labels, discount, cutoff, inv_ideal, loss, unit_weights,
                      lam):
    """:func:`query_lambdas` by a loop over the pairs. Pairs with both
    documents at or beyond ``cutoff`` have weight 0 and are skipped, so the
    work is O(n * cutoff)."""
    n = scores.shape[0]
    for r in range(n):
        lam[r] = 0.0
    if n < 2 or (inv_ideal == 0.0 and not unit_weights):
        return 0.0
    top = n if unit_weights else min(n, cutoff)
    # beyond the cut-off every position has discount 0: only the top needs ranking
    order = ranked_order(scores) if unit_weights else top_order(scores, top)
    # the query in rank order, so the pair loops read memory sequentially
    s = np.empty(n)
    g = np.empty(n)
    y = np.empty(n, dtype=labels.dtype)
    for p in range(n):
        s[p] = scores[order[p]]
        g[p] = gains[order[p]]
        y[p] = labels[order[p]]
    acc = np.zeros(n)
    total = 0.0
    for a in range(top):
        s_a, g_a, y_a, d_a = s[a], g[a], y[a], discount[a]
        acc_a = 0.0
        for b in range(a + 1, n):
            y_b = y[b]
            if y_a == y_b:
                continue
            if unit_weights:
                weight = 1.0
            else:
                weight = inv_ideal * abs(g_a - g[b]) * abs(d_a - discount[b])
                if weight == 0.0:
                    continue
            # the derivative moves the preferred document up and the other down
            sign = 1.0 if y_a > y_b else -1.0
            value, derivative = pair_loss_and_derivative(sign * (s_a - s[b]), loss)
            total += weight * value
            step = sign * weight * derivative
            acc_a += step
            acc[b] -= step
        acc[a] += acc_a
    for p in range(n):
        lam[order[p]] = acc[p]
    return total


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
            d = 0
            while d < distinct and values[d] != g:
                d += 1
            if d == distinct:
                if distinct == _FEW_GAINS:
                    distinct = -1
                    break
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
def stored_column_moments(data, indices, width):
    """Per column, over the stored values of a CSR (or of a dense matrix's
    rows, flattened with ``indices`` repeating ``0 .. width-1``): count, sum
    and sum of squares in float64, min and max. One pass, no copy of the
    values (scipy and NumPy would make float64 copies of ``data`` and of its
    squares)."""
    count = np.zeros(width, dtype=np.int64)
    total = np.zeros(width)
    squares = np.zeros(width)
    low = np.full(width, np.inf)
    high = np.full(width, -np.inf)
    for t in range(data.shape[0]):
        j = indices[t]
        v = np.float64(data[t])
        count[j] += 1
        total[j] += v
        squares[j] += v * v
        if v < low[j]:
            low[j] = v
        if v > high[j]:
            high[j] = v
    return count, total, squares, low, high


@njit(cache=True)
def dense_column_moments(X):
    """:func:`stored_column_moments` of every entry of a dense ``X``."""
    n, width = X.shape
    total = np.zeros(width)
    squares = np.zeros(width)
    low = np.full(width, np.inf)
    high = np.full(width, -np.inf)
    for r in range(n):
        for j in range(width):
            v = np.float64(X[r, j])
            total[j] += v
            squares[j] += v * v
            if v < low[j]:
                low[j] = v
            if v > high[j]:
                high[j] = v
    return total, squares, low, high


@njit(cache=True)
def truncate(w, alpha, theta, factors=np.zeros(0)):
    """Truncated-gradient shrinkage T1 (Langford, Li and Zhang 2009), in place.

    Each coordinate with ``|w_j| <= theta`` moves toward 0 by ``alpha``
    (times ``factors[j]``, the cost of its feature, when ``factors`` is not
    empty) without crossing it; larger coordinates are left alone. Returns
    the number of non-zero weights afterwards.
    """
    nonzero = 0
    weighted = factors.shape[0] > 0
    for j in range(w.shape[0]):
        value = w[j]
        shrink = alpha * factors[j] if weighted else alpha
        if value > 0.0 and value <= theta:
            value = max(0.0, value - shrink)
        elif value < 0.0 and -value <= theta:
            value = min(0.0, value + shrink)
        w[j] = value
        if value != 0.0:
            nonzero += 1
    return nonzero


@njit(cache=True)
def cumulative_penalty(w, state, factors=np.zeros(0)):
    """Cumulative L1 penalty (Tsuruoka, Tsujii and Ananiadou 2009), in place.

    ``state[-1]`` is ``u``, the total L1 penalty each weight could have
    received so far (the sum of ``learning_rate * l1`` over the steps);
    ``state[j]`` is what weight ``j`` actually received (negative for a
    weight shrunk from above). Each weight moves toward 0 by what it is
    still owed, ``u + state[j]`` from above or ``u - state[j]`` from below,
    without crossing it. Weights that a noisy step pushes off zero pay the
    penalty they missed, so stochastic steps still end at exact zeros.
    With ``factors`` (not empty), weight ``j`` is owed ``factors[j]``
    times the total. Returns the number of non-zero weights afterwards.
    """
    total = state[state.shape[0] - 1]
    weighted = factors.shape[0] > 0
    nonzero = 0
    for j in range(w.shape[0]):
        value = w[j]
        u = total * factors[j] if weighted else total
        if value > 0.0:
            value = max(0.0, value - (u + state[j]))
        elif value < 0.0:
            value = min(0.0, value + (u - state[j]))
        state[j] += value - w[j]
        w[j] = value
        if value != 0.0:
            nonzero += 1
    return nonzero


@njit(cache=True)
def group_shrink(w, groups, factors, alpha):
    """The group lasso's proximal step, in place: the weights
    ``w[groups[g]:groups[g + 1]]`` of group ``g`` shrink together toward 0,
    their Euclidean norm by ``alpha * factors[g]``; a group whose norm is
    at most that becomes all zero. After :func:`truncate` this is the
    proximal step of the sparse group lasso. Returns the number of groups
    left with a non-zero weight."""
    kept = 0
    for g in range(groups.shape[0] - 1):
        lo, hi = groups[g], groups[g + 1]
        norm = 0.0
        for j in range(lo, hi):
            norm += w[j] * w[j]
        norm = np.sqrt(norm)
        shrink = alpha * factors[g]
        if norm <= shrink:
            for j in range(lo, hi):
                w[j] = 0.0
        else:
            factor = 1.0 - shrink / norm
            for j in range(lo, hi):
                w[j] *= factor
            kept += 1
    return kept


# -- scores and gradients ------------------------------------------------------
#
# These loops only read X and accumulate; "reassoc" lets LLVM vectorise the
# dot-product reductions (about 3x faster on float32 rows) and "contract"
# allows fused multiply-adds. Neither assumes the absence of NaN or inf, so a
# diverging model still shows up in the finiteness check after each epoch.
_ARITHMETIC = {"reassoc", "contract"}


@njit(cache=True, fastmath=_ARITHMETIC)
def csr_scores(data, indices, indptr, lo, hi, w, out):
    for r in range(lo, hi):
        total = 0.0
        for p in range(indptr[r], indptr[r + 1]):
            total += data[p] * w[indices[p]]
        out[r] = total


@njit(cache=True, fastmath=_ARITHMETIC)
def dense_scores(X, lo, hi, w, out):
    d = X.shape[1]
    for r in range(lo, hi):
        total = 0.0
        for c in range(d):
            total += X[r, c] * w[c]
        out[r] = total


@njit(cache=True, fastmath=_ARITHMETIC)
def csr_add_gradient(data, indices, indptr, lo, hi, lam, scale, grad):
    for r in range(lo, hi):
        coefficient = lam[r] * scale
        if coefficient != 0.0:
            for p in range(indptr[r], indptr[r + 1]):
                grad[indices[p]] += coefficient * data[p]


@njit(cache=True, fastmath=_ARITHMETIC)
def dense_add_gradient(X, lo, hi, lam, scale, grad):
    d = X.shape[1]
    for r in range(lo, hi):
        coefficient = lam[r] * scale
        if coefficient != 0.0:
            for c in range(d):
                grad[c] += coefficient * X[r, c]


# An additive model's rows are bin codes (rsrank.binning): ``dense_codes``, one
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
# one with most codes; :meth:`rsrank.binning.StepEncoding.rows` chooses). With
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
        if stride > 0:
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
    d = slots.shape[0]
    dense = rows.indptr.shape[0] == 0
    codes = rows.dense_codes
    step = np.uint64(stride)
    for r in range(lo, hi):
        coefficient = lam[r] * scale
        if coefficient == 0.0:
            continue
        if dense and stride > 0:
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


def _linear_scores(data, indices, indptr, X, w, out):
    """``out = X @ w`` in float64 without converting ``X``; rows in parallel
    in the parallel build."""
    dense = indptr.shape[0] == 0
    n = X.shape[0] if dense else indptr.shape[0] - 1
    for r in prange(n):
        if dense:
            dense_scores(X, r, r + 1, w, out)
        else:
            csr_scores(data, indices, indptr, r, r + 1, w, out)
    return out


linear_scores_serial, linear_scores_parallel = twins(_linear_scores)


# -- one epoch -----------------------------------------------------------------
#
# An epoch's arguments travel in four small records (named tuples, which numba
# compiles and caches like any tuple):
#
# * ``Rows``: the rows in query order: the CSR triplet, or empty CSR arrays and
#   a C-ordered dense X, and the query ``offsets``; for an additive model
#   also their bin codes and each feature's steps (``bins``, see
#   :func:`coded_scores`), empty otherwise;
# * ``Pairs``: what the pair losses need per row and per query: ``gains``,
#   ``labels``, ``inv_ideal``, the ``discount`` table and ``cutoff``, the
#   ``loss`` code, ``unit_weights``, and the label ``levels``/``n_levels``
#   (:func:`all_query_levels`);
# * ``Steps``: the step schedule and the penalties: ``learning_rate``,
#   ``power_t``, ``l1``, ``period``, ``theta`` and ``cumulative``; the group
#   penalty's strength ``group`` on the weight ranges ``groups`` (offsets,
#   empty: none), each times its ``group_factors``; ``weight_factors``, one
#   per weight (empty: 1), multiply the L1 (feature costs);
# * ``Work``: per-fit scratch: ``scores`` and ``lam`` (one per row),
#   ``partial`` (the gradient rows, :data:`rsrank.objective.GRADIENT_ROWS`),
#   ``rankings`` (each query's last ranking, -1 where none yet),
#   ``w_scaled`` (one per weight) and ``table`` (an additive model's
#   contributions per code, :func:`step_table`; empty otherwise).
#
# A global feature scaling enters as ``scale``, one factor per feature (empty:
# none): the model scores ``X @ (scale * w)`` and its gradient is
# ``scale * (X.T @ lam)``, so no scaled copy of X exists.

#: the bin-code fields of linear rows (``bins`` empty: no codes)
_NO_CODES = (np.zeros((0, 0), np.uint8), np.zeros(0, np.uint8), np.zeros(0, np.uint8),
             np.zeros(0, np.int64), np.zeros(0, np.int64))
Rows = namedtuple("Rows", "data indices indptr dense offsets dense_codes stored_codes zero_codes "
                          "bins slots", defaults=_NO_CODES)
Pairs = namedtuple("Pairs", "gains labels inv_ideal discount cutoff loss unit_weights levels "
                            "n_levels")
Steps = namedtuple("Steps", "learning_rate power_t l1 period theta cumulative group groups "
                            "group_factors weight_factors",
                   defaults=(0.0, np.zeros(0, np.int64), np.zeros(0), np.zeros(0)))
Work = namedtuple("Work", "scores lam partial rankings w_scaled table", defaults=(np.zeros(0),))


@njit(cache=True)
def step_size(learning_rate, power_t, step):
    """The step size of gradient step number ``step`` (from 1):
    ``learning_rate / step ** power_t`` (scikit-learn's ``"invscaling"``),
    ``learning_rate`` itself when ``power_t`` is 0."""
    if power_t == 0.0:
        return learning_rate
    return learning_rate / step ** power_t


@njit(cache=True)
def scaled_weights(w, scale, out):
    """``scale * w`` into ``out`` and return it; ``w`` itself when ``scale``
    is empty (no scaling)."""
    if scale.shape[0] == 0:
        return w
    for j in range(w.shape[0]):
        out[j] = w[j] * scale[j]
    return out


@njit(cache=True)
def take_step(w, partial, rows, scale, steps, l1_state, step):
    """One gradient step and its L1 penalty, in place; returns the new step
    count.

    The gradient is the sum of the first ``rows`` rows of ``partial`` (on the
    rows as stored; times ``scale`` per feature when it is not empty). The
    step takes ``w -= eta * grad`` with ``eta = learning_rate / t ** power_t``
    (``t`` the step count from 1, :func:`step_size`) and, every ``period``
    steps, applies :func:`truncate` with ``alpha = l1`` times the sum of the
    period's ``eta`` (``learning_rate * period * l1`` at a constant rate), or
    with ``cumulative`` the :func:`cumulative_penalty` of ``l1_state`` (which
    every step adds ``eta * l1`` to)."""
    n_features = w.shape[0]
    scaled = scale.shape[0] > 0
    step += 1
    eta = step_size(steps.learning_rate, steps.power_t, step)
    for j in range(n_features):
        g = 0.0
        for c in range(rows):
            g += partial[c, j]
        if scaled:
            g *= scale[j]
        w[j] -= eta * g
    if steps.l1 > 0.0:
        if steps.cumulative:
            l1_state[n_features] += eta * steps.l1
            if step % steps.period == 0:
                cumulative_penalty(w, l1_state, steps.weight_factors)
        elif step % steps.period == 0:
            truncate(w, period_steps(steps, step) * steps.l1, steps.theta, steps.weight_factors)
    if steps.group > 0.0 and steps.groups.shape[0] > 0 and step % steps.period == 0:
        group_shrink(w, steps.groups, steps.group_factors, period_steps(steps, step) * steps.group)
    return step


@njit(cache=True)
def period_steps(steps, step):
    """The sum of the step sizes of the truncation period ending at step
    number ``step``."""
    if steps.power_t == 0.0:
        return steps.learning_rate * steps.period
    total = 0.0
    for t in range(step - steps.period + 1, step + 1):
        total += step_size(steps.learning_rate, steps.power_t, t)
    return total


def _epoch(rows, pairs, steps, scale, query_order, batch_size, w, l1_state, step, work):
    """One pass over ``query_order`` in batches; updates ``w`` in place.

    Each step averages the gradient over the batch's queries and takes
    :func:`take_step`. ``work.partial`` has one row per gradient
    accumulator: the queries of a batch are dealt to its rows (shared out
    among the threads in the parallel build), then the rows are added up.

    Returns ``(summed query loss, new step count)``.
    """
    n_batch_queries = query_order.shape[0]
    total = 0.0
    losses = np.zeros(n_batch_queries)
    scores, lam, partial = work.scores, work.lam, work.partial
    stride = uniform_stride(rows.slots) if _CODED else 0
    for start in range(0, n_batch_queries, batch_size):
        stop = min(start + batch_size, n_batch_queries)
        factor = 1.0 / (stop - start)
        used = min(partial.shape[0], stop - start)
        ws = scaled_weights(w, scale, work.w_scaled)
        if _CODED:
            step_table(ws, rows.bins, rows.slots, work.table)
        for c in prange(used):
            # scores, lambdas and gradient of one query back to back: its rows
            # of X are read from memory once and are still in cache for the
            # gradient
            grad = partial[c]
            grad[:] = 0.0
            for t in range(start + c, stop, used):
                q = query_order[t]
                lo, hi = rows.offsets[q], rows.offsets[q + 1]
                if _CODED:
                    coded_scores(rows, lo, hi, work.table, scores, stride)
                elif _DENSE:
                    dense_scores(rows.dense, lo, hi, ws, scores)
                else:
                    csr_scores(rows.data, rows.indices, rows.indptr, lo, hi, ws, scores)
                losses[t] = query_lambdas_from(
                    scores[lo:hi], pairs.gains[lo:hi], pairs.labels[lo:hi], pairs.discount,
                    pairs.cutoff, pairs.inv_ideal[q], pairs.loss, pairs.unit_weights,
                    lam[lo:hi], work.rankings[lo:hi], pairs.levels[lo:hi], pairs.n_levels[q])
                if _CODED:
                    coded_add_histogram(rows, lo, hi, lam, factor, grad, stride)
                elif _DENSE:
                    dense_add_gradient(rows.dense, lo, hi, lam, factor, grad)
                else:
                    csr_add_gradient(rows.data, rows.indices, rows.indptr, lo, hi, lam, factor,
                                     grad)
            if _CODED:
                suffix_sums(grad, rows.bins, rows.slots)
        for t in range(start, stop):
            total += losses[t]
        step = take_step(w, partial, used, scale, steps, l1_state, step)
    return total, step


#: what the epoch's rows are, fixed per variant (:func:`variant`): an additive
#: model's bin codes (``_CODED``) or a linear model's dense or CSR rows
_CODED, _DENSE = False, True
epoch_serial, epoch_parallel = twins(_epoch)
csr_epoch_serial, csr_epoch_parallel = twins(variant(_epoch, "_csr", _DENSE=False))
coded_epoch_serial, coded_epoch_parallel = twins(variant(_epoch, "_coded", _CODED=True))


def epoch_kernels(rows):
    """``(serial, parallel)`` epoch builds for ``rows``: the linear epoch on
    dense or CSR rows, or the coded one for an additive model's bin codes
    (each compiles only its own branch)."""
    if rows.bins.shape[0] > 0:
        return coded_epoch_serial, coded_epoch_parallel
    if rows.indptr.shape[0] == 0:
        return epoch_serial, epoch_parallel
    return csr_epoch_serial, csr_epoch_parallel


#: The step record of a step of size 0: an epoch that only sums the gradient
GRADIENT_ONLY = Steps(0.0, 0.0, 0.0, 1, 0.0, False)


def objective(rows, pairs, scale, w, work, grad, epoch=None):
    """Summed loss over all queries at ``w`` and its gradient (into ``grad``,
    times ``scale`` per feature when it is not empty), with the swap weights
    of the ranking at ``w`` held fixed.

    It is one full-batch ``epoch`` at step size 0 on a copy of ``w`` (its
    gradient rows summed afterwards), not a kernel of its own: one kernel
    less to compile on a first run, and the gradient of the all-zero model
    (``l1_max``) is the very one the first epoch steps on. ``work`` must be
    fresh (no previous rankings)."""
    n_queries = rows.offsets.shape[0] - 1
    epoch = epoch_kernels(rows)[0] if epoch is None else epoch
    total, _ = epoch(rows, pairs, GRADIENT_ONLY, scale, np.arange(n_queries, dtype=np.int64),
                     max(n_queries, 1), np.array(w, dtype=np.float64), np.zeros(w.shape[0] + 1),
                     0, work)
    # each row holds its queries' mean gradient share (factor 1 / n_queries);
    # an additive model's rows are wider (its histogram slots)
    grad[:] = work.partial[:, :grad.shape[0]].sum(axis=0) * n_queries
    if scale.shape[0] > 0:
        grad *= scale
    return total


def cached(kernel):
    """Whether numba's on-disk cache holds ``kernel`` (a dispatcher) as this
    source defines it, or this process compiled it already; True when the
    cache cannot tell (numba found no directory it can use)."""
    from numba.core.caching import FunctionCache

    if kernel.signatures:
        return True
    code = kernel.py_func.__code__
    try:
        directory = Path(FunctionCache(kernel.py_func).cache_path)
    except RuntimeError:
        return True
    stem = f"{Path(code.co_filename).stem}.{kernel.py_func.__qualname__}-{code.co_firstlineno}"
    return any(directory.glob(f"{stem}.py*.nbi"))


def compiled_before():
    """Whether numba's on-disk cache already holds the epoch kernel; False
    means this process compiles the kernels (the first run after an install
    or an upgrade). True when it cannot tell."""
    return any(cached(kernel) for kernel in (epoch_serial, epoch_parallel, csr_epoch_serial,
                                             csr_epoch_parallel))
