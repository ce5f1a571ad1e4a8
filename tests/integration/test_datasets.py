import gzip
import hashlib

import numpy as np
import pytest

import rsrank
from rsrank import LetorFormatError, NonContiguousQueryWarning, load_letor, load_letor_fold
from rsrank.reading.datasets import (dataset_summary, find_folds, iter_letor_folds, letor_summary,
                             read_query_sizes)
from rsrank.evaluation.runs import read_scores
from rsrank.evaluation.writers import write_scores
from rsrank.reading.synthetic import make_letor_like, write_letor_folds

GOOD = (
    "2 qid:10 1:0.5 2:0.25 3:1 #docid = 11\n"
    "0 qid:10 1:0.1 3:0.5 #docid = 12\n"
    "1 qid:20 2:1 #docid = 21\n"
)


def write(tmp_path, text, name="data.txt"):
    path = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(path, "wt") as handle:
            handle.write(text)
    else:
        path.write_text(text)
    return path


def test_reads_letor_file(tmp_path):
    X, y, qid, docids = load_letor(write(tmp_path, GOOD), return_docids=True)
    assert X.format == "csr" and X.dtype == np.float64 and X.shape == (3, 3)
    assert y.dtype == np.int64 and qid.dtype == np.int64
    np.testing.assert_array_equal(X.toarray(), [[0.5, 0.25, 1], [0.1, 0, 0.5], [0, 1, 0]])
    np.testing.assert_array_equal(y, [2, 0, 1])
    np.testing.assert_array_equal(qid, [10, 10, 20])
    assert list(docids) == ["11", "12", "21"]


def test_gzip_equals_plain(tmp_path):
    plain = load_letor(write(tmp_path, GOOD))
    zipped = load_letor(write(tmp_path, GOOD, "data.txt.gz"))
    assert (plain[0] != zipped[0]).nnz == 0
    np.testing.assert_array_equal(plain[1], zipped[1])
    np.testing.assert_array_equal(plain[2], zipped[2])


def test_n_features_widens_and_float32(tmp_path):
    X, _, _ = load_letor(write(tmp_path, GOOD), n_features=10, dtype=np.float32)
    assert X.shape == (3, 10) and X.dtype == np.float32


BAD = [
    ("2 qid:1 1:0.5\nx qid:1 1:0.5\n", 2, "label 'x' is not a number"),
    ("1.5 qid:1 1:0.5\n", 1, "not an integer"),
    ("-1 qid:1 1:0.5\n", 1, "negative"),
    ("1 qid:1 1:0.5\n0 1:0.5\n", 2, "missing 'qid"),
    ("1 qid:a 1:0.5\n", 1, "malformed query id 'qid:a'"),
    ("1 qid:1 1:0.5 2\n", 1, "malformed feature token '2'"),
    ("1 qid:1 1:0.5 x:2\n", 1, "malformed feature index"),
    ("1 qid:1 1:0.5\n1 qid:1 1:NULL 2:3\n", 2, "NULL"),
    ("1 qid:1 1:0.2\n0 qid:1 2:inf\n", 2, "non-finite value 'inf'"),
    ("1 qid:1 0:0.5\n", 1, "indices start at 1"),
    ("1 qid:1 3:0.5 2:1\n", 1, "must increase"),
    ("1 qid:1 1:abc\n", 1, "'abc'"),
]


@pytest.mark.parametrize("text, line, problem", BAD)
def test_bad_input_names_file_line_and_problem(tmp_path, text, line, problem):
    path = write(tmp_path, text)
    with pytest.raises(LetorFormatError) as caught:
        load_letor(path)
    message = str(caught.value)
    assert str(path) in message and f"line {line}" in message and problem in message
    assert caught.value.line == line


def test_index_beyond_n_features(tmp_path):
    path = write(tmp_path, "1 qid:1 1:0.5\n0 qid:1 50:1\n")
    with pytest.raises(LetorFormatError, match=r"line 2: feature index 50 is beyond n_features=45"):
        load_letor(path, n_features=45)


def test_empty_file(tmp_path):
    for text in ("", "# just a comment\n\n"):
        with pytest.raises(LetorFormatError, match="no data rows"):
            load_letor(write(tmp_path, text))


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        load_letor(tmp_path / "nope.txt")


