"""The compiled LETOR parser against scikit-learn's parser (the line-by-line
reader) and Python's float(): bit-identical arrays on real files and on
random text, serial or in parallel blocks."""

import gzip
import io
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rsrank.reading._parser
import rsrank.reading._reading as datasets
from rsrank import load_letor
from rsrank.reading._parser import parse_buffer, parse_chunks

from conftest import SHARED_DATA


@pytest.fixture(autouse=True)
def compiled_parser(monkeypatch):
    """Small files go to the compiled parser here even while numba's cache
    lacks it (a first run reads them with the line reader instead)."""
    monkeypatch.setattr(datasets, "cached", lambda kernel: True)


def test_a_first_run_reads_small_files_with_the_line_reader(monkeypatch):
    path = real_files()[0]
    compiled = load_letor(path)
    monkeypatch.setattr(datasets, "cached", lambda kernel: False)
    calls = []
    monkeypatch.setattr(rsrank.reading._parser, "parse_chunks",
                        lambda *args, **kwargs: calls.append(args) or None)
    assert_same(load_letor(path), compiled)
    assert calls == []
    monkeypatch.setattr(datasets, "PARALLEL_BYTES", 0)  # a large file: compiled even so
    load_letor(path)
    assert len(calls) == 1


def load_both(path, monkeypatch, **options):
    fast = load_letor(path, **options)
    with monkeypatch.context() as patch:
        patch.setattr(datasets, "_fast_parse", lambda *args: None)
        slow = load_letor(path, **options)
    return fast, slow


def assert_same(fast, slow):
    (Xf, yf, qf), (Xs, ys, qs) = fast[:3], slow[:3]
    assert Xf.shape == Xs.shape
    np.testing.assert_array_equal(Xf.indptr, Xs.indptr)
    np.testing.assert_array_equal(Xf.indices, Xs.indices)
    assert Xf.data.dtype == Xs.data.dtype
    assert Xf.data.tobytes() == Xs.data.tobytes()  # bit for bit, -0.0 included
    np.testing.assert_array_equal(yf, ys)
    np.testing.assert_array_equal(qf, qs)


BUNDLED = Path(rsrank.__file__).parent / "data" / "synthetic"


def real_files():
    files = sorted(BUNDLED.glob("Fold*/*.txt.gz"))
    files += sorted((SHARED_DATA / "OHSUMED").glob("Fold*/*.txt.gz"))
    files += sorted((SHARED_DATA / "LightGBM-lambdarank-example").glob("rank.*[tn].gz"))
    return files


def test_the_bundled_folds_are_among_the_real_files():
    assert len([path for path in real_files() if BUNDLED in path.parents]) == 15


