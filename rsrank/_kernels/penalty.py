"""Column moments of the rows (for the scaling) and the penalties' steps:
truncation, the cumulative penalty and the group shrinkage."""

import numpy as np

from .build import njit


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
    out = np.empty((4, width))
    out[0], out[1], out[2], out[3] = 0.0, 0.0, np.inf, -np.inf
    for r in range(n):
        row = X[r]
        # a column's four results are read before any is written, and with
        # selects, not branches, so the loop vectorises: on 468,598 x 136
        # float32, 23-28 ms against 76-80 ms for four arrays updated in place
        # (an AVX2 machine), the same sums in the same order. A NaN compares
        # false, and leaves the smallest and largest alone
        for j in range(width):
            v = np.float64(row[j])
            total, squares, low, high = out[0, j], out[1, j], out[2, j], out[3, j]
            out[0, j] = total + v
            out[1, j] = squares + v * v
            out[2, j] = v if v < low else low
            out[3, j] = v if v > high else high
    return out[0], out[1], out[2], out[3]


@njit(cache=True)
def dense_column_sums(X):
    """The sums and sums of squares of :func:`dense_column_moments`, without
    the smallest and largest values: the validation pass, which a z-score
    scaling and the fingerprint need no more of (on 468,598 x 136 float32,
    about 18 ms against 24 ms with the extremes and 15 ms for the sums
    alone, an AVX2 machine)."""
    n, width = X.shape
    out = np.zeros((2, width))
    for r in range(n):
        row = X[r]
        for j in range(width):  # read before written, as dense_column_moments
            v = np.float64(row[j])
            total, squares = out[0, j], out[1, j]
            out[0, j] = total + v
            out[1, j] = squares + v * v
    return out[0], out[1]


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


# -- monotone constraints ---------------------------------------------------------
#
# A constraint is a projection taken after each step's penalties: a weight
# whose sign is fixed (a linear weight, a step of a one-feature shape) is
# clipped at 0, and a pair's table of cells is made monotone along its
# constrained features by isotonic regression (the pool-adjacent-violators
# algorithm) of each line of cells, with Dykstra's alternating projections
# when both features are constrained and then a running maximum (or minimum)
# along each, which keeps the other's order, so the result is exactly
# monotone. Its values are rounded down to multiples of a power of two small
# enough that the steps and their running sums are exact in float64: the
# tables the kernels build from the steps are then exactly monotone too.


@njit(cache=True)
def clip_signs(w, signs):
    """Each ``w[j]`` with ``signs[j] > 0`` at least 0, with ``signs[j] < 0``
    at most 0, in place."""
    for j in range(w.shape[0]):
        if signs[j] > 0.0 and w[j] < 0.0:
            w[j] = 0.0
        elif signs[j] < 0.0 and w[j] > 0.0:
            w[j] = 0.0


@njit(cache=True)
def isotonic(x, direction):
    """The least-squares fit to ``x`` that is non-decreasing (``direction``
    1) or non-increasing (-1), in place (pool adjacent violators)."""
    n = x.shape[0]
    level = np.empty(n)
    weight = np.empty(n)
    size = 0
    for i in range(n):
        level[size] = direction * x[i]
        weight[size] = 1.0
        size += 1
        while size > 1 and level[size - 2] > level[size - 1]:
            total = weight[size - 2] + weight[size - 1]
            level[size - 2] = (level[size - 2] * weight[size - 2]
                               + level[size - 1] * weight[size - 1]) / total
            weight[size - 2] = total
            size -= 1
    i = 0
    for b in range(size):
        for _ in range(int(weight[b])):
            x[i] = direction * level[b]
            i += 1


@njit(cache=True)
def _isotonic_lines(table, direction, along_rows):
    """:func:`isotonic` of each column (``along_rows``: each line along the
    first axis) or each row of ``table``, in place."""
    if along_rows:
        for k in range(table.shape[1]):
            isotonic(table[:, k], direction)
    else:
        for i in range(table.shape[0]):
            isotonic(table[i, :], direction)


