"""rsrank.clicks.grading: the documents a ranking is judged on from the
clicks, the shown ones graded, or on long lists every document of the
logged queries with the unshown ones graded 0."""

import numpy as np
import pytest

from rsrank.clicks import ClickLog
from rsrank.clicks.arrays import click_splits
from rsrank.clicks.grading import LONG_LISTS, GradedClicks, grade_clicks
from rsrank.reading.synthetic import simulate_clicks


def graded(rows, grades):
    """Documents graded as given (plain clicks: the grades are the rows' own)."""
    return GradedClicks(rows=np.asarray(rows), y=np.asarray(grades), relevance=None,
                        examination=None, model=None)


def lists(sizes):
    """qid of queries 0, 1, ... with the given numbers of documents."""
    return np.repeat(np.arange(len(sizes)), sizes)


def test_short_lists_are_judged_on_the_shown_documents_alone():
    qid = lists([10, 12, 20])  # 3 shown of each: 30%, 25%, 15%
    X = np.arange(len(qid), dtype=np.float64)[:, None]
    rows = [0, 1, 2, 10, 11, 12, 22, 23, 24]
    clicks = graded(rows, [2, 0, 1, 0, 0, 3, 1, 1, 0])
    Xj, y, q = clicks.judged_documents(X, qid)
    Xs, ys, qs = clicks.graded_documents(X, qid)
    np.testing.assert_array_equal(Xj, Xs)
    np.testing.assert_array_equal(y, ys)
    np.testing.assert_array_equal(q, qs)
    assert len(y) == 9


def test_long_lists_are_judged_whole_with_the_unshown_documents_at_0():
    qid = lists([100, 50, 300, 40])  # the log shows queries 0 and 2: 2 of 100, 3 of 300
    X = np.arange(len(qid), dtype=np.float64)[:, None]
    rows = [5, 7, 150, 151, 152]
    clicks = graded(rows, [3, 1, 2, 0, 4])
    Xj, y, q = clicks.judged_documents(X, qid)
    logged = np.flatnonzero(np.isin(qid, [0, 2]))  # query 1 and 3 are not in the log
    np.testing.assert_array_equal(Xj[:, 0], logged)
    np.testing.assert_array_equal(q, qid[logged])
    expected = np.zeros(len(qid), dtype=np.int64)
    expected[rows] = [3, 1, 2, 0, 4]
    np.testing.assert_array_equal(y, expected[logged])


@pytest.mark.parametrize("n_documents, whole", [(int(round(1 / LONG_LISTS)), False),
                                                (int(round(1 / LONG_LISTS)) + 1, True)])
def test_the_whole_lists_begin_below_the_long_lists_share(n_documents, whole):
    """One shown document per query: at exactly LONG_LISTS of a list the
    shown documents judge alone; one document more, the whole lists do."""
    qid = lists([n_documents] * 3)
    X = np.zeros((len(qid), 1))
    clicks = graded([0, n_documents, 2 * n_documents], [1, 0, 2])
    assert len(clicks.judged_documents(X, qid)[1]) == (len(qid) if whole else 3)


def test_a_simulated_long_list_log_keeps_its_grades_on_the_shown_documents():
    rng = np.random.default_rng(3)
    qid = lists([400] * 6)
    y = rng.integers(0, 3, size=len(qid))
    X = rng.normal(size=(len(qid), 4))
    log = simulate_clicks(y, qid, X @ rng.normal(size=4), n_sessions=30, random_state=0)
    sessions = ClickLog.from_sessions(log.session, log.qid, log.docid, log.position, log.click)
    clicks = grade_clicks(sessions, sessions.docid.astype(np.int64))  # docids are rows here
    Xs, ys, _ = clicks.graded_documents(X, qid)
    Xj, yj, qj = clicks.judged_documents(X, qid)
    assert len(yj) == len(qid)  # 10 shown of 400: every document is judged
    shown = np.unique(log.docid)  # here the rows are the features' (every document's)
    np.testing.assert_array_equal(Xj[shown], Xs)
    np.testing.assert_array_equal(yj[shown], ys)
    assert not np.any(np.delete(yj, shown))
    np.testing.assert_array_equal(Xj, X)
    np.testing.assert_array_equal(qj, qid)


def test_a_log_given_as_arrays_is_judged_on_its_shown_documents():
    """Arrays hold one row per entry of the log (a document shown in 30
    sessions has 30 rows), not the queries' lists: however long those are,
    the shown documents judge alone."""
    rng = np.random.default_rng(4)
    qid = lists([400] * 8)
    y = rng.integers(0, 3, size=len(qid))
    features = rng.normal(size=(len(qid), 3))
    log = simulate_clicks(y, qid, features[:, 0], n_sessions=30, random_state=0)
    found = click_splits(features[log.docid], log.click, log.qid, log.position,
                         session=log.session, vali_fraction=0.5)
    n_shown = len(np.unique(log.docid[np.isin(log.qid, found.judge.qids)]))
    assert found.judge.n_rows == n_shown


def test_sessions_are_summed_per_set_shown_and_number_of_clicks():
    from rsrank.clicks.grading import session_preferences

    # four sessions (weights 1, 2, 1, 3): 0 and 1 show rows {5, 7, 9}, 2 shows {5, 7},
    # 3 shows {5, 7, 9} with two clicks
    rows = [5, 7, 9, 9, 5, 7, 7, 5, 9, 7, 5]
    clicks = [1, 0, 0, 0, 1, 0, 0, 1, 1, 0, 1]
    session = [0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 3]
    weight = np.array([1, 2, 1, 3], dtype=float)[session]
    docs, y, sets, (better, worse, summed, relevant) = session_preferences(
        rows, clicks, session, weight)
    assert len(docs) == 5 and len(np.unique(sets)) == 2
    found = {}
    for b, w, s, r in zip(better, worse, summed, relevant):
        assert sets[b] == sets[w]
        found[frozenset(docs[sets == sets[b]]), docs[b], docs[w], r] = s
    three, two = frozenset({5, 7, 9}), frozenset({5, 7})
    assert found == {(three, 5, 7, 1): 3.0, (three, 5, 9, 1): 3.0,   # sessions 0 and 1
                     (three, 9, 7, 2): 3.0, (three, 5, 7, 2): 3.0,   # session 3
                     (two, 5, 7, 1): 1.0}                             # session 2
    np.testing.assert_array_equal(y, np.isin(np.arange(5), better).astype(int))
