"""One-dimensional arrays of a row each, from allocations that Linux backs
with huge pages.

The first write to each page of a new array costs the kernel a fault: 4 KiB
pages cost one per 4 KiB, which on a virtual machine takes about 2.5 us, and
a fit makes several arrays of a row each (its scores, lambdas, rankings,
gains, label levels) that are written before anything else happens. NumPy
asks for transparent huge pages (2 MiB, one fault where small pages take
512) on allocations of at least 4 MiB (``NUMPY_MADVISE_HUGEPAGE``, on by
default), and the kernel backs with them the 2 MiB-aligned stretches of such
an allocation. So an array of 2 to 4 MiB (262,144 to 524,288 float64 rows)
misses them, and a larger one has its ends in small pages.
:func:`row_array` gives an array of at least 2 MiB an allocation of at least
4 MiB and starts it at a huge page's boundary; the pages it never writes
(the allocation's slack) are never backed. Smaller arrays are ``np.full``'s.
"""

import numpy as np

#: NumPy advises huge pages (``madvise(MADV_HUGEPAGE)``) from this size on
NUMPY_HUGE_ALLOCATION = 4 << 20

#: The size of a huge page on x86-64 Linux (and arm64 with 4 KiB pages)
HUGE_PAGE = 2 << 20


def row_array(n, dtype, fill=None):
    """``np.full(n, fill, dtype)``, or ``np.empty`` with ``fill=None``;
    from :data:`HUGE_PAGE` bytes on, a view that starts at a huge page's
    boundary in an allocation of at least :data:`NUMPY_HUGE_ALLOCATION`
    bytes that nothing else sees."""
    dtype = np.dtype(dtype)
    size = n * dtype.itemsize
    if size < HUGE_PAGE:
        return np.empty(n, dtype=dtype) if fill is None else np.full(n, fill, dtype=dtype)
    pages = -(-size // HUGE_PAGE)
    buffer = np.empty(max((pages + 1) * HUGE_PAGE, NUMPY_HUGE_ALLOCATION), dtype=np.uint8)
    start = -buffer.__array_interface__["data"][0] % HUGE_PAGE
    out = buffer[start:start + size].view(dtype)
    if fill is not None:
        out.fill(fill)
    return out
