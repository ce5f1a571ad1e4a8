"""A unit test of rsrank.learning.blockwise: fits on data in blocks of whole
queries (``fit_chunks``'s stream and ``partial_fit``'s passes), through the
one fit assembly."""

import numpy as np
import pytest

from rsrank import RSRank
from rsrank.learning.blockwise import Stream, fit_stream, partial_fit
from rsrank.learning.fitting import setup
from rsrank.reading.querydata import QueryData


def plan_of(**params):
    return setup(RSRank(**params).get_params(deep=False))


def blocks(n_queries=6, size=8, seed=0):
    """Queries of ``size`` documents whose labels follow two features."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_queries * size, 4))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=len(X)), [-0.5, 0.5])
    return QueryData(X, y, np.repeat(np.arange(n_queries), size))


def test_partial_fit_goes_on_from_the_last_iterate_and_its_model_is_their_mean():
    plan, data = plan_of(average=True, learning_rate=0.05), blocks()
    first = partial_fit(plan, data, None, np.random.default_rng(0))
    w1 = first.state.w.copy()
    np.testing.assert_array_equal(first.model.coef, w1)
    second = partial_fit(plan, data, first, np.random.default_rng(1))
    assert second.state is first.state and second.state.n_averaged == 2
    assert second.n_iter == 2 and second.learning_rate == 0.05
    np.testing.assert_allclose(second.model.coef, (w1 + second.state.w) / 2, rtol=1e-12)
    assert not np.allclose(second.state.w, second.model.coef)


def test_a_model_grown_by_partial_fit_knows_the_queries_it_learned_from():
    """Like a fit's, it refuses to scale rows within queries it is not told."""
    data = blocks()
    grown = partial_fit(plan_of(normalize="query-zscore"), data, None,
                        np.random.default_rng(0))
    assert grown.model.n_fit_queries == data.n_queries
    assert grown.model.fingerprint == data.fingerprint
    with pytest.raises(ValueError, match="pass qid"):
        grown.model.score_matrix(np.ascontiguousarray(data.X))


def halves(data):
    """``data``'s queries as two blocks."""
    half = data.n_queries // 2
    return [data.subset(np.arange(half)), data.subset(np.arange(half, data.n_queries))]


def test_a_stream_takes_its_moments_in_one_pass_and_counts_the_queries_of_an_epoch():
    data = blocks(n_queries=8)
    parts, calls = halves(data), []

    def moments():
        calls.append(1)
        return data.moments

    fitted = fit_stream(plan_of(max_iter=4, normalize="zscore", learning_rate=0.05),
                        parts[0], lambda: iter(parts), moments)
    assert len(calls) == 1 and fitted.n_iter == 4
    assert fitted.model.n_fit_queries == 8 and fitted.model.fingerprint is None
    assert np.all(np.isfinite(fitted.model.coef)) and np.any(fitted.model.coef != 0)


@pytest.mark.parametrize("method", ["fit_stream", "partial_fit"])
def test_relax_refits_in_memory_and_is_refused_on_blocks(method):
    plan, data = plan_of(relax=True, l1=0.1), blocks()
    with pytest.raises(ValueError, match=r"relax refits .* use fit, not "):
        if method == "fit_stream":
            fit_stream(plan, data, lambda: iter([data]), lambda: data.moments)
        else:
            partial_fit(plan, data, None, np.random.default_rng(0))


def test_a_stream_without_an_eval_set_cannot_stop_early():
    data = blocks()
    with pytest.raises(ValueError, match="early_stopping needs an eval_set"):
        fit_stream(plan_of(early_stopping=True), data, lambda: iter([data]),
                   lambda: data.moments)


def test_an_additive_model_cannot_start_from_a_stream():
    """Its thresholds come from the training rows, which a stream never holds."""
    stream = Stream(blocks(), lambda: None, "fit_chunks")
    assert not stream.rows_in_memory
    for encode in (lambda: stream.step_encoding(32), lambda: stream.pair_encoding(32, [], 8)):
        with pytest.raises(ValueError, match="use fit, not fit_chunks"):
            encode()
