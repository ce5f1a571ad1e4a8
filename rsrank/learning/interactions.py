"""Candidate pairwise interactions, found from the ranking objective itself.

At a fitted model's ranking every row has a pair gradient (its
|Delta NDCG|-weighted lambda, :meth:`rsrank.learning.objective.Objective.row_lambdas`):
the direction a further term of the model would have to follow. On a coarse
bin grid of two features, the share of the lambdas' variation that the
grid's cells explain beyond each feature's own bins is the two-way
interaction sum of squares: what a step function of the pair could still
fit that the model's one-feature shapes cannot. It is the gain of FAST
(Lou, Caruana, Gehrke and Hooker, KDD 2013) computed on the ranking
objective's gradients instead of a regression residual, over the whole grid
instead of its best 2x2 cut. Every pair's histogram comes from one pass
over the rows, a block of rows at a time
(:func:`rsrank._kernels.pair_histograms_serial`, ``_parallel``).
"""

import itertools

import numpy as np
import scipy.sparse as sp

from .. import _kernels
from ._compile import choose
from ._threads import SCORING_WORK_PER_THREAD, numba_threads, threads
from .binning import bin_codes, code_maps, fit_thresholds
from ..reading.querydata import QueryData, query_rows, sample_queries
from ..reading._rowsample import RowSample

__all__ = ["pair_gains", "interaction_gain", "interaction_residuals", "row_lambdas",
           "column_codes", "gains_at", "top_pairs", "candidate_features", "pair_grids",
           "search_rows", "SEARCH_WORK", "SEARCH_ROWS", "SEARCH_KEEP"]


def _dense_codes(X, n_bins, thresholds=None):
    """One uint8 code per row and feature on a grid of at most ``n_bins``
    quantile bins per feature (or on ``thresholds``), and a code above them
    for a missing value."""
    codes = bin_codes(X, fit_thresholds(X, n_bins) if thresholds is None else thresholds)
    if codes.dense:
        return np.ascontiguousarray(codes.codes)
    out = np.tile(codes.zero_codes.astype(np.uint8), (codes.shape[0], 1))
    rows = np.repeat(np.arange(codes.shape[0]), np.diff(codes.indptr))
    out[rows, codes.indices] = codes.codes
    return out


#: rows whose codes :func:`column_codes` holds at a time
CODE_ROWS = 65_536


def column_codes(X, n_bins):
    """The codes of ``X`` on a grid of at most ``n_bins`` quantile bins per
    feature, as :func:`_dense_codes` gives them, a feature to a row: a
    feature's codes contiguous. Rows kept as bin codes (a coded
    ``RowSample``) have their codes mapped
    (:func:`~rsrank.learning.binning.code_maps`) in one pass over the rows,
    never read as values; other rows are coded :data:`CODE_ROWS` at a time,
    so that their codes are never held in both layouts."""
    thresholds = fit_thresholds(X, n_bins)
    if isinstance(X, RowSample) and X.coded:
        return X.mapped_columns(code_maps(X, thresholds)[0])
    out = np.empty((X.shape[1], X.shape[0]), dtype=np.uint8)
    for lo in range(0, X.shape[0], CODE_ROWS):
        out[:, lo:lo + CODE_ROWS] = _dense_codes(X[lo:lo + CODE_ROWS], n_bins, thresholds).T
    return out


def interaction_residuals(sums, counts, rounds=50):
    """``(left, filled)`` of grids of cells (``sums`` and ``counts`` of the
    values per cell, shape ``(n_grids, n_a, n_b)``): the cell means less
    the best sum of a row effect and a column effect (fitted by ``rounds``
    of count-weighted backfitting, :func:`rsrank._kernels.grid_residuals`;
    exact for any counts, not only balanced ones), and which cells hold
    any value."""
    sums = np.ascontiguousarray(sums, dtype=np.float64)
    counts = np.ascontiguousarray(counts, dtype=np.float64)
    left = np.empty(sums.shape)
    _kernels.grid_residuals(sums, counts, int(rounds), left)
    return left, counts > 0


