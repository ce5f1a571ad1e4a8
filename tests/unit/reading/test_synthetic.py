import numpy as np
import pytest

from conftest import ranked_queries as queries
from rsrank.reading.synthetic import (INTERACTIONS, MSLR_LABEL_SHARES, click_chance, examination_curve,
                                      make_interactions, make_mslr_like,
                                      make_web_like, simulate_clicks)


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


def test_web_like_data_have_the_shape_the_families_and_the_truth_they_say():
    data = make_web_like(n_documents=20_000, n_queries=160, random_state=4)
    assert data.X.shape == (20_000, 136) and data.X.dtype == np.float32
    sizes = np.bincount(data.qid)[1:]
    assert sizes.sum() == 20_000 and len(sizes) == 160 and np.all(np.diff(data.qid) >= 0)
    shares = np.bincount(data.y, minlength=len(MSLR_LABEL_SHARES)) / len(data.y)
    np.testing.assert_allclose(shares, MSLR_LABEL_SHARES, atol=2e-3)
    family = np.array(data.families)
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    for j in np.flatnonzero(family == "query"):  # one value per query
        assert np.all(data.X[:, j] == np.repeat(data.X[starts, j], sizes))
    for j in np.flatnonzero(family == "binary"):
        assert set(np.unique(data.X[:, j])) <= {0.0, 1.0}
    counts = data.X[:, family == "count"]
    assert np.all(counts == np.round(counts)) and 0.3 < np.mean(counts == 0) < 0.6
    scores = data.X[:, family == "score"]
    assert np.all(scores >= 0) and np.corrcoef(scores[:, 0], scores[:, 1])[0, 1] > 0.05
    assert not set(data.informative) & set(np.flatnonzero(family == "query"))
    switch = [pair for pair in data.pairs if pair[2] == "switch"]
    assert len(data.pairs) == 6 and family[switch[0][1]] == "query"
    again = make_web_like(n_documents=20_000, n_queries=160, random_state=4)
    np.testing.assert_array_equal(again.X, data.X)
    np.testing.assert_array_equal(again.y, data.y)
    # every size shares the truth: the same columns, shapes and pairs
    larger = make_web_like(n_documents=30_000, n_queries=240, random_state=4)
    np.testing.assert_array_equal(larger.informative, data.informative)
    assert larger.pairs == data.pairs
    for bad, error in ((dict(n_features=6), ValueError), (dict(n_informative=0), ValueError),
                       (dict(n_informative=200), ValueError), (dict(noise=-1.0), ValueError),
                       (dict(n_documents=0), ValueError), (dict(n_queries=2.5), TypeError)):
        with pytest.raises(error, match=next(iter(bad))):
            make_web_like(**{"n_documents": 100, "n_queries": 5, **bad})


# -- simulated click logs: the users hold to their models' definitions, checked by counting


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
    # every argument, as scikit-learn checks an estimator's
    for options, words in [({"noise": np.nan}, "noise must be finite"),
                           ({"noise": 1.5}, "noise == 1.5, must be <= 1.0"),
                           ({"eta": -1}, "eta == -1, must be >= 0.0"),
                           ({"eta": np.inf}, "eta must be finite"),
                           ({"top_k": 10**9}, "top_k == 1000000000, must be <= 10000"),
                           ({"top_k": 0}, "top_k == 0, must be >= 1"),
                           ({"docids": np.arange(3)}, r"docids must be one per row \(45\)"),
                           ({"max_grade": 2}, "max_grade == 2, must be >= 3"),
                           ({"n_sessions": -1}, "n_sessions must hold whole numbers"),
                           ({"n_sessions": 2.5}, "n_sessions must hold whole numbers"),
                           ({"n_sessions": [1, 2]}, r"one per query \(3\), got shape \(2,\)"),
                           ({"n_sessions": 10**9}, "more than 1e\\+09: ask for fewer sessions")]:
        with pytest.raises(ValueError, match=words):
            simulate_clicks(y, qid, scores, **options)
    with pytest.raises(TypeError, match="top_k must be an instance of int"):
        simulate_clicks(y, qid, scores, top_k=2.0)
    with pytest.raises(ValueError, match="scores must be finite"):
        simulate_clicks(y, qid, np.where(scores > 1, np.nan, scores))
    with pytest.raises(ValueError, match="y must hold non-negative relevance grades"):
        simulate_clicks(-y, qid, scores)


# -- data built from pairs of features


def test_shapes_names_and_pairs_are_as_documented():
    data = make_interactions(("and", "xor"), n_queries=20, n_main=1, n_noise=3, random_state=4)
    assert data.X.shape == (len(data.y), 2 * 2 + 1 + 3)
    assert data.feature_names == ["and_a", "and_b", "xor_a", "xor_b", "main_1", "noise_1",
                                  "noise_2", "noise_3"]
    assert data.pairs == [(0, 1), (2, 3)]
    assert list(data.informative) == [0, 1, 2, 3, 4]
    assert len(np.unique(data.qid)) == 20 and np.all(np.diff(data.qid) >= 0)
    assert set(np.unique(data.y)) <= {0, 1, 2, 3}
    again = make_interactions(("and", "xor"), n_queries=20, n_main=1, n_noise=3,
                              random_state=4)
    np.testing.assert_array_equal(again.X, data.X)
    np.testing.assert_array_equal(again.y, data.y)


def test_an_unknown_effect_is_refused_by_name():
    with pytest.raises(ValueError, match="effects must name some of"):
        make_interactions(("and", "sum"))
    with pytest.raises(ValueError, match="effects must name some of"):
        make_interactions(())


@pytest.mark.parametrize("name", ["product", "xor", "switch"])
def test_the_pure_pairwise_effects_have_no_main_effect(name):
    """Averaged over one feature, the effect is the same whatever the other's
    value (up to sampling): a sum of one-feature shapes cannot see it."""
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-1, 1, 200_000), rng.uniform(-1, 1, 200_000)
    effect = INTERACTIONS[name](a, b)
    for x in (a, b):
        bins = np.digitize(x, np.linspace(-1, 1, 9)[1:-1])
        means = [effect[bins == k].mean() for k in range(8)]
        assert np.ptp(means) < 0.05 * np.ptp(effect)
    # while the pair itself moves the effect across its whole range
    cells = np.digitize(a, [0]) * 2 + np.digitize(b, [0])
    assert np.ptp([effect[cells == k].mean() for k in range(4)]) > 0.2 * np.ptp(effect)


def test_the_and_effect_has_main_effects_and_labels_follow_the_effects():
    data = make_interactions(("and",), n_queries=200, n_main=0, n_noise=2, noise=0.1,
                             random_state=1)
    a, b = data.X[:, 0], data.X[:, 1]
    both = (a > 0.2) & (b > 0.2)
    assert data.y[both].mean() > data.y[~both].mean() + 1.0
    assert abs(np.corrcoef(data.X[:, 2], data.y)[0, 1]) < 0.05  # noise has no effect
