"""Arrays of a row each from huge-page allocations (rsrank._pages)."""

import os
from pathlib import Path

import numpy as np
import pytest

from rsrank._pages import HUGE_PAGE, row_array

SIZES = [0, 1, 1000, HUGE_PAGE // 8 - 1, HUGE_PAGE // 8, 468_598, (4 << 20) // 8, 700_001]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype, fill", [(np.float64, 0.0), (np.float64, -2.5), (np.int64, -1),
                                         (np.int32, 7), (np.uint8, 3)])
def test_a_row_array_is_np_full(n, dtype, fill):
    out = row_array(n, dtype, fill)
    expected = np.full(n, fill, dtype=dtype)
    assert out.dtype == expected.dtype and out.shape == (n,)
    assert out.flags.c_contiguous and out.flags.writeable and out.flags.aligned
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("n", SIZES)
def test_without_a_fill_it_is_an_empty_array_of_its_own(n):
    a, b = row_array(n, np.int64), row_array(n, np.int64, 5)
    assert a.shape == (n,) and a.dtype == np.int64
    a[:] = 1
    assert not np.shares_memory(a, b)
    assert np.all(b == 5)


def test_an_array_of_a_huge_page_or_more_starts_at_a_huge_page():
    for n in (HUGE_PAGE // 8, 468_598, 700_001):
        out = row_array(n, np.float64, 0.0)
        assert out.__array_interface__["data"][0] % HUGE_PAGE == 0


def _huge_pages_advised():
    """Linux's transparent huge pages are on, and NumPy asks for them."""
    setting = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    return (setting.is_file() and "[never]" not in setting.read_text()
            and os.environ.get("NUMPY_MADVISE_HUGEPAGE") != "0")


@pytest.mark.skipif(not _huge_pages_advised(), reason="no transparent huge pages here")
def test_linux_backs_a_row_array_with_huge_pages():
    """What it is for: /proc/self/smaps shows the mapping that holds the
    array backed by huge pages once it is written."""
    out = row_array(468_598, np.int64, -1)
    start = out.__array_interface__["data"][0]
    huge_kb = None
    lines = Path("/proc/self/smaps").read_text().splitlines()
    for k, line in enumerate(lines):
        fields = line.split()
        if "-" not in fields[0] or len(fields) < 5:
            continue
        low, high = (int(part, 16) for part in fields[0].split("-"))
        if low <= start < high:
            for entry in lines[k + 1:]:
                if entry.startswith("AnonHugePages:"):
                    huge_kb = int(entry.split()[1])
                    break
            break
    assert huge_kb is not None, "no mapping holds the array"
    assert huge_kb >= HUGE_PAGE // 1024