def test_non_contiguous_query_warns_with_line(tmp_path):
    text = "# header\n1 qid:1 1:1\n0 qid:2 1:1\n1 qid:1 1:0\n"
    with pytest.warns(NonContiguousQueryWarning, match=r"line 4: rows of query 1"):
        X, y, qid = load_letor(write(tmp_path, text))
    assert X.shape[0] == 3  # nothing dropped


def test_contiguous_file_does_not_warn(tmp_path, recwarn):
    load_letor(write(tmp_path, GOOD))
    assert not [w for w in recwarn if issubclass(w.category, NonContiguousQueryWarning)]


def test_query_file_gives_qid(tmp_path):
    data = write(tmp_path, "1 1:1\n0 2:1\n2 1:3\n", "rank.train")
    (tmp_path / "rank.train.query").write_text("2\n1\n")
    X, y, qid = load_letor(data)
    np.testing.assert_array_equal(qid, [0, 0, 1])
    (tmp_path / "rank.train.query").write_text("2\n2\n")
    with pytest.raises(LetorFormatError, match="sum to 4 but .* has 3 rows"):
        load_letor(data)
    (tmp_path / "rank.train.query").write_text("2\nx\n")
    with pytest.raises(LetorFormatError, match="line 2: query size 'x'"):
        load_letor(data)


def test_no_qid_and_no_query_file(tmp_path):
    with pytest.raises(LetorFormatError, match="no .query/.group file"):
        load_letor(write(tmp_path, "1 1:1\n0 2:1\n"))


def test_lightgbm_example_query_files(lightgbm_example):
    X, y, qid = load_letor(lightgbm_example / "rank.train.gz")
    assert X.shape == (3005, 300)
    assert len(np.unique(qid)) == 201
    np.testing.assert_array_equal(np.bincount(y), [645, 1211, 858, 222, 69])
    sizes = read_query_sizes(lightgbm_example / "rank.train.query.gz")
    np.testing.assert_array_equal(np.bincount(qid), sizes)
    X, y, qid = load_letor(lightgbm_example / "rank.test.gz")
    assert X.shape[0] == 768 and len(np.unique(qid)) == 50


# counts from ../shared/data/README.md: lines / distinct qids / labels 0:1:2
OHSUMED_COUNTS = {
    1: {"train": (9219, 63, (6052, 1765, 1402)), "vali": (3538, 21, (2457, 546, 535)),
        "test": (3383, 22, (2794, 274, 315))},
    2: {"train": (10187, 63, (6758, 1860, 1569)), "vali": (3383, 22, (2794, 274, 315)),
        "test": (2570, 21, (1751, 451, 368))},
    3: {"train": (10494, 64, (7390, 1633, 1471)), "vali": (2570, 21, (1751, 451, 368)),
        "test": (3076, 21, (2162, 501, 413))},
    4: {"train": (9491, 64, (7002, 1271, 1218)), "vali": (3076, 21, (2162, 501, 413)),
        "test": (3573, 21, (2139, 813, 621))},
    5: {"train": (9029, 64, (6707, 1226, 1096)), "vali": (3573, 21, (2139, 813, 621)),
        "test": (3538, 21, (2457, 546, 535))},
}


def test_ohsumed_folds_match_published_counts(ohsumed_root):
    assert find_folds(ohsumed_root) == [1, 2, 3, 4, 5]
    all_test_qids, test_rows = set(), 0
    for data in iter_letor_folds(ohsumed_root):
        assert data.n_features == 45
        for split, (rows, queries, labels) in OHSUMED_COUNTS[data.fold].items():
            X, y, qid = data[split]
            assert X.shape == (rows, 45)
            assert len(np.unique(qid)) == queries
            assert tuple(np.bincount(y)) == labels
        all_test_qids |= set(data.test[2].tolist())
        test_rows += data.test[0].shape[0]
    assert (len(all_test_qids), test_rows) == (106, 16140)


