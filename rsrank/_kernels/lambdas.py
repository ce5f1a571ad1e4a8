"""The lambdas (pair gradients) and pair loss of a query: by prefix sums
over its ranking, by a loop over its pairs, or from its preferences."""

import numpy as np

from .build import njit

from .memory import NOTHING_AHEAD, prefetch_part, prefetch_plan
from .ranking import (LOGISTIC, MODIFIED_HUBER, label_levels, label_range,
                      pair_loss_and_derivative, ranked_order, ranked_order_from, top_order)


#: A query of at most this many documents keeps the pair loop.
PREFIX_MIN_SIZE = 10


#: Pair-loop partners per label level that one prefix-sum pass costs
#: (``scripts/bench_crossover.py``, ``results/crossover.md``: at MSLR-WEB30K's
#: labels the prefix sums cost 60-80 ns a document from 12 documents on, the
#: pair loop about 60 plus 3 per partner).
PREFIX_COST_PER_LEVEL = 2


#: An index for the kernels' hot loops (see :func:`ranked_lambdas`).
_u = np.uint64


@njit(cache=True)
def query_levels(gains, labels, discount, loss, levels):
    """:func:`label_levels` where :func:`sorted_query_lambdas` gives the
    query's lambdas (see :func:`prefix_sums_apply`); 0, with ``levels``
    untouched, where it does not: :func:`all_query_levels` of one query."""
    n_levels = np.zeros(1, dtype=np.int64)
    all_query_levels(gains, labels, np.array([0, labels.shape[0]]), discount, loss, levels,
                     n_levels)
    return n_levels[0]


@njit(cache=True)
def all_query_levels(gains, labels, offsets, discount, loss, levels, n_levels):
    """:func:`query_levels` of every query, into ``levels`` (one per row) and
    ``n_levels`` (one per query): the same numbers in fewer passes, the
    discount (shared by the queries) checked once and one table reused by
    every query for its labels' smallest and largest gains and levels."""
    n_queries = offsets.shape[0] - 1
    # the discount is non-increasing over its first `steady` places
    steady = discount.shape[0]
    for p in range(1, discount.shape[0]):
        if discount[p] > discount[p - 1]:
            steady = p
            break
    if labels.shape[0] == 0 or loss == LOGISTIC:
        for q in range(n_queries):
            n_levels[q] = 0
        return
    low, high = label_range(labels)
    smallest = np.empty(high - low + 1)
    largest = np.empty(high - low + 1)
    slot = np.empty(high - low + 1, dtype=np.int64)
    for q in range(n_queries):
        lo, hi = offsets[q], offsets[q + 1]
        n_levels[q] = 0
        if hi == lo or min(hi - lo, discount.shape[0]) > steady:
            continue
        first, last = label_range(labels[lo:hi])
        for v in range(first - low, last - low + 1):
            smallest[v], largest[v] = np.inf, -np.inf
        for r in range(lo, hi):
            v = labels[r] - low
            smallest[v] = min(smallest[v], gains[r])
            largest[v] = max(largest[v], gains[r])
        # gains non-decreasing in the label; the labels present numbered 0, 1, ...
        previous, count = -np.inf, 0
        for v in range(first - low, last - low + 1):
            slot[v] = count
            if smallest[v] == np.inf:
                continue  # no document with this label
            if smallest[v] < previous:
                count = 0
                break
            previous = largest[v]
            count += 1
        if count == 0:
            continue
        for r in range(lo, hi):
            levels[r] = slot[labels[r] - low]
        n_levels[q] = count


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
                           cutoff, inv_ideal, loss, unit_weights, lam, NOTHING_AHEAD)


