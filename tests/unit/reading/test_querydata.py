"""rsrank.reading.querydata: the rows of a set of whole queries."""

import numpy as np
import pytest

from rsrank.reading.querydata import query_rows


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