def interaction_gain(sums, counts, n_bins, rounds=50):
    """The two-way interaction sum of squares of a pair's grid (``sums``
    and ``counts`` of the values per cell, ``code_a * n_bins + code_b``):
    the count-weighted squares of the cell means that the best sum of a
    row effect and a column effect leaves (:func:`interaction_residuals`).
    With one grid per row of ``sums`` and ``counts`` (shape
    ``(n_pairs, n_bins ** 2)``), every pair at once: an array of gains."""
    single = np.ndim(sums) == 1
    sums = np.reshape(sums, (-1, n_bins, n_bins))
    counts = np.reshape(counts, (-1, n_bins, n_bins))
    gains = np.empty(len(sums))
    # the grids GAIN_GRIDS at a time: their residuals and squares stay
    # small beside every pair's histograms
    for lo in range(0, len(sums), GAIN_GRIDS):
        part = slice(lo, lo + GAIN_GRIDS)
        left, _ = interaction_residuals(sums[part], counts[part], rounds)
        gains[part] = np.sum(counts[part] * left ** 2, axis=(1, 2))
    return float(gains[0]) if single else gains


#: the grids :func:`interaction_gain` backfits at once
GAIN_GRIDS = 256


def row_lambdas(model, objective, data):
    """The pair gradient of every row at ``model``'s ranking of ``data``."""
    return objective.row_lambdas(data, model.coef, view=model.view,
                                 scale=model.training_scale())


def pair_gains(estimator, X, y=None, *, qid=None, candidates=None, n_bins=8):
    """Pairs of features by the interaction gain of the pair gradients at a
    fitted estimator's ranking, largest first.

    Parameters
    ----------
    estimator : fitted RSRank
        The model whose ranking the gradients are taken at (an additive
        model's shapes, a linear model's weights).
    X, y, qid : training data, or a QueryData as ``X``
    candidates : sequence of int, optional
        The features whose pairs are scored (default: every feature); the
        histograms of all their pairs come from one pass over the rows.
    n_bins : int
        Quantile bins per feature of the grid (2 to 16).

    Returns
    -------
    list of ((name_a, name_b), gain)
        Every pair of ``candidates``, by decreasing gain.
    """
    data = X if isinstance(X, QueryData) else QueryData(X, y, qid)
    model = estimator.model_
    names = model.names()
    lam = row_lambdas(model, estimator.setup().solver.objective, data)
    pairs, gains = gains_at(lam, data, candidates, n_bins, estimator.n_jobs)
    order = np.argsort(-gains, kind="stable")
    return [((names[pairs[i, 0]], names[pairs[i, 1]]), float(gains[i])) for i in order]


def gains_at(lam, data, candidates=None, n_bins=8, n_jobs=None):
    """``(pairs, gains)``: every pair of ``candidates`` (feature indices;
    default all) as an ``(n_pairs, 2)`` array and the interaction gain of
    the rows' pair gradients ``lam`` (:func:`row_lambdas`) over ``data`` (a
    :class:`QueryData`) on a grid of ``n_bins`` quantile bins per feature;
    the histograms on ``n_jobs`` threads (:func:`~rsrank.learning._threads.threads`,
    by the row visits)."""
    if not (isinstance(n_bins, (int, np.integer)) and 2 <= n_bins <= 16):
        raise ValueError(f"n_bins must be an integer from 2 to 16, got {n_bins!r}")
    features = (np.arange(data.n_features) if candidates is None
                else np.unique(np.asarray(candidates, dtype=np.int64)))
    pairs = np.array(list(itertools.combinations(features, 2)), dtype=np.int64).reshape(-1, 2)
    if len(pairs) == 0:
        return pairs, np.zeros(0)
    grids = _PairGrids(data, pairs, n_bins)
    gains = np.empty(len(pairs))
    # GAIN_PAIRS pairs' histograms at a time: all 9,180 pairs of 136 features
    # on grids of 16 x 16 would hold 38 MB of them. With the codes written a
    # block of rows at a time, the gains' stage peaked at 629-632 MiB at a tenth
    # of MSLR-WEB30K's shape, below the 666-673 MiB of the fit's other stages
    # (results/stages_search_*_tenth.md)
    for lo in range(0, len(pairs), GAIN_PAIRS):
        part = slice(lo, lo + GAIN_PAIRS)
        sums, counts = grids.histograms(lam, n_jobs, part)
        gains[part] = interaction_gain(sums, counts, grids.side)
    return pairs, gains


