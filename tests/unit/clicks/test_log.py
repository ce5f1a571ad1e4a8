"""rsrank.clicks.log: a click log, file or arrays, is a trust boundary.
Every malformed form is one line naming the file (or the row), the line
and the fix; nothing is read past a bound; the memory a log takes grows
with its rows, not with one value."""

import csv
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from rsrank.clicks import grade_clicks, read_click_log
from rsrank.clicks.log import (MAX_ID, MAX_IMPRESSIONS, MAX_LINE, MAX_POSITION, ClickLog, Ids,
                               first_bad_id, id_problem, impression_log)
from rsrank.reading.querydata import QueryData
from rsrank.reading.synthetic import simulate_clicks

HEAD = "session,qid,docid,position,click\n"
AGG = "qid,docid,position,impressions,clicks\n"
TWO = "s1,q,a,1,1\ns1,q,b,2,0\n"  # a good session


@pytest.mark.parametrize("text, words", [
    (HEAD + TWO + TWO, "line 4: repeats line 2 (session 's1', document 'a', position 1)"),
    (HEAD + TWO + "s1,q,c,1,0\n", "line 4: session 's1' shows document 'a' at position 1 at "
                                  "line 2 and document 'c' here"),
    (HEAD + "s1,q,a,1,1\ns1,q,b,1,0\n", "line 3: session 's1' shows document 'a' at position 1"),
    (HEAD + TWO + "s1,q,a,3,0\n", "line 4: session 's1' shows document 'a' at position 1 at "
                                  "line 2 and again at position 3"),
    (HEAD + TWO + "s1,r,c,3,0\n", "line 4: session 's1' is of query 'q' at line 2 and of query "
                                  "'r' here"),
    (HEAD + TWO + "s\x001,q,a,1,0\n", "line 4: the session id 's\\x001' holds the control "
                                      "character '\\x00'"),
    (HEAD + TWO + "NaN,q,a,1,0\n", "line 4: the session id is 'NaN', a missing value"),
    (HEAD + TWO + "s2,null,a,1,0\n", "line 4: the query id is 'null', a missing value"),
    (HEAD + TWO + "s2,q,,1,0\n", "line 4: the document id is empty"),
    (HEAD + TWO + f"s2,q,{'d' * (MAX_ID + 1)},1,0\n", f"line 4: the document id is "
                                                       f"{MAX_ID + 1:,} characters long"),
    (HEAD + TWO + f"s2,q,{'d' * (MAX_LINE + 1)},1,0\n", "line 4: longer than 131,072 characters"),
    (HEAD + TWO + "s2,q,a,inf,0\n", "line 4: position 'inf' is not a whole number from 1"),
    (HEAD + TWO + "s2,q,a,1e3,0\n", "line 4: position '1e3' is not a whole number from 1"),
    (HEAD + TWO + "s2,q,a,1_000,0\n", "line 4: position '1_000' is not a whole number"),
    (HEAD + TWO + "s2,q,a,\u0663,0\n", "line 4: position '\u0663' is not a whole number"),
    (HEAD + TWO + f"s2,q,a,{MAX_POSITION + 1},0\n", f"line 4: position {MAX_POSITION + 1} is not"),
    (HEAD + TWO + f"s2,q,a,{10 ** 30},0\n", "line 4: position '1000000000000000000000000000000' "
                                            "is not"),
    (HEAD + TWO + "s2,q,a,1,\n", "line 4: the click is empty: give 0 or 1"),
    (HEAD + TWO + "s2,q,a,1,-1\n", "line 4: click '-1' is not 0 or 1"),
    (AGG + "q,a,1,10,2\nq,a,1,5,1\n", "line 3: repeats line 2: query 'q', document 'a' at "
                                      "position 1"),
    (AGG + f"q,a,1,{2 ** 62},2\n", "line 2: impressions '4611686018427387904' is not a whole "
                                   "number from 1 to 2,147,483,647"),
    (AGG + f"q,a,1,{MAX_IMPRESSIONS + 1},2\n", f"line 2: impressions {MAX_IMPRESSIONS + 1} is "
                                               "not"),
    (AGG + "q,a,1,0,0\n", "line 2: impressions 0 is not a whole number from 1"),
    (AGG + "q,a,1,3,4\n", "line 2: more clicks than impressions"),
])
def test_a_malformed_log_is_one_line_naming_its_file_and_line(tmp_path, text, words):
    path = tmp_path / "log.csv"
    path.write_text(text, newline="")
    with pytest.raises(ValueError) as caught:
        read_click_log(path)
    message = str(caught.value)
    assert message.startswith(f"{path}, ") and words in message and "\n" not in message


