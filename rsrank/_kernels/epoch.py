"""One training epoch (and the objective) over the queries: batches of
lambdas, steps and penalties."""

import numpy as np
from collections import namedtuple
from numba import prange

from .build import cached, njit, twins, variant
from .penalty import clip_signs, cumulative_penalty, group_shrink, monotone_pairs, truncate
from .lambdas import preference_lambdas, query_lambdas_from
from .memory import NOTHING_AHEAD, items_span, rows_span
from .scores import (coded_add_histogram, coded_scores, csr_add_gradient, csr_scores,
                     dense_add_gradient, dense_scores, step_table, suffix_sums, uniform_stride)


# -- one epoch -----------------------------------------------------------------
#
# An epoch's arguments travel in four small records (named tuples, which numba
# compiles and caches like any tuple):
#
# * ``Rows``: the rows in query order: the CSR triplet, or empty CSR arrays and
#   a C-ordered dense X, and the query ``offsets``; for an additive model
#   also their bin codes and each feature's steps (``bins``, see
#   :func:`coded_scores`), empty otherwise; dense codes of fewer columns
#   than ``slots`` (some coded columns alone, or none: :func:`moving_rows`)
#   give the slots of those they hold in ``column_slots``;
# * ``Pairs``: what the pair losses need per row and per query: ``gains``,
#   ``labels``, ``inv_ideal``, the ``discount`` table and ``cutoff``, the
#   ``loss`` code, ``unit_weights``, and the label ``levels``/``n_levels``
#   (:func:`all_query_levels`); for queries given as preferences instead of
#   labels, ``preference_offsets`` (one more than the queries; empty: labels)
#   and per preference the ``better`` and ``worse`` row within its query and
#   its ``preference_weights`` (:func:`preference_lambdas`);
# * ``Steps``: the step schedule and the penalties: ``learning_rate``,
#   ``power_t``, ``l1``, ``period``, ``theta`` and ``cumulative``; the group
#   penalty's strength ``group`` on the weight ranges ``groups`` (offsets,
#   empty: none), each times its ``group_factors``; ``weight_factors``, one
#   per weight (empty: 1), multiply the L1 (feature costs); the monotone
#   constraints: ``signs``, one per weight (1: at least 0, -1: at most 0,
#   0: free; empty: none) and ``monotone_blocks``, a row per constrained pair
#   (:func:`monotone_pairs`);
# * ``Work``: per-fit scratch: ``scores`` and ``lam`` (one per row),
#   ``partial`` (the gradient rows, :data:`rsrank.learning.objective.GRADIENT_ROWS`),
#   ``rankings`` (each query's last ranking, -1 where none yet),
#   ``w_scaled`` (one per weight), ``table`` (an additive model's
#   contributions per code, :func:`step_table`; empty otherwise) and
#   ``threads``, how many share the gradient rows in the parallel build.
#
# A global feature scaling enters as ``scale``, one factor per feature (empty:
# none): the model scores ``X @ (scale * w)`` and its gradient is
# ``scale * (X.T @ lam)``, so no scaled copy of X exists.

#: the bin-code fields of linear rows (``bins`` empty: no codes)
_NO_CODES = (np.zeros((0, 0), np.uint8), np.zeros(0, np.uint8), np.zeros(0, np.uint8),
             np.zeros(0, np.int64), np.zeros(0, np.int64))


Rows = namedtuple("Rows", "data indices indptr dense offsets dense_codes stored_codes zero_codes "
                          "bins slots column_slots", defaults=_NO_CODES + (np.zeros(0, np.int64),))


def moving_rows(rows, steps, w):
    """``rows`` with the dense bin codes of only the coded columns a fit by
    ``steps`` can move (``column_slots``: their slots), or ``rows`` as they
    are. A term held out (``exclude``, a relaxed refit's dropped terms)
    has the group factor inf and weights at zero: its codes add nothing to
    a score, and its histogram, projected to zero at every step, is never
    read, so the epoch reads a relaxed refit's few columns alone and takes
    the same steps."""
    held = np.isinf(steps.group_factors)
    if (rows.bins.shape[0] == 0 or rows.indptr.shape[0] > 0 or not held.any()
            or steps.group <= 0.0 or steps.period != 1
            or rows.dense_codes.shape[1] != rows.slots.shape[0]
            or not np.array_equal(steps.groups, rows.bins)):
        return rows
    bins = rows.bins
    if any(np.any(w[bins[g]:bins[g + 1]]) for g in np.flatnonzero(held)):
        return rows  # a held term that starts away from zero: the first step moves it
    kept = np.flatnonzero(~held)
    return rows._replace(dense_codes=np.ascontiguousarray(rows.dense_codes[:, kept]),
                         column_slots=np.ascontiguousarray(rows.slots[kept]))


