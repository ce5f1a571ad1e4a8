"""rsrank.clicks.reading: click logs read as the counts per query, document
and position, in any column order, with or without quotes, and a bad log
refused in one line naming its file and line."""

import numpy as np
import pytest

from conftest import ranked_queries as queries
from rsrank.clicks.grading import feature_rows
from rsrank.clicks.log import ClickLog
from rsrank.clicks.reading import read_click_log
from rsrank.reading.synthetic import simulate_clicks


def write_sessions(path, log, extra=False):
    head = "session,qid,docid,position,click" + (",device" if extra else "")
    lines = [head] + [f"{s},{q},d{d},{p},{c}" + (",phone" if extra else "")
                      for s, q, d, p, c in zip(log.session, log.qid, log.docid, log.position,
                                                log.click)]
    path.write_text("\n".join(lines) + "\n")


def test_a_session_log_reads_as_the_counts_per_query_document_and_position(tmp_path):
    from collections import Counter

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
    path = tmp_path / "log.csv"
    path.write_text(text)
    with pytest.raises(ValueError) as caught:
        read_click_log(path)
    message = str(caught.value)
    assert message.startswith(str(path)) and words in message and "\n" not in message


def test_a_log_joins_its_features_on_query_and_document():
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
