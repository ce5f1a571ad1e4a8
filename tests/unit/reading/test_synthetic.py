import numpy as np
import pytest

from rsrank.reading.synthetic import MSLR_LABEL_SHARES, make_mslr_like


@pytest.mark.parametrize("teacher", ["linear", "nonlinear"])
def test_mslr_like_data_have_the_shape_and_the_label_shares(teacher):
    data = make_mslr_like(n_documents=30_000, n_queries=250, random_state=1, teacher=teacher)
    assert data.X.shape == (30_000, 136) and data.X.dtype == np.float32
    sizes = np.bincount(data.qid)[1:]
    assert sizes.sum() == 30_000 and len(sizes) == 250 and np.all(np.diff(data.qid) >= 0)
    shares = np.bincount(data.y, minlength=len(MSLR_LABEL_SHARES)) / len(data.y)
    np.testing.assert_allclose(shares, MSLR_LABEL_SHARES, atol=2e-3)


def test_the_nonlinear_teacher_is_what_a_linear_model_cannot_follow():
    def linear_fit(teacher):
        data = make_mslr_like(n_documents=12_000, n_queries=100, random_state=2, teacher=teacher)
        A = np.c_[data.X, np.ones(len(data.y))]
        fitted = A @ np.linalg.lstsq(A, data.y.astype(float), rcond=None)[0]
        return np.corrcoef(fitted, data.y)[0, 1]
    linear, nonlinear = linear_fit("linear"), linear_fit("nonlinear")
    assert linear > 0.75 and nonlinear < linear - 0.2
    # the same features either way, and the linear teacher's draws are as they were
    a = make_mslr_like(n_documents=5_000, n_queries=40, random_state=3)
    b = make_mslr_like(n_documents=5_000, n_queries=40, random_state=3, teacher="nonlinear")
    np.testing.assert_array_equal(a.X, b.X)
    with pytest.raises(ValueError, match="teacher"):
        make_mslr_like(n_documents=100, n_queries=2, teacher="trees")