@pytest.mark.parametrize("path", real_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_real_files_parse_exactly_as_before(path, monkeypatch):
    assert_same(*load_both(path, monkeypatch))


def test_float32_equals_the_line_reader(monkeypatch):
    path = real_files()[0]
    assert_same(*load_both(path, monkeypatch, dtype=np.float32))


digits = st.text("0123456789", min_size=1, max_size=25)
values = st.one_of(
    st.integers(-10**6, 10**6).map(str),
    st.floats(allow_nan=False, allow_infinity=False, width=64).map(repr).filter(
        lambda t: "inf" not in t and "e+" not in t or True),
    st.builds(lambda sign, a, b, e: f"{sign}{a}.{b}" + (f"e{e}" if e is not None else ""),
              st.sampled_from(["", "-", "+"]), digits, digits,
              st.one_of(st.none(), st.integers(-320, 300))),
    st.builds(lambda a: f".{a}", digits), st.builds(lambda a: f"{a}.", digits),
    st.sampled_from(["0", "-0", "-0.0", "0e0", "1e22", "1e23", "9007199254740993",
                     "4.9406564584124654e-324", "2.2250738585072011e-308",
                     "1.7976931348623157e308", "0.1", "123456789012345678901234567890"]),
)


@st.composite
def letor_text(draw):
    n_rows = draw(st.integers(1, 12))
    lines, tokens, labels = [], [], []
    qid = 0
    for _ in range(n_rows):
        qid += draw(st.integers(0, 1))
        space = draw(st.sampled_from([" ", "\t", "  ", " \t"]))
        n = draw(st.integers(0, 6))
        indices = sorted(draw(st.sets(st.integers(1, 40), min_size=n, max_size=n)))
        row_values = [draw(values) for _ in indices]
        row_values = [v for v in row_values if np.isfinite(float(v))]
        indices = indices[:len(row_values)]
        tokens.extend(row_values)
        label = draw(st.integers(0, 4))
        labels.append(label)
        features = space.join(f"{j}:{v}" for j, v in zip(indices, row_values))
        comment = draw(st.sampled_from(["", " #docid = d1", "\t# é comment",
                                        " # url: http://a:8/qid:3 1:2"]))
        end = draw(st.sampled_from(["\n", "\r\n"]))
        # lines that hold no row: the parser's bounds count them, then close up
        lines.append(draw(st.sampled_from(["", "", "\n", "  \r\n", "# head: 1:2 3:4\n"])))
        lines.append(f"{label}{space}qid:{qid}{space if features else ''}{features}{comment}{end}")
    return "".join(lines), tokens, labels


@settings(max_examples=300, deadline=None)
@given(letor_text())
def test_random_text_matches_float_and_the_line_reader(case):
    text, tokens, labels = case
    buf = np.frombuffer(text.encode(), dtype=np.uint8)
    parsed = parse_buffer(buf, 1)
    assert parsed is not None
    np.testing.assert_array_equal(parsed[0], labels)
    assert parsed[2][-1] == len(parsed[3]) == len(tokens)
    data = parsed[4]
    assert data.tobytes() == np.array([float(t) for t in tokens]).tobytes()
    for blocks in (2, 5):
        again = parse_buffer(buf, blocks)
        assert all(np.array_equal(a, b) for a, b in zip(again[:5], parsed[:5])
                   if a is not None)
        # float32 output: the same double rounded once, as astype rounds it, whatever
        # the blocks (an inexact value's column and offset share the slots meanwhile)
        single = parse_buffer(buf, blocks, np.float32)
        assert single[4].dtype == np.float32
        with np.errstate(over="ignore"):
            assert single[4].tobytes() == data.astype(np.float32).tobytes()
        assert all(np.array_equal(a, b) for a, b in zip(single[:4], parsed[:4])
                   if a is not None)


@pytest.mark.parametrize("batch", [1, 2, 1 << 16])
def test_values_past_the_fast_path_are_read_in_batches_whatever_their_length(batch, monkeypatch):
    # 17-digit values and a 5,000-digit one (longer than the bytes searched at
    # once for a token's end), in the middle, at the end of a batch and at the
    # text's very end with no line end
    monkeypatch.setattr(rsrank.reading._parser, "_INEXACT_BATCH", batch)
    long = "0." + "7" * 5000
    text = (f"1 qid:1 1:{long} 2:0.12345678901234567 3:4\n"
            f"0 qid:1 1:9007199254740993 2:{long}\n"
            f"2 qid:2 1:0.5 3:{long}")
    tokens = [token.split(":")[1] for token in text.split()
              if ":" in token and not token.startswith("qid")]
    for blocks in (1, 2, 3):
        parsed = parse_buffer(np.frombuffer(text.encode(), dtype=np.uint8), blocks)
        assert parsed[4].tobytes() == np.array([float(t) for t in tokens]).tobytes()
        np.testing.assert_array_equal(parsed[3], [0, 1, 2, 0, 1, 0, 2])


def test_random_file_through_both_readers(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    rows = []
    for row in range(3000):
        values = " ".join(f"{j}:{float(v)!r}" for j, v in enumerate(
            rng.normal(size=8) * 10.0 ** rng.integers(-8, 8, size=8), start=1))
        rows.append(f"{row % 5} qid:{row // 30} {values} #docid = r{row}\n")
    path = tmp_path / "random.txt.gz"
    path.write_bytes(gzip.compress("".join(rows).encode()))
    assert_same(*load_both(path, monkeypatch))


def test_parallel_blocks_equal_one_block():
    rng = np.random.default_rng(1)
    text = "".join(f"{r % 3} qid:{r // 7} " + " ".join(
        f"{j}:{v:.9g}" for j, v in enumerate(rng.normal(size=5), start=1)) + "\n"
        for r in range(5000))
    buf = np.frombuffer(text.encode(), dtype=np.uint8)
    one, many = parse_buffer(buf, 1), parse_buffer(buf, 16)
    for a, b in zip(one[:5], many[:5]):
        np.testing.assert_array_equal(a, b)
    assert one[5] == many[5] == 5


def test_line_chunks_cover_the_stream_and_cut_after_newlines(monkeypatch):
    # random texts, buffer sizes and read sizes, lines longer than the buffer
    rng = np.random.default_rng(3)
    for _ in range(300):
        lines = [b"x" * int(rng.integers(0, 40)) for _ in range(rng.integers(0, 60))]
        text = b"\n".join(lines) + (b"\n" if rng.random() < 0.5 else b"")
        monkeypatch.setattr(datasets, "_PIECE_BYTES", int(rng.integers(1, 20)))
        chunks = [bytes(c) for c in datasets.line_chunks(io.BytesIO(text),
                                                          int(rng.integers(1, 50)))]
        assert b"".join(chunks) == text
        assert all(c.endswith(b"\n") for c in chunks[:-1]) and all(chunks)


def test_small_chunks_equal_one_chunk(tmp_path, monkeypatch):
    rng = np.random.default_rng(2)
    # short values (the fast path's) beside 17-digit ones (read with float() a
    # chunk at a time), the last at the text's very end, with no line end
    rows = [f"{r % 4} qid:{r // 9} " + " ".join(
        f"{j}:{v!r}" if (r + j) % 3 == 0 else f"{j}:{v:.7g}"
        for j, v in enumerate(rng.normal(size=rng.integers(1, 60)).tolist(), start=1))
        + f" #docid = x{r}\n" for r in range(2000)]
    rows.append("1 qid:999 1:0.5 2:0.12345678901234567")
    path = tmp_path / "plain.txt"
    path.write_text("".join(rows))
    whole = load_letor(path)
    assert whole[0][-1, 1] == 0.12345678901234567
    monkeypatch.setattr(datasets, "_CHUNK_BYTES", 333)  # shorter than many lines
    monkeypatch.setattr(datasets, "PARALLEL_BYTES", 0)  # and parallel blocks in each
    assert_same(load_letor(path), whole)
    gzipped = tmp_path / "plain.txt.gz"
    gzipped.write_bytes(gzip.compress(path.read_bytes()))
    assert_same(load_letor(gzipped), whole)  # decompressed chunk by chunk, twice
    monkeypatch.setattr(datasets, "_fast_parse", lambda *args: None)
    assert_same(load_letor(path), whole)


@pytest.mark.parametrize("blocks", [1, 3])
def test_text_that_changes_between_the_passes_is_refused_not_overrun(blocks):
    # the second pass sees more lines and more values than the first counted
    # (a file rewritten while it is read): the parser must stop within the
    # bounds it allocated, and say so with None
    short = b"1 qid:1 1:0.5\n0 qid:1 1:0.25\n" * 50
    longer = b"1 qid:1 1:0.5 2:1 3:2 4:3\n" * 400
    calls = []

    def chunks():
        calls.append(1)
        text = short if len(calls) == 1 else longer
        return iter([np.frombuffer(text, dtype=np.uint8)])

    assert parse_chunks(chunks, blocks) is None
    assert len(calls) == 2


@pytest.mark.parametrize("own_mapping", [True, False])
@pytest.mark.parametrize("comment_lines", [False, True])
def test_parsed_arrays_are_writable_pickle_and_outlive_the_parse(comment_lines, own_mapping,
                                                                 monkeypatch):
    # large output arrays live in their own anonymous mappings (here every
    # array, with own_mapping); comment lines leave slack in the row arrays,
    # which close up in a copy
    import mmap
    import pickle

    from rsrank.reading import _parser

    monkeypatch.setattr(_parser, "_OWN_MAPPING_BYTES", 0 if own_mapping else 1 << 40)

    lines = [f"{r % 3} qid:{r // 4} 1:{r}.5 3:{-r}" for r in range(40)]
    if comment_lines:
        lines = [line + ("\n# note" if r % 5 == 0 else "") for r, line in enumerate(lines)]
    buf = np.frombuffer(("\n".join(lines) + "\n").encode(), dtype=np.uint8)
    labels, qids, indptr, indices, data, _ = parse_buffer(buf, 3)
    expected = np.ravel([[r + 0.5, -r] for r in range(40)])
    np.testing.assert_array_equal(data, expected)
    for array in (labels, qids, indptr, indices, data):
        assert array.flags.writeable
    if not comment_lines:  # (with them, the row arrays are copies)
        assert isinstance(getattr(data.base, "obj", None), mmap.mmap) == own_mapping
    data *= 2.0
    indices[:] = indices[::-1]
    again = pickle.loads(pickle.dumps((labels, qids, indices, data)))
    del buf, labels, qids, indptr
    np.testing.assert_array_equal(again[3], 2.0 * expected)
    np.testing.assert_array_equal(indices, np.tile([0, 2], 40)[::-1])
    np.testing.assert_array_equal(again[1], np.arange(40) // 4)


def test_memory_refused_to_the_parsed_arrays_is_a_memory_error(monkeypatch):
    """The large arrays' own mappings refused (a memory limit, no memory
    left) raise MemoryError, as NumPy's arrays do, not the mapping's
    OSError ENOMEM; any other OSError passes as it is."""
    import errno

    from rsrank.reading import _parser

    monkeypatch.setattr(_parser, "_OWN_MAPPING_BYTES", 0)
    buf = np.frombuffer(b"1 qid:1 1:0.5\n0 qid:1 1:1.5\n", dtype=np.uint8)

    def refuse(code):
        def mapping(*args, **kwargs):
            raise OSError(code, "refused")
        return mapping

    monkeypatch.setattr(_parser.mmap, "mmap", refuse(errno.ENOMEM))
    with pytest.raises(MemoryError, match="cannot map"):
        parse_buffer(buf, 1)
    monkeypatch.setattr(_parser.mmap, "mmap", refuse(errno.EACCES))
    with pytest.raises(PermissionError):
        parse_buffer(buf, 1)


@st.composite
def mostly_complete_text(draw):
    """Lines holding every feature 1..width (with 17-digit values among
    them), and some that break the pattern: a feature missing, one more, a
    blank or comment line; cut into chunks at random line ends."""
    width = draw(st.integers(1, 6))
    n_rows = draw(st.integers(1, 40))
    breaks = draw(st.lists(st.sampled_from(["missing", "wider", "blank", "comment"]),
                           max_size=2))
    where = draw(st.lists(st.integers(0, n_rows - 1), min_size=len(breaks),
                          max_size=len(breaks)))
    lines, kept, slack = [], [], False
    for r in range(n_rows):
        columns = list(range(1, width + 1))
        extra = ""
        for kind, at in zip(breaks, where):
            if at == r and kind == "missing" and columns:
                columns.remove(draw(st.sampled_from(columns)))
            elif at == r and kind == "wider":
                columns.append(max(columns, default=0) + 1)
            elif at == r:
                extra, slack = ("\n" if kind == "blank" else "# a note 1:2\n"), True
        kept.append(columns)
        values = " ".join(f"{j}:{draw(st.sampled_from(['0', '-1.5', '0.12345678901234567']))}"
                          for j in columns)
        lines.append(f"{extra}{r % 3} qid:{r // 4} {values}\n")
    cuts = sorted(set(draw(st.lists(st.integers(1, n_rows), max_size=4))))
    widest = max(len(columns) for columns in kept)
    complete = widest > 0 and not slack and all(columns == list(range(1, widest + 1))
                                                for columns in kept)
    return lines, cuts, widest, complete


@settings(max_examples=200, deadline=None)
@given(mostly_complete_text(), st.sampled_from([1, 3]))
def test_a_dense_parse_equals_the_csr_parse_and_drops_indices_only_for_complete_lines(case,
                                                                                      blocks):
    lines, cuts, width, complete = case
    texts = ["".join(lines[lo:hi]) for lo, hi in zip([0, *cuts], [*cuts, len(lines)])]
    bufs = [np.frombuffer(text.encode(), dtype=np.uint8) for text in texts if text]

    def chunks():
        return iter(bufs)

    sparse = parse_chunks(chunks, blocks)
    dense = parse_chunks(chunks, blocks, dense=True)
    labels, qids, indptr, indices, data, max_index = sparse
    np.testing.assert_array_equal(dense[0], labels)
    np.testing.assert_array_equal(dense[1], qids)
    assert dense[5] == max_index
    if complete:  # every line holds every feature: no indices, the rows' values in turn
        assert dense[2] is None and dense[3] is None and max_index == width
        np.testing.assert_array_equal(indices, np.tile(np.arange(width), len(labels)))
        assert dense[4].tobytes() == data.tobytes()
    else:  # the CSR arrays themselves, bit for bit
        for got, expected in zip(dense[2:5], (indptr, indices, data)):
            assert got.dtype == expected.dtype
            assert got.tobytes() == expected.tobytes()


def test_a_file_of_complete_lines_loads_dense_without_an_index_per_value(tmp_path,
                                                                        monkeypatch):
    # read in small chunks, in parallel blocks: the dense array is the line
    # reader's matrix, and asked for CSR it is that CSR, zeros stored
    rng = np.random.default_rng(4)
    rows = [f"{r % 3} qid:{r // 10} " + " ".join(
        f"{j}:{v:.7g}" for j, v in enumerate(rng.normal(size=7) * (rng.random(7) < 0.6),
                                             start=1)) + "\n" for r in range(600)]
    path = tmp_path / "complete.txt"
    path.write_text("".join(rows))
    monkeypatch.setattr(datasets, "_CHUNK_BYTES", 2000)
    monkeypatch.setattr(datasets, "PARALLEL_BYTES", 0)
    fast, slow = load_both(path, monkeypatch)
    assert_same(fast, slow)
    assert slow[0].nnz == 600 * 7  # the line reader stores the zeros too
    X = load_letor(path, dense="auto")[0]
    assert isinstance(X, np.ndarray) and X.flags.c_contiguous
    assert X.tobytes() == slow[0].data.tobytes()  # -0.0 kept (toarray would add it to 0.0)
    wider = load_letor(path, n_features=9, dense="auto")[0]  # more columns than the file
    np.testing.assert_array_equal(wider.toarray()[:, :7], X)
    assert not wider[:, 7:].count_nonzero()
