"""Click logs: the simulated users of rsrank.reading.synthetic.simulate_clicks hold
to their models' definitions, checked by counting."""

import numpy as np
import pytest

from rsrank.reading.synthetic import click_chance, examination_curve, simulate_clicks


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


# -- reading click logs ------------------------------------------------------------------------


def write_sessions(path, log, extra=False):
    head = "session,qid,docid,position,click" + (",device" if extra else "")
    lines = [head] + [f"{s},{q},d{d},{p},{c}" + (",phone" if extra else "")
                      for s, q, d, p, c in zip(log.session, log.qid, log.docid, log.position,
                                                log.click)]
    path.write_text("\n".join(lines) + "\n")


def test_a_session_log_reads_as_the_counts_per_query_document_and_position(tmp_path):
    from collections import Counter

    from rsrank.clicks import read_click_log

    y, qid, scores = queries()
    log = simulate_clicks(y, qid, scores, n_sessions=30, random_state=4)
    write_sessions(tmp_path / "log.csv", log, extra=True)
    read = read_click_log(tmp_path / "log.csv")
    shown = Counter(zip(log.qid.astype(str), ("d" + log.docid.astype(str)), log.position))
    clicked = Counter(key for key, c in zip(zip(log.qid.astype(str), "d" + log.docid.astype(str),
                                                log.position), log.click) if c)
    assert read.sessions == 90 and read.n_clicks == log.click.sum()
    assert len(read.qid) == len(shown)
    for q, d, p, n, c in zip(read.qid, read.docid, read.position, read.impressions, read.clicks):
        assert shown[(q, d, p)] == n and clicked[(q, d, p)] == c
    rate = read.click_rate_by_position()
    np.testing.assert_allclose(rate, [log.click[log.position == k].mean() for k in range(1, 11)])


def test_an_aggregated_log_reads_in_any_column_order(tmp_path):
    from rsrank.clicks import read_click_log

    (tmp_path / "agg.csv").write_text("\ufeffclicks,position,qid,impressions,docid,note\n"
                                      "3,1,q1,10,a,x\n0,2,q1,10,b,y\n")
    log = read_click_log(tmp_path / "agg.csv")
    assert log.qid.tolist() == ["q1", "q1"] and log.docid.tolist() == ["a", "b"]
    assert log.clicks.tolist() == [3, 0] and log.impressions.tolist() == [10, 10]
    assert log.sessions is None


@pytest.mark.parametrize("text, words", [
    ("", "the file is empty"),
    ("session,qid,docid,click\n1,q,a,0\n", "lacks position"),
    ("session,qid,docid,position,click\n1,q,a,top,0\n", "line 2: position 'top' is not"),
    ("session,qid,docid,position,click\n1,q,a,1,0\n1,q,b,2,2\n", "line 3: click 2 is not 0 or 1"),
    ("session,qid,docid,position,click\n1,q,a,0,1\n", "line 2: position 0 is not a whole number from 1"),
    ("session,qid,docid,position,click\n1,q,a,1\n", "line 2: 4 fields where the header has 5"),
    ("session,qid,docid,position,click\n1,,a,1,0\n", "line 2: the query id is empty"),
    ("qid,docid,position,impressions,clicks\nq,a,1,2,1\nq,b,2,2,3\n",
     "line 3: more clicks than impressions"),
])
def test_a_bad_click_log_is_one_line_naming_its_file_and_line(tmp_path, text, words):
    from rsrank.clicks import read_click_log

    path = tmp_path / "log.csv"
    path.write_text(text)
    with pytest.raises(ValueError) as caught:
        read_click_log(path)
    message = str(caught.value)
    assert message.startswith(str(path)) and words in message and "\n" not in message


def test_a_log_joins_its_features_on_query_and_document():
    from rsrank.clicks import ClickLog, feature_rows

    y, qid, scores = queries()
    docids = np.array([f"d{n % 15}" for n in range(len(y))])  # the same ids in every query
    sim = simulate_clicks(y, qid, scores, n_sessions=5, docids=docids, random_state=5)
    log = ClickLog.from_sessions(sim.session, sim.qid, sim.docid, sim.position, sim.click)
    rows = feature_rows(log, qid, docids)
    np.testing.assert_array_equal(qid[rows].astype(str), log.qid)
    np.testing.assert_array_equal(docids[rows], log.docid)
    # a shown document without features, and a document twice in a query, are refused
    shown_q, shown_d = log.qid[0], log.docid[0]
    with pytest.raises(ValueError, match=rf"names 1 shown documents the features lack, for "
                                         rf"example document '{shown_d}' of query '{shown_q}'"):
        keep = ~((qid.astype(str) == shown_q) & (docids == shown_d))
        feature_rows(log, qid[keep], docids[keep])
    twice = docids.copy()
    twice[1] = twice[0]
    with pytest.raises(ValueError, match="hold document 'd0' of query '10' twice .rows 1 and 2"):
        feature_rows(log, qid, twice)


def test_a_log_reads_the_same_with_and_without_quotes(tmp_path):
    from rsrank.clicks import read_click_log

    y, qid, scores = queries()
    log = simulate_clicks(y, qid, scores, n_sessions=4, random_state=1)
    rows = list(zip(log.session, log.qid, log.docid, log.position, log.click))
    plain, quoted = tmp_path / "plain.csv", tmp_path / "quoted.csv"
    plain.write_text("session,qid,docid,position,click\n"
                     + "".join(",".join(map(str, row)) + "\n" for row in rows))
    quoted.write_text("session,qid,docid,position,click\n"
                      + "".join(",".join(f'"{v}"' for v in row) + "\n" for row in rows))
    fast, slow = read_click_log(plain), read_click_log(quoted)  # NumPy's reader, the csv module's
    for name in ("qid", "docid", "position", "impressions", "clicks"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name))
    assert fast.n_clicks == log.click.sum() and fast.sessions == slow.sessions == 12