#: the pairs whose histograms :func:`gains_at` fills at once
GAIN_PAIRS = 1024


class _PairGrids:
    """The cells of ``pairs`` (an ``(n_pairs, 2)`` array) on a grid of at
    most ``n_bins`` quantile bins per feature of ``data``'s rows (a code
    above them for a missing value)."""

    def __init__(self, data, pairs, n_bins):
        self.pairs = pairs
        features = np.unique(pairs)
        X = data.X if not sp.issparse(data.X) else sp.csr_matrix(data.X)
        self.columns = column_codes(_columns_of(X, features), n_bins)
        # a feature with missing values has one more code, its missing value's
        self.side = max(n_bins, int(self.columns.max(initial=0)) + 1)
        where = np.full(data.n_features, -1, dtype=np.int64)
        where[features] = np.arange(len(features))
        self.first = np.ascontiguousarray(where[pairs[:, 0]])
        self.second = np.ascontiguousarray(where[pairs[:, 1]])
        self.n_rows = self.columns.shape[1]

    def histograms(self, lam, n_jobs=None, part=slice(None)):
        """``(sums, counts)`` of ``lam`` per cell of every pair (or of the
        pairs ``part``, a slice), each ``(n_pairs, side * side)``, the rows a
        block at a time on ``n_jobs`` threads (by the row visits)."""
        first, second = self.first[part], self.second[part]
        cells = np.zeros((len(first), self.side * self.side, 2))  # each cell's sum and count
        args = (self.columns, np.ascontiguousarray(lam, dtype=np.float64), first, second,
                self.side, cells)
        n = threads(n_jobs, len(first) * self.n_rows, SCORING_WORK_PER_THREAD)
        with numba_threads(n):
            choose(_kernels.pair_histograms_serial, _kernels.pair_histograms_parallel, n,
                   args)(*args)
        return cells[..., 0], cells[..., 1]

    def cells(self, p):
        """Each row's cell on pair ``p``'s grid."""
        return (self.columns[self.first[p]].astype(np.int64) * self.side
                + self.columns[self.second[p]])


def _columns_of(X, features):
    if len(features) == X.shape[1]:
        return X
    if isinstance(X, RowSample):
        return X.take_columns(features)
    return sp.csc_matrix(X)[:, features] if sp.issparse(X) else np.asarray(X)[:, features]


#: the most row-pair visits (rows x candidate pairs) of one search: beyond
#: it (MSLR-WEB30K's 136 features over more than 218,000 rows) the gains
#: come from a sample of queries (:func:`search_rows`), and only where even
#: :data:`SEARCH_ROWS` rows cannot hold every pair (over 283 features) are
#: the candidates the features the model uses most, then the others by the
#: variation of their pair gradients over their bins. A smaller budget
#: is faster and worse: at a tenth of the shape of ``make_web_like``,
#: ``--additive --interactions 10`` took 25 s against 35 at 1e9 and lost a
#: pair, test NDCG@10 0.6727 against 0.6812 (LightGBM 0.6839;
#: ``results/search_budget_web_tenth_tried.md``)
SEARCH_WORK = 2e9


def candidate_features(model, lam, data, budget=None, n_bins=8):
    """The features whose pairs a search scores: every feature when all
    pairs fit ``budget`` row visits over :data:`SEARCH_KEEP` of the rows
    (as :func:`search_rows` takes them), else as many as fit, the features of
    the largest shapes of ``model`` (an additive model) first, then those
    whose pair gradients vary most between their own bins. A screen of one
    feature at a time cannot see a pair without any one-feature effect (an
    XOR) between two features the model does not use: on data that large,
    such a pair is found only when its features are among the first."""
    budget = SEARCH_WORK if budget is None else budget
    # the slack of search_rows: the rows it takes all of, it takes all pairs on
    width, rows = data.n_features, max(data.n_rows, 1) * SEARCH_KEEP
    most = int((1 + np.sqrt(1 + 8 * budget / rows)) / 2)
    if width <= most:
        return np.arange(width)
    ranges = model.feature_ranges()[:width]
    X = data.X if not sp.issparse(data.X) else sp.csr_matrix(data.X)
    codes = _dense_codes(X, n_bins)
    spread = np.zeros(width)
    for j in range(width):
        sums = np.bincount(codes[:, j], weights=lam, minlength=n_bins)
        counts = np.bincount(codes[:, j], minlength=n_bins)
        spread[j] = np.sum(np.where(counts > 0, sums ** 2 / np.maximum(counts, 1), 0.0))
    order = np.lexsort((-spread, -ranges))
    return np.sort(order[:max(most, 2)])