@njit(cache=True, inline="always")
def _level_terms(E, P, C, F, sp, dp, sigma, huber, unit_weights):
    """One label level's share of a document's step and loss in
    :func:`ranked_lambdas`, before the pair weight: ``end``, ``P``, ``Be``
    and ``Bf`` are the level's rows of running sums at its end and at the
    places p, e and f."""
    # sums of u s^k over the partners below (b), at least 1 below (c),
    # above (a) and at least 1 above (f), with u = d_p - d_partner, or
    # u = 1 below and -1 above with unit weights
    if unit_weights:
        b0, b1, b2 = E[0] - P[0], E[1] - P[1], E[2] - P[2]
        c0, c1, c2 = E[0] - C[0], E[1] - C[1], E[2] - C[2]
        a0, a1 = -P[0], -P[1]
        f0, f1 = -F[0], -F[1]
    else:
        b0 = dp * (E[0] - P[0]) - (E[3] - P[3])
        b1 = dp * (E[1] - P[1]) - (E[4] - P[4])
        b2 = dp * (E[2] - P[2]) - (E[5] - P[5])
        c0 = dp * (E[0] - C[0]) - (E[3] - C[3])
        c1 = dp * (E[1] - C[1]) - (E[4] - C[4])
        c2 = dp * (E[2] - C[2]) - (E[5] - C[5])
        a0, a1 = dp * P[0] - P[3], dp * P[1] - P[4]
        f0, f1 = dp * F[0] - F[3], dp * F[1] - F[4]
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


@njit(cache=True, inline="always")
def _side_terms(S, ends, end, weight, own, at_p, at_e, at_f, lo, hi, sp, dp, sigma, huber,
                unit_weights):
    """The share of a document's step and loss of its partners on the
    levels ``lo`` to ``hi - 1``, all on one side of its own (``sigma``), in
    :func:`ranked_lambdas`: :func:`_level_terms` of their rows of running
    sums summed with the pair weights ``weight`` (it is linear in them),
    ``ends[end]`` their weighted sum at the levels' ends."""
    if lo == hi:
        return 0.0, 0.0
    p0 = p1 = p2 = p3 = p4 = p5 = 0.0
    e0 = e1 = e2 = e3 = e4 = e5 = 0.0
    f0 = f1 = f3 = f4 = 0.0
    for q in range(lo, hi):
        w = weight[own, q]
        P, Be, Bf = _u(at_p[q]), _u(at_e[q]), _u(at_f[q])
        p0 += w * S[P, 0]
        p1 += w * S[P, 1]
        p2 += w * S[P, 2]
        p3 += w * S[P, 3]
        p4 += w * S[P, 4]
        p5 += w * S[P, 5]
        e0 += w * S[Be, 0]
        e1 += w * S[Be, 1]
        e2 += w * S[Be, 2]
        e3 += w * S[Be, 3]
        e4 += w * S[Be, 4]
        e5 += w * S[Be, 5]
        f0 += w * S[Bf, 0]
        f1 += w * S[Bf, 1]
        f3 += w * S[Bf, 3]
        f4 += w * S[Bf, 4]
    E = (ends[end, 0], ends[end, 1], ends[end, 2], ends[end, 3], ends[end, 4], ends[end, 5])
    return _level_terms(E, (p0, p1, p2, p3, p4, p5), (e0, e1, e2, e3, e4, e5),
                        (f0, f1, 0.0, f3, f4, 0.0), sp, dp, sigma, huber, unit_weights)


