"""Learning from clicks: the examination curve comes back from a log of a
deterministic ranker, grades follow the clicks without the position's
bias, and the estimator and ``rsrank train`` take click logs."""

import csv

import numpy as np
import pytest

from rsrank import QueryData, RSRank
from rsrank.clicks import (ClickLog, click_preferences, grade_clicks, impression_log,
                           load_click_fold, session_lists)
from rsrank.reading.datasets import load_letor
from rsrank.evaluation.experiments import fit_and_select
from rsrank.learning.objective import Objective
from rsrank.clicks.propensity import (ClickClasses, click_grades, estimate_examination,
                               known_examination)
from rsrank.reading.synthetic import examination_curve, make_letor_like, simulate_clicks


def click_log(eta=1.0, n_queries=300, n_sessions=100, seed=0, model="position"):
    data = make_letor_like(n_queries=n_queries, docs_per_query=(20, 40), random_state=seed)
    rng = np.random.default_rng(seed)
    production = data.X @ (data.coef + rng.normal(size=len(data.coef)))  # a weak ranker
    sim = simulate_clicks(data.y, data.qid, production, n_sessions=n_sessions, eta=eta,
                          click_model=model, random_state=seed)
    return data, sim


def entries(sim):
    log = ClickLog.from_sessions(sim.session, sim.qid, sim.docid, sim.position, sim.click)
    rows = log.docid.astype(np.int64)
    return log, rows


@pytest.mark.parametrize("eta", [0.5, 1.0, 2.0])
def test_the_curve_comes_back_where_the_raw_click_rates_are_far_off(eta):
    # at eta 2, position 5 is examined 4% of the time: 500 sessions a query
    # give it the clicks to be estimated within 10% (100 give about 13%)
    _, sim = click_log(eta=eta, n_sessions=500 if eta == 2.0 else 100)
    log, rows = entries(sim)
    document = np.unique(rows, return_inverse=True)[1].ravel()
    found, _ = estimate_examination(document, log.position, log.impressions, log.clicks)
    true = sim.examination[:5]
    assert found.estimated and found.curve[0] == 1.0
    assert np.all(np.abs(found.curve[:5] - true) <= 0.1 * true), found.curve[:5]
    # the raw click rates confound position with relevance: not a test that always passes
    raw = log.click_rate_by_position(5) / log.click_rate_by_position(5)[0]
    assert np.max(np.abs(raw - true) / true) > 0.15
    assert np.all(np.diff(found.curve) <= 1e-12)  # non-increasing


def test_a_given_curve_is_kept_and_checked():
    _, sim = click_log(n_queries=40, n_sessions=20)
    log, rows = entries(sim)
    given = 2.0 / np.arange(1, 11)
    kept = known_examination(given, log.position, log.impressions, log.clicks)
    np.testing.assert_allclose(kept.curve, 1.0 / np.arange(1, 11))
    assert not kept.estimated
    graded = grade_clicks(log, rows, propensity=given)
    np.testing.assert_allclose(graded.model.theta, 1.0 / np.arange(1, 11))
    with pytest.raises(ValueError, match="positions 1 to 5.*position 10"):
        known_examination(given[:5], log.position, log.impressions, log.clicks)
    with pytest.raises(ValueError, match="at most position 1's"):
        known_examination(np.r_[0.5, 1.0, given[2:]], log.position, log.impressions,
                          log.clicks)


def test_grades_weigh_documents_by_the_clicks_they_earn():
    relevance = np.array([0.1, 0.1, 0.25, 0.4, 1.0])
    grades = click_grades(relevance, floor=0.1, ceiling=1.0, top=8)
    assert grades[0] == grades[1] == 0 and grades[-1] == 8
    assert np.all(np.diff(grades) >= 0)
    gain = 2.0 ** grades - 1
    share = (relevance - 0.1) / 0.9
    np.testing.assert_allclose(gain[2:-1] / 255, share[2:-1], rtol=0.5)  # to rounding


