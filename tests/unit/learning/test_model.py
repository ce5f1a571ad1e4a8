"""An additive model's scores from the columns it reads alone
(:meth:`AdditiveModel.narrowed`) against brute force: each step of each
feature in use adds its height where ``x > t`` in float32, each pair in use
the value of the row's cell, and a feature or pair without a step off zero
adds nothing, so it is neither read nor coded."""

import numpy as np
import pytest
import scipy.sparse as sp

from rsrank.learning.binning import PairEncoding, StepEncoding
from rsrank.learning.model import AdditiveModel, InteractionModel, query_scores
from rsrank.reading.querydata import QueryData

THRESHOLDS = [np.array([-0.5, 0.0, 0.5], np.float32), np.array([0.0], np.float32),
              np.array([-1.0, 1.0], np.float32), np.array([-0.2, 0.3, 0.9], np.float32),
              np.array([0.1, np.inf], np.float32)]  # the last: a missing value's bin
GRIDS = [(np.array([0.0], np.float32), np.array([-0.5, 0.5], np.float32)),
         (np.array([0.0], np.float32), np.array([0.0], np.float32))]


def brute_scores(X, thresholds, coef, pairs=(), grids=(), cells=()):
    """Step heights summed where ``x > t`` (NaN: the missing value's bin,
    above +inf, where the cuts have one; else read as 0), then each pair's
    value at the row's cell."""
    X = np.asarray(X, dtype=np.float32)
    out, at = np.zeros(len(X)), 0

    def code(x, cuts):
        if np.isnan(x):
            return len(cuts) if len(cuts) and np.isposinf(cuts[-1]) else int(np.sum(0 > cuts))
        return int(np.sum(x > cuts))

    for j, cuts in enumerate(thresholds):
        for r, x in enumerate(X[:, j]):
            out[r] += coef[at:at + code(x, cuts)].sum()
        at += len(cuts)
    for (a, b), (cuts_a, cuts_b), steps in zip(pairs, grids, cells):
        for r in range(len(X)):
            cell = code(X[r, a], cuts_a) * (len(cuts_b) + 1) + code(X[r, b], cuts_b)
            out[r] += steps[:cell].sum()
    return out


def rows(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, len(THRESHOLDS))).astype(np.float32)
    X[rng.random(n) < 0.1, 4] = np.nan
    return X


def additive():
    encoding = StepEncoding(THRESHOLDS)
    coef = np.zeros(encoding.n_steps)
    coef[encoding.bins[0]:encoding.bins[1]] = [0.5, -1.0, 2.0]
    coef[encoding.bins[4]:encoding.bins[5]] = [0.25, -3.0]  # and its missing value's step
    return AdditiveModel(coef, encoding)


def interactions():
    """Feature 0's shape, pair (1, 3) on features without shapes of their
    own, and pair (0, 2) at zero."""
    encoding = PairEncoding(THRESHOLDS, [[1, 3], [0, 2]], GRIDS)
    coef = np.zeros(encoding.n_steps)
    coef[encoding.bins[0]:encoding.bins[1]] = [0.5, -1.0, 2.0]
    first = encoding.bins[len(THRESHOLDS)]
    coef[first:first + 5] = [1.0, -2.0, 0.0, 4.0, 0.5]
    return InteractionModel(coef, encoding)


def test_an_additive_model_reads_its_features_in_use_alone():
    model = additive()
    narrow, features = model.narrowed()
    np.testing.assert_array_equal(features, [0, 4])
    assert narrow.encoding.n_features == 2 and narrow.encoding.n_steps == 5
    X = rows()
    expected = brute_scores(X, THRESHOLDS, model.coef)
    np.testing.assert_allclose(model.score_matrix(X), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.score_matrix(sp.csr_matrix(np.nan_to_num(X))),
                               brute_scores(np.nan_to_num(X), THRESHOLDS, model.coef),
                               rtol=1e-12, atol=1e-12)


def test_a_pair_reads_its_features_without_their_thresholds():
    model = interactions()
    narrow, features = model.narrowed()
    np.testing.assert_array_equal(features, [0, 1, 3])  # pair (0, 2) is at zero
    np.testing.assert_array_equal(narrow.encoding.pairs, [[1, 2]])
    assert [len(t) for t in narrow.encoding.thresholds[:3]] == [3, 0, 0]
    assert len(narrow.coef) == 3 + 5
    X = rows(seed=1)
    X[::7, 3] = np.nan  # read by the pair alone, whose grid reads it as 0
    cells = [model.coef[model.encoding.bins[5]:model.encoding.bins[6]],
             model.coef[model.encoding.bins[6]:model.encoding.bins[7]]]
    expected = brute_scores(X, THRESHOLDS, model.coef, [[1, 3], [0, 2]], GRIDS, cells)
    full = model.score_rows(model.encoding.rows(X))
    np.testing.assert_allclose(model.score_matrix(X), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(model.score_matrix(X), full, rtol=1e-12, atol=1e-12)


def test_a_model_at_zero_reads_nothing():
    encoding = StepEncoding(THRESHOLDS)
    model = AdditiveModel(np.zeros(encoding.n_steps), encoding)
    assert len(model.narrowed()[1]) == 0
    np.testing.assert_array_equal(model.score_matrix(rows(10)), np.zeros(10))
    data = QueryData(rows(10), np.zeros(10), np.repeat([1, 2], 5))
    np.testing.assert_array_equal(query_scores(model, data), np.zeros(10))


@pytest.mark.parametrize("make", [additive, interactions])
def test_query_scores_are_the_same_coded_shared_or_narrowed(make):
    model = make()
    X = rows(seed=2)
    data = QueryData(X, np.zeros(len(X)), np.repeat(np.arange(40), 10))
    alone = query_scores(model, data)
    shared = query_scores(model, data, shared=True)
    np.testing.assert_allclose(alone, shared, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(alone, model.score_rows(model.encoding.rows(X)),
                               rtol=1e-12, atol=1e-12)


def test_rows_coded_already_are_scored_as_they_are():
    """A fit's training rows, coded under the model's own encoding (their
    values may be gone), are scored from those codes, not coded again."""
    model = additive()
    X = rows(seed=3)
    data = QueryData(X, np.zeros(len(X)), np.repeat(np.arange(40), 10))
    made = data.rows(model.view)
    assert data.rows_held(model.view) is made
    np.testing.assert_array_equal(query_scores(model, data), model.score_rows(made))


@pytest.mark.parametrize("make", [additive, interactions])
def test_a_dense_matrix_is_coded_a_block_of_rows_at_a_time_to_the_same_scores(make,
                                                                               monkeypatch):
    from rsrank.learning import model as models

    model = make()
    X = rows(seed=4)
    whole = model.score_matrix(X)
    monkeypatch.setattr(models, "NARROW_ROWS", 7)  # 400 rows: 58 blocks, the last of 1
    np.testing.assert_array_equal(model.score_matrix(X), whole)
    data = QueryData(X, np.zeros(len(X)), np.repeat(np.arange(40), 10))
    np.testing.assert_array_equal(query_scores(model, data), whole[data.order])