@njit(cache=True, fastmath={"contract"})
def ranked_lambdas(order, scores, gains, levels, n_levels, discount, cutoff, inv_ideal, loss,
                    unit_weights, lam, ahead):
    """:func:`sorted_query_lambdas` given the ranking ``order`` and each
    row's label level (:func:`label_levels`), prefetching ``ahead`` (see
    :func:`query_lambdas_from`).

    Indices read from arrays are cast to ``uint64`` (``_u``) before they
    index: numba then leaves out the test for a negative index that it adds
    to every signed one, which took a fifth of this kernel's time. Products
    added to sums may fuse into one rounding ("contract": 11% of its time);
    no other arithmetic changes, and the boundary tests have no product."""
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
        last[_u(levels[r])] += 1
    row = 0
    for q in range(L):
        first[q] = row
        row += last[q] + 1
        last[q] = first[q]
    # per level, over its documents in rank order: running sums of the
    # monomials 1, s, s^2, d, d s, d s^2 (row first[q] + k: its first k)
    # (one buffer for this and the floats below: short queries pay more for
    # allocations than for their sums)
    floats = np.empty((n + L) * 6 + (n + 1) + L + L * L + 2 * L * 6)
    S = floats[:(n + L) * 6].reshape((n + L, 6))
    at = (n + L) * 6
    s = floats[at:at + n + 1]
    level_gain = floats[at + n + 1:at + n + 1 + L]
    weight = floats[at + n + 1 + L:at + n + 1 + L + L * L].reshape((L, L))
    ends = floats[at + n + 1 + L + L * L:].reshape((2 * L, 6))
    level_gain[:] = 0.0
    for q in range(L):
        S[first[q], :] = 0.0
    for p in range(n):
        r = _u(order[p])
        q = _u(levels[r])
        level[p] = q
        level_gain[q] = gains[r]
        sp = scores[r]
        s[p] = sp
        dp = 0.0 if unit_weights or p >= cutoff else discount[p]
        k = _u(last[q])
        S[k + 1, 0] = S[k, 0] + 1.0
        S[k + 1, 1] = S[k, 1] + sp
        S[k + 1, 2] = S[k, 2] + sp * sp
        S[k + 1, 3] = S[k, 3] + dp
        S[k + 1, 4] = S[k, 4] + dp * sp
        S[k + 1, 5] = S[k, 5] + dp * sp * sp
        last[q] = k + 1
    plan = prefetch_plan(ahead, n)
    s[n] = -np.inf  # stops the pointer e at the end without a bounds test
    for q in range(L):
        at_p[q] = at_e[q] = at_f[q] = first[q]
    huber = loss == MODIFIED_HUBER
    # _level_terms is linear in the rows of running sums it reads, so the
    # levels on one side of a document (below its own: sigma = +1, above:
    # -1) enter as one sum of their rows weighted by the pairs' weights
    # (_side_terms). The sums at the levels' ends depend on the document's
    # level alone: ends[lp] below it, ends[L + lp] above
    for a in range(L):
        for q in range(L):
            weight[a, q] = (inv_ideal if unit_weights
                            else inv_ideal * abs(level_gain[a] - level_gain[q]))
    ends[:, :] = 0.0
    for a in range(L):
        for q in range(L):
            side = a if q < a else L + a
            if q != a:
                for k in range(6):
                    ends[side, k] += weight[a, q] * S[last[q], k]
    total = 0.0
    one = _u(1)
    e = _u(0)  # first place below p with s_p - s_e >= 1
    f = _u(0)  # first place above p with s_f - s_p < 1
    for p in range(n):
        prefetch_part(plan, p)
        sp, lp = s[p], _u(level[p])
        dp = 0.0 if unit_weights or p >= cutoff else discount[p]
        if p > 0:
            at_p[_u(level[p - 1])] += 1
        # the pointers move about one place per document: two steps without
        # a branch, then a loop for the rest
        for _ in range(2):
            move = _u(sp - s[e] < 1.0)
            at_e[_u(level[e])] += move
            e += move
            move = _u(s[f] - sp >= 1.0)
            at_f[_u(level[f])] += move
            f += move
        while e < _u(n) and sp - s[e] < 1.0:
            at_e[_u(level[e])] += 1
            e += one
        while s[f] - sp >= 1.0:
            at_f[_u(level[f])] += 1
            f += one
        step, value = _side_terms(S, ends, lp, weight, lp, at_p, at_e, at_f, _u(0), lp, sp, dp,
                                  1.0, huber, unit_weights)
        acc, total = step, total + value
        step, value = _side_terms(S, ends, _u(L) + lp, weight, lp, at_p, at_e, at_f, lp + one,
                                  _u(L), sp, dp, -1.0, huber, unit_weights)
        acc += step
        total += value
        lam[_u(order[p])] = acc
    return total