#: the fewest rows of a search's sample of queries (:func:`search_rows`)
SEARCH_ROWS = 50_000
#: the share of the rows beyond which a search takes them all rather than a
#: sample (:func:`search_rows`): a sample of nearly every row saves little
#: work and costs a copy of its values, then its own bins and codes. At a
#: tenth of MSLR-WEB30K's shape (227,000 rows, a sample of 217,718) all rows
#: took the peak memory of ``--additive --interactions 10`` from 747 to 638
#: MiB on ``make_web_like`` and on ``make_mslr_like``'s non-linear teacher
#: (``results/search_whole_*_tenth.md``), in 0.92x and 0.95x the time, test
#: NDCG@10 0.6792 against 0.6812 and 0.9659 against 0.9642 (LightGBM 0.6839
#: and 0.9720)
SEARCH_KEEP = 0.9


def search_rows(lam, data, budget=None):
    """``(lam, data)`` of the rows a search scores its pairs on: all of
    them while every pair of features fits ``budget`` row visits over
    :data:`SEARCH_KEEP` of them, else the
    whole queries of a seeded order while their rows fit that many (or
    :data:`SEARCH_ROWS`, when more), so that a sample is its own sample
    (``lam`` None: only the rows are taken). A gain is a sum over rows, so
    a sample of queries estimates every pair's, where a screen of features
    first would drop
    the pairs whose features have no effect of their own: a feature constant
    within each query (a query's length) has none, as the pair gradients of
    a query sum to 0, yet it may switch another feature's effect; at a
    quarter of MSLR-WEB30K's shape such a pair of ``make_web_like`` was
    dropped by the screen and found on a sample."""
    budget = SEARCH_WORK if budget is None else budget
    width = data.n_features
    rows = max(budget / max(width * (width - 1) / 2, 1), SEARCH_ROWS)
    if data.n_rows * SEARCH_KEEP <= rows:
        return lam, data
    queries = sample_queries(data, rows, reach=False)
    sample = data.subset(queries, copy=False)
    if lam is None:
        return None, sample
    picked = query_rows(np.r_[0, np.cumsum(data.sizes)], queries)
    return np.asarray(lam)[picked], sample


#: the pairs of largest gain that :func:`top_pairs` scores again as it
#: keeps pairs, per pair it may keep
RESCORED = 3


def top_pairs(model, lam, data, k, n_bins=8, budget=None, n_jobs=None):
    """The ``k`` pairs of largest interaction gain (:func:`gains_at`, on
    ``n_jobs`` threads) of the pair gradients ``lam`` at ``model``'s ranking
    on :func:`search_rows`, among :func:`candidate_features`, kept one at a
    time: after each, the gradients less the kept pair's interaction (its
    grid's cell means beyond both features' own effects) and the
    ``RESCORED * k`` pairs of largest gain scored again on what is left, so
    that a pair which only echoes a kept one (a feature standing in for its
    partner: a correlated score, another column constant within queries
    beside one that switches an effect) loses its gain with it. Returns a
    ``(k, 2)`` array of feature indices in increasing order (fewer when
    fewer pairs have a gain above 0)."""
    lam, data = search_rows(lam, data, budget)
    candidates = candidate_features(model, lam, data, budget, n_bins)
    pairs, gains = gains_at(lam, data, candidates, n_bins, n_jobs)
    order = np.argsort(-gains, kind="stable")[:RESCORED * k]
    order = np.sort(order[gains[order] > 0])
    if len(order) == 0 or k < 1:
        return pairs[:0]
    grids = _PairGrids(data, pairs[order], n_bins)
    left, kept = np.array(lam, dtype=np.float64), []
    for _ in range(min(k, len(order))):
        sums, counts = grids.histograms(left, n_jobs)
        gains = interaction_gain(sums, counts, grids.side)
        gains[kept] = -np.inf
        best = int(np.argmax(gains))
        if not gains[best] > 0:
            break
        kept.append(best)
        shape = (1, grids.side, grids.side)
        residual, _ = interaction_residuals(sums[best].reshape(shape),
                                            counts[best].reshape(shape))
        left -= residual.reshape(-1)[grids.cells(best)]
    return pairs[order[np.sort(kept)]]