def test_the_line_is_named_past_the_first_batch_of_rows(tmp_path):
    rows = [f"s{k},q{k % 7},d{k % 5},{k % 5 + 1},{k % 2}" for k in range(70_000)]
    rows[69_990] = "s69990,q1,d0,0,1"
    path = tmp_path / "long.csv"
    path.write_text(HEAD + "\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=r"long.csv, line 69992: position 0 is not"):
        read_click_log(path)
    rows[69_990] = "s69990,q1,d0,1,1"
    rows[69_991] = "s69990,q1,d1,1,1"  # a second document at the session's position 1
    path.write_text(HEAD + "\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=r"line 69993: session 's69990' shows document 'd0' at "
                                         r"position 1 at line 69992"):
        read_click_log(path)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(["", " nan", "NA ", "n/a", "None", "ok", "d1", "x" * 2049,
                                          "a\x00b", "\ufffd", "tab\t", "\x7f"]),
                          st.text(max_size=6)), max_size=12))
def test_the_first_bad_id_of_a_batch_is_the_first_that_id_problem_refuses(names):
    """The checks over a batch at once find the name the per-name check
    finds first."""
    expected = next((i for i, name in enumerate(names) if id_problem("docid", name)), None)
    assert first_bad_id(names) == expected


def test_a_bad_id_is_named_at_its_first_line_past_the_first_batch(tmp_path):
    rows = [f"s{k // 3},q{k % 7},d{k},{k % 3 + 1},{k % 2}" for k in range(70_000)]
    rows[69_990] = "s23330,q1,NULL,1,1"
    rows[69_995] = "s23331,q1,NULL,1,1"
    path = tmp_path / "long.csv"
    path.write_text(HEAD + "\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=r"long.csv, line 69992: the document id is 'NULL', a "
                                         r"missing value"):
        read_click_log(path)