def test_fold_loader_unifies_columns(tmp_path):
    for split, text in {"train": "1 qid:1 1:1 5:1\n0 qid:1 1:0\n", "vali": "1 qid:2 2:1\n0 qid:2 1:1\n",
                        "test": "1 qid:3 3:1\n0 qid:3 1:1\n"}.items():
        (tmp_path / "Fold1").mkdir(exist_ok=True)
        write(tmp_path / "Fold1", text, f"{split}.txt")
    data = load_letor_fold(tmp_path, 1)
    assert data.n_features == 5
    assert all(data[s][0].shape[1] == 5 for s in ("train", "vali", "test"))
    with pytest.raises(FileNotFoundError, match="fold 2 does not exist"):
        load_letor_fold(tmp_path, 2)


@pytest.mark.parametrize("widest", ["train", "test"])
def test_a_fold_read_for_one_run_keeps_the_test_labels_and_reads_the_values_after(
        tmp_path, monkeypatch, widest):
    from rsrank.reading import datasets
    from rsrank.reading.layouts import load_splits

    texts = {"train": "1 qid:1 1:1 2:1\n0 qid:1 1:0\n", "vali": "1 qid:2 2:1\n0 qid:2 1:1\n",
             "test": "2 qid:3 2:1\n0 qid:3 1:1\n1 qid:4 2:0.5\n"}
    texts[widest] = texts[widest].replace("1:0\n", "1:0 6:2\n").replace("2:0.5", "6:0.5")
    (tmp_path / "Fold1").mkdir()
    for split, text in texts.items():
        write(tmp_path / "Fold1", text, f"{split}.txt")
    read = []
    load_letor = datasets.load_letor
    monkeypatch.setattr(datasets, "load_letor",
                        lambda path, *a, **k: read.append(path.stem) or load_letor(path, *a, **k))
    whole = load_letor_fold(tmp_path, 1)
    assert read == ["train", "vali", "test"]
    del read[:]
    later = load_letor_fold(tmp_path, 1, test_values=False)
    assert read == ["test", "train", "vali"]  # its values never held beside the others
    assert later.test[0] is None and later.n_features == whole.n_features == 6
    for part in (1, 2):
        np.testing.assert_array_equal(later.test[part], whole.test[part])
    for split in ("train", "vali"):
        np.testing.assert_array_equal(later[split][0].toarray(), whole[split][0].toarray())
    again = later.reread_test()  # at the width of all three
    np.testing.assert_array_equal(again[0].toarray(), whole.test[0].toarray())
    files = [tmp_path / "Fold1" / f"{split}.txt" for split in ("train", "vali", "test")]
    fold = load_splits(*files, test_values=False)
    assert fold.test[0] is None and fold.n_features == 6
    np.testing.assert_array_equal(fold.test[2], whole.test[2])
    np.testing.assert_array_equal(fold.reread_test()[0].toarray(), whole.test[0].toarray())
    # the vali values after the training rows too: both read before them, kept as labels
    del read[:]
    both = load_letor_fold(tmp_path, 1, test_values=False, vali_values=False)
    assert read == ["vali", "test", "train"]
    assert both.vali[0] is None and both.test[0] is None and both.n_features == 6
    for fold in (both, load_splits(*files, test_values=False, vali_values=False)):
        np.testing.assert_array_equal(fold.vali[2], whole.vali[2])
        np.testing.assert_array_equal(fold.reread_vali()[0].toarray(), whole.vali[0].toarray())
    assert whole.reread_vali is not None  # a fold read whole can read its vali again


def test_dataset_summary():
    qid = np.array([1, 1, 1, 2, 2, 3])
    y = np.array([0, 2, 1, 0, 0, 1])
    s = dataset_summary(np.zeros((6, 4)), y, qid)
    assert (s.n_queries, s.n_documents, s.n_features) == (3, 6, 4)
    assert s.labels == {0: 3, 1: 2, 2: 1}
    assert s.docs_per_query == (1, 2.0, 3)
    assert s.queries_without_relevant == 1


def test_bundled_data_summary(bundled_root):
    summaries = letor_summary(bundled_root)
    assert len(summaries) == 15
    assert summaries["Fold1/train"].n_queries == 60
    total = sum(summaries[f"Fold{k}/test"].n_documents for k in range(1, 6))
    assert total == sum(summaries[f"Fold{k}/vali"].n_documents for k in range(1, 6))