def _segments(sums, counts, n_segments):
    """The best split of the rows of a table into at most ``n_segments``
    runs of consecutive rows: the one whose run means of each column leave
    the least count-weighted sum of squares of the row means around them
    (exact, by dynamic programming). Returns the last row of every run but
    the last."""
    n = sums.shape[0]
    means = np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)
    # prefix sums over rows of the weights, weighted means and squares, per column
    w = np.vstack([np.zeros(counts.shape[1]), np.cumsum(counts, axis=0)])
    wm = np.vstack([np.zeros(counts.shape[1]), np.cumsum(counts * means, axis=0)])
    wmm = np.vstack([np.zeros(counts.shape[1]), np.cumsum(counts * means ** 2, axis=0)])

    k_max = min(n_segments, n)
    best = np.full((k_max + 1, n + 1), np.inf)
    back = np.zeros((k_max + 1, n + 1), dtype=np.int64)
    best[0, 0] = 0.0
    costs = np.full((n + 1, n + 1), np.inf)  # rows i..j-1 as one run, inf from i = j on
    _kernels.run_costs(w, wm, wmm, costs)
    for k in range(1, k_max + 1):  # every end j at once: costs[i, j] is inf from i = j on
        options = best[k - 1, :, None] + costs
        back[k] = np.argmin(options, axis=0)
        best[k] = options[back[k], np.arange(n + 1)]
    k = int(np.argmin(best[1:, n])) + 1
    ends, j = [], n
    while k > 0:
        i = back[k, j]
        if i > 0:
            ends.append(i - 1)
        j, k = i, k - 1
    return sorted(ends)


def pair_grids(lam, data, pairs, thresholds, n_bins=8):
    """Each pair's grid, cut where its interaction changes: on the grid of
    both features' own ``thresholds`` (a model's, up to 256 bins each), the
    pair gradients ``lam`` (:func:`row_lambdas`) less each feature's own effect
    (backfitted on that grid), and each feature's bins merged into at most
    ``n_bins`` runs of consecutive bins that keep that interaction best
    (:func:`_segments`); a missing value's bin stays a run of its own.
    Returns ``[(cuts_a, cuts_b), ...]``, cuts among ``thresholds``."""
    X = data.X if not sp.issparse(data.X) else sp.csr_matrix(data.X)
    out = []
    for a, b in np.asarray(pairs, dtype=np.int64).reshape(-1, 2):
        cuts = [thresholds[a], thresholds[b]]
        codes = bin_codes(_columns_of(X, [a, b]), cuts).toarray().astype(np.int64)
        shape = (len(cuts[0]) + 1, len(cuts[1]) + 1)
        cells = codes[:, 0] * shape[1] + codes[:, 1]
        size = shape[0] * shape[1]
        sums = np.bincount(cells, lam, size).reshape(shape)
        counts = np.bincount(cells, minlength=size).astype(float).reshape(shape)
        left = interaction_residuals(sums[None], counts[None])[0][0] * counts
        grid = []
        for axis, feature_cuts in enumerate(cuts):
            table, weight = (left, counts) if axis == 0 else (left.T, counts.T)
            missing = len(feature_cuts) > 0 and not np.isfinite(feature_cuts[-1])
            valued = len(feature_cuts) + 1 - missing
            ends = _segments(table[:valued], weight[:valued], n_bins - missing)
            chosen = np.asarray(feature_cuts)[ends]
            if missing:
                chosen = np.r_[chosen, feature_cuts[-1]]
            grid.append(np.ascontiguousarray(chosen, dtype=np.float32))
        out.append(tuple(grid))
    return out