def test_a_long_id_is_stored_once_not_once_a_row(tmp_path):
    """One 2,000-character document id in a log of 20,000 rows: padded to
    every row as fixed-width text, the ids alone would take 160 MB."""
    long_id = "u" * 2_000
    rows = [f"s{k // 10},q{k // 10},{long_id if k == 5 else f'd{k}'},{k % 10 + 1},{k % 3 == 0:d}"
            for k in range(20_000)]
    path = tmp_path / "log.csv"
    path.write_text(HEAD + "\n".join(rows) + "\n")
    tracemalloc.start()
    try:
        log = read_click_log(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert log.docid.dtype == object and long_id in set(log.docid)
    assert peak < 40e6, f"reading took {peak / 1e6:.0f} MB"


def test_arrays_are_checked_as_files_are_and_named_by_their_row():
    X = np.arange(40.0).reshape(20, 2)
    qid = np.repeat([1, 2], 10)
    position = np.tile(np.arange(1.0, 11.0), 2)
    clicks = np.tile([1, 0], 10)
    for bad in (np.inf, -np.inf, np.nan, 1e30, 2.5, 0, MAX_POSITION + 1):
        given = position.copy()
        given[3] = bad
        with pytest.raises(ValueError, match=r"^row 3 of the click log: position .* is not a "
                                             r"whole number from 1"):
            impression_log(X, clicks, qid, given)
    with pytest.raises(ValueError, match=r"row 4 of the click log: the query id is 'nan'"):
        impression_log(X, clicks, np.where(np.arange(20) == 4, np.nan, qid), position)
    with pytest.raises(ValueError, match=r"row 7 of the click log: the session id is 'None'"):
        impression_log(X, clicks, qid, position,
                       session=np.array([f"s{q}" if k != 7 else None
                                         for k, q in enumerate(qid)], dtype=object))
    session = np.repeat(["a", "b"], 10)
    session[15] = "a"
    with pytest.raises(ValueError, match=r"row 15 of the click log: session 'a' is of query '1' "
                                         r"at row 0 and of query '2' here"):
        impression_log(X, clicks, qid, position, session=session)
    with pytest.raises(ValueError, match=r"row 1 of the click log: repeats row 0"):
        impression_log(X[[0, 0]], [1, 0], [1, 1], [1, 1], impressions=[3, 2])
    with pytest.raises(ValueError, match="click 2 is not 0 or 1"):
        impression_log(X, clicks * 2, qid, position)
    # rows of one impression each may repeat a document at a position: counted
    log, _ = impression_log(X[[0, 0, 1]], [1, 0, 0], [1, 1, 1], [1, 1, 2])
    assert log.impressions.tolist() == [2, 1] and log.clicks.tolist() == [1, 0]


def test_a_fit_refuses_a_position_that_is_not_finite_before_any_kernel_runs():
    from rsrank import RSRank

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    qid = np.repeat(np.arange(20), 10)
    position = np.tile(np.arange(1.0, 11.0), 20)
    position[3] = np.inf
    with pytest.raises(ValueError, match="row 3 of the click log: position inf is not"):
        RSRank(max_iter=3).fit(X, (rng.random(200) < 0.3).astype(int), qid=qid,
                               position=position)


def test_sessions_that_click_everything_train_and_a_log_of_only_them_is_refused():
    y = np.tile(np.arange(10) % 4, 30)
    qid = np.repeat(np.arange(30), 10)
    scores = -np.arange(300.0)
    sim = simulate_clicks(y, qid, scores, n_sessions=20, random_state=0)
    click = sim.click.copy()
    everything = sim.session < 100  # these sessions click every document they show
    click[everything] = 1
    log = ClickLog.from_sessions(sim.session, sim.qid, sim.docid, sim.position, click)
    graded = grade_clicks(log, log.docid.astype(np.int64))
    assert len(graded.rows) and graded.y.max() == 1
    log = ClickLog.from_sessions(sim.session, sim.qid, sim.docid, sim.position,
                                 np.ones_like(click))
    with pytest.raises(ValueError, match="no pair to learn from: every session that clicked"):
        grade_clicks(log, log.docid.astype(np.int64))


def test_a_file_and_its_arrays_read_as_one_log(tmp_path):
    y = np.tile(np.arange(15) % 4, 6)
    qid = np.repeat(np.arange(6), 15)
    sim = simulate_clicks(y, qid, np.random.default_rng(1).normal(size=90), n_sessions=7,
                          random_state=2)
    path = tmp_path / "log.csv"
    with open(path, "w", newline="") as out:
        rows = csv.writer(out)
        rows.writerow(["click", "position", "docid", "qid", "session"])  # any column order
        rows.writerows(zip(sim.click, sim.position, sim.docid, sim.qid, sim.session))
    read = read_click_log(path)
    made = ClickLog.from_sessions(sim.session, sim.qid, sim.docid, sim.position, sim.click)
    for field in ("qid", "docid", "position", "impressions", "clicks", "reached"):
        np.testing.assert_array_equal(np.asarray(getattr(read, field)).astype(str),
                                      np.asarray(getattr(made, field)).astype(str))
    assert (read.sessions, read.clicked_sessions) == (made.sessions, made.clicked_sessions)


def test_ids_keep_text_and_numbers_apart_from_their_width():
    ids = Ids.of(np.array(["b", "a" * 3000, "b"]))
    assert ids.names.dtype == object and ids.codes.tolist() == [1, 0, 1]
    mixed = Ids.of(np.array([1, "x", None], dtype=object))
    assert sorted(mixed.names) == ["1", "None", "x"]


def test_a_fold_root_is_refused_as_the_same_files_by_name_are(tmp_path):
    from rsrank.clicks import load_click_folds

    fold = tmp_path / "Fold1"
    fold.mkdir()
    letor = "".join(f"0 qid:{q} 1:{d / 10} 2:{(d * 7) % 5} # docid = d{d}\n"
                    for q in (1, 2) for d in range(5))
    (fold / "train.txt").write_text(letor)
    (fold / "train.clicks.csv").write_text(
        HEAD + "".join(f"s{q}{k},{q},d{d},{d + 1},{int(d == k)}\n"
                       for q in (1, 2) for k in range(3) for d in range(5)))
    (fold / "vali.txt").write_text(letor)
    with pytest.raises(FileNotFoundError, match=r"Fold1/vali.txt: no vali.clicks.csv beside it: "
                                                r"add the click log of its queries, or remove"):
        load_click_folds(tmp_path)
    (fold / "vali.txt").rename(fold / "elsewhere.txt")
    (fold / "vali.clicks.csv").write_text((fold / "train.clicks.csv").read_text())
    with pytest.raises(FileNotFoundError, match=r"vali.clicks.csv: no vali features beside it"):
        load_click_folds(tmp_path)
    (fold / "vali.clicks.csv").unlink()
    loaded, = load_click_folds(tmp_path)  # validated on a share of the training queries
    assert "of the training log's queries" in loaded.vali_source


def _impressions(seed=0):
    """A log of one row per impression: 30 queries of 10 documents shown
    in 20 sessions each, and the features of each row's document."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, size=300)
    qid = np.repeat(np.arange(30), 10)
    features = rng.normal(size=(300, 4)) + y[:, None] * [1.0, 0.5, 0.0, 0.0]
    sim = simulate_clicks(y, qid, features[:, 2], n_sessions=20, random_state=seed)
    return features[sim.docid], sim


def test_a_fit_on_clicks_holds_every_row_of_x_to_the_rules_of_a_fit_on_labels():
    from rsrank import RSRank

    X, sim = _impressions()
    quiet = ~np.isin(sim.session, sim.session[sim.click > 0])  # sessions without a click
    X = X.copy()
    X[np.flatnonzero(quiet)[0], 1] = np.nan  # in no session list: a fit read it, unchecked
    for session in (None, sim.session):  # graded documents, and session lists
        with pytest.raises(ValueError, match=r"X has missing values \(NaN\) in 1 feature\(s\) "
                                             r"\(f2\)"):
            RSRank(max_iter=3).fit(X, sim.click, qid=sim.qid, position=sim.position,
                                   session=session)
    RSRank(max_iter=3, missing="zero").fit(X, sim.click, qid=sim.qid, position=sim.position)


def test_partial_fit_continues_a_fit_on_clicks_on_clicks_or_refuses():
    from rsrank import RSRank

    X, sim = _impressions(1)
    head, tail = sim.qid < 20, sim.qid >= 20
    model = RSRank(max_iter=5, random_state=0).fit(
        X[head], sim.click[head], qid=sim.qid[head], position=sim.position[head],
        session=sim.session[head])
    curve = model.examination_.curve.copy()
    with pytest.raises(ValueError, match="fitted on a click log: give partial_fit the block's "
                                         "position="):
        model.partial_fit(X[tail], sim.click[tail], qid=sim.qid[tail])
    coef = model.coef_.copy()
    model.partial_fit(X[tail], sim.click[tail], qid=sim.qid[tail], position=sim.position[tail],
                      session=sim.session[tail])
    assert not np.array_equal(model.coef_, coef)
    np.testing.assert_array_equal(model.examination_.curve, curve)  # the fit's reading
    labels = RSRank(max_iter=5).fit(X, np.minimum(sim.click + 1, 2), qid=sim.qid)
    with pytest.raises(ValueError, match="fitted on labels: partial_fit continues it on labels"):
        labels.partial_fit(X[tail], sim.click[tail], qid=sim.qid[tail],
                           position=sim.position[tail])
    # fit_chunks trains on judged blocks: a click log's blocks, or continuing a fit on
    # clicks, is refused in one line
    clicked = [(X[tail], sim.click[tail], sim.qid[tail], sim.position[tail])]
    with pytest.raises(ValueError, match=r"fit_chunks: each block is \(X, y, qid\) of judged "
                                         r"queries, got 4 items; a click log is read whole"):
        RSRank(max_iter=2).fit_chunks(lambda: iter(clicked))
    judged = [(X[tail], np.minimum(sim.click[tail] + 1, 2), sim.qid[tail])]
    model.set_params(warm_start=True)
    with pytest.raises(ValueError, match="fitted on a click log: fit_chunks would continue it "
                                         "on labels"):
        model.fit_chunks(lambda: iter(judged))
    model.set_params(warm_start=False).fit_chunks(lambda: iter(judged))
    model.partial_fit(X[tail], sim.click[tail], qid=sim.qid[tail])  # now a fit on labels
    # a fit on labels after one on clicks continues on labels
    model.fit(X, np.minimum(sim.click + 1, 2), qid=sim.qid)
    model.partial_fit(X[tail], sim.click[tail], qid=sim.qid[tail])


@pytest.mark.parametrize("block", [7, 64, 1 << 22])
def test_blocks_of_any_size_read_as_csv_reads_the_whole_file(tmp_path, monkeypatch, block):
    """Lines split at commas a block at a time, and from the first quote on
    read by csv: the same log, and the same line named, whatever the
    blocks' size; CRLF line ends, blank lines, a quoted id holding a comma
    and a quote, and a note holding a line break included."""
    import rsrank.clicks.reading as clicklog

    monkeypatch.setattr(clicklog, "_BLOCK", block)
    rows = [["s1", "q", "a", "1", "1", ""], ["s1", "q", "b", "2", "0", ""],
            ["s2", "q", "a", "1", "0", "seen\ntwice"], ["s2", "q", "b", "2", "1", ""],
            ["s3", "r", 'c,"x"', "1", "1", ""], ["s3", "r", "d", "2", "0", ""]]
    path = tmp_path / "log.csv"
    with open(path, "w", newline="") as out:
        out.write("session,qid,docid,position,click,note\r\n")
        for k, row in enumerate(rows):
            if k == 2:
                out.write("\r\n")  # a blank line
            out.write(",".join(f'"{v.replace(chr(34), chr(34) * 2)}"'
                               if any(c in v for c in '",\n') else v for v in row) + "\r\n")
    read = read_click_log(path)
    parsed = np.array(rows, dtype=object)
    made = ClickLog.from_sessions(parsed[:, 0], parsed[:, 1], parsed[:, 2],
                                  parsed[:, 3].astype(int), parsed[:, 4].astype(int))
    for field in ("qid", "docid", "position", "impressions", "clicks", "reached"):
        assert list(getattr(read, field)) == list(getattr(made, field)), field
    # a bad value after the quote is named by its line (the quoted id spans two)
    text = path.read_bytes().decode()
    path.write_text(text + "s4,r,e,0,1,\r\n", newline="")
    with pytest.raises(ValueError, match=r"log.csv, line 10: position 0 is not"):
        read_click_log(path)
    # and before it, in a block split at commas
    lines = text.split("\r\n")
    lines[2] = "s1,q,b,x,0,"
    path.write_text("\r\n".join(lines), newline="")
    with pytest.raises(ValueError, match=r"log.csv, line 3: position 'x' is not"):
        read_click_log(path)
    path.write_text(HEAD + "s1,q,a,1,1\n" + "s1,q," + "b" * (MAX_LINE + 5) + ",2,0\n")
    with pytest.raises(ValueError, match=r"log.csv, line 3: longer than 131,072 characters"):
        read_click_log(path)


@pytest.mark.parametrize("block", [16, 1 << 22])
def test_a_problem_between_rows_names_both_lines_across_blank_lines_and_blocks(
        tmp_path, monkeypatch, block):
    """Rows' lines are kept as runs of consecutive lines: a repeated row
    found only once the whole log is read still names its own line and the
    earlier one's, with blank lines between them and in any blocks."""
    import rsrank.clicks.reading as clicklog

    monkeypatch.setattr(clicklog, "_BLOCK", block)
    lines = [f"s{k // 2},q{k // 4},d{k},{k % 2 + 1},{k % 2}" for k in range(40)]
    lines[25] = lines[9]  # the row of line 11 again
    text = HEAD + "\n".join(lines[:5]) + "\n\n\n" + "\n".join(lines[5:20]) + "\n\n" + \
        "\n".join(lines[20:]) + "\n"
    path = tmp_path / "log.csv"
    path.write_text(text)
    # header line 1; rows 0-4 on lines 2-6; two blank lines; rows 5-19 on lines 9-23;
    # one blank line; rows 20- on lines 25-
    with pytest.raises(ValueError, match=r"log.csv, line 30: repeats line 13 "):
        read_click_log(path)


@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_a_line_of_exactly_the_bound_is_read_and_one_more_character_is_not(tmp_path, ending):
    path = tmp_path / "log.csv"
    start = "s1,q,a,1,1,"  # a sixth column, ignored, fills the line to the bound
    head = "session,qid,docid,position,click,note" + ending
    for extra, refused in ((0, False), (1, True)):
        line = start + "n" * (MAX_LINE - len(start) + extra)
        path.write_bytes((head + line + ending + "s1,q,b,2,0," + ending).encode())
        if refused:
            with pytest.raises(ValueError, match=r"line 2: longer than 131,072 characters"):
                read_click_log(path)
        else:
            assert read_click_log(path).clicks.tolist() == [1, 0]


def _read_both_ways(path):
    """``read_click_log(path)`` as bytes where it can and as text only:
    each the log, or the message it raised."""
    import rsrank.clicks.reading as clicklog

    found = []
    for text_only in (False, True):
        with pytest.MonkeyPatch.context() as patch:
            if text_only:
                patch.setattr(clicklog, "_split_bytes", lambda *args: False)
            try:
                log = read_click_log(path)
            except ValueError as error:
                found.append(str(error))
                continue
            found.append({field: list(getattr(log, field)) for field in
                          ("qid", "docid", "position", "impressions", "clicks", "reached")})
    return found


_BAD_CELLS = ["", "nan", "x", "1 2", "\t1", "\u00e9", "0", "10001", "-1", "1e3", "2"]


@st.composite
def _log_lines(draw):
    """Lines of a sessions log: mostly valid sessions, their cells padded
    with spaces or followed by an extra column, with blank and short lines,
    and at times one cell replaced by a bad (or non-ASCII) one."""
    lines = []
    for session in range(draw(st.integers(1, 6))):
        query = draw(st.sampled_from(["q1", "q2", " q3"]))
        shown = draw(st.permutations(["a", "b", "c", "d"]))[:draw(st.integers(1, 4))]
        for position, doc in enumerate(shown, 1):
            cells = [f"s{session}", query, doc, str(position), str(draw(st.integers(0, 1)))]
            cells = [draw(st.sampled_from([c, f" {c}", f"{c} "])) for c in cells]
            lines.append(",".join(cells + draw(st.sampled_from([[], ["note"], ["", "x"]]))))
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["", "  ", "s9,q1"])))
    if draw(st.booleans()):
        row = draw(st.integers(0, len(lines) - 1))
        cells = lines[row].split(",")
        if len(cells) >= 5:
            cells[draw(st.integers(0, 4))] = draw(st.sampled_from(_BAD_CELLS))
            lines[row] = ",".join(cells)
    return lines


