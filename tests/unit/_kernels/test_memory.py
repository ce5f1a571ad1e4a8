"""rsrank._kernels.memory: prefetch shares and spans."""

import numpy as np
from hypothesis import given, settings, strategies as st

from rsrank._kernels import memory


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 1 << 40), st.integers(0, 3 << 20), st.integers(1, 3000))
def test_prefetch_shares_cover_a_span_once_in_order(start, size, parts):
    plan = memory.prefetch_plan((start, size), parts)
    lines = [line for part in range(parts) for line in range(*memory.share_lines(plan, part))]
    if size == 0:
        assert lines == []
        return
    assert plan[0] % 64 == 0 and plan[0] <= start < plan[0] + 64
    # every line the span touches up to the limit, each once, in order
    size = min(size, memory.PREFETCH_SPAN_BYTES)
    assert lines == list(range((start + size - 1) // 64 - start // 64 + 1))


def test_spans_of_rows_and_items():
    X = np.zeros((9, 5), dtype=np.float32)
    assert memory.rows_span(X, 2, 7) == (X.ctypes.data + 2 * 20, 5 * 20)
    assert memory.rows_span(X, 4, 4) == memory.NOTHING_AHEAD
    # rows not contiguous
    assert memory.rows_span(np.asfortranarray(X), 2, 7) == memory.NOTHING_AHEAD
    a = np.zeros(10, dtype=np.int32)
    assert memory.items_span(a, 3, 8) == (a.ctypes.data + 12, 20)
    assert memory.items_span(a[::2], 1, 3) == memory.NOTHING_AHEAD
