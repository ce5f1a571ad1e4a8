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
batch are dealt to one gradient row per thread (a ``prange``), so threads
write disjoint rows of ``scores``, ``lam`` and the gradient, and the rows are
added up after the loop.
"""

import types

import numpy as np
from numba import njit, prange

def twins(function):
    """``(serial, parallel)`` builds of one kernel, both cached on disk.

    numba's cache indexes a kernel by its qualified name, line and argument
    types, not by ``parallel=True``: two builds of one Python function share
    cache entries, and whichever compiled first is loaded for both. The
    parallel build is therefore made from a copy of the function with its
    own name."""
    copy = types.FunctionType(function.__code__, function.__globals__,
                              function.__name__ + "_parallel", function.__defaults__,
                              function.__closure__)
    copy.__qualname__ = function.__qualname__ + "_parallel"
    return njit(cache=True)(function), njit(cache=True, parallel=True)(copy)


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


@njit(cache=True)
def ranked_order(scores):
    """Positions by decreasing score; equal scores keep their row order."""
    return np.argsort(-scores, kind="mergesort")


@njit(cache=True)
def ranked_order_from(scores, hint):
    """:func:`ranked_order`, starting from ``hint``, the ranking of the
    query's previous scores (or ``-1`` everywhere: none yet), which it
    overwrites with the new one and returns.

    Between two epochs a query's scores move little, so its last ranking is
    nearly sorted: an insertion sort finishes in O(n + inversions). Past
    ``4 n`` moves, or on a NaN, it hands over to the merge sort. Either way
    the result is the one order by decreasing score, ties by row, that
    :func:`ranked_order` gives."""
    n = scores.shape[0]
    usable = n > 0 and hint[0] >= 0
    for i in range(n):
        if scores[i] != scores[i]:
            usable = False
    if usable:
        budget = 4 * n
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
def _partner_sums(H, B, level, d, upper, unit, g0, g1, l0, l1, l2):
    """Sums over the partners of a document on ``level`` between two places
    of the ranking, from the running sums ``H`` (up to the far place) and
    ``B`` (up to the near one) of the monomials 1, s, s^2, d, d s, d s^2 per
    level: of ``(d_a - d_b) (g0 + g1 s)`` for the derivative and of
    ``(d_a - d_b) (l0 + l1 s + l2 s^2)`` for the loss, ``s`` the partner's
    score and ``d`` the document's own discount (the upper one, ``d_a``,
    when ``upper``). With ``unit`` weights the polynomials alone."""
    n = H[level, 0] - B[level, 0]
    s1 = H[level, 1] - B[level, 1]
    s2 = H[level, 2] - B[level, 2] if l2 != 0.0 else 0.0
    derivative = g0 * n + g1 * s1
    value = l0 * n + l1 * s1 + l2 * s2
    if unit:
        return derivative, value
    d0 = H[level, 3] - B[level, 3]
    d1 = H[level, 4] - B[level, 4]
    d2 = H[level, 5] - B[level, 5] if l2 != 0.0 else 0.0
    derivative_d = g0 * d0 + g1 * d1
    value_d = l0 * d0 + l1 * d1 + l2 * d2
    if upper:
        return d * derivative - derivative_d, d * value - value_d
    return derivative_d - d * derivative, value_d - d * value


@njit(cache=True)
def _add_monomials(A, q, s, d):
    A[q, 0] += 1.0
    A[q, 1] += s
    A[q, 2] += s * s
    A[q, 3] += d
    A[q, 4] += d * s
    A[q, 5] += d * s * s


@njit(cache=True)
def sorted_query_lambdas(scores, gains, labels, discount, cutoff, inv_ideal, loss, unit_weights,
                         lam):
    """:func:`query_lambdas` for the modified Huber and hinge losses in
    O(n log n + n L) instead of O(n * cutoff), L the number of labels.

    In rank order a pair (a above b) with labels on two levels steps by
    ``Z (g_a - g_b)(d_a - d_b) phi'(sigma (s_a - s_b))``, sigma the sign of
    ``y_a - y_b``; both losses are polynomials in the score difference on
    score windows (|s_a - s_b| below 1, at most 1, or beyond), and those
    windows are contiguous in rank order. So each document's sum over its
    partners of one level is a difference of running sums of 1, s, s^2, d,
    d s, d s^2 over that level, kept at the few places that bound the
    windows; those places only move down the ranking as the document does,
    so every running sum passes each place once. The window tests are the
    pair loop's own (a difference against 1), so pairs fall on the same
    side of every boundary.

    Requires gains non-decreasing in the label and a non-increasing
    discount (the caller checks); returns the query's loss.
    """
    return _sorted_lambdas(ranked_order(scores), scores, gains, labels, discount, cutoff,
                           inv_ideal, loss, unit_weights, lam)


@njit(cache=True)
def _sorted_lambdas(order, scores, gains, labels, discount, cutoff, inv_ideal, loss,
                    unit_weights, lam):
    """:func:`sorted_query_lambdas` given the ranking ``order``."""
    n = scores.shape[0]
    s = scores[order]
    y = labels[order]
    g = gains[order]
    d = np.zeros(n)
    if not unit_weights:
        for p in range(min(n, cutoff)):
            d[p] = discount[p]
    # label levels, numbered in increasing label order (labels are small
    # non-negative integers: a table instead of a second sort)
    low, high = y.min(), y.max()
    slot = np.full(high - low + 1, -1, dtype=np.int64)
    for p in range(n):
        slot[y[p] - low] = 0
    L = 0
    for v in range(high - low + 1):
        if slot[v] == 0:
            slot[v] = L
            L += 1
    level = np.empty(n, dtype=np.int64)
    level_gain = np.zeros(L)
    for p in range(n):
        level[p] = slot[y[p] - low]
        level_gain[level[p]] = g[p]
    # running sums per level of the monomials over the places before each
    # boundary: the document itself (its own level is never a partner's, so
    # before p and before p + 1 agree on the others), e1, e2, f1, f2, and
    # the whole query
    before_p, before_e1, before_e2 = np.zeros((L, 6)), np.zeros((L, 6)), np.zeros((L, 6))
    before_f1, before_f2, everything = np.zeros((L, 6)), np.zeros((L, 6)), np.zeros((L, 6))
    for p in range(n):
        _add_monomials(everything, level[p], s[p], d[p])
    nothing = np.zeros((L, 6))
    huber = loss == MODIFIED_HUBER
    acc = np.zeros(n)
    total = 0.0
    e1 = 0  # first position below a with s_a - s_b >= 1
    e2 = 0  # first position below a with s_a - s_b > 1
    f1 = 0  # first position above b with s_a - s_b < 1
    f2 = 0  # first position above b with s_a - s_b <= 1
    for p in range(n):
        sp, dp, lp = s[p], d[p], level[p]
        if p > 0:
            _add_monomials(before_p, level[p - 1], s[p - 1], d[p - 1])
        while e1 < p + 1 or (e1 < n and sp - s[e1] < 1.0):
            _add_monomials(before_e1, level[e1], s[e1], d[e1])
            e1 += 1
        while e2 < e1 or (e2 < n and sp - s[e2] <= 1.0):
            _add_monomials(before_e2, level[e2], s[e2], d[e2])
            e2 += 1
        while f1 < p and s[f1] - sp >= 1.0:
            _add_monomials(before_f1, level[f1], s[f1], d[f1])
            f1 += 1
        while f2 < p and s[f2] - sp > 1.0:
            _add_monomials(before_f2, level[f2], s[f2], d[f2])
            f2 += 1
        for q in range(L):
            if q == lp:
                continue
            # the pairs of p with level q; weight Z |g_p - g_q| (or 1), and
            # sign +1 where p has the higher label
            if unit_weights:
                weight = 1.0
            else:
                weight = inv_ideal * abs(level_gain[lp] - level_gain[q])
            sign = 1.0 if lp > q else -1.0
            # partners below p: p is the upper document a, delta = sp - s_b
            if lp > q:  # correctly ordered: only margins below 1 count
                c = 1.0 - sp
                if huber:
                    step, value = _partner_sums(before_e1, before_p, q, dp, True, unit_weights,
                                                -2.0 * c, -2.0, c * c, 2.0 * c, 1.0)
                else:
                    step, value = _partner_sums(before_e1, before_p, q, dp, True, unit_weights,
                                                -1.0, 0.0, c, 1.0, 0.0)
            else:  # misordered: every partner below counts
                c = 1.0 + sp
                if huber:
                    step, value = _partner_sums(before_e2, before_p, q, dp, True, unit_weights,
                                                -2.0 * c, 2.0, c * c, -2.0 * c, 1.0)
                    far_step, far_value = _partner_sums(everything, before_e2, q, dp, True,
                                                        unit_weights, -4.0, 0.0, 4.0 * sp, -4.0,
                                                        0.0)
                    step += far_step
                    value += far_value
                else:
                    step, value = _partner_sums(everything, before_p, q, dp, True, unit_weights,
                                                -1.0, 0.0, c, -1.0, 0.0)
            acc[p] += sign * weight * step
            total += weight * value
            # partners above p: p is the lower document b, delta = s_a - sp;
            # their own loops counted these pairs' loss
            if q > lp:  # correctly ordered
                if huber:
                    step, _ = _partner_sums(before_p, before_f1, q, dp, False, unit_weights,
                                            -2.0 * (1.0 + sp), 2.0, 0.0, 0.0, 0.0)
                else:
                    step, _ = _partner_sums(before_p, before_f1, q, dp, False, unit_weights,
                                            -1.0, 0.0, 0.0, 0.0, 0.0)
            else:  # misordered
                if huber:
                    step, _ = _partner_sums(before_p, before_f2, q, dp, False, unit_weights,
                                            -2.0 * (1.0 - sp), -2.0, 0.0, 0.0, 0.0)
                    far_step, _ = _partner_sums(before_f2, nothing, q, dp, False, unit_weights,
                                                -4.0, 0.0, 0.0, 0.0, 0.0)
                    step += far_step
                else:
                    step, _ = _partner_sums(before_p, nothing, q, dp, False, unit_weights,
                                            -1.0, 0.0, 0.0, 0.0, 0.0)
            acc[p] += sign * weight * step
    for p in range(n):
        lam[order[p]] = acc[p]
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


@njit(cache=True)
def query_lambdas(scores, gains, labels, discount, cutoff, inv_ideal, loss, unit_weights, lam):
    """:func:`query_lambdas_from` without a previous ranking."""
    return query_lambdas_from(scores, gains, labels, discount, cutoff, inv_ideal, loss,
                              unit_weights, lam, np.empty(0, dtype=np.int64))


@njit(cache=True)
def query_lambdas_from(scores, gains, labels, discount, cutoff, inv_ideal, loss, unit_weights,
                       lam, hint):
    """Pair loss of one query and its derivative per document.

    Every pair with ``labels[i] > labels[j]`` costs
    ``W_ij * pair_loss(scores[i] - scores[j])`` with ``W_ij`` the swap weight
    in the current ranking (or 1 with ``unit_weights``). ``lam[i]`` receives
    ``sum_j dL/ds_i``. The work goes to whichever of two algorithms is
    cheaper for the query: the pair loop over the top ``cutoff`` places
    (O(n * cutoff), :func:`pair_loop_lambdas`) or prefix sums over the whole
    ranking (O(n log n + n L), :func:`sorted_query_lambdas`; modified Huber
    and hinge losses only). Both give the same result to rounding. The
    prefix sums rank the query starting from ``hint``, its previous ranking
    (see :func:`ranked_order_from`), when ``hint`` has one place per
    document; it is updated.

    Returns the query's loss; ``lam`` is overwritten.
    """
    n = scores.shape[0]
    for r in range(n):
        lam[r] = 0.0
    if n < 2 or (inv_ideal == 0.0 and not unit_weights):
        return 0.0
    top = n if unit_weights else min(n, cutoff)
    if top > PREFIX_MIN_TOP and loss != LOGISTIC:
        low = labels.min()
        present = np.zeros(labels.max() - low + 1, dtype=np.bool_)
        for r in range(n):
            present[labels[r] - low] = True
        n_levels = present.sum()
        # the pair loop costs about top * n, the prefix sums n log n + n L
        if top > PREFIX_COST_PER_LEVEL * n_levels + np.log2(n) and \
                prefix_sums_apply(gains, labels, discount, n, loss):
            order = (ranked_order_from(scores, hint) if hint.shape[0] == n
                     else ranked_order(scores))
            return _sorted_lambdas(order, scores, gains, labels, discount, cutoff, inv_ideal,
                                   loss, unit_weights, lam)
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
    s = scores[order]
    g = gains[order]
    y = labels[order]
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


@njit(cache=True)
def ideal_dcg(gains, offsets, discount):
    """Ideal DCG of every query at the cut-off encoded in ``discount``."""
    n_queries = offsets.shape[0] - 1
    out = np.zeros(n_queries)
    for q in range(n_queries):
        lo, hi = offsets[q], offsets[q + 1]
        ranked = np.sort(gains[lo:hi])[::-1]
        total = 0.0
        for p in range(min(hi - lo, discount.shape[0])):
            total += ranked[p] * discount[p]
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
def truncate(w, alpha, theta):
    """Truncated-gradient shrinkage T1 (Langford, Li and Zhang 2009), in place.

    Each coordinate with ``|w_j| <= theta`` moves toward 0 by ``alpha``
    without crossing it; larger coordinates are left alone. Returns the
    number of non-zero weights afterwards.
    """
    nonzero = 0
    for j in range(w.shape[0]):
        value = w[j]
        if value > 0.0 and value <= theta:
            value = max(0.0, value - alpha)
        elif value < 0.0 and -value <= theta:
            value = min(0.0, value + alpha)
        w[j] = value
        if value != 0.0:
            nonzero += 1
    return nonzero


@njit(cache=True)
def cumulative_penalty(w, state):
    """Cumulative L1 penalty (Tsuruoka, Tsujii and Ananiadou 2009), in place.

    ``state[-1]`` is ``u``, the total L1 penalty each weight could have
    received so far (the sum of ``learning_rate * l1`` over the steps);
    ``state[j]`` is what weight ``j`` actually received (negative for a
    weight shrunk from above). Each weight moves toward 0 by what it is
    still owed, ``u + state[j]`` from above or ``u - state[j]`` from below,
    without crossing it. Weights that a noisy step pushes off zero pay the
    penalty they missed, so stochastic steps still end at exact zeros.
    Returns the number of non-zero weights afterwards.
    """
    u = state[state.shape[0] - 1]
    nonzero = 0
    for j in range(w.shape[0]):
        value = w[j]
        if value > 0.0:
            value = max(0.0, value - (u + state[j]))
        elif value < 0.0:
            value = min(0.0, value + (u - state[j]))
        state[j] += value - w[j]
        w[j] = value
        if value != 0.0:
            nonzero += 1
    return nonzero


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


def _epoch(data, indices, indptr, X, gains, labels, offsets, inv_ideal, discount, cutoff,
           loss, unit_weights, query_order, batch_size, w, learning_rate, l1, period, theta,
           cumulative, l1_state, step, scores, lam, partial, rankings):
    """One pass over ``query_order`` in batches; updates ``w`` in place.

    Each step averages the gradient over the batch's queries, takes
    ``w -= learning_rate * grad`` and, every ``period`` steps (counted by the
    global ``step``), applies :func:`truncate` with
    ``alpha = learning_rate * period * l1``, or with ``cumulative`` the
    :func:`cumulative_penalty` of the ``l1_state`` (which every step adds
    ``learning_rate * l1`` to). ``X`` is used when ``indptr`` is
    empty (dense input), otherwise the CSR triplet. ``partial`` has one row
    per gradient accumulator: the queries of a batch are dealt to its rows
    (one row per thread in the parallel build), then the rows are added up.
    ``rankings`` holds each query's last ranking for the next epoch (see
    :func:`ranked_order_from`; ``-1`` where there is none yet).

    Returns ``(summed query loss, new step count)``.
    """
    dense = indptr.shape[0] == 0
    n_batch_queries = query_order.shape[0]
    n_features = w.shape[0]
    total = 0.0
    losses = np.zeros(n_batch_queries)
    for start in range(0, n_batch_queries, batch_size):
        stop = min(start + batch_size, n_batch_queries)
        scale = 1.0 / (stop - start)
        rows = min(partial.shape[0], stop - start)
        for c in prange(rows):
            # scores, lambdas and gradient of one query back to back: its rows
            # of X are read from memory once and are still in cache for the
            # gradient
            grad = partial[c]
            grad[:] = 0.0
            for t in range(start + c, stop, rows):
                q = query_order[t]
                lo, hi = offsets[q], offsets[q + 1]
                if dense:
                    dense_scores(X, lo, hi, w, scores)
                else:
                    csr_scores(data, indices, indptr, lo, hi, w, scores)
                losses[t] = query_lambdas_from(scores[lo:hi], gains[lo:hi], labels[lo:hi],
                                               discount, cutoff, inv_ideal[q], loss,
                                               unit_weights, lam[lo:hi], rankings[lo:hi])
                if dense:
                    dense_add_gradient(X, lo, hi, lam, scale, grad)
                else:
                    csr_add_gradient(data, indices, indptr, lo, hi, lam, scale, grad)
        for t in range(start, stop):
            total += losses[t]
        for j in range(n_features):
            g = 0.0
            for c in range(rows):
                g += partial[c, j]
            w[j] -= learning_rate * g
        step += 1
        if l1 > 0.0:
            if cumulative:
                l1_state[n_features] += learning_rate * l1
                if step % period == 0:
                    cumulative_penalty(w, l1_state)
            elif step % period == 0:
                truncate(w, learning_rate * period * l1, theta)
    return total, step


epoch_serial, epoch_parallel = twins(_epoch)


def _objective(data, indices, indptr, X, gains, labels, offsets, inv_ideal, discount, cutoff,
               loss, unit_weights, w, scores, lam, grad):
    """Summed loss over all queries at ``w`` and its gradient (into ``grad``),
    with the swap weights of the ranking at ``w`` held fixed."""
    dense = indptr.shape[0] == 0
    n_queries = offsets.shape[0] - 1
    losses = np.zeros(n_queries)
    for q in prange(n_queries):
        lo, hi = offsets[q], offsets[q + 1]
        if dense:
            dense_scores(X, lo, hi, w, scores)
        else:
            csr_scores(data, indices, indptr, lo, hi, w, scores)
        losses[q] = query_lambdas(scores[lo:hi], gains[lo:hi], labels[lo:hi], discount, cutoff,
                                  inv_ideal[q], loss, unit_weights, lam[lo:hi])
    grad[:] = 0.0
    for q in range(n_queries):
        if dense:
            dense_add_gradient(X, offsets[q], offsets[q + 1], lam, 1.0, grad)
        else:
            csr_add_gradient(data, indices, indptr, offsets[q], offsets[q + 1], lam, 1.0, grad)
    return losses.sum()


objective_serial, objective_parallel = twins(_objective)
