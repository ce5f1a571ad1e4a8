"""CSV ranking data: a header names the query id, label, docid and feature
columns; read wherever a LETOR file is, with errors naming file, line and
column."""

import gzip
import re

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from rsrank import load_letor
from rsrank.reading.datasets import csv_feature_names, read_docids


def write_csv(path, X, y, qid, names, docids=None, order=None):
    """By hand: the columns in ``order`` (qid, label, docid and the
    features' names), values as repr of floats."""
    columns = {"QID": qid, "Relevance": y, **dict(zip(names, X.T))}
    if docids is not None:
        columns["docid"] = docids
    order = order or list(columns)
    lines = [",".join(order)]
    for row in range(len(y)):
        lines.append(",".join("" if isinstance(columns[c][row], float) and
                              np.isnan(columns[c][row]) else str(columns[c][row])
                              for c in order))
    text = "\n".join(lines) + "\n"
    if str(path).endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)


def test_a_csv_reads_as_its_letor_twin_with_names_and_docids(tmp_path):
    rng = np.random.default_rng(0)
    X = np.round(rng.normal(size=(30, 3)) * [30, 1, 1e-6], 9)
    X[4, 1] = np.nan  # an empty cell: a missing value
    y, qid = rng.integers(0, 3, 30), np.repeat([7, 3, 11], 10)
    docids = np.array([f"doc-{i}" for i in range(30)], dtype=object)
    names = ["bm25", "clicks", "pagerank"]
    for name in ("data.csv", "data.csv.gz"):
        path = tmp_path / name
        write_csv(path, X, y, qid, names, docids,
                  order=["pagerank", "docid", "Relevance", "bm25", "QID", "clicks"])
        Xc, yc, qc, dc = load_letor(path, return_docids=True)
        # the feature columns in the header's order
        np.testing.assert_array_equal(Xc.toarray(), X[:, [2, 0, 1]])
        np.testing.assert_array_equal(yc, y)
        np.testing.assert_array_equal(qc, qid)
        assert list(dc) == list(docids) and list(read_docids(path)) == list(docids)
        assert csv_feature_names(path) == ["pagerank", "bm25", "clicks"]
    # without a docid column, the rows are numbered
    write_csv(tmp_path / "plain.csv", X, y, qid, names)
    assert list(read_docids(tmp_path / "plain.csv"))[:2] == ["row1", "row2"]


@pytest.mark.parametrize("text, line, message", [
    ("session,label,f\n1,0,0.5\n", 1, "no query id column: name one 'qid' or 'query_id'"),
    ("qid,score,f\n1,0,0.5\n", 1, "no label column"),
    ("qid,label,rel,f\n1,0,0,0.5\n", 1, "2 label columns (label, rel); keep one"),
    ("qid,label,f,f\n1,0,0.5,1\n", 1, "column 'f' twice in the header (columns 3 and 4)"),
    ("qid,label\n1,0\n", 1, "no feature columns"),
    ("qid,label,f,g\n1,0,0.5,1\n1,1,0.5\n", 3, "3 fields; the header has 4"),
    ("qid,label,bm25\n1,0,0.5\n1,1,high\n", 3, "column 'bm25': 'high' is not a number"),
    ("qid,label,bm25\n1,0,inf\n", 2, "column 'bm25': 'inf' is infinite"),
    ("qid,label,bm25\n1,0.5,1\n", 2, "label '0.5' is not a whole number 0 or more"),
    ("qid,label,bm25\n1,-1,1\n", 2, "label '-1' is not a whole number 0 or more"),
    ("qid,label,bm25\nq1,1,1\n", 2, "qid 'q1' is not a whole number within 64 bits"),
    ("qid,label,bm25\n", None, "the file holds no data rows"),
    ("", None, "the file holds no header and no rows"),
])
def test_bad_csv_names_the_file_line_and_column(tmp_path, text, line, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=re.escape(message)) as error:
        load_letor(path)
    where = f"{path}, line {line}: " if line else f"{path}: "
    assert str(error.value).startswith(where)


def test_a_header_not_in_utf8_is_refused_and_a_byte_order_mark_is_read(tmp_path):
    rows = "1,0,7,0.5\n1,1,8,0.7\n"
    (tmp_path / "latin1.csv").write_bytes("qid,label,d\u00f6cid,bm25\n".encode("latin-1")
                                          + rows.encode())
    with pytest.raises(ValueError, match=r"latin1.csv, line 1: the header is not UTF-8"):
        load_letor(tmp_path / "latin1.csv")
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbfqid,label,docid,bm25\n" + rows.encode())
    X, y, qid = load_letor(tmp_path / "bom.csv")
    assert X.shape == (2, 1) and csv_feature_names(tmp_path / "bom.csv") == ["bm25"]
    np.testing.assert_array_equal(qid, [1, 1])


def test_zero_based_svmlight_is_refused_with_its_fix_and_one_based_read(tmp_path):
    X = np.array([[0.5, 0.0, 2.0], [0.1, 0.3, 0.0]])
    y, qid = np.array([1, 0]), np.array([1, 1])
    dump_svmlight_file(X, y, str(tmp_path / "zero.txt"), query_id=qid)  # zero_based=True
    with pytest.raises(ValueError, match=r"line 1: .*write it with zero_based=False"):
        load_letor(tmp_path / "zero.txt")
    dump_svmlight_file(X, y, str(tmp_path / "one.txt"), query_id=qid, zero_based=False)
    np.testing.assert_array_equal(load_letor(tmp_path / "one.txt", n_features=3)[0].toarray(), X)


def test_a_query_split_in_two_blocks_warns_with_its_csv_line(tmp_path):
    from rsrank.reading.datasets import NonContiguousQueryWarning

    path = tmp_path / "split.csv"
    path.write_text("qid,label,f\n1,0,0.5\n2,1,0.3\n\n1,2,0.9\n")
    with pytest.warns(NonContiguousQueryWarning, match=r"split.csv, line 5: rows of query 1"):
        _, y, qid = load_letor(path)
    np.testing.assert_array_equal(qid, [1, 2, 1])
    np.testing.assert_array_equal(y, [0, 1, 2])
