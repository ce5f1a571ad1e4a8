"""Files written for other tools: one LETOR writer, score files and runs."""

import gzip
import os

import numpy as np
import pytest
import scipy.sparse as sp

from rsrank import load_letor
from rsrank.datasets import read_docids
from rsrank.runs import read_scores
from rsrank.writers import letor_lines, write_letor, write_lines, write_scores


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