@njit(cache=True)
def monotone_table(table, direction_a, direction_b, rounds=100):
    """``table`` (cells of a pair, first axis its first feature) made
    monotone along each feature with a direction (1, -1; 0: none), in
    place: the Euclidean projection for one direction, Dykstra's
    alternating projections for two, then exact by a running maximum or
    minimum along each.

    Element loops, not array expressions: those would compile numba's
    broadcasting and its error messages into every epoch kernel that
    links this one (seconds of each first compilation)."""
    n_a, n_b = table.shape
    if direction_a != 0 and direction_b != 0:
        p = np.zeros((n_a, n_b))
        q = np.zeros((n_a, n_b))
        y = np.empty((n_a, n_b))
        z = np.empty((n_a, n_b))
        for _ in range(rounds):
            for i in range(n_a):
                for k in range(n_b):
                    y[i, k] = table[i, k] + p[i, k]
            _isotonic_lines(y, direction_a, True)
            for i in range(n_a):
                for k in range(n_b):
                    p[i, k] = table[i, k] + p[i, k] - y[i, k]
                    z[i, k] = y[i, k] + q[i, k]
            _isotonic_lines(z, direction_b, False)
            for i in range(n_a):
                for k in range(n_b):
                    q[i, k] = y[i, k] + q[i, k] - z[i, k]
                    table[i, k] = z[i, k]
    elif direction_a != 0:
        _isotonic_lines(table, direction_a, True)
    elif direction_b != 0:
        _isotonic_lines(table, direction_b, False)
    if direction_a != 0:
        for i in range(1, n_a):
            for k in range(n_b):
                if direction_a * (table[i, k] - table[i - 1, k]) < 0.0:
                    table[i, k] = table[i - 1, k]
    if direction_b != 0:
        for k in range(1, n_b):
            for i in range(n_a):
                if direction_b * (table[i, k] - table[i, k - 1]) < 0.0:
                    table[i, k] = table[i, k - 1]


@njit(cache=True)
def monotone_pairs(w, blocks):
    """Each constrained pair's cells made monotone (:func:`monotone_table`),
    in place. ``blocks`` has a row per pair: the offset of its steps in
    ``w``, its grid's bins along each feature, the direction along each and
    the bins of each that hold values (a missing value's bin, the last, has
    no place along its own feature, but its row or column of cells is made
    monotone along the other). A pair's cells are the running sums of its
    steps, the first cell 0."""
    for r in range(blocks.shape[0]):
        offset, n_a, n_b = blocks[r, 0], blocks[r, 1], blocks[r, 2]
        table = np.zeros((n_a, n_b))
        total = 0.0
        for c in range(1, n_a * n_b):
            total += w[offset + c - 1]
            table[c // n_b, c % n_b] = total
        valued_a, valued_b = blocks[r, 5], blocks[r, 6]
        monotone_table(table[:valued_a, :valued_b], blocks[r, 3], blocks[r, 4])
        # a missing value's row (column) scores the other feature's values:
        # monotone along it too; the missing value's own place is free
        if valued_a < n_a and blocks[r, 4] != 0:
            for i in range(valued_a, n_a):
                isotonic(table[i, :valued_b], blocks[r, 4])
        if valued_b < n_b and blocks[r, 3] != 0:
            for k in range(valued_b, n_b):
                isotonic(table[:valued_a, k], blocks[r, 3])
        # down to multiples of a power of two 2^-50 of the largest value:
        # exact differences and running sums, the same order (floor is monotone)
        base = table[0, 0]
        largest = 0.0
        for c in range(n_a * n_b):
            largest = max(largest, abs(table[c // n_b, c % n_b] - base))
        quantum = 2.0 ** (np.ceil(np.log2(largest)) - 50) if largest > 0.0 else 1.0
        previous = 0.0
        for c in range(1, n_a * n_b):
            value = np.floor((table[c // n_b, c % n_b] - base) / quantum) * quantum
            w[offset + c - 1] = value - previous
            previous = value
