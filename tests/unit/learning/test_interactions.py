"""Candidate pairs from the pair gradients (rsrank.learning.interactions)."""

import warnings

import numpy as np
import pytest

from rsrank import RSRank, QueryData
from rsrank.learning.interactions import (GAIN_GRIDS, SEARCH_KEEP, SEARCH_ROWS,
                                          interaction_gain, pair_gains, search_rows)
from rsrank.reading.synthetic import make_interactions


def test_the_interaction_gain_is_zero_on_a_sum_of_shapes_and_not_on_a_product():
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 4, 5000), rng.integers(0, 4, 5000)
    cells = a * 4 + b

    def gain(values):
        return interaction_gain(np.bincount(cells, values, 16),
                                np.bincount(cells, minlength=16).astype(float), 4)
    additive = np.array([0.0, 1.0, -2.0, 0.5])[a] + np.array([3.0, 0.0, 1.0, -1.0])[b]
    assert gain(additive) == pytest.approx(0.0, abs=1e-6 * np.sum(additive ** 2))
    product = (a - 1.5) * (b - 1.5)
    assert gain(product) > 0.9 * np.sum((product - product.mean()) ** 2)


@pytest.mark.parametrize("seed", range(6))
def test_the_residuals_are_those_of_the_least_squares_sum_of_row_and_column_effects(seed):
    """Backfitting, a grid at a time, ends where weighted least squares
    of a row effect plus a column effect does (cells without rows left
    out), on unbalanced counts with empty cells, and each grid's residuals
    are its own whatever grids it is backfitted with."""
    from rsrank.learning.interactions import interaction_residuals

    rng = np.random.default_rng(seed)
    n_a, n_b = rng.integers(2, 10, size=2)
    counts = rng.integers(0, 30, size=(3, n_a, n_b)).astype(float)
    counts[rng.random(counts.shape) < 0.15] = 0.0
    counts[:, 0, 0] = 5.0  # a grid with some rows
    sums = rng.normal(size=counts.shape) * counts
    left, filled = interaction_residuals(sums, counts, rounds=400)
    np.testing.assert_array_equal(filled, counts > 0)
    for g in range(3):
        i, k = np.nonzero(counts[g])
        design = np.zeros((len(i), n_a + n_b))
        design[np.arange(len(i)), i] = 1.0
        design[np.arange(len(i)), n_a + k] = 1.0
        means = sums[g, i, k] / counts[g, i, k]
        root = np.sqrt(counts[g, i, k])
        effects = np.linalg.lstsq(design * root[:, None], means * root, rcond=None)[0]
        np.testing.assert_allclose(left[g, i, k], means - design @ effects, atol=1e-9)
        assert np.all(left[g][counts[g] == 0] == 0.0)
        alone, _ = interaction_residuals(sums[g:g + 1], counts[g:g + 1], rounds=400)
        np.testing.assert_array_equal(alone[0], left[g])


def test_the_gains_of_many_grids_are_each_grids_own_gain_bit_for_bit():
    """Grids backfitted a block at a time give every grid the gain it has
    alone, also across the blocks' edges."""
    rng = np.random.default_rng(4)
    n = 2 * GAIN_GRIDS + 3
    counts = rng.integers(0, 5, (n, 9 * 9)).astype(float)
    sums = rng.normal(size=(n, 81)) * counts
    together = interaction_gain(sums, counts, 9)
    alone = [interaction_gain(sums[p], counts[p], 9) for p in range(n)]
    assert together.shape == (n,) and np.array_equal(together, alone)
    assert len(np.unique(together)) == n


