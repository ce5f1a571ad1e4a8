"""Sums over pairs: two-feature histograms of per-row values over bin codes,
all pairs of features in one pass over the rows (the candidates of pairwise
interactions), and the curvature of step columns summed over the pairs of
rows of a query."""

import numpy as np
from numba import njit


@njit(cache=True)
def pair_histograms(codes, values, first, second, n_bins, sums, counts):
    """For each pair ``p`` of features ``(first[p], second[p])``, add each
    row's ``values`` into ``sums[p, code_a * n_bins + code_b]`` and count
    the row in ``counts`` (``codes``: one uint8 code per row and feature)."""
    for i in range(codes.shape[0]):
        value = values[i]
        for p in range(first.shape[0]):
            cell = codes[i, first[p]] * n_bins + codes[i, second[p]]
            sums[p, cell] += value
            counts[p, cell] += 1


@njit(cache=True)
def step_curvature(codes, bins, level, level_gains, discount, inv_ideal, unit, out):
    """Add one query's ``sum_{i<j} W_ij (z_i - z_j)^2`` to ``out`` for every
    step column ``z = [code_j > b]`` (at ``out[bins[j] + b]``) of its dense
    ``codes`` (rows in rank order), without building the 0/1 columns.

    ``level`` is each row's index into ``level_gains`` (the query's
    distinct gains). Unit weights (``unit``): each pair of different levels
    weighs ``inv_ideal`` (the query's weight), so a column adds that times
    ``k (n - k)`` less the same within each level, ``k`` its rows above the
    step. Swap weights
    ``inv_ideal |g_i - g_j| (d_i - d_j)`` (i above j): each row meets the
    rows below it on every other level through running sums of 1, z, d and
    ``d z`` from the bottom of the list (``z^2 = z``)."""
    n, n_levels = codes.shape[0], level_gains.shape[0]
    sizes = np.zeros(n_levels)
    for i in range(n):
        sizes[level[i]] += 1.0
    count, z_sum = np.zeros(n_levels), np.zeros(n_levels)
    d_sum, dz_sum = np.zeros(n_levels), np.zeros(n_levels)
    for j in range(codes.shape[1]):
        start, width = bins[j], bins[j + 1] - bins[j]
        if unit:
            hist = np.zeros((width + 1, n_levels))
            for i in range(n):
                hist[min(codes[i, j], width), level[i]] += 1.0
            above = np.zeros(n_levels)
            for b in range(width - 1, -1, -1):
                for m in range(n_levels):
                    above[m] += hist[b + 1, m]
                k = above.sum()
                value = k * (n - k)
                for m in range(n_levels):
                    value -= above[m] * (sizes[m] - above[m])
                out[start + b] += inv_ideal * value
            continue
        for b in range(width):
            count[:] = 0.0
            z_sum[:] = 0.0
            d_sum[:] = 0.0
            dz_sum[:] = 0.0
            total = 0.0
            for i in range(n - 1, -1, -1):
                z = 1.0 if codes[i, j] > b else 0.0
                d, own = discount[i], level[i]
                for m in range(n_levels):
                    if m != own:
                        total += abs(level_gains[own] - level_gains[m]) * (
                            d * z * count[m] + d * z_sum[m] - z * d_sum[m] - dz_sum[m]
                            - 2.0 * d * z * z_sum[m] + 2.0 * z * dz_sum[m])
                count[own] += 1.0
                z_sum[own] += z
                d_sum[own] += d
                dz_sum[own] += d * z
            out[start + b] += inv_ideal * total


@njit(cache=True)
def row_curvature(z, level, level_gains, discount, factor, unit, out):
    """Add one query's ``sum_{i<j} W_ij (z_i - z_j)^2`` to ``out``, per
    column of its dense rows ``z`` (in rank order, row ``i`` on level
    ``level[i]`` of the distinct gains ``level_gains``, at discount
    ``discount[i]``), ``factor`` the query's weight.

    Unit weights (``unit``): every pair of different levels weighs
    ``factor``; over a set of m rows the pairs sum ``m sum z^2 - (sum z)^2``,
    taken over the query less over each level. Swap weights
    ``factor |g_i - g_j| (d_i - d_j)`` (i above j): each row meets the rows
    below it on every other level through running sums of 1, d, z, ``z^2``,
    ``d z`` and ``d z^2`` from the bottom of the list. O(n d L) for L
    levels, no pair visited."""
    n, width, n_levels = z.shape[0], z.shape[1], level_gains.shape[0]
    if unit:
        sums, squares = np.zeros((n_levels + 1, width)), np.zeros((n_levels + 1, width))
        sizes = np.zeros(n_levels + 1)
        for i in range(n):
            own = level[i]
            sizes[own] += 1.0
            sizes[n_levels] += 1.0
            for j in range(width):
                v = z[i, j]
                sums[own, j] += v
                squares[own, j] += v * v
                sums[n_levels, j] += v
                squares[n_levels, j] += v * v
        for j in range(width):
            total = sizes[n_levels] * squares[n_levels, j] - sums[n_levels, j] ** 2
            for m in range(n_levels):
                total -= sizes[m] * squares[m, j] - sums[m, j] ** 2
            out[j] += factor * total
        return
    count, d_sum = np.zeros(n_levels), np.zeros(n_levels)
    z_sum, square_sum = np.zeros((n_levels, width)), np.zeros((n_levels, width))
    dz_sum, dsquare_sum = np.zeros((n_levels, width)), np.zeros((n_levels, width))
    total = np.zeros(width)
    for i in range(n - 1, -1, -1):
        d, own = discount[i], level[i]
        for m in range(n_levels):
            if m == own or count[m] == 0.0:
                continue
            w = abs(level_gains[own] - level_gains[m])
            for j in range(width):
                v = z[i, j]
                s = v * v
                total[j] += w * (d * s * count[m] + d * square_sum[m, j] - s * d_sum[m]
                                 - dsquare_sum[m, j] - 2.0 * d * v * z_sum[m, j]
                                 + 2.0 * v * dz_sum[m, j])
        count[own] += 1.0
        d_sum[own] += d
        for j in range(width):
            v = z[i, j]
            z_sum[own, j] += v
            square_sum[own, j] += v * v
            dz_sum[own, j] += d * v
            dsquare_sum[own, j] += d * v * v
    for j in range(width):
        out[j] += factor * total[j]