def test_a_deep_document_is_not_graded_below_a_top_one_with_fewer_earned_clicks():
    # the same click rate at position 1 and at position 5 of an eta=1 log: the
    # one at position 5 earned it from a fifth of the examinations
    _, sim = click_log(n_queries=200, n_sessions=50)
    log, rows = entries(sim)
    graded = grade_clicks(log, rows)
    model = graded.model
    same = model.relevance(np.array([0, 1]), np.array([1, 5]), np.array([200, 200]),
                           np.array([20, 20]))
    assert same[1] > same[0]


def test_rows_of_impressions_give_the_log_of_their_counts():
    data, sim = click_log(n_queries=30, n_sessions=5)
    X = data.X[sim.docid]
    log, rows = impression_log(X, sim.click, sim.qid, sim.position)
    by_sessions = ClickLog.from_sessions(sim.session, sim.qid, sim.docid, sim.position,
                                         sim.click)
    assert log.impressions.sum() == by_sessions.impressions.sum() == len(sim.click)
    assert log.clicks.sum() == by_sessions.clicks.sum()
    # the same document of a query is one entry per position, its features one row
    assert len(log.qid) == len(by_sessions.qid)
    np.testing.assert_array_equal(np.sort(sim.docid[rows]), np.sort(by_sessions.docid.astype(
        np.int64)))
    with pytest.raises(ValueError, match="row 0 of the click log: position 0 is not a whole "
                                         "number from 1"):
        impression_log(X, sim.click, sim.qid, sim.position - 1)
    with pytest.raises(ValueError, match="qid must have one entry per row"):
        impression_log(X, sim.click, sim.qid[1:], sim.position)
    with pytest.raises(ValueError, match="click 2 is not 0 or 1"):
        impression_log(X, sim.click * 2, sim.qid, sim.position)
    with pytest.raises(ValueError, match="more clicks than impressions"):
        impression_log(X, sim.click * 2, sim.qid, sim.position, impressions=np.ones_like(
            sim.click))


def test_fit_on_clicks_equals_fit_on_their_counts():
    data, sim = click_log(n_queries=60, n_sessions=20)
    X = data.X[sim.docid]
    one = RSRank(max_iter=20).fit(X, sim.click, qid=sim.qid, position=sim.position)
    log, rows = impression_log(X, sim.click, sim.qid, sim.position)
    two = RSRank(max_iter=20).fit(X[rows], log.clicks, qid=log.qid.astype(np.int64),
                                  position=log.position, impressions=log.impressions)
    np.testing.assert_allclose(one.examination_.curve, two.examination_.curve)
    np.testing.assert_allclose(one.coef_, two.coef_, rtol=1e-9, atol=1e-12)
    assert one.examination_.estimated


def test_fit_on_clicks_validates_on_clicks():
    data, sim = click_log(n_queries=80, n_sessions=20)
    X = data.X[sim.docid]
    train = sim.qid <= 60
    model = RSRank(max_iter=20).fit(
        X[train], sim.click[train], qid=sim.qid[train], position=sim.position[train],
        eval_set=(X[~train], sim.click[~train], sim.qid[~train], sim.position[~train]))
    assert np.isfinite(model.history_["val_ndcg"]).all()
    with pytest.raises(ValueError, match="eval_set is a click log too"):
        RSRank().fit(X[train], sim.click[train], qid=sim.qid[train],
                     position=sim.position[train],
                     eval_set=(X[~train], sim.click[~train], sim.qid[~train]))
    with pytest.raises(ValueError, match="give position too"):
        RSRank().fit(X, sim.click, qid=sim.qid, propensity=[1.0, 0.5])