Pairs = namedtuple("Pairs", "gains labels inv_ideal discount cutoff loss unit_weights levels "
                            "n_levels preference_offsets better worse preference_weights",
                   defaults=(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64),
                             np.zeros(0)))


Steps = namedtuple("Steps", "learning_rate power_t l1 period theta cumulative group groups "
                            "group_factors weight_factors signs monotone_blocks level_bins "
                            "levels",
                   defaults=(0.0, np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros(0),
                             np.zeros((0, 7), np.int64), np.zeros(0, np.int64), np.zeros(0)))


Work = namedtuple("Work", "scores lam partial rankings w_scaled table threads",
                  defaults=(np.zeros(0), 1))


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
    every step adds ``eta * l1`` to); then the group penalty, and last the
    monotone constraints (:func:`clip_signs`, :func:`monotone_pairs`)."""
    n_features = w.shape[0]
    scaled = scale.shape[0] > 0
    step += 1
    eta = step_size(steps.learning_rate, steps.power_t, step)
    group_factors = steps.group_factors
    if steps.levels.shape[0] > 0:
        grad = np.zeros(n_features)
        for j in range(n_features):
            for c in range(rows):
                grad[j] += partial[c, j]
        move = level_moves(grad, steps.level_bins, steps.levels)
        for j in range(n_features):
            w[j] -= eta * move[j]
        if steps.group > 0.0 and steps.groups.shape[0] > 0:
            group_factors = moved_group_factors(grad, move, steps.groups, steps.group_factors)
    else:
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
        group_shrink(w, steps.groups, group_factors, period_steps(steps, step) * steps.group)
    if steps.signs.shape[0] > 0:
        clip_signs(w, steps.signs)
    if steps.monotone_blocks.shape[0] > 0:
        monotone_pairs(w, steps.monotone_blocks)
    return step


@njit(cache=True)
def level_moves(grad, bins, levels):
    """The move of a step on the levels of each coded column rather than
    on its steps (before the step size): column ``j``'s steps
    ``bins[j]:bins[j + 1]`` are the differences of its levels (the score of
    each code), whose gradient is the histogram of the rows' lambdas per
    code, recovered from the steps' gradient ``grad`` (suffix sums; a pair
    loss's lambdas sum to 0 over the rows, so the lowest code's is minus
    the first step's). Each level moves by its gradient times ``levels``
    (packed at ``bins[j] + j + c``: one over the level's curvature, 0 for
    none), and each step by the difference of the moves of its levels."""
    move = np.zeros(grad.shape[0])
    for j in range(bins.shape[0] - 1):
        lo, width = bins[j], bins[j + 1] - bins[j]
        base = lo + j
        below = -grad[lo] * levels[base]
        for b in range(width):
            above = grad[lo + b] - (grad[lo + b + 1] if b + 1 < width else 0.0)
            level = above * levels[base + b + 1]
            move[lo + b] = level - below
            below = level
    return move


@njit(cache=True)
def moved_group_factors(grad, move, groups, factors):
    """The group penalty's factors for a step of ``move`` along ``grad``:
    each finite factor times the group's ``|move| / |grad|`` (1 where its
    gradient is 0), so that a group at zero stays there exactly when its
    gradient's norm is at most the penalty, as on plain steps."""
    out = factors.copy()
    for g in range(groups.shape[0] - 1):
        if not np.isfinite(factors[g]):
            continue
        moved = 0.0
        pulled = 0.0
        for j in range(groups[g], groups[g + 1]):
            moved += move[j] * move[j]
            pulled += grad[j] * grad[j]
        if pulled > 0.0:
            out[g] = factors[g] * np.sqrt(moved / pulled)
    return out


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


@njit(cache=True)
def pair_lambdas(pairs, q, lo, hi, scores, lam, rankings, ahead):
    """Query ``q``'s pair loss (rows ``lo:hi``) and its lambdas into
    ``lam``: from its labels (:func:`query_lambdas_from`) or its
    preferences (:func:`preference_lambdas`). ``rankings`` holds each
    query's previous ranking."""
    if pairs.preference_offsets.shape[0] > 0:
        a, b = pairs.preference_offsets[q], pairs.preference_offsets[q + 1]
        return preference_lambdas(scores[lo:hi], pairs.better[a:b], pairs.worse[a:b],
                                  pairs.preference_weights[a:b], pairs.discount, pairs.cutoff,
                                  pairs.inv_ideal[q], pairs.loss, pairs.unit_weights, lam[lo:hi],
                                  rankings[lo:hi], ahead)
    return query_lambdas_from(scores[lo:hi], pairs.gains[lo:hi], pairs.labels[lo:hi],
                              pairs.discount, pairs.cutoff, pairs.inv_ideal[q], pairs.loss,
                              pairs.unit_weights, lam[lo:hi], rankings[lo:hi],
                              pairs.levels[lo:hi], pairs.n_levels[q], ahead)


