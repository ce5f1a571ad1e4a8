"""Two-feature histograms of per-row values over bin codes, all pairs in one
pass over the rows (the candidates of pairwise interactions)."""

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
