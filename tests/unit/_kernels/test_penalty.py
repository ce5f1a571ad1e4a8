"""rsrank._kernels.penalty: truncation's properties."""

import numpy as np
from hypothesis import given, settings, strategies as st

from rsrank._kernels import penalty


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-10, 10, allow_nan=False), min_size=1, max_size=20),
       st.floats(0, 5), st.one_of(st.just(np.inf), st.floats(0, 10)))
def test_truncate_properties(values, alpha, theta):
    w = np.array(values)
    out = w.copy()
    nonzero = penalty.truncate(out, alpha, theta)
    assert nonzero == np.count_nonzero(out)
    assert np.all(out * w >= 0)  # never flips a sign
    inside = np.abs(w) <= theta
    np.testing.assert_array_equal(out[~inside], w[~inside])  # large weights untouched
    expected = np.sign(w[inside]) * np.maximum(np.abs(w[inside]) - alpha, 0.0)
    np.testing.assert_allclose(out[inside], expected)
    assert np.all(out[inside][np.abs(w[inside]) <= alpha] == 0.0)  # exact zeros