def test_scores_round_trip(tmp_path):
    scores = np.array([0.5, -1.25, 3e-7])
    write_scores(tmp_path / "s.txt", scores)
    np.testing.assert_array_equal(read_scores(tmp_path / "s.txt", 3), scores)
    with pytest.raises(LetorFormatError, match="2 scores for 3 rows"):
        (tmp_path / "t.txt").write_text("1\n2\n")
        read_scores(tmp_path / "t.txt", 3)


def test_public_api_reexports():
    assert rsrank.load_letor is load_letor
    assert rsrank.load_letor_fold is load_letor_fold


def _tree_digest(root):
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file():
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def test_bundled_data_is_reproducible(tmp_path, bundled_root):
    write_letor_folds(make_letor_like(random_state=0), tmp_path)
    assert _tree_digest(tmp_path) == _tree_digest(bundled_root)


def test_chunks_hold_whole_queries_and_match_the_file(tmp_path, bundled_root):
    from rsrank import iter_letor_chunks

    path = bundled_root / "Fold1" / "vali.txt.gz"
    X, y, qid = load_letor(path, n_features=45)
    chunks = list(iter_letor_chunks(path, 3, n_features=45))
    assert [len(np.unique(c[2])) for c in chunks][:-1] == [3] * (len(chunks) - 1)
    assert sum(len(np.unique(c[2])) for c in chunks) == len(np.unique(qid))
    import scipy.sparse as sp

    assert (sp.vstack([c[0] for c in chunks]) != X).nnz == 0
    np.testing.assert_array_equal(np.concatenate([c[1] for c in chunks]), y)
    np.testing.assert_array_equal(np.concatenate([c[2] for c in chunks]), qid)
    assert all(c[0].shape[1] == 45 for c in chunks)


def test_chunk_errors_name_the_line_in_the_whole_file(tmp_path):
    from rsrank import iter_letor_chunks

    text = "".join(f"{i % 3} qid:{i // 2} 1:0.5\n" for i in range(10))
    text += "1 qid:5 1:inf\n"  # line 11, in the last chunk
    path = write(tmp_path, text)
    with pytest.raises(LetorFormatError, match=r"line 11: feature 1 has a non-finite value"):
        list(iter_letor_chunks(path, 2, n_features=3))
    path = write(tmp_path, "1 qid:1 1:1\n0 qid:2 1:1\n1 qid:1 1:0\n")
    with pytest.raises(LetorFormatError, match=r"line 3: rows of query 1 are not contiguous"):
        list(iter_letor_chunks(path, 5, n_features=3))
    path = write(tmp_path, "1 qid:1 1:1\n0 1:1\n")
    with pytest.raises(LetorFormatError, match=r"line 2: missing 'qid"):
        list(iter_letor_chunks(path, 5, n_features=3))
    path = write(tmp_path, "1 qid:1 9:1\n")
    with pytest.raises(LetorFormatError, match=r"line 1: feature index 9 is beyond n_features=3"):
        list(iter_letor_chunks(path, 5, n_features=3))


@pytest.mark.parametrize("gzipped", [False, True])
def test_compiled_stream_equals_the_line_reader_across_chunk_ends(tmp_path, monkeypatch,
                                                                   gzipped):
    # queries cut by chunk ends, comments and blank lines, several block sizes
    import gzip

    from rsrank.reading import _streaming as datasets
    from rsrank import iter_letor_chunks

    rng = np.random.default_rng(4)
    lines = []
    for q in range(40):
        for _ in range(int(rng.integers(1, 9))):
            values = " ".join(f"{j}:{v:.6g}" for j, v in
                              zip(sorted(rng.choice(np.arange(1, 8), 4, replace=False)),
                                  rng.normal(size=4)))
            lines.append(f"{rng.integers(0, 3)} qid:{1000 + q} {values} #docid = d{q}\n")
        if q % 7 == 0:
            lines.append("# a comment\n\n")
    text = "".join(lines).encode()
    path = tmp_path / ("s.txt.gz" if gzipped else "s.txt")
    path.write_bytes(gzip.compress(text) if gzipped else text)
    monkeypatch.setattr(datasets, "_STREAM_CHUNK_BYTES", 97)  # shorter than most queries
    for per_block in (1, 3, 40, 100):
        fast = list(iter_letor_chunks(path, per_block, n_features=8))
        slow = list(datasets._line_blocks(path, per_block, 8, np.float64))
        assert len(fast) == len(slow)
        for (Xa, ya, qa), (Xb, yb, qb) in zip(fast, slow):
            assert Xa.shape == Xb.shape and (Xa != Xb).nnz == 0
            np.testing.assert_array_equal(ya, yb)
            np.testing.assert_array_equal(qa, qb)


