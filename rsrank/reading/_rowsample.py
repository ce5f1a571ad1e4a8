"""Rows of a dense matrix taken by index and read a block at a time.

A search for pairs of features scores them on a sample of the training
queries (:func:`rsrank.learning.interactions.search_rows`). Copied whole,
the sample's values cost as much memory as its rows: at a quarter of
MSLR-WEB30K's shape 217,000 rows of 136 float32 values, 113 MiB held through
the search, where the search needs only their bin codes, a block of rows or
a column at a time. A :class:`RowSample` is those rows without the copy:
the consumers of a matrix that read it by columns
(:func:`rsrank.learning.binning.fit_thresholds`) or by blocks of rows
(:func:`rsrank.learning.binning.bin_codes`, the column sums of
:mod:`rsrank.learning.preprocessing`) take one as they take an array, and
anything else gets the rows copied out (``np.asarray``), which is what it
had before.

With a ``table``, the base holds bin codes, not values: a row sample is
then the rows of a training set whose values were replaced by their codes
on its own quantile bins (:meth:`rsrank.reading.querydata.QueryData.keep_codes_alone`),
and reads as the values that stand for each code (its bin's highest
training value). A uint8 code takes a quarter of a float32 value's memory,
and the bins of any fit on these rows are the same whether it reads the
values or their stand-ins (:mod:`rsrank.learning.binning` reads the codes
themselves).
"""

import numpy as np

from .._kernels import code_counts, mapped_columns

__all__ = ["RowSample", "SAMPLE_BLOCK"]

#: rows a :class:`RowSample` copies out at a time (at 136 float32 features, 34 MiB)
SAMPLE_BLOCK = 65_536


class RowSample:
    """Rows ``rows`` (and columns ``columns``, None: all) of the dense
    two-dimensional array ``base``, read from it when asked.

    ``sample[lo:hi]`` copies out a block of rows as an array,
    :meth:`column` one column, :meth:`blocks` every block in turn;
    ``np.asarray(sample)`` copies all of it. ``sample.take(rows)`` and
    :meth:`take_columns` give a sample of the sample, again without a copy.

    ``table`` (a ``(base columns, 256)`` array): ``base`` holds uint8 codes,
    and column ``j``'s code ``c`` reads as ``table[j, c]``; ``rows`` None:
    every row of ``base`` in its order (:attr:`whole`).
    """

    ndim = 2

    def __init__(self, base, rows=None, columns=None, table=None):
        base = np.asarray(base)
        if base.ndim != 2:
            raise ValueError(f"a row sample takes a two-dimensional array, got shape "
                             f"{base.shape}")
        if table is not None and (base.dtype != np.uint8 or np.ndim(table) != 2
                                  or np.shape(table)[0] != base.shape[1]):
            raise ValueError("a row sample of codes takes uint8 codes and a table of one "
                             "row of values per column")
        self.base, self.table = base, table
        #: every row of the base, in its order, and every column
        self.whole = rows is None and columns is None
        rows = np.arange(base.shape[0]) if rows is None else rows
        self.rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        self.columns = None if columns is None else np.asarray(columns, dtype=np.int64)
        if len(self.rows) and (self.rows.min() < 0 or self.rows.max() >= base.shape[0]):
            raise IndexError(f"row index out of range for {base.shape[0]} rows")

    @property
    def shape(self):
        width = self.base.shape[1] if self.columns is None else len(self.columns)
        return (len(self.rows), width)

    @property
    def dtype(self):
        return self.base.dtype if self.table is None else self.table.dtype

    @property
    def coded(self):
        """Whether the base holds codes (read through :attr:`table`)."""
        return self.table is not None

    def _base_columns(self):
        return np.arange(self.base.shape[1]) if self.columns is None else self.columns

    @property
    def size(self):
        return self.shape[0] * self.shape[1]

    def __len__(self):
        return len(self.rows)

    def __repr__(self):
        coded = ", coded" if self.coded else ""
        return (f"RowSample({self.shape[0]} of {self.base.shape[0]} rows, {self.shape[1]} "
                f"columns{coded})")

    def __getitem__(self, key):
        """A block of rows (a slice) as an array."""
        if not isinstance(key, slice) or key.step not in (None, 1):
            raise TypeError("a row sample gives blocks of rows (sample[lo:hi]); "
                            "take() samples it again")
        return self._copy(self.rows[key])

    def _copy(self, rows):
        out = self._copy_codes(rows)
        return out if self.table is None else self.table[self._base_columns()[None, :], out]

    def _copy_codes(self, rows):
        if self.columns is None:
            return self.base[rows]
        return self.base[np.ix_(rows, self.columns)]

    def take(self, rows):
        """Rows ``rows`` (indices into this sample) of this sample."""
        return RowSample(self.base, self.rows[np.asarray(rows, dtype=np.int64)], self.columns,
                         self.table)

    def take_columns(self, columns):
        """Columns ``columns`` (indices into this sample's) of this sample."""
        columns = np.asarray(columns, dtype=np.int64).reshape(-1)
        if len(columns) and (columns.min() < 0 or columns.max() >= self.shape[1]):
            raise IndexError(f"column index out of range for {self.shape[1]} columns")
        return RowSample(self.base, self.rows,
                         columns if self.columns is None else self.columns[columns], self.table)

    def column(self, j):
        """Column ``j``'s values, one per row."""
        codes = self.column_codes(j)
        return codes if self.table is None else self.column_table(j)[codes]

    def column_codes(self, j):
        """Column ``j`` of the base as it is (a coded sample's codes)."""
        j = j if self.columns is None else self.columns[j]
        return self.base[:, j] if self.whole else self.base[self.rows, j]

    def column_table(self, j):
        """The values of column ``j``'s codes (a coded sample's)."""
        return self.table[j if self.columns is None else self.columns[j]]

    def code_counts(self):
        """Per column, how many rows have each code: ``(columns, 256)``
        int64, from one pass over the rows (a coded sample's)."""
        out = np.zeros((self.shape[1], 256), dtype=np.int64)
        code_counts(self.base, self.rows, self._base_columns(), out)
        return out

    def mapped_columns(self, maps):
        """The codes a column to a row, each mapped by its column's row of
        ``maps`` (``(columns, 256)`` uint8): ``(columns, rows)`` uint8, read
        from the rows in one pass (a coded sample's)."""
        out = np.empty((self.shape[1], self.shape[0]), dtype=np.uint8)
        mapped_columns(self.base, self.rows, self._base_columns(),
                       np.ascontiguousarray(maps, dtype=np.uint8), out)
        return out

    def code_blocks(self, size=None):
        """:meth:`blocks` of the base's codes as they are (a coded sample's)."""
        return self._blocks(size, self._copy_codes)

    def blocks(self, size=None):
        """``(lo, hi, block)``: the rows ``lo:hi`` copied out, at most ``size``
        (default :data:`SAMPLE_BLOCK`) at a time, in order."""
        return self._blocks(size, self._copy)

    def _blocks(self, size, copy):
        size = SAMPLE_BLOCK if size is None else size
        for lo in range(0, self.shape[0], size):
            hi = min(lo + size, self.shape[0])
            yield lo, hi, copy(self.rows[lo:hi])

    def __array__(self, dtype=None, copy=None):
        if copy is False:
            raise ValueError("a row sample's values are a copy of its rows")
        out = self._copy(self.rows)
        return out if dtype is None else out.astype(dtype, copy=False)