@njit(cache=True)
def prefix_sums_apply(gains, labels, discount, n, loss):
    """Whether :func:`sorted_query_lambdas` gives the lambdas of this query
    (its first ``n`` rows): a loss it handles, gains non-decreasing in the
    label, a non-increasing discount (:func:`all_query_levels` decides)."""
    return query_levels(gains[:n], labels[:n], discount, loss, np.empty(n, dtype=np.int64)) > 0


_NO_RANKING = np.empty(0, dtype=np.int64)


def query_lambdas(scores, gains, labels, discount, cutoff, inv_ideal, loss, unit_weights, lam):
    """:func:`query_lambdas_from` without a previous ranking or levels (not a
    kernel of its own: one less to compile on the first run)."""
    return query_lambdas_from(scores, gains, labels, discount, cutoff, inv_ideal, loss,
                              unit_weights, lam, _NO_RANKING, _NO_RANKING, -1, NOTHING_AHEAD)


@njit(cache=True)
def query_lambdas_from(scores, gains, labels, discount, cutoff, inv_ideal, loss, unit_weights,
                       lam, hint, levels, n_levels, ahead):
    """Pair loss of one query and its derivative per document.

    Every pair with ``labels[i] > labels[j]`` costs
    ``W_ij * pair_loss(scores[i] - scores[j])`` with ``W_ij`` the swap weight
    in the current ranking (or 1 with ``unit_weights``). ``lam[i]`` receives
    ``sum_j dL/ds_i``. The work goes to whichever of two algorithms is
    cheaper for the query: the pair loop over the top ``cutoff`` places
    (O(n * cutoff), :func:`pair_loop_lambdas`) or prefix sums over the whole
    ranking (O(n log n + n L), :func:`sorted_query_lambdas`; modified Huber
    and hinge losses only). Both give the same result to rounding.

    ``ahead`` is a span of memory ``(address, bytes)`` that the caller
    reads next (the next query's rows), which the loop over the documents
    prefetches a share at a time (:func:`~rsrank._kernels.memory.prefetch_plan`):
    it arrives while the lambdas compute. ``NOTHING_AHEAD``: none.

    ``levels`` and ``n_levels`` are the query's :func:`query_levels`, which
    do not change from epoch to epoch (``n_levels = -1``: not computed yet;
    they are then computed here). The prefix sums rank the query starting
    from ``hint``, its previous ranking (see :func:`ranked_order_from`),
    when ``hint`` has one place per document; it is updated.

    Returns the query's loss; ``lam`` is overwritten.
    """
    n = scores.shape[0]
    if n < 2 or inv_ideal == 0.0:
        for r in range(n):
            lam[r] = 0.0
        return 0.0
    # both algorithms write every lam[r]
    top = n if unit_weights else min(n, cutoff)
    if n > PREFIX_MIN_SIZE and loss != LOGISTIC:
        if n_levels < 0:
            levels = np.empty(n, dtype=np.int64)
            n_levels = query_levels(gains, labels, discount, loss, levels)
        # per document, the pair loop costs about its top partners, the prefix
        # sums a pass per label level (and a ranking that the last one speeds)
        if n_levels > 0 and top > PREFIX_COST_PER_LEVEL * n_levels:
            order = (ranked_order_from(scores, hint) if hint.shape[0] == n
                     else ranked_order(scores))
            return ranked_lambdas(order, scores, gains, levels, n_levels, discount, cutoff,
                                   inv_ideal, loss, unit_weights, lam, ahead)
    return pair_loop_lambdas(scores, gains, labels, discount, cutoff, inv_ideal, loss,
                             unit_weights, lam, hint, ahead)


