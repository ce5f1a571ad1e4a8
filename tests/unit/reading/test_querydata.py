"""rsrank.reading.querydata: the rows of a set of whole queries."""

import numpy as np
import pytest
import scipy.sparse as sp

from rsrank.reading.querydata import QueryData, query_rows


@pytest.mark.parametrize("seed", range(5))
def test_query_rows_are_each_chosen_querys_rows_in_order(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        sizes = rng.integers(0, 6, rng.integers(1, 30))  # empty queries too
        offsets = np.r_[0, np.cumsum(sizes)]
        queries = np.sort(rng.choice(len(sizes), rng.integers(0, len(sizes) + 1),
                                     replace=False))
        expected = [row for q in queries for row in range(offsets[q], offsets[q + 1])]
        rows = query_rows(offsets, queries)
        assert rows.dtype == np.int64
        assert rows.tolist() == expected


def test_a_value_held_under_a_key_is_given_within_and_the_key_restored_after():
    data = QueryData(np.eye(4), np.array([1.0, 0.0, 1.0, 0.0]), np.array([1, 1, 2, 2]))
    made = []
    with data.holding("k", "held"):
        assert data.memo("k", lambda: made.append(1) or "made") == "held"
    assert data.memo("k", lambda: made.append(1) or "made") == "made" and made == [1]
    with data.holding("k", "held"):
        assert data.memo("k", lambda: "other") == "held"
    assert data.memo("k", lambda: "other") == "made"  # what it kept before, back


def test_forget_drops_what_the_rows_keep_and_it_is_made_again_the_same():
    rng = np.random.default_rng(3)
    data = QueryData(rng.normal(size=(40, 3)), rng.integers(0, 3, 40), np.repeat(np.arange(5), 8))
    encoding = data.step_encoding(8)
    codes = data.rows(encoding).dense_codes
    assert data.step_encoding(8) is encoding  # kept
    data.forget()
    again = data.step_encoding(8)
    assert again is not encoding and again.key == encoding.key
    np.testing.assert_array_equal(data.rows(again).dense_codes, codes)


def test_a_pair_encoding_keeps_the_features_codes_only_in_its_own_rows(monkeypatch):
    """The pair encoding's rows hold the features' codes as their first
    columns: codes made for it alone are not kept beside them (asked for
    later, they are made again, the same), and codes that a model of the
    features read before stay kept."""
    from rsrank.learning.binning import StepEncoding

    rng = np.random.default_rng(4)
    X, y, qid = rng.normal(size=(60, 4)), rng.integers(0, 3, 60), np.repeat(np.arange(6), 10)
    fresh, used = QueryData(X, y, qid), QueryData(X, y, qid)
    step_codes = used.rows(used.step_encoding(8)).dense_codes
    pairs = used.pair_encoding(8, [[0, 2]], 4)
    assert fresh.pair_encoding(8, [[0, 2]], 4).key == pairs.key
    made = []
    monkeypatch.setattr(StepEncoding, "query_rows", lambda self, X, groups: made.append(1)
                        or StepEncoding.rows(self, X, groups.offsets))
    assert used.rows(used.step_encoding(8)).dense_codes is step_codes and made == []
    np.testing.assert_array_equal(fresh.rows(fresh.step_encoding(8)).dense_codes, step_codes)
    assert made == [1]  # made again: the pair encoding did not keep them
    for data in (fresh, used):  # the pair rows begin with the features' codes
        np.testing.assert_array_equal(data.rows(pairs).dense_codes[:, :4], step_codes)


def test_a_pair_encoding_made_first_codes_the_features_into_its_own_array(monkeypatch):
    """Made before any model of the features alone, a pair encoding codes
    them once, into its rows' first columns (no array of their own), and
    keeps the features' encoding with the same thresholds and bin counts
    as one made first."""
    from rsrank.learning import binning

    rng = np.random.default_rng(5)
    X, y, qid = rng.normal(size=(80, 5)), rng.integers(0, 3, 80), np.repeat(np.arange(8), 10)
    calls = []
    coded = binning.bin_codes
    monkeypatch.setattr(binning, "bin_codes", lambda *args, **kw: calls.append(
        kw.get("out") is not None) or coded(*args, **kw))
    fresh = QueryData(X, y, qid)
    pairs = fresh.pair_encoding(8, [[1, 3], [0, 4]], 4)
    assert calls == [True]  # once, into the pair rows
    monkeypatch.setattr(binning, "bin_codes", coded)
    used = QueryData(X, y, qid)
    steps = used.step_encoding(8)
    assert used.pair_encoding(8, [[1, 3], [0, 4]], 4).key == pairs.key
    kept = fresh.step_encoding(8)
    assert kept.key == steps.key
    for a, b in zip(kept.counts, steps.counts):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(fresh.rows(pairs).dense_codes, used.rows(pairs).dense_codes)


def test_rows_whose_values_go_once_coded_keep_their_codes_and_refuse_their_values():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(120, 4)).astype(np.float32)
    qid = np.repeat(np.arange(6), 20)
    y = rng.integers(0, 3, 120)
    data, kept = QueryData(X, y, qid), QueryData(X.copy(), y, qid)
    called = []
    data.let_values_go_once_coded(lambda: called.append(True))
    assert data.X is not None and not called  # nothing goes before the rows are coded
    steps = data.step_encoding(16)
    assert called == [True]
    with pytest.raises(RuntimeError, match="let go once they were coded into bins"):
        data.X
    assert (data.n_rows, data.n_features, data.n_stored) == (120, 4, 480)
    assert "dense float32" in repr(data)
    # what was derived from them stays: the codes, and the same encoding again
    np.testing.assert_array_equal(data.rows(steps).dense_codes,
                                  kept.rows(kept.step_encoding(16)).dense_codes)
    assert data.step_encoding(16) is steps and called == [True]
    with pytest.raises(RuntimeError, match="let go once they were coded into bins"):
        data.step_encoding(8)  # new codes need the values
    with pytest.raises(RuntimeError, match="let go once they were coded into bins"):
        data.subset([0, 1])
    # a fit from weights that are not all zero takes the all-zero model's loss as its
    # reference: on the codes, the same as on the values
    from rsrank import RSRank
    from rsrank.learning.objective import Objective

    assert Objective().zero_model_loss(data, steps) == Objective().zero_model_loss(kept)
    start = np.random.default_rng(0).normal(size=steps.n_steps)
    fits = [RSRank(additive=True, max_bins=16, max_iter=2, random_state=0).fit(
        part, coef_init=start).coef_ for part in (data, kept)]
    np.testing.assert_array_equal(*fits)
    # a pair encoding made first lets them go as well
    other = QueryData(X, np.zeros(120), qid)
    other.let_values_go_once_coded()
    other.pair_encoding(16, [[0, 1]], 4)
    with pytest.raises(RuntimeError, match="let go once they were coded into bins"):
        other.X


