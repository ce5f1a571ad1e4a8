"""rsrank._kernels.pairs: two-feature histograms against a bincount per
pair, the curvature per code from dense and from
CSR-stored codes agree, each row's pair weight at the all-zero model is
the brute-force sum over its query's pairs, and a grid's run costs are
each run's weighted squares around its means."""

import numpy as np
import pytest

from kernel_reference import discount_table
from rsrank._kernels import pairs as K
from rsrank.evaluation import metrics as M


@pytest.mark.parametrize("build", [K.pair_histograms_serial, K.pair_histograms_parallel])
def test_pair_histograms_equal_a_bincount_per_pair_over_several_blocks(build):
    rng = np.random.default_rng(0)
    n_bins, n_rows = 5, 2 * K.PAIR_BLOCK + 301
    codes = rng.integers(0, n_bins, size=(7, n_rows)).astype(np.uint8)  # a feature a row
    values = rng.normal(size=n_rows)
    # runs of pairs with one first feature, of four (filled together) and fewer, and
    # pairs out of order
    first = np.array([0, 0, 1, 2, 0, 0, 0, 0, 0, 3, 3, 3, 4, 3])
    second = np.array([1, 3, 2, 3, 1, 2, 4, 5, 6, 4, 5, 6, 5, 0])
    cells = np.zeros((len(first), n_bins ** 2, 2))
    build(codes, values, first, second, n_bins, cells)
    sums, counts = cells[..., 0], cells[..., 1]
    for p, (a, b) in enumerate(zip(first, second)):
        cells = codes[a].astype(int) * n_bins + codes[b]
        # each cell adds its rows in their order, as bincount does: equal, not close
        np.testing.assert_array_equal(sums[p], np.bincount(cells, values, n_bins ** 2))
        np.testing.assert_array_equal(counts[p], np.bincount(cells, minlength=n_bins ** 2))


def test_curvature_per_code_is_the_same_from_dense_and_stored_codes():
    import scipy.sparse as sp

    rng = np.random.default_rng(3)
    codes = rng.integers(0, 4, (30, 3)).astype(np.uint8)
    zero_codes = np.array([0, 2, 1], dtype=np.uint8)
    codes[rng.random(codes.shape) < 0.5] = 0
    stored = np.where(codes == 0, zero_codes, codes).astype(np.uint8)  # 0 means "unstored"
    bins = np.array([0, 3, 6, 9], dtype=np.int64)
    values = rng.uniform(size=30)
    dense = np.zeros(12)
    K.code_sums(stored, bins, values, dense)
    csr = sp.csr_matrix(codes)
    sparse = np.zeros(12)
    K.stored_code_sums(csr.indices.astype(np.int32), csr.indptr.astype(np.int32),
                       csr.data.astype(np.uint8), zero_codes, bins, values, sparse)
    np.testing.assert_allclose(sparse, dense)
    assert dense.sum() == pytest.approx(3 * values.sum())


@pytest.mark.parametrize("unit", [True, False])
def test_each_rows_pair_weight_is_the_sum_over_its_querys_pairs(unit):
    rng = np.random.default_rng(5)
    sizes = np.array([7, 1, 12])
    offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    gains = M.gain_values(rng.integers(0, 4, offsets[-1]))
    table, _ = discount_table(sizes.max(), "log2", 10)
    factors = rng.uniform(0.5, 2.0, 3)
    out = np.zeros(offsets[-1])
    K.row_pair_weights(gains, offsets, table, factors, unit, out)
    for q in range(3):
        g, d = gains[offsets[q]:offsets[q + 1]], table[:sizes[q]]
        differ = g[:, None] != g[None, :]
        weight = differ if unit else np.abs(g[:, None] - g[None, :]) * np.abs(d[:, None] - d[None, :])
        np.testing.assert_allclose(out[offsets[q]:offsets[q + 1]], factors[q] * weight.sum(axis=1))


def test_run_costs_are_each_runs_weighted_squares_around_its_column_means():
    rng = np.random.default_rng(3)
    n, m = 9, 4
    counts = rng.poisson(1.0, size=(n, m)).astype(float)  # some cells without a count
    counts[:, 2] = 0.0  # and a column without any
    means = rng.normal(size=(n, m))

    def prefix(values):
        return np.vstack([np.zeros(m), np.cumsum(values, axis=0)])
    costs = np.full((n + 1, n + 1), np.inf)
    K.run_costs(prefix(counts), prefix(counts * means), prefix(counts * means ** 2), costs)
    for i in range(n + 1):
        for j in range(n + 1):
            if j <= i:
                assert costs[i, j] == np.inf  # not a run: left as it was
                continue
            expected = 0.0
            for c in range(m):
                weight = counts[i:j, c].sum()
                if weight > 0:
                    mean = (counts[i:j, c] * means[i:j, c]).sum() / weight
                    expected += (counts[i:j, c] * (means[i:j, c] - mean) ** 2).sum()
            assert costs[i, j] == pytest.approx(expected, rel=1e-10, abs=1e-12)
