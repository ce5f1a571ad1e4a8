"""rsrank._kernels' steps on levels: an additive model's coded column
steps on the score of each code (its level) rather than on its steps, by
the lambdas' histogram per code over the level's curvature; the group
penalty keeps a group at zero exactly when its gradient's norm is at most
the strength, as on plain steps; the curvature per code from dense and
from CSR-stored codes agree, and each row's pair weight is the brute-force
sum over its query's pairs."""

import numpy as np
import pytest

from kernel_reference import discount_table
from rsrank import _kernels as K
from rsrank._kernels import epoch
from rsrank.evaluation import metrics as M


def _column(rng, n_codes, n_rows):
    """Rows' codes of one column and lambdas that sum to 0 (a pair loss's)."""
    codes = rng.integers(0, n_codes, n_rows)
    lam = rng.normal(size=n_rows)
    return codes, lam - lam.mean()


@pytest.mark.parametrize("seed", range(5))
def test_level_moves_are_the_differences_of_each_codes_histogram_over_its_curvature(seed):
    rng = np.random.default_rng(seed)
    widths = rng.integers(1, 9, 3)  # steps per column
    bins = np.r_[0, np.cumsum(widths)].astype(np.int64)
    levels = rng.uniform(0.1, 2.0, int(bins[-1]) + len(widths))
    levels[rng.random(len(levels)) < 0.2] = 0.0  # a code without curvature does not move
    grad, expected = np.zeros(int(bins[-1])), np.zeros(int(bins[-1]))
    for j, width in enumerate(widths):
        codes, lam = _column(rng, width + 1, 40)
        histogram = np.bincount(codes, weights=lam, minlength=width + 1)  # per level
        for b in range(width):  # a step's gradient: the rows above it
            grad[bins[j] + b] = lam[codes > b].sum()
        moved = histogram * levels[bins[j] + j: bins[j + 1] + j + 1]
        expected[bins[j]:bins[j + 1]] = np.diff(moved)
    np.testing.assert_allclose(epoch.level_moves(grad, bins, levels), expected, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_a_group_at_zero_stays_there_exactly_when_its_gradient_is_within_the_strength(seed):
    rng = np.random.default_rng(seed)
    bins = np.array([0, 5, 9], dtype=np.int64)
    levels = rng.uniform(0.2, 3.0, 11)
    grad = rng.normal(size=9)
    norms = [np.linalg.norm(grad[:5]), np.linalg.norm(grad[5:])]
    eta = 0.3
    for strength, zero in ((0.999 * norms[0], [False, norms[1] <= 0.999 * norms[0]]),
                           (1.001 * norms[0], [True, norms[1] <= 1.001 * norms[0]])):
        w = np.zeros(9)
        steps = epoch.Steps(eta, 0.0, 0.0, 1, 0.0, False, strength, bins, np.ones(2),
                            level_bins=bins, levels=levels)
        K.take_step(w, grad[None], 1, np.zeros(0), steps, np.zeros(10), 0)
        assert [not w[:5].any(), not w[5:].any()] == zero


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
