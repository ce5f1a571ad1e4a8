"""Column moments of the rows (for the scaling) and the penalties' steps:
truncation, the cumulative penalty and the group shrinkage."""

import numpy as np
from numba import njit


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