@settings(max_examples=150, deadline=None)
@given(lines=_log_lines(), crlf=st.booleans())
def test_a_block_read_as_bytes_is_read_as_its_text_is(tmp_path_factory, lines, crlf):
    """Blocks of plain ASCII are split as bytes (:mod:`rsrank._kernels.csvrows`);
    any other block as text. On any lines (short, blank, padded, extra
    columns, bad numbers and ids, non-ASCII), both give the same log or the
    same message."""
    path = tmp_path_factory.mktemp("log") / "log.csv"
    end = "\r\n" if crlf else "\n"
    path.write_bytes((HEAD.replace("\n", end) + "".join(line + end for line in lines))
                     .encode())
    by_bytes, by_text = _read_both_ways(path)
    assert by_bytes == by_text


def test_ids_of_one_hash_are_read_as_text(tmp_path, monkeypatch):
    """Two ids with the same hash are not taken for one: the block is read
    as text."""
    import rsrank._kernels.csvrows as csvrows

    path = tmp_path / "log.csv"
    path.write_text(HEAD + "s1,q,a,1,1\ns1,q,b,2,0\ns2,q,a,1,0\ns2,q,b,2,1\n")
    expected = read_click_log(path)
    monkeypatch.setattr(csvrows, "hash_fields", lambda buf, starts, ends, out: out.fill(0))
    read = read_click_log(path)
    assert list(read.docid) == list(expected.docid) == ["a", "b"]
    assert read.clicks.tolist() == expected.clicks.tolist()


