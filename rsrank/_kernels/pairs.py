"""Sums over pairs: two-feature histograms of per-row values over bin codes,
all pairs of features a block of rows at a time (the candidates of pairwise
interactions), and the curvature of step columns summed over the pairs of
rows of a query."""

import numpy as np
from numba import prange

from .build import njit, twins
from .ranking import label_levels


#: Rows of a block of :func:`_pair_histograms`: every pair's histogram takes
#: the block's rows before the next block, so a pair's cells and the block's
#: two code columns stay in cache (``scripts/bench_pair_search.py``)
PAIR_BLOCK = 4096


def _pair_histograms(columns, values, first, second, n_bins, cells):
    """For each pair ``p`` of features ``(first[p], second[p])``, add each
    row's ``values`` into ``cells[p, code_a * n_bins + code_b, 0]`` and
    count the row in ``cells[p, ..., 1]`` (``columns``: one uint8 code per
    feature and row, a feature's codes contiguous): a cell's sum and count
    side by side, one line of memory a row where two arrays took two
    (``scripts/bench_pair_search.py``). The rows go in blocks of
    :data:`PAIR_BLOCK`, a block's pairs shared out among the threads in
    runs (:func:`pair_runs`): four pairs in a row with the same first
    feature fill their histograms in one pass over the rows, which reads
    that feature's codes and the values once for the four and keeps four
    chains of additions in flight, where one pair's additions wait on each
    other whenever two rows fall in one cell. Each cell adds its rows in
    their order, whatever the threads and runs."""
    n_rows = columns.shape[1]
    runs = pair_runs(first, PAIR_RUN)
    for lo in range(0, n_rows, PAIR_BLOCK):
        hi = min(lo + PAIR_BLOCK, n_rows)
        for k in prange(runs.shape[0] - 1):
            p, stop = runs[k], runs[k + 1]
            if stop - p == PAIR_RUN:
                a = columns[first[p]]
                b0, b1 = columns[second[p]], columns[second[p + 1]]
                b2, b3 = columns[second[p + 2]], columns[second[p + 3]]
                h0, h1, h2, h3 = cells[p], cells[p + 1], cells[p + 2], cells[p + 3]
                for i in range(lo, hi):
                    row = a[i] * n_bins
                    value = values[i]
                    cell = row + b0[i]
                    h0[cell, 0] += value
                    h0[cell, 1] += 1
                    cell = row + b1[i]
                    h1[cell, 0] += value
                    h1[cell, 1] += 1
                    cell = row + b2[i]
                    h2[cell, 0] += value
                    h2[cell, 1] += 1
                    cell = row + b3[i]
                    h3[cell, 0] += value
                    h3[cell, 1] += 1
                continue
            for q in range(p, stop):
                a, b = columns[first[q]], columns[second[q]]
                h = cells[q]
                for i in range(lo, hi):
                    cell = a[i] * n_bins + b[i]
                    h[cell, 0] += values[i]
                    h[cell, 1] += 1


#: Pairs that :func:`_pair_histograms` fills in one pass over a block's rows
#: when they share their first feature (``scripts/bench_pair_search.py``)
PAIR_RUN = 4


@njit(cache=True)
def pair_runs(first, size):
    """Where the runs of pairs start, and the end: from the first pair on,
    the next ``size`` pairs make a run when they all have the same
    ``first`` feature, else the next pair is a run of its own."""
    out = np.empty(first.shape[0] + 1, dtype=np.int64)
    n, p = 0, 0
    while p < first.shape[0]:
        out[n] = p
        n += 1
        step = 1
        if p + size <= first.shape[0]:
            step = size
            for q in range(p + 1, p + size):
                if first[q] != first[p]:
                    step = 1
        p += step
    out[n] = first.shape[0]
    return out[:n + 1]


pair_histograms_serial, pair_histograms_parallel = twins(_pair_histograms)


@njit(cache=True)
def run_costs(w, wm, wmm, costs):
    """Into ``costs[i, j]`` for every ``i < j``: the count-weighted sum of
    squares of the rows ``i..j-1`` of a table around each column's run
    mean, from the prefix sums over its rows (``w``, ``wm``, ``wmm``: one
    more row than the table) of the counts, the counts times the means and
    the counts times the squared means; a column without a count in the
    run adds nothing. Each run's columns summed in cache, where whole-array
    steps went through memory once per start of a run."""
    n, m = w.shape[0] - 1, w.shape[1]
    for i in range(n):
        for j in range(i + 1, n + 1):
            total = 0.0
            for c in range(m):
                weight = w[j, c] - w[i, c]
                first = wm[j, c] - wm[i, c]
                total += (wmm[j, c] - wmm[i, c]) - (first * first / weight if weight > 0 else 0.0)
            costs[i, j] = total


