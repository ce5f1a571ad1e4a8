"""Rows of a dense matrix read a block at a time (rsrank.reading._rowsample)."""

import numpy as np
import pytest

from rsrank.reading import _rowsample as rowsample
from rsrank.reading._rowsample import RowSample


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_row_sample_reads_as_the_copy_of_its_rows_would(dtype):
    rng = np.random.default_rng(0)
    base = rng.normal(size=(50, 6)).astype(dtype)
    rows = np.sort(rng.choice(50, size=23, replace=False))
    sample = RowSample(base, rows)
    copy = base[rows]
    assert sample.shape == copy.shape and sample.dtype == dtype and sample.size == copy.size
    assert len(sample) == 23 and sample.ndim == 2
    np.testing.assert_array_equal(np.asarray(sample), copy)
    np.testing.assert_array_equal(sample[5:11], copy[5:11])
    for j in range(6):
        np.testing.assert_array_equal(sample.column(j), copy[:, j])
    got = [(lo, hi, block) for lo, hi, block in sample.blocks(size=7)]
    assert [(lo, hi) for lo, hi, _ in got] == [(0, 7), (7, 14), (14, 21), (21, 23)]
    np.testing.assert_array_equal(np.vstack([block for *_, block in got]), copy)
    # a sample of the sample, of rows and of columns, is again the copy's
    again = sample.take([1, 4, 20]).take_columns([5, 0, 2])
    np.testing.assert_array_equal(np.asarray(again), copy[[1, 4, 20]][:, [5, 0, 2]])
    np.testing.assert_array_equal(again.column(0), copy[[1, 4, 20], 5])
    np.testing.assert_array_equal(again.take_columns([2]).column(0), copy[[1, 4, 20], 2])
    assert again.base is base  # never a copy of the rows it holds


def test_a_row_sample_blocks_at_its_default_size(monkeypatch):
    monkeypatch.setattr(rowsample, "SAMPLE_BLOCK", 4)
    sample = RowSample(np.arange(30.0).reshape(10, 3), np.arange(10))
    assert [hi - lo for lo, hi, _ in sample.blocks()] == [4, 4, 2]
    assert list(RowSample(np.zeros((3, 2)), []).blocks()) == []


def test_a_row_sample_refuses_what_it_cannot_be():
    base = np.zeros((5, 2))
    with pytest.raises(IndexError, match="out of range for 5 rows"):
        RowSample(base, [0, 5])
    with pytest.raises(ValueError, match="two-dimensional"):
        RowSample(np.zeros(5), [0])
    with pytest.raises(TypeError, match="blocks of rows"):
        RowSample(base, [0, 1])[0]
    with pytest.raises(ValueError, match="a copy"):
        np.asarray(RowSample(base, [0, 1]), copy=False)
    for columns in ([2], [-1], [0, 1, 5]):  # the kernels read the columns unchecked
        with pytest.raises(IndexError, match="out of range for 2 columns"):
            RowSample(base, [0, 1]).take_columns(columns)
    with pytest.raises(IndexError, match="out of range for 1 columns"):
        RowSample(base).take_columns([1]).take_columns([1])


def test_a_sample_of_codes_reads_as_the_values_of_its_table():
    rng = np.random.default_rng(2)
    codes = rng.integers(0, 5, size=(40, 3)).astype(np.uint8)
    table = np.sort(rng.normal(size=(3, 256)).astype(np.float32), axis=1)
    values = np.take_along_axis(table.T, codes.astype(np.int64), axis=0)  # table[j, codes[:, j]]
    whole = RowSample(codes, table=table)
    assert whole.whole and whole.coded and whole.dtype == np.float32
    assert "coded" in repr(whole)
    np.testing.assert_array_equal(np.asarray(whole), values)
    rows = np.array([3, 9, 10, 31])
    part = whole.take(rows).take_columns([2, 0])
    assert not part.whole and part.coded and part.base is codes  # never a copy
    np.testing.assert_array_equal(np.asarray(part), values[rows][:, [2, 0]])
    np.testing.assert_array_equal(part.column(0), values[rows, 2])
    np.testing.assert_array_equal(part.column_codes(1), codes[rows, 0])
    np.testing.assert_array_equal(part.column_table(0), table[2])
    np.testing.assert_array_equal(np.vstack([b for *_, b in part.code_blocks(size=3)]),
                                  codes[rows][:, [2, 0]])
    np.testing.assert_array_equal(np.vstack([b for *_, b in part.blocks(size=3)]),
                                  values[rows][:, [2, 0]])
    np.testing.assert_array_equal(whole.column_codes(1), codes[:, 1])
    assert not RowSample(codes, np.arange(40)).whole  # rows given: not known to be all
    with pytest.raises(ValueError, match="uint8 codes and a table"):
        RowSample(codes.astype(np.int64), table=table)
    with pytest.raises(ValueError, match="uint8 codes and a table"):
        RowSample(codes, table=table[:2])


def test_a_coded_sample_counts_and_maps_its_codes_as_its_columns_read():
    """One pass over the rows gives each column's counts of codes and its
    codes mapped a column to a row: those of each column read alone, for
    all the rows, a sample in any order with repeats, and some columns."""
    rng = np.random.default_rng(3)
    base = rng.integers(0, 256, size=(700, 6)).astype(np.uint8)
    table = np.arange(6 * 256, dtype=np.float32).reshape(6, 256)
    maps = rng.integers(0, 256, size=(6, 256)).astype(np.uint8)
    whole = RowSample(base, table=table)
    some = RowSample(base, rng.integers(0, 700, 300), table=table).take_columns([4, 0, 4])
    for sample, columns in ((whole, np.arange(6)), (some, np.array([4, 0, 4]))):
        codes = [sample.column_codes(j) for j in range(sample.shape[1])]
        np.testing.assert_array_equal(sample.code_counts(),
                                      [np.bincount(c, minlength=256) for c in codes])
        np.testing.assert_array_equal(sample.mapped_columns(maps[columns]),
                                      [maps[k][c] for k, c in zip(columns, codes)])
