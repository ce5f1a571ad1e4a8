"""rsrank.learning._quantiles: one column's thresholds, from its values or
from the counts of its codes."""

import numpy as np
from hypothesis import given, settings, strategies as st

from rsrank.learning._quantiles import MISSING, coded_column_thresholds, column_thresholds


@given(st.lists(st.integers(0, 40), min_size=1, max_size=300), st.integers(2, 256),
       st.integers(0, 10_000), st.booleans())
@settings(max_examples=300, deadline=None)
def test_thresholds_from_the_counts_of_codes_are_those_of_the_values_they_read_as(
        codes, max_bins, seed, with_nan):
    """Any table of values (increasing or not, repeats and NaN among them):
    the column ``table[codes]``'s thresholds, by sorting its rows and by
    counting its codes, are the same."""
    rng = np.random.default_rng(seed)
    table = np.round(rng.normal(size=41) * rng.integers(1, 8), 1).astype(np.float32)
    if with_nan:
        table[rng.integers(0, 41, 3)] = np.nan
    codes = np.asarray(codes, dtype=np.uint8)
    expected = column_thresholds(table[codes], max_bins)
    got = coded_column_thresholds(np.bincount(codes, minlength=256), table, max_bins)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, expected)


def test_a_coded_column_with_missing_values_has_the_missing_bin_last():
    table = np.array([1.0, 2.0, np.nan, 3.0], dtype=np.float32)
    cuts = coded_column_thresholds(np.bincount([0, 1, 2, 3, 3], minlength=256), table, 8)
    np.testing.assert_array_equal(cuts, [1.0, 2.0, MISSING])
    # a code no row has counts in no quantile and adds no threshold
    np.testing.assert_array_equal(
        coded_column_thresholds(np.bincount([0, 3], minlength=256), table, 8), [1.0])