@pytest.mark.parametrize("debias", ["auto", "on", "off"])
@pytest.mark.parametrize("with_vali", [False, True])
def test_a_log_as_files_and_as_arrays_reads_to_the_same_data(tmp_path, debias, with_vali):
    """``rsrank train --clicks`` (files) and ``RSRank().fit(X, clicks,
    position=...)`` (arrays) read a log through one function
    (:func:`rsrank.clicks.splits.read_clicks`): the same training,
    validation and judging data, the same vali queries held out."""
    from rsrank.clicks import load_click_fold
    from rsrank.clicks.arrays import click_splits
    from rsrank.evaluation.writers import write_letor

    rng = np.random.default_rng(3)
    n_queries, per_query = 12, 12
    qid = np.repeat(np.arange(n_queries), per_query)
    X = rng.normal(size=(len(qid), 4)).round(3)
    y = rng.integers(0, 3, size=len(qid))
    docids = np.array([f"d{i}" for i in range(len(qid))])
    logs = {}
    for split, seed in (("train", 1), ("vali", 2)):
        sim = simulate_clicks(y, qid, X @ [1.0, 0.5, 0, 0], n_sessions=30, random_state=seed)
        logs[split] = sim
        with open(tmp_path / f"{split}.clicks.csv", "w", newline="") as out:
            rows = csv.writer(out)
            rows.writerow(["session", "qid", "docid", "position", "click"])
            rows.writerows(zip(sim.session, sim.qid, docids[sim.docid], sim.position, sim.click))
        # the features of the shown documents, in the order the log first shows them
        _, first = np.unique(sim.docid, return_index=True)
        shown = sim.docid[np.sort(first)]
        write_letor(tmp_path / f"{split}.txt", X[shown], y[shown], qid[shown],
                    docids=docids[shown])
    vali = {"vali": tmp_path / "vali.txt", "vali_clicks": tmp_path / "vali.clicks.csv"}
    fold = load_click_fold(tmp_path / "train.txt", tmp_path / "train.clicks.csv",
                           **(vali if with_vali else {}), debias=debias, n_features=4)
    arrays = {split: (X[sim.docid], sim.click, sim.qid, sim.position, sim.session)
              for split, sim in logs.items()}
    X_train, clicks, queries, position, session = arrays["train"]
    found = click_splits(X_train, clicks, queries, position, session=session,
                         eval_set=arrays["vali"] if with_vali else None, debias=debias)
    readings = {"on": fold, "off": fold} if debias != "auto" else {"on": fold,
                                                                    "off": fold.plain}
    assert set(found.train) == {"auto": {"on", "off"}, "on": {"on"}, "off": {"off"}}[debias]
    for reading in found.train:
        data = readings[reading]
        for split in ("train", "vali"):
            made = getattr(found, split)[reading]
            read = QueryData(*getattr(data, split), **data.query_options[split])
            for name in ("X", "y", "order", "offsets", "qids", "query_weights"):
                np.testing.assert_array_equal(_dense(getattr(made, name)),
                                              _dense(getattr(read, name)), err_msg=name)
            assert (made.preferences is None) == (read.preferences is None)
            for name in ("offsets", "better", "worse", "weight"):
                if made.preferences is not None:
                    np.testing.assert_array_equal(getattr(made.preferences, name),
                                                  getattr(read.preferences, name))
    if debias != "off":
        judged = QueryData(*fold.judge)
        np.testing.assert_array_equal(found.judge.y, judged.y)
        np.testing.assert_array_equal(found.judge.qids, judged.qids)