def test_row_lambdas_are_the_gradient_row_by_row():
    """Summed over rows with the features, the lambdas give the gradient of
    the summed loss."""
    data = make_interactions(("and",), n_queries=30, random_state=2)
    q = QueryData(data.X, data.y, data.qid)
    objective = RSRank().setup().solver.objective
    w = np.random.default_rng(3).normal(size=q.n_features)
    lam = objective.row_lambdas(q, w)
    _, grad = objective.loss_and_gradient(q, w)
    np.testing.assert_allclose(q.X.T @ lam, grad, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("effects", [("and", "product"), ("xor",), ("switch", "product")])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_true_pairs_lead_at_the_additive_models_ranking(effects, seed):
    data = make_interactions(effects, n_queries=150, random_state=seed)
    q = QueryData(data.X, data.y, data.qid, feature_names=data.feature_names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = RSRank(additive=True, learning_rate="curvature", max_iter=200).fit(q)
    gains = pair_gains(model, q)
    true = {(data.feature_names[a], data.feature_names[b]) for a, b in data.pairs}
    assert {pair for pair, _ in gains[:len(true)]} == true
    # by a wide margin over every other pair
    assert gains[len(true) - 1][1] > 3 * gains[len(true)][1]


def test_candidates_and_bins_are_checked():
    data = make_interactions(("xor",), n_queries=20, random_state=0)
    model = RSRank(max_iter=2).fit(data.X, data.y, qid=data.qid)
    assert len(pair_gains(model, data.X, data.y, qid=data.qid, candidates=[0, 1, 2])) == 3
    with pytest.raises(ValueError, match="n_bins must be an integer from 2 to 16"):
        pair_gains(model, data.X, data.y, qid=data.qid, n_bins=40)


def test_the_grid_segments_are_the_best_split_by_brute_force():
    import itertools

    from rsrank.learning.interactions import _segments

    rng = np.random.default_rng(5)
    for _ in range(20):
        n, columns, k = int(rng.integers(3, 9)), int(rng.integers(1, 4)), int(rng.integers(1, 5))
        counts = rng.integers(0, 5, size=(n, columns)).astype(float)
        sums = rng.normal(size=(n, columns)) * counts
        means = np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)

        def cost(ends):
            total, start = 0.0, 0
            for stop in list(ends) + [n - 1]:
                c, m = counts[start:stop + 1], means[start:stop + 1]
                weight = c.sum(0)
                run = np.where(weight > 0, (c * m).sum(0) / np.maximum(weight, 1e-300), 0.0)
                total += float((c * (m - run) ** 2).sum())
                start = stop + 1
            return total
        best = min(cost(ends) for r in range(min(k, n)) for ends in
                   itertools.combinations(range(n - 1), r))
        found = _segments(sums, counts, k)
        assert len(found) <= k - 1
        assert cost(found) == pytest.approx(best, abs=1e-9)


def test_a_pairs_grid_is_cut_where_an_and_switches():
    from rsrank.learning.interactions import pair_grids, row_lambdas

    data = make_interactions(("and",), n_queries=200, random_state=0)
    q = QueryData(data.X, data.y, data.qid, feature_names=data.feature_names)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = RSRank(additive=True, learning_rate="curvature", max_iter=150).fit(q)
    objective = model.setup().solver.objective
    lam = row_lambdas(model.model_, objective, q)
    (cuts_a, cuts_b), = pair_grids(lam, q, [(0, 1)], model.model_.encoding.thresholds, 4)
    for cuts in (cuts_a, cuts_b):  # the AND switches at 0.2 in both features
        assert len(cuts) <= 3 and np.min(np.abs(cuts - 0.2)) < 0.07


def test_a_search_beyond_its_budget_scores_pairs_on_a_seeded_sample_of_whole_queries():
    rng = np.random.default_rng(3)
    sizes = rng.integers(50, 400, size=600)
    qid = np.repeat(np.arange(len(sizes)), sizes)
    data = QueryData(rng.normal(size=(len(qid), 6)), rng.integers(0, 3, len(qid)), qid)
    lam = np.arange(data.n_rows, dtype=np.float64)  # each row's lambda names the row
    pairs = 6 * 5 / 2
    # every pair within the budget: all rows, as given
    same_lam, same = search_rows(lam, data, budget=pairs * data.n_rows)
    assert same is data and same_lam is lam
    # or nearly: a sample of at least SEARCH_KEEP of the rows is not taken
    near = pairs * data.n_rows * (SEARCH_KEEP + 0.01)
    assert search_rows(lam, data, budget=near)[1] is data
    below = pairs * data.n_rows * (SEARCH_KEEP - 0.05)
    assert search_rows(lam, data, budget=below)[1].n_rows < data.n_rows * SEARCH_KEEP
    # beyond it: whole queries of at most the rows the budget allows (or SEARCH_ROWS)
    taken_lam, taken = search_rows(lam, data, budget=pairs * 70_000)
    assert 70_000 - sizes.max() < taken.n_rows <= 70_000
    again_lam, again = search_rows(taken_lam, taken, budget=pairs * 70_000)
    assert again is taken and again_lam is taken_lam  # a sample is its own sample
    rows = taken_lam.astype(np.int64)  # the rows picked, in order, each query whole
    np.testing.assert_array_equal(taken.X, data.X[rows])
    np.testing.assert_array_equal(taken.y, data.y[rows])
    picked = np.unique(qid[rows])
    assert np.array_equal(np.sort(rows), rows)
    assert len(rows) == np.isin(qid, picked).sum()
    # seeded: the same sample every time; never fewer than SEARCH_ROWS rows
    np.testing.assert_array_equal(search_rows(lam, data, budget=pairs * 70_000)[0], taken_lam)
    assert SEARCH_ROWS - sizes.max() < search_rows(lam, data, budget=1.0)[1].n_rows <= SEARCH_ROWS
    assert search_rows(None, data, budget=1.0)[0] is None


@pytest.mark.parametrize("seed", range(6))
def test_the_search_codes_rows_kept_as_codes_as_it_codes_their_values(seed):
    """A search's codes of rows kept as bin codes, mapped from the codes a
    column at a time, are those of their values, on all the rows, a sample
    of them and some of their columns, with missing values and ties."""
    from rsrank.learning.binning import bin_codes, coded_values, fit_thresholds
    from rsrank.learning.interactions import column_codes
    from rsrank.reading._rowsample import RowSample

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    X = np.c_[rng.normal(size=n), rng.integers(0, 4, n), rng.lognormal(size=n) * 1e-6,
              np.round(rng.exponential(size=n), 1)].astype(np.float32)
    X[rng.random(X.shape) < 0.05] = np.nan
    codes, table = coded_values(X, int(rng.integers(2, 257)))
    kept = RowSample(codes, table=table)
    rows = np.sort(rng.choice(n, size=max(1, n // 3), replace=False))
    n_bins = int(rng.integers(2, 17))
    read = np.asarray(kept)
    for coded, values in ((kept, read), (kept.take(rows), read[rows]),
                          (kept.take(rows).take_columns([3, 0]), read[rows][:, [3, 0]])):
        expected = bin_codes(values, fit_thresholds(values, n_bins)).codes.T
        np.testing.assert_array_equal(column_codes(coded, n_bins), expected)
        np.testing.assert_array_equal(column_codes(values, n_bins), expected)


@pytest.mark.parametrize("sparse", [False, True])
def test_gains_in_parts_of_pairs_and_rows_are_the_gains_in_one_piece(monkeypatch, sparse):
    """The search's codes are written a block of rows at a time and its
    histograms filled a part of the pairs at a time: the same gains, bit
    for bit, as one block and one part, on dense and CSR rows with missing
    values."""
    import scipy.sparse as sp

    from rsrank.learning import interactions

    rng = np.random.default_rng(5)
    qid = np.repeat(np.arange(40), 25)
    X = rng.normal(size=(len(qid), 7))
    X[rng.random(X.shape) < 0.3] = 0.0
    X[rng.random(X.shape) < 0.05] = np.nan
    data = QueryData(sp.csr_matrix(X) if sparse else X, rng.integers(0, 3, len(qid)), qid)
    lam = rng.normal(size=len(qid))
    pairs, whole = interactions.gains_at(lam, data, n_bins=4)
    monkeypatch.setattr(interactions, "CODE_ROWS", 64)
    monkeypatch.setattr(interactions, "GAIN_PAIRS", 4)
    same_pairs, parts = interactions.gains_at(lam, data, n_bins=4)
    np.testing.assert_array_equal(same_pairs, pairs)
    np.testing.assert_array_equal(parts, whole)
    assert len(pairs) == 21 and np.all(whole > 0)


def test_a_search_reads_its_sample_of_queries_without_copying_it_and_finds_the_same(
        monkeypatch):
    from rsrank.learning import interactions
    from rsrank.learning.interactions import pair_grids, top_pairs
    from rsrank.reading._rowsample import RowSample

    made = make_interactions(n_queries=300, n_noise=4, random_state=4)  # 8 features
    data = QueryData(made.X.astype(np.float32), made.y, made.qid)
    model = RSRank(additive=True, max_iter=5, random_state=0).fit(data)
    lam = np.random.default_rng(2).normal(size=data.n_rows)
    monkeypatch.setattr(interactions, "SEARCH_ROWS", 1_000)
    budget = 45 * data.n_rows / 2  # a sample of about half the rows
    taken_lam, taken = search_rows(lam, data, budget=budget)
    assert isinstance(taken.X, RowSample) and taken.X.base is data.X
    queries = np.flatnonzero(np.isin(data.qids, np.unique(taken.qids)))
    copied = data.subset(queries)  # the same queries, copied
    assert isinstance(copied.X, np.ndarray) and copied.n_rows == taken.n_rows
    # a sample of the sample reads the same rows, copied only when asked
    first = np.arange(3)
    assert taken.subset(first, copy=False).X.base is data.X
    np.testing.assert_array_equal(taken.subset(first).X, copied.subset(first).X)
    assert isinstance(taken.subset(first).X, np.ndarray)
    pairs = top_pairs(model.model_, taken_lam, taken, 3, budget=budget)
    assert len(pairs) == 3
    np.testing.assert_array_equal(pairs, top_pairs(model.model_, taken_lam, copied, 3,
                                                   budget=budget))
    thresholds = model.model_.encoding.thresholds
    for lazy, copy in zip(pair_grids(taken_lam, taken, pairs, thresholds),
                          pair_grids(taken_lam, copied, pairs, thresholds)):
        for a, b in zip(lazy, copy):
            np.testing.assert_array_equal(a, b)
    # an additive model fitted on either is the same model
    fits = [RSRank(additive=True, max_iter=3, random_state=0).fit(part).model_.coef
            for part in (taken, copied)]
    np.testing.assert_array_equal(*fits)
