"""Step thresholds and bin codes against brute force: a code is the number
of a feature's steps ``[x > t]`` that are on, counted in float32 as the
engines count, for dense and CSR rows alike."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from rsrank.learning.binning import (MAX_BINS, PairEncoding, SortedColumns, StepEncoding,
                                     bin_codes, bin_counts, fit_thresholds, merged_thresholds,
                                     value_summary)


def brute_codes(X, thresholds):
    X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float32)
    return np.array([[sum(1 for t in cuts if x > t) for x, cuts in zip(row, thresholds)]
                     for row in X], dtype=np.int64)


def test_few_distinct_values_each_get_a_bin_and_ties_stay_off():
    X = np.array([[0.0, 5.0], [1.0, 5.0], [1.0, 5.0], [3.0, 5.0]])
    thresholds = fit_thresholds(X, max_bins=4)
    np.testing.assert_array_equal(thresholds[0], [0.0, 1.0])  # the largest value is no cut
    assert len(thresholds[1]) == 0  # a constant feature has no step
    codes = bin_codes(X, thresholds).toarray()
    np.testing.assert_array_equal(codes[:, 0], [0, 1, 1, 2])  # x == t: that step is off
    np.testing.assert_array_equal(codes[:, 1], 0)


def test_many_values_are_cut_at_training_quantiles():
    rng = np.random.default_rng(0)
    values = rng.lognormal(size=5000)
    cuts = fit_thresholds(values[:, None], max_bins=16)[0]
    assert len(cuts) == 15 and np.all(np.diff(cuts) > 0)
    assert set(cuts.tolist()) <= set(values.astype(np.float32).tolist())  # training values
    share = np.searchsorted(np.sort(values.astype(np.float32)), cuts, side="right") / 5000
    np.testing.assert_allclose(share, np.arange(1, 16) / 16, atol=1 / 5000)


def test_a_value_that_rounds_onto_a_threshold_in_float32_is_coded_as_the_engines_see_it():
    t = np.float32(0.1)
    above = float(t) + 1e-12  # above t in float64, equal to it in float32
    codes = bin_codes(np.array([[above]]), [np.array([t], dtype=np.float32)]).toarray()
    assert codes[0, 0] == 0


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), max_bins=st.sampled_from([2, 3, 8, 32, 256]),
       density=st.sampled_from([0.1, 0.5, 1.0]), levels=st.sampled_from([2, 5, 1000]))
def test_codes_equal_brute_force_dense_and_csr(seed, max_bins, density, levels):
    rng = np.random.default_rng(seed)
    X = rng.integers(-levels, levels, size=(60, 5)) * rng.choice([0.5, 1e-3, 37.0], size=5)
    X[rng.random(X.shape) > density] = 0.0
    thresholds = fit_thresholds(X, max_bins)
    assert all(len(cuts) <= max_bins - 1 for cuts in thresholds)
    expected = brute_codes(X, thresholds)
    np.testing.assert_array_equal(bin_codes(X, thresholds).toarray(), expected)
    sparse = sp.csr_matrix(X)
    assert [c.tolist() for c in fit_thresholds(sparse, max_bins)] == \
        [c.tolist() for c in thresholds]
    np.testing.assert_array_equal(bin_codes(sparse, thresholds).toarray(), expected)


def searchsorted_codes(X, thresholds):
    """Each column through NumPy's searchsorted (rsrank.learning.binning._code, the
    codes' definition), a sparse X's absent values as 0."""
    from rsrank.learning.binning import _code

    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    return np.stack([_code(X[:, j], cuts) for j, cuts in enumerate(thresholds)], axis=1)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_cuts=st.sampled_from([0, 1, 5, 31, 32, 33, 63, 64, 65, 200, 254]),
       dtype=st.sampled_from([np.float64, np.float32, np.int64, np.bool_, np.float16]),
       missing=st.booleans(), layout=st.sampled_from(["C", "F", "csr"]))
def test_the_code_kernels_equal_searchsorted_column_by_column(seed, n_cuts, dtype, missing,
                                                              layout):
    # the kernels against NumPy: values at the thresholds, within float32's
    # rounding of them, NaN, +-inf, float64 beyond float32's range, counts
    # of one row of thresholds, of several, and whole rows below the value
    assume(not (layout == "csr" and dtype is np.float16))  # scipy.sparse has no float16
    rng = np.random.default_rng(seed)
    cuts = np.unique(rng.normal(size=n_cuts).astype(np.float32) * 10)
    thresholds = [cuts, np.zeros(0, np.float32), cuts[: len(cuts) // 2]]
    if missing:
        thresholds = [np.r_[t, np.float32(np.inf)] for t in thresholds]
    pool = np.r_[cuts, np.nextafter(cuts, np.float32(np.inf)), cuts.astype(np.float64) + 1e-9,
                 [np.nan, np.inf, -np.inf, 1e300, -1e300, 0.0, -0.0], rng.normal(size=20) * 10]
    X = rng.choice(pool, size=(50, 3))
    if dtype is np.bool_:
        X = X > 0
    elif dtype is np.int64:
        X = np.clip(np.nan_to_num(X), -2.0**40, 2.0**40).astype(np.int64)
    else:
        with np.errstate(over="ignore"):
            X = X.astype(dtype)
    if layout == "F":
        X = np.asfortranarray(X)
    expected = searchsorted_codes(X, thresholds)
    given = sp.csr_matrix(X) if layout == "csr" else X
    np.testing.assert_array_equal(bin_codes(given, thresholds).toarray(), expected)


@pytest.mark.parametrize("layout", ["dense", "csr"])
@pytest.mark.parametrize("build", ["serial", "parallel"])
def test_each_build_of_the_code_kernels_codes_every_block_of_rows(layout, build):
    # rows over many blocks of the kernels' parallel loop (and a last one cut short),
    # on the build bin_codes takes on several threads as on one
    from rsrank import _kernels
    from rsrank.learning import binning

    rng = np.random.default_rng(3)
    X = rng.normal(size=(2_000 + 77, 6)) * [1, 10, 1e-3, 1, 1, 5]
    X[rng.random(X.shape) < 0.05] = np.nan
    X[rng.random(X.shape) < 0.3] = 0.0
    thresholds = fit_thresholds(X, 64)
    kernel = getattr(_kernels, f"{'dense' if layout == 'dense' else 'stored'}_codes_{build}")
    chosen = []
    real = binning.choose
    binning.choose = lambda serial, parallel, n, args: chosen.append(n) or kernel
    try:
        given = sp.csr_matrix(X) if layout == "csr" else X
        codes = bin_codes(given, thresholds, n_threads=1 if build == "serial" else 2).toarray()
    finally:
        binning.choose = real
    np.testing.assert_array_equal(codes, searchsorted_codes(X, thresholds))
    assert chosen == [1]  # too few values to share out: one thread whatever is asked


def test_thresholds_are_the_same_on_any_number_of_threads():
    rng = np.random.default_rng(4)
    X = rng.lognormal(size=(3_000, 9)).astype(np.float32)
    X[:, 2] = np.round(X[:, 2])  # few distinct values
    X[:, 3] = 7.0  # constant
    X[rng.random(X.shape) < 0.02] = np.nan
    one = fit_thresholds(X, 32, n_threads=1)
    for n in (2, 4):
        assert [t.tobytes() for t in fit_thresholds(X, 32, n_threads=n)] == \
            [t.tobytes() for t in one]
    with pytest.raises(ValueError, match="infinite"):  # the first column's error on threads too
        fit_thresholds(np.c_[X, np.r_[np.inf, np.ones(2_999)]], 32, n_threads=2)


@pytest.mark.parametrize("layout", ["dense", "csr"])
def test_bin_counts_are_the_rows_of_each_code(layout):
    rng = np.random.default_rng(5)
    X = rng.integers(-3, 4, size=(500, 4)) * rng.random(size=(500, 4))
    X[rng.random(X.shape) < 0.5] = 0.0
    X[:, 1] = np.where(rng.random(500) < 0.1, np.nan, X[:, 1])
    thresholds = fit_thresholds(X, 8)
    given = sp.csr_matrix(X) if layout == "csr" else X
    counts = bin_counts(given, thresholds)
    codes = searchsorted_codes(X, thresholds)
    for j, cuts in enumerate(thresholds):
        np.testing.assert_array_equal(counts[j], np.bincount(codes[:, j], minlength=len(cuts) + 1))
        assert counts[j].dtype == np.int64


def test_the_codes_take_the_threads_a_block_holds():
    from rsrank.learning._threads import held_threads, numba_threads

    assert held_threads() == 1  # outside any block: one thread, as n_jobs=None asks
    with numba_threads(2):
        assert held_threads() == 2
        with numba_threads(1):
            assert held_threads() == 1
        assert held_threads() == 2
    assert held_threads() == 1


@pytest.mark.parametrize("max_bins", [1, 257, 2.5, True, None])
def test_max_bins_out_of_range_is_refused(max_bins):
    with pytest.raises(ValueError, match=f"max_bins must be an integer from 2 to {MAX_BINS}"):
        fit_thresholds(np.zeros((3, 1)), max_bins)


def test_infinite_values_are_refused_and_nan_is_missing():
    with pytest.raises(ValueError, match="infinite"):
        fit_thresholds(np.array([[1.0], [np.inf]]))
    with pytest.raises(ValueError, match="infinite"):  # finite in float64 only
        fit_thresholds(np.array([[1.0], [1e300]]))
    # a missing value has a bin of its own (tests/integration/test_missing.py)
    assert fit_thresholds(np.array([[1.0], [np.nan]]))[0][-1] == np.float32(np.inf)


def test_dense_codes_take_a_quarter_of_float32_rows():
    X = np.random.default_rng(1).normal(size=(1000, 40)).astype(np.float32)
    codes = bin_codes(X, fit_thresholds(X, 32))
    assert codes.nbytes == X.nbytes // 4


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10**6), max_bins=st.sampled_from([2, 3, 7, 32, 256]),
       n_rows=st.integers(1, 400), n_parts=st.integers(1, 5), sparse=st.booleans())
def test_thresholds_merged_from_parts_are_those_of_all_the_rows(seed, max_bins, n_rows,
                                                                n_parts, sparse):
    """What each part of the rows sends (its few distinct values, then
    counts at or below candidates) gives fit_thresholds of all the rows:
    wide and narrow scales, repeated values, signed zeros, empty parts."""
    rng = np.random.default_rng(seed)
    X = np.c_[rng.normal(size=n_rows) * 10.0 ** rng.integers(-8, 9),
              rng.integers(0, rng.integers(1, 300), n_rows),
              rng.choice([-0.0, 0.0, 1.5, -2.0], n_rows),
              np.round(rng.exponential(size=n_rows), int(rng.integers(0, 4))),
              -rng.lognormal(size=n_rows) * 1e-6]
    X[rng.random(X.shape) < 0.3] = 0.0
    cuts = np.sort(rng.integers(0, n_rows + 1, n_parts - 1))
    parts = [sp.csr_matrix(part) if sparse else part for part in np.split(X, cuts)]
    columns = [SortedColumns(part) for part in parts]
    got = merged_thresholds([value_summary(part, max_bins) for part in parts], max_bins,
                            lambda f, c: sum(part.count_at_most(f, c) for part in columns))
    for ours, theirs in zip(got, fit_thresholds(X, max_bins)):
        assert ours.dtype == np.float32
        np.testing.assert_array_equal(ours, theirs)
    counts = [bin_counts(part, got) for part in parts]
    for j, total in enumerate(bin_counts(X, got)):
        np.testing.assert_array_equal(sum(c[j] for c in counts), total)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), n_pairs=st.integers(0, 3), pair_bins=st.integers(2, 8),
       dtype=st.sampled_from([np.float64, np.float32, np.int64]), missing=st.booleans())
def test_a_pair_encoding_codes_rows_as_its_augmented_matrix(seed, n_pairs, pair_bins, dtype,
                                                            missing):
    """The codes of a pair encoding, made without the augmented copy of
    dense rows, equal those of :meth:`PairEncoding.augment`'s matrix (the
    features, then each row's cell index per pair), and so do its rows'
    codes; CSR rows give the same codes as their dense twin."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 4)) * 5
    if missing and dtype is not np.int64:
        X[rng.random(X.shape) < 0.15] = np.nan
    X = X.astype(dtype) if dtype is not np.int64 else np.round(X).astype(dtype)
    pairs = [(0, 1), (1, 3), (0, 2)][:n_pairs]
    encoding = PairEncoding.fit(X, pairs, max_bins=8, pair_bins=pair_bins)
    expected = bin_codes(encoding.augment(X), encoding.thresholds).toarray()
    assert expected.shape == (60, 4 + n_pairs)
    codes = encoding.codes(X)
    assert codes.dense and codes.codes.dtype == np.uint8
    np.testing.assert_array_equal(codes.toarray(), expected)
    known = bin_codes(X, encoding.thresholds[:4])
    np.testing.assert_array_equal(encoding.codes(X, known).toarray(), expected)
    np.testing.assert_array_equal(encoding.rows(X).dense_codes, expected)
    sparse = np.where(np.isnan(X), 0, X) if X.dtype.kind == "f" else X
    np.testing.assert_array_equal(encoding.codes(sp.csr_matrix(sparse)).toarray(),
                                  bin_codes(encoding.augment(sparse), encoding.thresholds)
                                  .toarray())