def _dense(values):
    return values.toarray() if hasattr(values, "toarray") else np.asarray(values)


def test_the_unshown_documents_go_below_each_click_with_their_share_of_its_list():
    from rsrank.clicks.grading import below_the_unshown

    rng = np.random.default_rng(3)
    qid = np.repeat(np.arange(6), 20)  # 20 documents a query, 10 shown
    y = rng.integers(0, 3, len(qid))
    sim = simulate_clicks(y, qid, rng.normal(size=len(qid)), n_sessions=15, top_k=10,
                          random_state=0)
    log = ClickLog.from_sessions(sim.session, sim.qid, sim.docid, sim.position, sim.click)
    rows = log.docid.astype(np.int64)  # the feature row each entry shows
    clicks = grade_clicks(log, rows, propensity=np.linspace(1.0, 0.2, 10))
    out = below_the_unshown(clicks, rows, qid, 0.5)
    n = len(clicks.rows)
    # the lists as they were, then per click its query's unshown documents below it
    np.testing.assert_array_equal(out.rows[:n], clicks.rows)
    np.testing.assert_array_equal(out.list_weight[:n], clicks.list_weight)
    assert not out.y[n:].any()
    shown = set(rows.tolist())
    for k, top in enumerate(np.flatnonzero(clicks.y == 1)):  # brute force, list by list
        query = qid[clicks.rows[top]]
        unshown = {r for r in np.flatnonzero(qid == query) if r not in shown}
        mine = np.flatnonzero(out.lists[n:] == k) + n
        assert set(out.rows[mine].tolist()) == unshown and len(mine) == len(unshown)
        unclicked = np.count_nonzero(clicks.lists == k) - 1
        np.testing.assert_allclose(out.list_weight[mine], clicks.list_weight[top] * 0.5
                                   * max(unclicked, 1) / len(unshown))


def test_a_sessions_log_keeps_its_rows_narrow_and_refuses_what_would_not_fit():
    """The rows a sessions log keeps are int32 codes, int16 positions and
    int8 clicks; a position beyond the bounds is refused, not wrapped
    round into one that reads as valid (65,537 would be 1 in int16)."""
    log = ClickLog.from_sessions(["s1", "s1", "s2"], ["q", "q", "q"], ["a", "b", "a"],
                                 [1, 2, 1], [1, 0, 0])
    rows = log.session_rows
    assert (rows.session.dtype, rows.entry.dtype, rows.click.dtype) == (
        np.int32, np.int32, np.int8)
    assert log.position.dtype == np.int64 and log.position.tolist() == [1, 2]
    with pytest.raises(ValueError, match="position must be a whole number from 1"):
        ClickLog.from_sessions(["s1", "s1"], ["q", "q"], ["a", "b"], [1, 65_537], [1, 0])
