"""rsrank.clicks.splits: what each reading of the logs trains and selects
on: each reading selects on its own lists, on long lists too, where the
judge reads the whole lists; plain clicks beside debiasing as alone."""

import numpy as np
import pytest

from rsrank.clicks import ClickLog
from rsrank.clicks.splits import LogPart, read_clicks
from rsrank.reading.synthetic import simulate_clicks


def log_part(n_documents, seed):
    """A simulated log of 8 queries of ``n_documents`` each, 10 shown a
    session, with the features of every document (a features file's rows)."""
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(8), n_documents)
    y = rng.integers(0, 3, size=len(qid))
    X = rng.normal(size=(len(qid), 3))
    sim = simulate_clicks(y, qid, X @ rng.normal(size=3), n_sessions=20, random_state=seed)
    log = ClickLog.from_sessions(sim.session, sim.qid, sim.docid, sim.position, sim.click)
    return LogPart(log, log.docid.astype(np.int64), X, qid)


def same(a, b):
    return all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(a, b))


@pytest.mark.parametrize("debias", ["auto", "on"])
def test_on_long_lists_the_debiased_reading_selects_on_its_session_lists(debias):
    read = read_clicks(log_part(400, 0), log_part(400, 1), debias=debias, vali_fraction=None)
    assert len(read.judge[1]) == 8 * 400  # 10 of 400 shown: the whole lists judge
    *data, options = read.vali["on"]
    assert len(data[1]) < 8 * 400 and "query_weight" in options  # the session lists


def test_on_long_lists_plain_clicks_keep_their_sessions_beside_debiasing_as_alone():
    beside = read_clicks(log_part(400, 0), log_part(400, 1), debias="auto", vali_fraction=None)
    alone = read_clicks(log_part(400, 0), log_part(400, 1), debias="off", vali_fraction=None)
    assert alone.judge is None
    *data, options = alone.vali["off"]
    assert len(data[1]) < 8 * 400 and "query_weight" in options  # sessions, weighted
    assert same(beside.vali["off"][:3], data)


def test_on_short_lists_the_readings_select_on_their_own_lists():
    read = read_clicks(log_part(20, 0), log_part(20, 1), debias="auto", vali_fraction=None)
    assert len(read.judge[1]) <= 8 * 20
    for reading in ("on", "off"):
        *data, options = read.vali[reading]
        assert not same(data, read.judge) and "query_weight" in options