def _epoch(rows, pairs, steps, scale, query_order, batch_size, w, l1_state, step, work):
    """One pass over ``query_order`` in batches; updates ``w`` in place.

    Each step averages the gradient over the batch's queries and takes
    :func:`take_step`. ``work.partial`` has one row per gradient
    accumulator: the batch's ``t``-th query goes to row ``t % rows`` and
    each row adds its queries in batch order, then the rows are added up,
    so any number of threads gives the same sums. The threads share the
    rows out (each a run of them) and each walks its rows' queries in
    batch order: on rows stored in that order it reads X front to back,
    where one row's queries at a time would skip the others' (on 468,598
    rows in 4,000 queries 8 rows' turns took 12% longer).

    Returns ``(summed query loss, new step count)``.
    """
    n_batch_queries = query_order.shape[0]
    total = 0.0
    losses = np.empty(n_batch_queries)  # each batch writes its own queries' before reading
    scores, lam, partial = work.scores, work.lam, work.partial
    stride = uniform_stride(rows.slots) if _CODED else 0
    for start in range(0, n_batch_queries, batch_size):
        stop = min(start + batch_size, n_batch_queries)
        factor = 1.0 / (stop - start)
        used = min(partial.shape[0], stop - start)
        groups = max(1, min(work.threads, used)) if _PARALLEL else 1
        ws = scaled_weights(w, scale, work.w_scaled)
        if _CODED:
            step_table(ws, rows.bins, rows.slots, work.table)
        for g in prange(groups):
            # rows first:last of the accumulators, their queries in batch order:
            # scores, lambdas and gradient of one query back to back, so its rows
            # of X are read from memory once and are still in cache for the gradient
            first, last = g * used // groups, (g + 1) * used // groups
            for c in range(first, last):
                grad = partial[c]
                for j in range(grad.shape[0]):  # a loop, not grad[:] = 0: no nested parfor
                    grad[j] = 0.0
            for t in range(start, stop):
                c = (t - start) % used
                if c < first or c >= last:
                    continue
                grad = partial[c]
                q = query_order[t]
                lo, hi = rows.offsets[q], rows.offsets[q + 1]
                if _CODED:
                    coded_scores(rows, lo, hi, work.table, scores, stride)
                elif _DENSE:
                    dense_scores(rows.dense, lo, hi, ws, scores)
                else:
                    csr_scores(rows.data, rows.indices, rows.indptr, lo, hi, ws, scores)
                # the lambdas bring this thread's next query's rows into cache as they go
                ahead = NOTHING_AHEAD
                following = t + 1 if c + 1 < last else t - c + used + first
                if following < stop:
                    after = query_order[following]
                    begin, end = rows.offsets[after], rows.offsets[after + 1]
                    if _CODED and rows.indptr.shape[0] > 0:
                        ahead = items_span(rows.stored_codes, rows.indptr[begin],
                                          rows.indptr[end])
                    elif _CODED:
                        ahead = rows_span(rows.dense_codes, begin, end)
                    elif _DENSE:
                        ahead = rows_span(rows.dense, begin, end)
                    else:
                        ahead = items_span(rows.data, rows.indptr[begin], rows.indptr[end])
                losses[t] = pair_lambdas(pairs, q, lo, hi, scores, lam, work.rankings, ahead)
                if _CODED:
                    coded_add_histogram(rows, lo, hi, lam, factor, grad, stride)
                elif _DENSE:
                    dense_add_gradient(rows.dense, lo, hi, lam, factor, grad)
                else:
                    csr_add_gradient(rows.data, rows.indices, rows.indptr, lo, hi, lam, factor,
                                     grad)
            if _CODED:
                for c in range(first, last):
                    suffix_sums(partial[c], rows.bins, rows.slots)
        for t in range(start, stop):
            total += losses[t]
        step = take_step(w, partial, used, scale, steps, l1_state, step)
    return total, step


#: what the epoch's rows are, fixed per variant (:func:`variant`): an additive
#: model's bin codes (``_CODED``) or a linear model's dense or CSR rows; and
#: whether its build shares the rows out among threads (``_PARALLEL``)
_CODED, _DENSE, _PARALLEL = False, True, False


epoch_serial, epoch_parallel = twins(_epoch, _PARALLEL=True)


csr_epoch_serial, csr_epoch_parallel = twins(variant(_epoch, "_csr", _DENSE=False),
                                             _PARALLEL=True)


coded_epoch_serial, coded_epoch_parallel = twins(variant(_epoch, "_coded", _CODED=True),
                                                 _PARALLEL=True)


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


def compiled_before():
    """Whether numba's on-disk cache already holds the epoch kernel; False
    means this process compiles the kernels (the first run after an install
    or an upgrade). True when it cannot tell."""
    return any(cached(kernel) for kernel in (epoch_serial, epoch_parallel, csr_epoch_serial,
                                             csr_epoch_parallel))