def test_a_pair_encoding_refuses_rows_of_another_width():
    X = np.random.default_rng(0).normal(size=(30, 3))
    encoding = PairEncoding.fit(X, [(0, 1)], max_bins=4, pair_bins=2)
    with pytest.raises(ValueError, match="X has 2 features, the encoding 3"):
        encoding.codes(X[:, :2])


def test_codes_into_the_first_columns_of_a_wider_array_leave_the_rest_as_they_are():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(300, 4)).astype(np.float32)
    thresholds = fit_thresholds(X, 16)
    out = np.full((300, 6), 99, dtype=np.uint8)
    codes = bin_codes(X, thresholds, out=out)
    np.testing.assert_array_equal(out[:, :4], bin_codes(X, thresholds).codes)
    assert (out[:, 4:] == 99).all() and codes.shape == (300, 4)
    np.testing.assert_array_equal(codes.toarray(), out[:, :4])
    for bad in (np.zeros((300, 3), np.uint8), np.zeros((299, 6), np.uint8),
                np.zeros((300, 6), np.int64), np.zeros((6, 300), np.uint8).T):
        with pytest.raises(ValueError, match="out must be a C-ordered uint8 array of 300 rows"):
            bin_codes(X, thresholds, out=bad)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_row_sample_is_binned_a_block_at_a_time_as_its_copy_is(monkeypatch, dtype):
    from rsrank.learning.preprocessing import column_moments, column_sums
    from rsrank.reading import _rowsample as rowsample

    rng = np.random.default_rng(7)
    base = rng.normal(size=(400, 5)).astype(dtype)
    base[:, 1] = rng.integers(0, 3, 400)  # few distinct values: a bin of their own each
    base[rng.random(base.shape) < 0.05] = np.nan
    rows = np.sort(rng.choice(400, size=170, replace=False))
    sample, copy = rowsample.RowSample(base, rows), base[rows]
    monkeypatch.setattr(rowsample, "SAMPLE_BLOCK", 32)  # six blocks, the last short
    for threads in (1, 2):
        thresholds = fit_thresholds(sample, 16, n_threads=threads)
        expected = fit_thresholds(copy, 16, n_threads=threads)
        assert all(np.array_equal(a, b) for a, b in zip(thresholds, expected))
    codes = bin_codes(sample, expected)
    np.testing.assert_array_equal(codes.codes, bin_codes(copy, expected).codes)
    out = np.full((170, 7), 99, dtype=np.uint8)
    bin_codes(sample, expected, out=out)
    np.testing.assert_array_equal(out[:, :5], codes.codes)
    assert (out[:, 5:] == 99).all()
    encoding, _ = StepEncoding.coded(sample, 16)
    assert all(np.array_equal(a, b) for a, b in zip(encoding.counts, bin_counts(copy, expected)))
    # the column sums and moments of its blocks add up to the copy's
    for got, want in zip(column_moments(sample), column_moments(copy)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    for got, want in zip(column_sums(sample), column_sums(copy)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    empty = rowsample.RowSample(base, [])
    assert column_sums(empty)[0] == 0 and len(column_sums(empty)[1]) == 5


def _mixed_columns(rng, n):
    """Columns of the kinds thresholds treat apart: many values, few (ties),
    NaN among values, only NaN, one value."""
    X = rng.normal(size=(n, 5)).astype(np.float32)
    X[:, 1] = np.round(X[:, 1] * rng.integers(1, 30))
    X[rng.random(n) < 0.2, 2] = np.nan
    X[:, 3] = np.nan if rng.random() < 0.5 else 7.0
    X[:, 4] = np.float32(rng.lognormal(size=n) * 1e-6)
    return X


@pytest.mark.parametrize("seed", range(12))
def test_rows_kept_as_codes_bin_as_their_values_would(seed):
    """:func:`coded_values`: the stand-ins of all the rows bin into the
    bins they stand for (their codes taken as they are, not copied);
    thresholds fitted on any sample of them, at any bins, code the sample
    as they code its values, and are those of the stand-ins copied out.
    Float64 values every third seed."""
    from rsrank.learning.binning import coded_values
    from rsrank.reading._rowsample import RowSample

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 4000))
    X = _mixed_columns(rng, n).astype(np.float64 if seed % 3 == 0 else np.float32)
    if seed % 3 == 0:  # values that float32 rounds together
        X[:, 0] += rng.normal(size=n) * 1e-9
    max_bins = int(rng.integers(2, 257))
    codes, table = coded_values(X, max_bins)
    kept = RowSample(codes, table=table)
    thresholds = fit_thresholds(X, max_bins)
    for got in (fit_thresholds(kept, max_bins), fit_thresholds(np.asarray(kept), max_bins)):
        for a, b in zip(got, thresholds):
            np.testing.assert_array_equal(a, b)
    assert bin_codes(kept, thresholds).codes is codes
    np.testing.assert_array_equal(codes, bin_codes(X, thresholds).codes)
    out = np.zeros((n, 7), dtype=np.uint8)
    bin_codes(kept, thresholds, out=out)
    np.testing.assert_array_equal(out[:, :5], codes)
    rows = np.sort(rng.choice(n, size=max(1, n // 3), replace=False))
    sample = kept.take(rows)
    bins = int(rng.integers(2, 257))
    cuts = fit_thresholds(sample, bins)
    for a, b in zip(cuts, fit_thresholds(np.asarray(sample), bins)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(bin_codes(sample, cuts).codes, bin_codes(X[rows], cuts).codes)
    columns = sample.take_columns([4, 1])
    np.testing.assert_array_equal(bin_codes(columns, [cuts[4], cuts[1]]).codes,
                                  bin_codes(X[rows][:, [4, 1]], [cuts[4], cuts[1]]).codes)


def test_a_pair_encoding_of_rows_kept_as_codes_is_that_of_their_values():
    from rsrank.learning.binning import coded_values
    from rsrank.reading._rowsample import RowSample

    rng = np.random.default_rng(6)
    X = _mixed_columns(rng, 3000)
    codes, table = coded_values(X, 255)
    kept = RowSample(codes, table=table)
    thresholds = fit_thresholds(kept, 64)
    grids = [(thresholds[0][::9], thresholds[1][::3]), (thresholds[2][::20], thresholds[4][::30]),
             (thresholds[1][::5], thresholds[4][::7])]  # a feature in two pairs, other cuts
    pairs = [[0, 1], [2, 4], [1, 4]]
    got, got_codes = PairEncoding.coded(kept, pairs, 64, 8, thresholds, grids)
    expected, expected_codes = PairEncoding.coded(X, pairs, 64, 8, thresholds, grids)
    assert got.key == expected.key
    np.testing.assert_array_equal(got_codes.codes, expected_codes.codes)
    rows = np.sort(rng.choice(3000, 700, replace=False))  # a sample's cells, from its codes
    np.testing.assert_array_equal(got.codes(kept.take(rows)).codes,
                                  expected.codes(X[rows]).codes)