@njit(cache=True)
def pair_loop_lambdas(scores, gains, labels, discount, cutoff, inv_ideal, loss, unit_weights,
                      lam, hint, ahead):
    """:func:`query_lambdas` by a loop over the pairs. Pairs with both
    documents at or beyond ``cutoff`` have weight 0 and are skipped, so the
    work is O(n * cutoff). A whole ranking starts from ``hint``, the
    query's previous one, when it has one place per document (see
    :func:`ranked_order_from`; it is updated). ``ahead`` as in
    :func:`query_lambdas_from`."""
    n = scores.shape[0]
    for r in range(n):
        lam[r] = 0.0
    if n < 2 or inv_ideal == 0.0:
        return 0.0
    top = n if unit_weights else min(n, cutoff)
    # beyond the cut-off every position has discount 0: only the top needs ranking
    if top < n:
        order = top_order(scores, top)
    elif hint.shape[0] == n:
        order = ranked_order_from(scores, hint)
    else:
        order = ranked_order(scores)
    # the query in rank order, so the pair loops read memory sequentially
    # (scores, gains and the lambdas' sums in one buffer: short queries pay
    # more for allocations than for their pairs)
    work = np.zeros(3 * n)
    s, g, acc = work[:n], work[n:2 * n], work[2 * n:]
    y = np.empty(n, dtype=labels.dtype)
    for p in range(n):
        r = _u(order[p])
        s[p] = scores[r]
        g[p] = gains[r]
        y[p] = labels[r]
    total = 0.0
    plan = prefetch_plan(ahead, top)
    for a in range(top):
        prefetch_part(plan, a)
        s_a, g_a, y_a, d_a = s[a], g[a], y[a], discount[a]
        acc_a = 0.0
        for b in range(a + 1, n):
            y_b = y[b]
            if y_a == y_b:
                continue
            if unit_weights:
                weight = inv_ideal
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
        lam[_u(order[p])] = acc[p]
    return total


@njit(cache=True)
def preference_lambdas(scores, better, worse, weight, discount, cutoff, factor, loss,
                       unit_weights, lam, hint, ahead):
    """Pair loss of one query given as preferences, and its derivative per
    document: pair ``k`` prefers row ``better[k]`` to row ``worse[k]`` (the
    query's own rows) and costs ``factor * weight[k] * W * pair_loss(s_b -
    s_w)``, ``W`` 1 with ``unit_weights``, else ``|d_b - d_w|`` at the two
    documents' places in the current ranking (the |Delta NDCG| of the swap
    when the preferred document is the only relevant one, up to
    ``factor``). ``hint`` is the query's previous ranking as in
    :func:`query_lambdas_from` (updated), and so is ``ahead``. Returns the
    query's loss; ``lam`` is overwritten."""
    n = scores.shape[0]
    for r in range(n):
        lam[r] = 0.0
    if n < 2 or factor == 0.0:
        return 0.0
    place = np.empty(0, dtype=np.int64)
    if not unit_weights:
        order = (ranked_order_from(scores, hint) if hint.shape[0] == n
                 else ranked_order(scores))
        place = np.empty(n, dtype=np.int64)
        for p in range(n):
            place[_u(order[p])] = p
    total = 0.0
    plan = prefetch_plan(ahead, better.shape[0])
    for k in range(better.shape[0]):
        prefetch_part(plan, k)
        a, b = _u(better[k]), _u(worse[k])
        w = factor * weight[k]
        if not unit_weights:
            pa, pb = _u(place[a]), _u(place[b])
            w *= abs((discount[pa] if pa < cutoff else 0.0)
                     - (discount[pb] if pb < cutoff else 0.0))
        if w == 0.0:
            continue
        value, derivative = pair_loss_and_derivative(scores[a] - scores[b], loss)
        total += w * value
        step = w * derivative
        lam[a] += step
        lam[b] -= step
    return total