def test_compiled_stream_hands_a_late_problem_to_the_line_reader(tmp_path, monkeypatch):
    from rsrank.reading import _streaming as datasets
    from rsrank import iter_letor_chunks

    good = "".join(f"{i % 3} qid:{i // 3} 1:0.5 2:{i}\n" for i in range(60))
    monkeypatch.setattr(datasets, "_STREAM_CHUNK_BYTES", 64)
    # as the line reader does: a block is given once the next query starts,
    # unless that query's first line is already the problem
    for bad, message, given in [
            ("1 qid:20 1:1e999\n", r"line 61: feature 1 has a non-finite", 5),
            ("1 qid:3 1:1\n", r"line 61: rows of query 3 are not contiguous", 4),
            ("1 1:1\n", r"line 61: missing 'qid", 4),
            ("1 qid:20 1:x\n", r"line 61", 5)]:
        path = write(tmp_path, good + bad)
        blocks = []
        with pytest.raises(LetorFormatError, match=message):
            for block in iter_letor_chunks(path, 4, n_features=3):
                blocks.append(block)
        assert len(blocks) == given
        np.testing.assert_array_equal(np.concatenate([b[2] for b in blocks]),
                                      np.arange(12 * given) // 3)


def test_complete_rows_become_a_dense_view_and_others_stay_sparse():
    import scipy.sparse as sp

    from rsrank.reading.datasets import dense_if_complete

    rng = np.random.default_rng(0)
    full = rng.normal(size=(7, 4)).astype(np.float32)
    X = sp.csr_matrix(full)
    dense = dense_if_complete(X)
    assert isinstance(dense, np.ndarray) and np.shares_memory(dense, X.data)
    np.testing.assert_array_equal(dense, full)
    holey = full.copy()
    holey[3, 2] = 0
    assert sp.issparse(dense_if_complete(sp.csr_matrix(holey)))
    np.testing.assert_array_equal(dense_if_complete(sp.csr_matrix(holey), True), holey)
    assert sp.issparse(dense_if_complete(X, False))
    # every row full, but one row's columns out of order: not a view of the values
    swapped = sp.csr_matrix((X.data.copy(), X.indices.copy(), X.indptr), shape=X.shape)
    swapped.indices[4:8] = [1, 0, 2, 3]
    assert sp.issparse(dense_if_complete(swapped))
    np.testing.assert_array_equal(dense_if_complete(swapped, True), swapped.toarray())
    assert dense_if_complete(full) is full
    assert isinstance(dense_if_complete(sp.csr_matrix((0, 3))), np.ndarray)


def test_dense_loading_equals_sparse_loading(tmp_path):
    from rsrank.evaluation.writers import write_letor

    rng = np.random.default_rng(1)
    X = rng.uniform(0.1, 5, size=(40, 6))
    qid = np.repeat(np.arange(4), 10)
    y = rng.integers(0, 3, 40)
    for split, width in (("train", 6), ("vali", 6), ("test", 5)):
        (tmp_path / "Fold1").mkdir(exist_ok=True)
        write_letor(tmp_path / "Fold1" / f"{split}.txt", X[:, :width], y, qid + len(split))
    for dtype in (np.float64, np.float32):
        sparse = load_letor_fold(tmp_path, 1, dtype=dtype)
        dense = load_letor_fold(tmp_path, 1, dtype=dtype, dense="auto")
        for split in ("train", "vali", "test"):
            assert isinstance(dense[split][0], np.ndarray) and dense[split][0].dtype == dtype
            assert dense[split][0].shape == (40, 6)  # test's missing column: zeros
            np.testing.assert_array_equal(dense[split][0], sparse[split][0].toarray())
        np.testing.assert_array_equal(dense.test[0][:, 5], 0)
