"""Candidate pairwise interactions, found from the ranking objective itself.

At a fitted model's ranking every row has a pair gradient (its
|Delta NDCG|-weighted lambda, :meth:`rsrank.objective.Objective.row_lambdas`):
the direction a further term of the model would have to follow. On a coarse
bin grid of two features, the share of the lambdas' variation that the
grid's cells explain beyond each feature's own bins is the two-way
interaction sum of squares: what a step function of the pair could still
fit that the model's one-feature shapes cannot. It is the gain of FAST
(Lou, Caruana, Gehrke and Hooker, KDD 2013) computed on the ranking
objective's gradients instead of a regression residual, over the whole grid
instead of its best 2x2 cut. Every pair's histogram comes from one pass
over the rows (:func:`rsrank._kernels.pair_histograms`).
"""

import itertools

import numpy as np
import scipy.sparse as sp

from . import _kernels
from .binning import bin_codes, fit_thresholds
from .querydata import QueryData

__all__ = ["pair_gains", "interaction_gain"]


def _dense_codes(X, n_bins):
    """One uint8 code per row and feature on a grid of at most ``n_bins``
    quantile bins per feature."""
    codes = bin_codes(X, fit_thresholds(X, n_bins))
    if codes.dense:
        return np.ascontiguousarray(codes.codes)
    out = np.tile(codes.zero_codes.astype(np.uint8), (codes.shape[0], 1))
    rows = np.repeat(np.arange(codes.shape[0]), np.diff(codes.indptr))
    out[rows, codes.indices] = codes.codes
    return out


def interaction_gain(sums, counts, n_bins, rounds=50):
    """The two-way interaction sum of squares of a pair's grid (``sums``
    and ``counts`` of the values per cell, ``code_a * n_bins + code_b``):
    the count-weighted squares of the cell means that the best sum of a
    row effect and a column effect leaves (fitted by ``rounds`` of
    backfitting on the grid; exact for any counts, not only balanced
    ones). With one grid per row of ``sums`` and ``counts`` (shape
    ``(n_pairs, n_bins ** 2)``), every pair at once: an array of gains."""
    single = np.ndim(sums) == 1
    sums = np.reshape(sums, (-1, n_bins, n_bins))
    counts = np.reshape(counts, (-1, n_bins, n_bins))
    filled = counts > 0
    means = np.where(filled, sums / np.where(filled, counts, 1), 0.0)
    rows, columns = np.zeros(sums.shape[:2]), np.zeros(sums.shape[:2])
    row_counts, column_counts = counts.sum(2), counts.sum(1)
    for _ in range(rounds):
        rows = np.where(row_counts > 0, (counts * (means - columns[:, None, :])).sum(2)
                        / np.maximum(row_counts, 1), 0.0)
        columns = np.where(column_counts > 0, (counts * (means - rows[:, :, None])).sum(1)
                           / np.maximum(column_counts, 1), 0.0)
    left = means - rows[:, :, None] - columns[:, None, :]
    gains = np.sum(np.where(filled, counts * left ** 2, 0.0), axis=(1, 2))
    return float(gains[0]) if single else gains


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
    if not (isinstance(n_bins, (int, np.integer)) and 2 <= n_bins <= 16):
        raise ValueError(f"n_bins must be an integer from 2 to 16, got {n_bins!r}")
    data = X if isinstance(X, QueryData) else QueryData(X, y, qid)
    model = estimator.model_
    objective = estimator.setup().solver.objective
    lam = objective.row_lambdas(data, model.coef, view=model.view,
                                scale=model.training_scale())
    features = (np.arange(data.n_features) if candidates is None
                else np.unique(np.asarray(candidates, dtype=np.int64)))
    pairs = np.array(list(itertools.combinations(features, 2)), dtype=np.int64).reshape(-1, 2)
    codes = _dense_codes(data.X if not sp.issparse(data.X) else sp.csr_matrix(data.X), n_bins)
    sums = np.zeros((len(pairs), n_bins * n_bins))
    counts = np.zeros((len(pairs), n_bins * n_bins))
    _kernels.pair_histograms(codes, lam, np.ascontiguousarray(pairs[:, 0]),
                             np.ascontiguousarray(pairs[:, 1]), n_bins, sums, counts)
    names = model.names()
    gains = [((names[a], names[b]), float(gain))
             for (a, b), gain in zip(pairs, interaction_gain(sums, counts, n_bins))]
    return sorted(gains, key=lambda item: -item[1])
