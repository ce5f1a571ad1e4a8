"""Click logs: the simulated users of rsrank.synthetic.simulate_clicks hold
to their models' definitions, checked by counting."""

import numpy as np
import pytest

from rsrank.synthetic import click_chance, examination_curve, simulate_clicks


def queries(n_queries=3, n_docs=15, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, size=n_queries * n_docs)
    qid = np.repeat(np.arange(10, 10 + n_queries), n_docs)
    scores = rng.normal(size=len(y))
    return y, qid, scores


def within(rate, chance, n, sds=4.5):
    """An observed rate within ``sds`` binomial standard deviations."""
    return np.all(np.abs(rate - chance) <= sds * np.sqrt(chance * (1 - chance) / n) + 1e-12)


def test_sessions_show_the_rankers_top_k_at_positions_one_to_k():
    y, qid, scores = queries()
    log = simulate_clicks(y, qid, scores, n_sessions=[2, 3, 4], top_k=10, random_state=0)
    assert len(log.click) == (2 + 3 + 4) * 10
    assert len(np.unique(log.session)) == 9
    for query in np.unique(qid):
        rows = np.flatnonzero(qid == query)
        expected = rows[np.argsort(-scores[rows], kind="stable")][:10]
        mine = log.qid == query
        for session in np.unique(log.session[mine]):
            shown = log.session == session
            np.testing.assert_array_equal(log.position[shown], np.arange(1, 11))
            np.testing.assert_array_equal(log.docid[shown], expected)
    again = simulate_clicks(y, qid, scores, n_sessions=[2, 3, 4], random_state=0)
    np.testing.assert_array_equal(again.click, log.click)


@pytest.mark.parametrize("eta", [0.5, 1.0, 2.0])
def test_position_based_clicks_follow_the_examination_curve(eta):
    # every document draws a click when examined: the click rate is the curve
    y, qid, scores = queries(n_queries=1)
    y[:] = 3
    log = simulate_clicks(y, qid, scores, n_sessions=20000, eta=eta, noise=0.0, random_state=1)
    rate = np.array([log.click[log.position == k].mean() for k in range(1, 11)])
    assert within(rate, examination_curve(10, eta), 20000)
    np.testing.assert_allclose(log.examination, 1.0 / np.arange(1, 11) ** eta)


def test_position_based_clicks_of_an_examined_document_follow_its_grade():
    y, qid, scores = queries(n_queries=1)
    log = simulate_clicks(y, qid, scores, n_sessions=20000, eta=0.0, noise=0.1,
                          random_state=2)
    for docid in np.unique(log.docid):
        mine = log.docid == docid
        assert within(log.click[mine].mean(), click_chance(y[docid], 3, 0.1), mine.sum())
    assert click_chance(0, 3, 0.1) == pytest.approx(0.1)
    assert click_chance(3, 3, 0.1) == pytest.approx(1.0)


def test_a_cascade_user_clicks_once_at_most_and_after_no_click_above():
    y, qid, scores = queries(n_queries=1)
    log = simulate_clicks(y, qid, scores, n_sessions=20000, click_model="cascade",
                          noise=0.2, random_state=3)
    per_session = np.bincount(log.session, weights=log.click)
    assert per_session.max() == 1 and log.examination is None
    order = np.argsort(-scores, kind="stable")[:10]
    chance = click_chance(y[order], 3, 0.2)
    reached = np.r_[1.0, np.cumprod(1 - chance)[:-1]]  # no click above
    rate = np.array([log.click[log.position == k].mean() for k in range(1, 11)])
    assert within(rate, chance * reached, 20000)


def test_bad_simulations_are_refused():
    y, qid, scores = queries()
    with pytest.raises(ValueError, match="click_model must be one of"):
        simulate_clicks(y, qid, scores, click_model="dbn")
    with pytest.raises(ValueError, match="45, 45 and 3 rows"):
        simulate_clicks(y, qid, scores[:3])