def write_log(path, sim, docids):
    with open(path, "w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["session", "qid", "docid", "position", "click"])
        out.writerows(zip(sim.session, sim.qid, docids[sim.docid], sim.position, sim.click))


@pytest.fixture
def click_fold(tmp_path, bundled_root):
    fold = bundled_root / "Fold1"
    for offset, split in enumerate(("train", "vali")):
        X, y, qid, docids = load_letor(fold / f"{split}.txt.gz", return_docids=True,
                                       dense=True)
        production = X @ np.random.default_rng(0).normal(size=X.shape[1])
        sim = simulate_clicks(y, qid, production, n_sessions=30, random_state=offset)
        write_log(tmp_path / f"{split}.clicks.csv", sim, np.asarray(docids))
    return fold, tmp_path


def test_positions_without_clicks_keep_a_curve_above_zero(bundled_root):
    # a cascade log of a ranker fitted to three queries, where the EM drove
    # positions 4 and below to an examination of 0 and the grades to 0/0
    X, y, qid = load_letor(bundled_root / "Fold2" / "train.txt.gz", dense=True)
    chosen = np.isin(qid, np.random.default_rng(0).choice(np.unique(qid), 3, replace=False))
    weights = np.linalg.lstsq(np.c_[X[chosen], np.ones(chosen.sum())], y[chosen].astype(float),
                              rcond=None)[0][:-1]
    sim = simulate_clicks(y, qid, X @ weights, n_sessions=100, click_model="cascade",
                          random_state=0)
    log, rows = entries(sim)
    # counts alone (no sessions): the position-based model's EM, not the cascade's reading
    counts = ClickLog(log.qid, log.docid, log.position, log.impressions, log.clicks)
    graded = grade_clicks(counts, rows)
    assert isinstance(graded.model, ClickClasses)
    assert np.all(np.isfinite(graded.examination.curve)) and np.all(graded.examination.curve > 0)
    assert np.all(np.isfinite(graded.relevance)) and graded.y.min() >= 0


def test_a_cascade_log_is_read_down_to_the_first_click():
    _, cascade = click_log(n_queries=100, n_sessions=50, model="cascade")
    log, rows = entries(cascade)
    assert log.repeat_sessions == 0 and log.clicked_sessions > 20
    graded = grade_clicks(log, rows)
    # its curve is the share of sessions that read down to each position
    first = np.full(cascade.session.max() + 1, 11)
    np.minimum.at(first, cascade.session, np.where(cascade.click > 0, cascade.position, 11))
    reach = np.array([np.mean(first >= k) for k in range(1, 11)])
    np.testing.assert_allclose(graded.examination.curve, reach / reach[0])
    # a document's clicks count against the sessions that reached it
    np.testing.assert_array_equal(log.reached <= log.impressions, True)
    assert np.all(np.isfinite(graded.relevance)) and graded.y.min() >= 0
    _, position_based = click_log(n_queries=100, n_sessions=50)
    log, rows = entries(position_based)
    assert log.repeat_sessions > 0.1 * log.clicked_sessions  # not read as a cascade
    assert isinstance(grade_clicks(log, rows).model, ClickClasses)


def test_a_cascade_model_needs_the_sessions_of_the_vali_log():
    _, cascade = click_log(n_queries=60, n_sessions=30, model="cascade")
    log, rows = entries(cascade)
    model = grade_clicks(log, rows).model
    aggregated = ClickLog(log.qid, log.docid, log.position, log.impressions, log.clicks)
    with pytest.raises(ValueError, match="sessions form"):
        grade_clicks(aggregated, rows, model=model)


def test_session_clicks_keep_each_click_with_what_its_session_left_unclicked():
    session = [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]
    qid = ["a"] * 9 + ["b"] * 3
    docid = ["x", "y", "z"] * 4
    position = [1, 2, 3] * 4
    click = [1, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 1]
    log = ClickLog.from_sessions(session, qid, docid, position, click)
    clicks = log.session_clicks
    # entries: a/x a/y a/z b/x b/y b/z; sessions 1 and 2 are the same click of x over y, z
    assert clicks.entry.tolist() == [0, 0, 1, 5] and clicks.count.tolist() == [2, 1, 1, 1]
    lists = [clicks.unclicked[a:b].tolist() for a, b in zip(clicks.offsets[:-1],
                                                            clicks.offsets[1:])]
    assert lists == [[1, 2], [2], [2], [3, 4]]
    rows, y, names, weight = session_lists(log, np.arange(6) * 10, np.array([1.0, 0.5, 0.25]))
    assert rows.tolist() == [0, 10, 20, 0, 20, 10, 20, 50, 30, 40]
    assert y.tolist() == [1, 0, 0, 1, 0, 1, 0, 1, 0, 0]
    assert names.tolist() == [0, 0, 0, 1, 1, 2, 2, 3, 3, 3]
    # sessions over the examination of the clicked position (z at 3: 1 / 0.25)
    assert weight.tolist() == [2.0] * 3 + [1.0] * 2 + [2.0] * 2 + [4.0] * 3


@pytest.mark.parametrize("max_weight", [3.0, 100.0])
def test_session_lists_give_the_inverse_propensity_weighted_pair_loss_of_the_sessions(
        max_weight):
    # brute force: every session, every clicked document over every document it
    # left unclicked, the pair's loss over the examination of the clicked position
    data, sim = click_log(n_queries=8, n_sessions=30, eta=1.5)
    log, rows = entries(sim)
    curve = examination_curve(10, 1.5)
    w = np.random.default_rng(1).normal(size=data.X.shape[1])
    scores = data.X @ w
    expected = 0.0
    gradient = np.zeros(len(w))
    for s in np.unique(sim.session):
        mine = sim.session == s
        docs, clicked, place = sim.docid[mine], sim.click[mine], sim.position[mine]
        for i in np.flatnonzero(clicked):
            weight = min(1.0 / curve[place[i] - 1], max_weight)
            for j in np.flatnonzero(clicked == 0):
                margin = scores[docs[i]] - scores[docs[j]]
                expected += weight * (max(0.0, 1 - margin) ** 2 if margin >= -1 else -4 * margin)
                slope = (-2 * max(0.0, 1 - margin) if margin >= -1 else -4.0)
                gradient += weight * slope * (data.X[docs[i]] - data.X[docs[j]])
    list_rows, y, names, weight = session_lists(log, rows, curve, max_weight)
    lists = QueryData(data.X[list_rows], y, names, query_weight=weight)
    loss, grad = Objective(pair_weight="unit").loss_and_gradient(lists, w)
    assert loss == pytest.approx(expected, rel=1e-9)
    np.testing.assert_allclose(grad, gradient, rtol=1e-9, atol=1e-9)
    # the same pairs summed per pair of documents: each query's shown documents once
    documents, *preferences = click_preferences(list_rows, y, names, weight)
    np.testing.assert_array_equal(documents, np.unique(list_rows))
    preferred = QueryData(data.X[documents], np.zeros(len(documents), dtype=int),
                          data.qid[documents], preferences=preferences)
    assert preferred.n_queries == len(np.unique(data.qid[documents])) < lists.n_queries
    loss, grad = Objective(pair_weight="unit").loss_and_gradient(preferred, w)
    assert loss == pytest.approx(expected, rel=1e-9)
    np.testing.assert_allclose(grad, gradient, rtol=1e-9, atol=1e-9)


def test_a_position_based_sessions_log_trains_on_its_preferences_and_validates_on_its_lists(
        click_fold):
    fold, logs = click_fold
    data = load_click_fold(fold / "train.txt.gz", logs / "train.clicks.csv",
                           fold / "vali.txt.gz", logs / "vali.clicks.csv")
    X, y, lists = data.vali  # one clicked document per list
    weights = data.query_options["vali"]["query_weight"]
    assert len(weights) == len(y) == X.shape[0]
    np.testing.assert_array_equal(np.bincount(np.unique(lists, return_inverse=True)[1],
                                              weights=y), 1)

    X, y, qid = data.train  # the documents shown, each once
    better, worse, weight = data.query_options["train"]["preferences"]
    assert len(np.unique(np.c_[qid.astype(str), X.toarray()], axis=0)) == len(y)
    assert np.all(y[better] == 1) and np.all(qid[better] == qid[worse]) and weight.min() > 0
    # without a vali log, the lists of a fifth of the training queries validate:
    # a pair's weight in a list counts once per document below its click
    held = load_click_fold(fold / "train.txt.gz", logs / "train.clicks.csv")
    held_pairs = held.query_options["train"]["preferences"][2].sum()
    held_lists = np.sum(held.query_options["vali"]["query_weight"] * (1 - held.vali[1]))
    assert held_pairs + held_lists == pytest.approx(weight.sum())
    assert 0.6 * len(y) < len(held.train[1]) < 0.95 * len(y)


def test_a_weighted_vali_scores_short_lists_on_what_they_hold():
    # lists of clicks shorter than k are not short LETOR queries, which score 0:
    # two documents each, the click first or second, both undiscounted by LETOR
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y, lists = np.tile([1, 0], 20), np.repeat(np.arange(20), 2)
    vali = QueryData(X, y, lists, query_weight=np.repeat(rng.uniform(1, 5, 20), 2))
    train = QueryData(X, y, lists)
    selection = fit_and_select(RSRank(max_iter=3), [{}], train, vali)
    assert selection.vali_score == pytest.approx(1.0)
    unweighted = fit_and_select(RSRank(max_iter=3), [{}], train, QueryData(X, y, lists))
    assert unweighted.vali_score == 0.0  # LETOR's rule for queries shorter than 10


def test_fit_with_sessions_trains_on_the_sessions_preferences_and_validates_on_lists():
    data, sim = click_log(n_queries=30, n_sessions=20)
    X, click, qid = data.X[sim.docid], sim.click, sim.qid
    vali = (X, click, qid, sim.position, sim.session)
    params = dict(max_iter=5, restore_best=False, random_state=0)
    model = RSRank(**params).fit(X, click, qid=qid, position=sim.position, session=sim.session,
                                 eval_set=vali)
    # the same lists by hand: documents named by their first impression's row
    keys = np.unique(sim.qid.astype(str) + "/" + sim.docid.astype(str), return_index=True,
                     return_inverse=True)
    log = ClickLog.from_sessions(sim.session, qid, keys[1][keys[2]], sim.position, click)
    rows, y, lists, weight = session_lists(log, log.docid.astype(np.int64),
                                           model.examination_.curve)
    lists_data = QueryData(X[rows], y, lists, query_weight=weight)
    documents, *preferences = click_preferences(rows, y, lists, weight)
    pairs_data = QueryData(X[documents], np.isin(np.arange(len(documents)), preferences[0]),
                           qid[documents], preferences=preferences)
    by_hand = RSRank(**params).fit(pairs_data, eval_set=lists_data)
    np.testing.assert_allclose(model.coef_, by_hand.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.history_["val_ndcg"], by_hand.history_["val_ndcg"])
    with pytest.raises(ValueError, match="session or impressions"):
        RSRank().fit(X, click, qid=qid, position=sim.position, session=sim.session,
                     impressions=np.ones(len(click)))


def test_plain_clicks_are_the_sessions_as_queries_with_their_clicks_as_labels():
    from rsrank.clicks import ClickLog, plain_clicks

    data, sim = click_log(n_queries=20, n_sessions=15)
    # every third session shows one document fewer: a query's sessions show two sets
    shown = ~((sim.position == 10) & (sim.session % 3 == 0))
    sim = {name: sim[name][shown] for name in ("session", "qid", "docid", "position", "click")}
    sim = type("Sessions", (), sim)
    log = ClickLog.from_sessions(sim.session, sim.qid, sim.docid, sim.position, sim.click)
    plain = plain_clicks(log, log.docid.astype(np.int64))
    X, y, qid, options = plain.training(data.X, data.qid)
    assert plain.plain
    # by brute force: every session with a click and a document left unclicked, as
    # shown; sessions that showed and clicked alike one query, weighted by their count
    patterns = {}
    for session in np.unique(sim.session):
        mine = np.flatnonzero(sim.session == session)
        mine = mine[np.argsort(sim.position[mine])]
        if 0 < sim.click[mine].sum() < len(mine):
            key = (tuple(sim.docid[mine]), tuple(sim.click[mine]))
            patterns.setdefault(key, []).append(mine)
    assert len(patterns) < sum(len(found) for found in patterns.values())  # some alike
    expected = [found[0] for found in patterns.values()]  # in the order first seen
    counts = np.repeat([len(found) for found in patterns.values()],
                       [len(rows) for rows in expected])
    Xv, yv, qv, weight = plain.queries(data.X, data.qid)  # validated on as they are
    np.testing.assert_array_equal(Xv, data.X[sim.docid[np.concatenate(expected)]])
    np.testing.assert_array_equal(yv, sim.click[np.concatenate(expected)])
    np.testing.assert_array_equal(qv, np.repeat(np.arange(len(expected)),
                                                [len(rows) for rows in expected]))
    np.testing.assert_array_equal(weight, counts)
    # trained on as one query per set of documents shown, the sessions' pairs summed:
    # the same loss and gradient as the sessions as queries, whatever the weighting
    sessions = QueryData(Xv, yv, qv, query_weight=weight)
    assert len(y) < len(yv) and len(np.unique(data.qid[sim.docid])) < len(np.unique(qid)) \
        < len(expected)
    sets = QueryData(X, y, qid, **options)
    w = np.random.default_rng(0).normal(size=data.X.shape[1])
    for objective in (Objective(pair_weight="unit"), Objective(), Objective(ndcg_k=3),
                      Objective(discount="log2", gain="exp2", ndcg_k=1)):
        loss, gradient = objective.loss_and_gradient(sessions, w)
        summed, summed_gradient = objective.loss_and_gradient(sets, w)
        assert summed == pytest.approx(loss, rel=1e-9)
        np.testing.assert_allclose(summed_gradient, gradient, rtol=1e-9, atol=1e-12)
    # an aggregated log's documents graded by their click rate over every position
    counts = ClickLog.from_counts(log.qid, log.docid, log.position, log.impressions, log.clicks)
    graded = plain_clicks(counts, counts.docid.astype(np.int64))
    rows = graded.rows
    rate = np.array([sim.click[sim.docid == row].mean() for row in rows])
    np.testing.assert_allclose(graded.relevance, rate)
    assert graded.y[np.argmax(rate)] == graded.y.max() and graded.y[np.argmin(rate)] == 0


def test_auto_reads_both_ways_and_judges_on_the_vali_logs_graded_documents(click_fold):
    fold, logs = click_fold
    data = load_click_fold(fold / "train.txt.gz", logs / "train.clicks.csv",
                           fold / "vali.txt.gz", logs / "vali.clicks.csv", debias="auto")
    X, y, qid = data.judge  # the vali log's shown documents, each once, graded
    assert len(np.unique(np.c_[qid.astype(str), X.toarray()], axis=0)) == len(y)
    assert set(np.unique(y)) <= {0, 1, 2, 3} and len(np.unique(y)) > 1
    plain = data.plain  # sessions as queries, their clicks the labels, summed per set shown
    assert set(np.unique(plain.train[1])) == {0, 1} and "preferences" in plain.query_options[
        "train"]
    assert "query_weight" in plain.query_options["vali"]  # validated on as they are
    # held out of the training log: the judge's queries are none of the training ones
    held = load_click_fold(fold / "train.txt.gz", logs / "train.clicks.csv", debias="auto")
    judged, trained = np.unique(held.judge[2]), np.unique(held.train[2])
    assert len(judged) and not set(judged) & set(trained)


def test_a_deep_position_fits_as_the_next_shown_one_not_as_long_as_the_list():
    """The curve is fitted over the positions the log shows: a row at
    position 10,000 fits exactly as the same row at position 11 does, and
    the positions between take the curve of the one shown above them."""
    from rsrank.clicks.propensity import estimate_examination

    data, sim = click_log(n_queries=40, n_sessions=30)
    log, rows = entries(sim)
    document = np.unique(rows, return_inverse=True)[1].ravel()
    extra = len(np.unique(rows))  # one more document, shown once, clicked
    columns = [np.r_[document, extra], None, np.r_[log.impressions, 1], np.r_[log.clicks, 1]]
    found = {}
    for deep in (11, 10_000):
        columns[1] = np.r_[log.position, deep]
        found[deep] = estimate_examination(*columns)
    shallow, far = found[11], found[10_000]
    np.testing.assert_array_equal(far[0].curve[:10], shallow[0].curve[:10])
    assert far[0].curve[9_999] == shallow[0].curve[10]
    assert np.all(np.isnan(far[0].curve[10:9_999]))  # shown nowhere: no estimate
    np.testing.assert_array_equal(far[1].theta[10:9_999], far[1].theta[9])
    np.testing.assert_array_equal(far[1].gamma, shallow[1].gamma)
