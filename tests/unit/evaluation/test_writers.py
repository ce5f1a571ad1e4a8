"""Files written for other tools: one LETOR writer, score files and runs."""

import gzip
import io
import os

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from rsrank.reading import _docids
from rsrank import load_letor
from rsrank.reading.datasets import read_docids
from rsrank.evaluation.runs import read_scores
from rsrank.evaluation.writers import (letor_lines, run_problem, write_letor, write_lines, write_qrels,
                            write_run, write_scores)


def rows(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30, 6)) * 10.0 ** rng.integers(-8, 4, size=(30, 6))
    X[rng.uniform(size=X.shape) < 0.3] = 0.0
    return X, rng.integers(0, 5, 30), np.repeat([3, 1, 7], 10)


@pytest.mark.parametrize("suffix", [".txt", ".txt.gz"])
@pytest.mark.parametrize("sparse", [False, True])
def test_letor_written_reads_back_exactly(tmp_path, suffix, sparse):
    X, y, qid = rows()
    path = tmp_path / f"data{suffix}"
    write_letor(path, sp.csr_matrix(X) if sparse else X, y, qid,
                docids=[f"d{i}" for i in range(30)])
    X2, y2, qid2 = load_letor(path, n_features=6)
    np.testing.assert_array_equal(X2.toarray() if sp.issparse(X2) else X2, X)
    np.testing.assert_array_equal(y2, y)
    np.testing.assert_array_equal(qid2, qid)
    assert list(read_docids(path)) == [f"d{i}" for i in range(30)]


def test_zeros_are_left_out_and_decimals_round():
    X = np.array([[0.0, 1.25, 0.004], [2.0, 0.0, 0.0]])
    X_sparse = sp.csr_matrix(X)
    X_sparse.data[X_sparse.data == 2.0] = 0.0  # an explicit zero in the sparse matrix
    assert letor_lines(X, [1, 0], [5, 5], docids=[8, 9], decimals=2) == [
        "1 qid:5 2:1.25 3:0 #docid = 8\n", "0 qid:5 1:2 #docid = 9\n"]
    assert letor_lines(X_sparse, [1, 0], [5, 5]) == [
        "1 qid:5 2:1.25 3:0.0040000000000000001\n", "0 qid:5 \n"]


def test_gzip_output_is_the_same_bytes_every_time(tmp_path):
    X, y, qid = rows()
    write_letor(tmp_path / "a.txt.gz", X, y, qid)
    os.utime(tmp_path / "a.txt.gz", (0, 0))
    write_letor(tmp_path / "b.txt.gz", X, y, qid)
    assert (tmp_path / "a.txt.gz").read_bytes() == (tmp_path / "b.txt.gz").read_bytes()
    assert gzip.decompress((tmp_path / "a.txt.gz").read_bytes()).decode() == "".join(
        letor_lines(X, y, qid))


def test_a_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    for name in ("old.txt", "old.txt.gz"):
        target = tmp_path / name
        target.write_text("old\n")

        def refuse(*_):
            raise OSError(28, "No space left on device")

        with monkeypatch.context() as patch:
            patch.setattr(os, "replace", refuse)
            with pytest.raises(OSError):
                write_lines(target, ["new\n"])
        assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.txt", "old.txt.gz"]


def test_scores_round_trip(tmp_path):
    scores = np.array([1.5, -2.25e-7, 3e12])
    write_scores(tmp_path / "s.txt", scores)
    np.testing.assert_allclose(read_scores(tmp_path / "s.txt", 3), scores, rtol=1e-9)


_LINES = [b"1 qid:1 1:0.5", b"0 qid:2 1:1", b"", b"  ", b"\r", b"2 1:3 #docid = a", b" 1 1:2",
          b"3 1:4\r", b"\t0 1:1"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_LINES), min_size=1, max_size=9), st.booleans(),
       st.sampled_from([None, 5, 16]))
def test_docids_of_plain_files_equal_the_line_by_line_reading(tmp_path_factory, lines, newline,
                                                              scan):
    """A file without comments is counted in chunks of bytes; any file the
    count cannot vouch for is read line by line: the same docids either way,
    whatever the chunk size."""
    text = b"\n".join(lines) + (b"\n" if newline else b"")
    path = tmp_path_factory.mktemp("docids") / "rows.txt"
    path.write_bytes(text)
    expected = []
    for raw in text.split(b"\n")[:-1] if text.endswith(b"\n") else text.split(b"\n"):
        body, _, comment = raw.partition(b"#")
        if body.strip():
            words = comment.decode().split()
            expected.append(comment.decode().split("=")[-1].strip() if "docid" in
                            comment.decode() else (words[0] if words else f"row{len(expected) + 1}"))
    previous = _docids._SCAN_BYTES
    _docids._SCAN_BYTES = scan or previous
    try:
        assert list(read_docids(path)) == expected
    finally:
        _docids._SCAN_BYTES = previous


def _brute_run(qid, docids, scores, tag="rsrank"):
    lines = []
    for q in sorted(set(qid)):  # queries by id
        rows = [i for i in range(len(qid)) if qid[i] == q]
        rows.sort(key=lambda i: -scores[i])  # stable: ties in file order
        lines += [f"{q} Q0 {docids[i]} {rank} {scores[i]:.10g} {tag}\n"
                  for rank, i in enumerate(rows, start=1)]
    return "".join(lines)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.sampled_from(["a", "b", "c", "d e", "", "f\u00a0"]),
                          st.sampled_from([0.0, 1.5, -2.0, 1e-300, 3.0])), max_size=12))
def test_runs_and_their_problems_equal_a_row_by_row_reference(rows):
    """The run's lines and the first problem found match a row-by-row
    reference: queries by id, scores decreasing, ties in file order;
    the first row with an empty or spaced docid or a repeated docid."""
    qid = np.array([r[0] for r in rows], dtype=np.int64)
    docids = [r[1] for r in rows]
    scores = np.array([r[2] for r in rows])
    expected_problem = None
    seen = {}
    for row, (q, d) in enumerate(zip(qid.tolist(), docids)):
        if not d or any(c.isspace() for c in d):
            expected_problem = row
            break
        if seen.setdefault((q, d), row) != row:
            expected_problem = row
            break
    problem = run_problem(qid, docids)
    assert (problem and problem[0]) == expected_problem if problem else expected_problem is None
    if problem is None:
        handle = io.StringIO()
        write_run(handle, qid, docids, scores)
        assert handle.getvalue() == _brute_run(qid.tolist(), docids, scores.tolist())
        handle = io.StringIO()
        write_qrels(handle, qid, docids, np.arange(len(rows)) % 3)
        assert handle.getvalue() == "".join(f"{q} 0 {d} {i % 3}\n" for i, (q, d) in
                                            enumerate(zip(qid.tolist(), docids)))