@njit(cache=True)
def grid_residuals(sums, counts, rounds, left):
    """Into ``left`` (shape ``(n_grids, n_a, n_b)``, as ``sums`` and
    ``counts``): each grid's cell means less the count-weighted best sum
    of a row effect and a column effect, fitted by ``rounds`` of
    backfitting from zero (each round the rows' effects on the columns'
    last, then the columns' on the rows'), 0 in a cell without a count.
    A grid at a time, in cache, where whole arrays of grids a round at a
    time went through memory for each of the round's steps."""
    n_a, n_b = sums.shape[1], sums.shape[2]
    means = np.empty((n_a, n_b))
    rows, columns = np.empty(n_a), np.empty(n_b)
    row_counts, column_counts = np.empty(n_a), np.empty(n_b)
    for g in range(sums.shape[0]):
        row_counts[:] = 0.0
        column_counts[:] = 0.0
        for i in range(n_a):
            for k in range(n_b):
                c = counts[g, i, k]
                means[i, k] = sums[g, i, k] / c if c > 0 else 0.0
                row_counts[i] += c
                column_counts[k] += c
        columns[:] = 0.0
        for _ in range(rounds):
            for i in range(n_a):
                total = 0.0
                for k in range(n_b):
                    total += counts[g, i, k] * (means[i, k] - columns[k])
                rows[i] = total / max(row_counts[i], 1.0) if row_counts[i] > 0 else 0.0
            for k in range(n_b):
                total = 0.0
                for i in range(n_a):
                    total += counts[g, i, k] * (means[i, k] - rows[i])
                columns[k] = total / max(column_counts[k], 1.0) if column_counts[k] > 0 else 0.0
        for i in range(n_a):
            for k in range(n_b):
                left[g, i, k] = (means[i, k] - rows[i] - columns[k]
                                 if counts[g, i, k] > 0 else 0.0)


@njit(cache=True)
def step_curvature(codes, bins, level, level_gains, discount, inv_ideal, unit, out):
    """Add one query's ``sum_{i<j} W_ij (z_i - z_j)^2`` to ``out`` for every
    step column ``z = [code_j > b]`` (at ``out[bins[j] + b]``) of its dense
    ``codes`` (rows in rank order), without building the 0/1 columns.

    ``level`` is each row's index into ``level_gains`` (the query's
    distinct gains). Unit weights (``unit``): each pair of different levels
    weighs ``inv_ideal`` (the query's weight), so a column adds that times
    ``k (n - k)`` less the same within each level, ``k`` its rows above the
    step. Swap weights ``inv_ideal |g_i - g_j| (d_i - d_j)`` (i above j):
    a pair counts in the columns between its two codes, so each pair's
    weight is added at the smaller code and taken off at the larger, and a
    column sums those up to it. Each row meets the rows below it a code at a
    time, through sums per level and code of the rows below weighted for a
    row of that level: O(n (k + L)) for a feature of k steps, without a
    branch on the codes (a loop over the columns and rows takes O(n k L),
    with a branch per row that random codes mispredict)."""
    n, n_levels = codes.shape[0], level_gains.shape[0]
    if unit:
        sizes = np.zeros(n_levels)
        for i in range(n):
            sizes[level[i]] += 1.0
        for j in range(codes.shape[1]):
            start, width = bins[j], bins[j + 1] - bins[j]
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
        return
    G = np.empty((n_levels, n_levels))
    for a in range(n_levels):
        for m in range(n_levels):
            G[a, m] = abs(level_gains[a] - level_gains[m])
    # a pair (i above j) counts in the columns b with min(c_i, c_j) <= b < max(c_i, c_j):
    # its weight goes in at the smaller code and out at the larger (diff), and a
    # column is the running sum of diff up to it. From the bottom of the list,
    # weight[a, c] and weight_d[a, c] sum G[a, l_j] and G[a, l_j] d_j over the rows
    # below with code c, so that row i meets each code below it at one
    # multiplication, in a loop over the codes without a branch
    widest = 0
    for j in range(codes.shape[1]):
        widest = max(widest, bins[j + 1] - bins[j])
    weight = np.empty((n_levels, widest + 1))
    weight_d = np.empty((n_levels, widest + 1))
    diff = np.empty(widest + 1)
    for j in range(codes.shape[1]):
        start, width = bins[j], bins[j + 1] - bins[j]
        weight[:, :width + 1] = 0.0
        weight_d[:, :width + 1] = 0.0
        diff[:width + 1] = 0.0
        for i in range(n - 1, -1, -1):
            own, d = level[i], discount[i]
            code = min(codes[i, j], width)
            moved = 0.0
            for c in range(width + 1):
                side = (1.0 if c < code else 0.0) - (1.0 if c > code else 0.0)
                value = side * (d * weight[own, c] - weight_d[own, c])
                diff[c] += value
                moved += value
            diff[code] -= moved
            for a in range(n_levels):  # G is symmetric: G[a, own] = G[own, a]
                weight[a, code] += G[own, a]
                weight_d[a, code] += G[own, a] * d
        running = 0.0
        for b in range(width):
            running += diff[b]
            out[start + b] += inv_ideal * running


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