def test_rows_kept_as_codes_read_as_stand_ins_and_fit_as_their_values_would():
    """:meth:`QueryData.keep_codes_alone`: the values go (the caller is
    told), what was derived from them stays, samples of the rows are
    samples of the codes, and an additive model fits the same steps on
    the codes as on the values."""
    from rsrank import RSRank
    from rsrank.reading._rowsample import RowSample

    rng = np.random.default_rng(9)
    X = rng.normal(size=(300, 4)).astype(np.float32)
    X[rng.random(300) < 0.1, 3] = np.nan
    qid, y = np.repeat(np.arange(15), 20), rng.integers(0, 3, 300)
    data, kept = QueryData(X, y, qid), QueryData(X.copy(), y, qid)
    before = (data.fingerprint, [np.copy(part) for part in data.sums])
    called = []
    assert data.keep_codes_alone(64, lambda: called.append(True))
    assert called == [True] and isinstance(data.X, RowSample) and data.X.coded
    assert data.X.base.dtype == np.uint8 and data.X.base.nbytes == X.nbytes // 4
    assert not data.keep_codes_alone(64)  # once
    assert data.fingerprint == before[0]
    for a, b in zip(data.sums, before[1]):
        np.testing.assert_array_equal(a, b)
    steps = data.step_encoding(64)
    assert data.rows(steps).dense_codes is data.X.base  # the codes themselves
    np.testing.assert_array_equal(data.rows(steps).dense_codes,
                                  kept.rows(kept.step_encoding(64)).dense_codes)
    part = data.subset([2, 5, 6])
    assert isinstance(part.X, RowSample) and part.X.base is data.X.base
    for model in (RSRank(additive=True, max_bins=64, max_iter=3, random_state=0),
                  RSRank(additive=True, interactions=1, max_bins=64, max_iter=3,
                         random_state=0)):
        fits = [model.fit(rows).coef_.copy() for rows in (data, kept)]
        np.testing.assert_array_equal(*fits)
    sparse = QueryData(sp.csr_matrix(X), y, qid)
    assert not sparse.keep_codes_alone(64, lambda: called.append(False))
    assert called == [True]


def test_rows_held_are_the_rows_made_and_none_before():
    rng = np.random.default_rng(1)
    data = QueryData(rng.normal(size=(20, 3)), rng.integers(0, 3, 20), np.repeat([1, 2], 10))
    assert data.rows_held("none") is None
    made = data.rows("none")
    assert data.rows_held("none") is made
    data.forget()
    assert data.rows_held("none") is None