@njit(cache=True)
def rows_curvature(dense, data, indices, indptr, offsets, ranks, gains, discount, factors, scale,
                   unit, out):
    """:func:`row_curvature` of every query of the rows (``dense``, or CSR
    ``data, indices, indptr`` when ``indptr`` is not empty; queries at
    ``offsets``, each row's gain in ``gains`` and that gain's place among
    the distinct gains in ``ranks``, ``factors[q]`` each query's weight,
    ``scale`` each column's factor, empty for none) added to ``out``, one
    value per column, in one call: a query of fewer than two rows or of
    factor 0 adds nothing. Each query's levels are its distinct gains, in
    increasing order."""
    width = out.shape[0]
    scaled = scale.shape[0] > 0
    stored = indptr.shape[0] > 0
    level = np.empty(ranks.shape[0], dtype=np.int64)
    for q in range(offsets.shape[0] - 1):
        lo, hi = offsets[q], offsets[q + 1]
        if hi - lo < 2 or factors[q] == 0.0:
            continue
        values = np.empty(label_levels(ranks[lo:hi], level[lo:hi]))
        for i in range(lo, hi):
            values[level[i]] = gains[i]
        z = np.zeros((hi - lo, width))
        for i in range(hi - lo):
            if stored:
                for k in range(indptr[lo + i], indptr[lo + i + 1]):
                    j = indices[k]
                    v = np.float64(data[k])
                    z[i, j] = v * scale[j] if scaled else v
            else:
                for j in range(width):
                    v = np.float64(dense[lo + i, j])
                    z[i, j] = v * scale[j] if scaled else v
        row_curvature(z, level[lo:hi], values, discount[:hi - lo], factors[q], unit, out)


@njit(cache=True)
def row_pair_weights(gains, offsets, discount, factors, unit, out):
    """Each row's summed pair weight at the all-zero model (rows ranked in
    their stored order, as the kernels break ties) into ``out``: the
    query's ``factors[q]`` times, over the rows of other gains, 1 (``unit``)
    or ``|g_i - g_j| |d_i - d_j|`` with ``discount`` by place."""
    for q in range(offsets.shape[0] - 1):
        lo, hi = offsets[q], offsets[q + 1]
        factor = factors[q]
        for i in range(lo, hi):
            total = 0.0
            for j in range(lo, hi):
                if gains[i] == gains[j]:
                    continue
                if unit:
                    total += 1.0
                else:
                    total += abs(gains[i] - gains[j]) * abs(discount[i - lo] - discount[j - lo])
            out[i] = factor * total


@njit(cache=True)
def code_sums(codes, bins, values, out):
    """``values`` summed per feature and code of dense ``codes``, feature
    ``j``'s code ``c`` at ``out[bins[j] + j + c]``."""
    for i in range(codes.shape[0]):
        v = values[i]
        for j in range(codes.shape[1]):
            out[bins[j] + j + codes[i, j]] += v


@njit(cache=True)
def stored_code_sums(indices, indptr, stored_codes, zero_codes, bins, values, out):
    """:func:`code_sums` of CSR-stored codes: each row's unstored features
    at their ``zero_codes``, its stored ones at ``stored_codes``."""
    total = 0.0
    for i in range(indptr.shape[0] - 1):
        total += values[i]
    for j in range(bins.shape[0] - 1):
        out[bins[j] + j + zero_codes[j]] += total
    for i in range(indptr.shape[0] - 1):
        v = values[i]
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            out[bins[j] + j + stored_codes[k]] += v
            out[bins[j] + j + zero_codes[j]] -= v
