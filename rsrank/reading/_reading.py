"""LETOR text in: lines, the compiled parser and the line reader, errors
that name the file, the line and the problem, query files, and the binary
cache of parsed files (docids: :mod:`rsrank.reading._docids`).

The happy path is RSRank's compiled parser (:mod:`rsrank.reading._parser`), which
accepts only well-formed lines. Anything else goes to the line reader:
scikit-learn's SVMlight parser (which reads a ``nan`` value as a missing
value, NaN), then a scan line by line for what it does not
check (infinite values, fractional or negative labels, a line without ``qid:``,
underscores and non-ASCII digits, a glued ``#``, bare carriage returns), to
report the first offending line: file, line number and problem. Parsed files
can be kept in a binary cache (:mod:`rsrank.reading._cache`). :mod:`rsrank.reading.datasets`
is the public face.
"""

import gzip
import mmap
import re
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file

from . import _cache
from ._cache import complete_csr
from ._files import not_a_file
from ..evaluation.metrics import MAX_EXP2_LABEL
from .._kernels import cached
from ..learning._threads import threads
from ._queries import qid_from_group_sizes
from ._text import LetorFormatError, open_text, reading
from ._csv import csv_data_lines, is_csv, parse_csv
from ._docids import read_docids


class NonContiguousQueryWarning(UserWarning):
    """A query's rows are split into several blocks of a file."""


#: Largest feature index read without an explicit ``n_features``: an index
#: beyond it is almost always a corrupt token, and would make every model
#: allocate weights for all the columns before it.
MAX_FEATURES = 2**24
#: Labels and query ids are int64; feature indices int32 (as in scikit-learn).
INT64_MAX = 2**63 - 1
INDEX_MAX = 2**31 - 1
_LABEL_MAX = 2**31 - 1


def read_lines(path, max_length=None, what="line"):
    """``(line number, text)`` of a file, each line at most ``max_length``
    characters when given (a file without line breaks, such as /dev/zero,
    is refused instead of read into memory)."""
    with reading(path), open_text(path) as handle:
        number = 0
        while True:
            text = handle.readline(-1 if max_length is None else max_length + 1)
            if not text:
                return
            number += 1
            if max_length is not None and len(text) > max_length:
                raise LetorFormatError(path, number, f"longer than {max_length:,} characters; "
                                       f"not a {what}")
            yield number, text


_VALUE = r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"


def _strict_problem(body, n_features, require_qid, dtype):
    """Why the data part of a line (before ``#``) breaks the strict grammar
    ``label [qid:Q] index:value ...`` with ASCII digits, or None."""
    if "\r" in body:
        return ("a bare carriage return (old Mac line endings) in the line; convert the file "
                "to LF or CRLF line endings")
    if not body.isascii():
        position, char = next((i, c) for i, c in enumerate(body) if not c.isascii())
        return (f"non-ASCII character {char!r} (U+{ord(char):04X}) at column {position + 1}; "
                "tokens are ASCII and separated by spaces or tabs")
    problem = _line_problem(body, n_features, require_qid, dtype)
    if problem is not None:
        return problem
    for token in re.split(r"[ \t]+", body.strip()):
        if not re.fullmatch(rf"[0-9]+(?:\.0*)?|qid:[0-9]+|[0-9]+:{_VALUE}", token):
            return f"malformed token {token!r} (ASCII digits only, no underscores)"
    return None


def _parse_number(token):
    try:
        return float(token)
    except ValueError:
        return None


def _line_problem(text, n_features, require_qid, dtype=np.float64):
    """What is wrong with one line of data, or None."""
    data, hash_sign, _ = text.partition("#")
    if hash_sign and data.strip() and not data[-1].isspace():
        return (f"'#' inside the token {data.split()[-1] + '#'!r}; a comment starts with "
                "whitespace and then '#'")
    body = data.split()
    if not body:
        return None
    label = _parse_number(body[0])
    if label is None or "_" in body[0] or not body[0].isascii():
        return f"label {body[0]!r} is not a number"
    if not np.isfinite(label) or label != int(label):
        return f"label {body[0]!r} is not an integer relevance grade"
    if label < 0:
        return f"label {body[0]!r} is negative"
    if label > _LABEL_MAX:
        return f"label {body[0]!r} is beyond {_LABEL_MAX:,}: not a relevance grade"
    tokens = body[1:]
    if tokens and tokens[0].startswith("qid"):
        match = re.fullmatch(r"qid:(-?[0-9]+)", tokens[0])
        if match is None:
            return f"malformed query id {tokens[0]!r} (expected qid:<integer>)"
        if abs(int(match.group(1))) > INT64_MAX:
            return f"query id {tokens[0]!r} does not fit in a 64-bit integer"
        tokens = tokens[1:]
    elif require_qid:
        return "missing 'qid:<integer>' after the label"
    previous = 0
    for token in tokens:
        index, sep, value = token.partition(":")
        if not sep or not index or not value:
            return f"malformed feature token {token!r} (expected index:value)"
        if not (index.isascii() and index.isdigit()):
            if index == "qid":
                return f"'qid:' must directly follow the label, found {token!r}"
            return f"malformed feature index in {token!r}"
        if value.upper() == "NULL":
            return (f"feature {index} is NULL (LETOR 4.0 missing value); replace NULL "
                    "values (for example by 0) before loading")
        number = _parse_number(value)
        if number is None or "_" in value or not value.isascii():
            return f"feature value {value!r} in {token!r} is not a number"
        if np.isinf(number):  # NaN is a missing value, which the model kinds take or refuse
            return f"feature {index} has a non-finite value {value!r}"
        if dtype == np.float32 and abs(number) > np.finfo(np.float32).max:
            return (f"feature {index} value {value!r} overflows float32; load with "
                    "dtype=float64")
        position = int(index)
        if position < 1:
            return (f"feature index {position} in {token!r}; LETOR indices start at 1 (a "
                    "zero-based file, as scikit-learn's dump_svmlight_file writes by "
                    "default: write it with zero_based=False)")
        if position > INDEX_MAX:
            return f"feature index {position} does not fit in a 32-bit integer"
        if n_features is not None and position > n_features:
            return f"feature index {position} is beyond n_features={n_features}"
        if position <= previous:
            return f"feature indices must increase along a line ({previous} then {position})"
        previous = position
    return None


def _find_bad_line(path, lines, n_features, require_qid, dtype=np.float64):
    """Raise LetorFormatError at the first bad line of ``lines()``, an
    iterator of ``(line number, text)``."""
    for number, text in lines():
        problem = _strict_problem(text.split("#", 1)[0].rstrip("\n"), n_features, require_qid,
                                  dtype) or _line_problem(text, n_features, require_qid, dtype)
        if problem is not None:
            raise LetorFormatError(path, number, problem)


def _read_qids(path, lines, n_features=None, dtype=np.float64):
    """The qid of every data row, or None when no row has one; checks every
    line against the strict grammar on the way.

    scikit-learn's parser is quadratic in the number of rows when it
    collects query ids (it appends to an array per row), so the text is
    parsed without them and this pass reads them instead. It also holds
    each line to what scikit-learn's parser lets through: ASCII digits only
    (Python would read ``1_0`` as 10 and ``٢`` as 2), a comment's ``#``
    after whitespace, no bare carriage returns."""
    qids, missing = [], None
    for number, text in lines():
        bare_cr = text.endswith("\r") and not text.endswith("\r\n")
        data = text.split("#", 1)[0]
        body = data.rstrip("\r\n")
        glued_hash = "#" in text and data.strip() and not data[-1].isspace()
        # scikit-learn's parser checked the numbers; what it lets through (Python
        # reads '1_0' as 10 and '٢' as 2) is cheap to spot without a regex
        if bare_cr or glued_hash or "_" in data or not data.isascii():
            problem = (_strict_problem(body + ("\r" if bare_cr else ""), n_features, False,
                                       dtype)
                       or _line_problem(text, n_features, False, dtype)
                       or "malformed line (expected: label [qid:Q] index:value ...)")
            raise LetorFormatError(path, number, problem)
        tokens = text.split(None, 2)
        if not tokens or tokens[0].startswith("#"):
            continue
        if len(tokens) > 1 and tokens[1].startswith("qid:"):
            if missing is not None:
                raise LetorFormatError(path, missing, "missing 'qid:<integer>' after the label")
            digits = tokens[1][4:]
            if not re.fullmatch(r"-?[0-9]+", digits):
                raise LetorFormatError(path, number, f"malformed query id {tokens[1]!r} "
                                       "(expected qid:<integer>)")
            value = int(digits)
            if abs(value) > INT64_MAX:
                raise LetorFormatError(path, number, f"query id {tokens[1]!r} does not fit in "
                                       "a 64-bit integer")
            qids.append(value)
        else:
            if qids:
                raise LetorFormatError(path, number, "missing 'qid:<integer>' after the label")
            missing = number if missing is None else missing
    return np.asarray(qids, dtype=np.int64) if qids else None


def parse_checked(source, path, lines, n_features, dtype, query_file=None):
    """Parse SVMlight ``source`` (a file name or a file object) with
    scikit-learn, then enforce the LETOR rules scikit-learn does not check.
    ``lines`` re-reads the same data as ``(line number, text)`` pairs so a
    problem can be reported at its line."""
    if n_features is not None and not (isinstance(n_features, (int, np.integer))
                                       and 1 <= n_features <= INDEX_MAX):
        raise ValueError(f"n_features must be a positive integer up to {INDEX_MAX:,}, "
                         f"got {n_features!r}")
    fast = _fast_parse(source, path, n_features, dtype)
    if fast is not None:
        X, y, qid = fast
        if qid is None:
            return _grouped_by_query_file(X, y, path, lines, n_features, dtype, query_file,
                                          clean=True)
        if query_file is not None:
            raise ValueError(f"{path} has qid: columns; do not pass query_file as well")
        return X, y, qid
    try:
        with reading(path):
            X, y = load_svmlight_file(source, n_features=n_features, dtype=dtype,
                                      query_id=False, zero_based=False)
    except (ValueError, OverflowError) as error:
        _find_bad_line(path, lines, n_features, require_qid=False, dtype=dtype)
        raise LetorFormatError(path, None, str(error)) from error
    if X.shape[0] == 0:
        raise LetorFormatError(path, None, "the file holds no data rows")
    if n_features is None and X.shape[1] > MAX_FEATURES:
        for number, text in lines():
            indices = [int(t.split(":")[0]) for t in text.split("#", 1)[0].split()[1:]
                       if ":" in t and not t.startswith("qid:")]
            if indices and max(indices) > MAX_FEATURES:
                raise LetorFormatError(path, number, f"feature index {max(indices):,} is beyond "
                                       f"{MAX_FEATURES:,} features; pass n_features (rsrank "
                                       "--n-features) if the data really has that many")
    clean = (not np.any(np.isinf(X.data)) and np.all(np.isfinite(y))
             and np.all(y == np.round(y)) and np.all(y >= 0) and np.all(y <= _LABEL_MAX))
    qid = _read_qids(path, lines, n_features, dtype)
    if qid is None:
        return _grouped_by_query_file(X, y.astype(np.int64), path, lines, n_features, dtype,
                                      query_file, clean)
    if len(qid) != X.shape[0] or not clean:
        _find_bad_line(path, lines, n_features, require_qid=True, dtype=dtype)
        raise LetorFormatError(path, None, "rows and qid values disagree in number")
    if query_file is not None:
        raise ValueError(f"{path} has qid: columns; do not pass query_file as well")
    return X, y.astype(np.int64), qid


def _grouped_by_query_file(X, y, path, lines, n_features, dtype, query_file, clean):
    """No line carries qid: group sizes must come from a query file."""
    query_file = query_file if query_file is not None else query_file_for(path)
    if query_file is None:
        raise LetorFormatError(path, 1, "missing 'qid:<integer>' after the label, and no "
                               ".query/.group file of query sizes beside the data")
    if not clean:
        _find_bad_line(path, lines, n_features, require_qid=False, dtype=dtype)
    sizes = read_query_sizes(query_file)
    if sizes.sum() != X.shape[0]:
        raise LetorFormatError(query_file, None, f"query sizes sum to {sizes.sum()} but "
                               f"{path} has {X.shape[0]} rows")
    return X, y, qid_from_group_sizes(sizes)


#: Files this large or larger are parsed by all threads, in blocks; smaller
#: ones go to scikit-learn's line reader while the compiled parser is not in
#: numba's cache (parsing a few megabytes there is faster than compiling).
PARALLEL_BYTES = 8 << 20


#: Plain and large gzip files are parsed in chunks of this many bytes (cut at
#: line ends).
_CHUNK_BYTES = 32 << 20


def _read_bytes(source, path):
    """The file's bytes as a uint8 array (decompressed for .gz; a file is
    read once, a buffer given as a file object is used as it is)."""
    if hasattr(source, "getbuffer"):  # io.BytesIO of a streamed block
        return np.frombuffer(source.getbuffer(), dtype=np.uint8)
    with reading(path):
        if Path(path).suffix == ".gz":
            with gzip.open(path, "rb") as handle:
                return np.frombuffer(handle.read(), dtype=np.uint8)
        return np.fromfile(path, dtype=np.uint8)


_PIECE_BYTES = 4 << 20


def _after_last_newline(buffer, end, window=1 << 20):
    """Index after the last newline in ``buffer[:end]`` (0 if none),
    searched backwards a window at a time."""
    hi = end
    while hi > 0:
        lo = max(0, hi - window)
        found = np.flatnonzero(buffer[lo:hi] == 10)
        if len(found):
            return lo + int(found[-1]) + 1
        hi = lo
    return 0


def line_chunks(handle, size=None):
    """Views of one reused buffer holding about ``size`` bytes of the
    stream ``handle`` each, cut after a newline (the last may lack one).

    The stream is read ``_PIECE_BYTES`` at a time straight into the buffer
    and the unfinished line moves to its front, so memory holds one chunk
    (plus one piece in the decompressor) instead of copies of it. Each view
    is valid until the next one is asked for; a line longer than the buffer
    grows it."""
    buffer = np.empty(size or _CHUNK_BYTES, dtype=np.uint8)
    filled = 0
    while True:
        if filled == len(buffer):  # one line fills the whole buffer
            buffer = np.concatenate([buffer, np.empty(len(buffer), dtype=np.uint8)])
        view = memoryview(buffer)
        read = handle.readinto(view[filled:min(len(buffer), filled + _PIECE_BYTES)])
        if read:
            filled += read
            if filled < len(buffer):
                continue
        if not read:  # end of the stream
            if filled:
                yield buffer[:filled]
            return
        cut = _after_last_newline(buffer, filled)
        if cut == 0:
            continue
        yield buffer[:cut]
        buffer[:filled - cut] = buffer[cut:filled]
        filled -= cut


def _text_chunks(source, path):
    """``(size, chunks)``: a callable giving the text in chunks that end at
    line ends. A plain file is memory-mapped and given ``_CHUNK_BYTES`` at a
    time; a large gzip file is decompressed ``_CHUNK_BYTES`` at a time (once
    per pass: memory for one chunk, at the price of decompressing twice); a
    small one and in-memory blocks come as one chunk."""
    gzipped = not hasattr(source, "getbuffer") and Path(path).suffix == ".gz"
    if hasattr(source, "getbuffer") or (gzipped and
                                        Path(path).stat().st_size < _CHUNK_BYTES // 4):
        buf = _read_bytes(source, path)
        return len(buf), lambda: iter([buf])
    if gzipped:
        def decompressed():
            with reading(path), gzip.open(path, "rb") as handle:
                yield from line_chunks(handle)

        return Path(path).stat().st_size, decompressed
    size = Path(path).stat().st_size
    if size == 0:
        return 0, lambda: iter([])

    def chunks():
        # the file is mapped, not copied; each chunk's pages are dropped from
        # this process once parsed, so memory holds about one chunk of text
        with reading(path), open(path, "rb") as handle:
            mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        buf = np.frombuffer(mapping, dtype=np.uint8)
        lo = 0
        while lo < size:
            hi = min(size, lo + _CHUNK_BYTES)
            if hi < size:
                newline = buf[hi:min(size, hi + (1 << 20))]
                found = np.flatnonzero(newline == 10)
                while len(found) == 0 and hi < size:
                    hi = min(size, hi + (1 << 20))
                    found = np.flatnonzero(buf[hi:min(size, hi + (1 << 20))] == 10)
                hi = size if len(found) == 0 else hi + int(found[0]) + 1
            yield buf[lo:hi]
            start = lo - lo % mmap.PAGESIZE
            mapping.madvise(mmap.MADV_DONTNEED, start, hi - start)
            lo = hi

    return size, chunks


def _fast_parse(source, path, n_features, dtype):
    """``(X, y, qid or None)`` from the compiled parser, or None when the
    file needs the line-by-line reader (any line off the strict grammar, a
    non-finite value, an index beyond ``n_features`` or the sane width)."""
    from . import _parser

    size, chunks = _text_chunks(source, path)
    if size == 0:
        return None
    if size < PARALLEL_BYTES and not cached(_parser.fill_blocks_serial):
        return None  # first run: the line reader gives the same arrays sooner than a compile
    blocks = 1 if size < PARALLEL_BYTES else 4 * threads(-1)
    parsed = _parser.parse_chunks(chunks, blocks, dtype, dense=True)
    if parsed is None:
        return None
    labels, qid, indptr, indices, data, max_index = parsed
    width = n_features if n_features is not None else max_index
    if len(labels) == 0 or max_index > width or width > (n_features or MAX_FEATURES):
        return None
    # also a float64 value beyond float32's range; a block at a time, not a mask of all
    if not all(np.isfinite(data[lo:lo + (1 << 22)]).all() for lo in range(0, len(data), 1 << 22)):
        return None
    if indices is None:  # every line holds every feature
        X = data.reshape(len(labels), max_index)
        if width == max_index:
            return X, labels, qid
        X = complete_csr(X)
        data, indices, indptr = X.data, X.indices, X.indptr
    X = sp.csr_matrix((data, indices, indptr), shape=(len(labels), width))
    X.has_sorted_indices = True  # indices increase along every line
    return X, labels, qid


def _first_line_with_qid_break(path, qid):
    """Line number of the first row whose query appeared before in another block."""
    run_start = np.r_[True, qid[1:] != qid[:-1]]
    seen = set()
    for row in np.flatnonzero(run_start):
        if qid[row] in seen:
            return int(row), int(qid[row])
        seen.add(qid[row])
    return None


def check_exp2_labels(path, labels, advice="map these to grades of at most 255"):
    """:class:`LetorFormatError` at the first line of ``path`` whose label
    the 2^label - 1 gain cannot take, when ``labels`` (read from it, all or
    some of its rows) hold one; ``advice`` ends the message."""
    if not len(labels) or np.max(labels) <= MAX_EXP2_LABEL:
        return
    if is_csv(path):
        _, every, _ = parse_csv(path)
        row = int(np.argmax(every > MAX_EXP2_LABEL))
        raise LetorFormatError(path, csv_data_lines(path)[row], f"label {every[row]} is above "
                               f"{MAX_EXP2_LABEL}, the largest the 2^label - 1 gain of NDCG "
                               f"takes: {advice}")
    for number, text in read_lines(path):
        tokens = text.split("#", 1)[0].split()
        if tokens and int(float(tokens[0])) > MAX_EXP2_LABEL:
            raise LetorFormatError(
                path, number, f"label {tokens[0]} is above {MAX_EXP2_LABEL}, the largest the "
                "2^label - 1 gain of NDCG takes; relevance grades are small integers (0 to 4 "
                f"in LETOR): {advice}")


def data_line_numbers(path):
    """1-based file line number of every data row (comments and blanks skipped)."""
    if is_csv(path):
        return csv_data_lines(path)
    numbers = []
    for number, text in read_lines(path):
        if text.split("#", 1)[0].strip():
            numbers.append(number)
    return numbers


def query_file_for(path):
    """The LightGBM/SVMrank query-size file beside ``path``, if any."""
    path = Path(path)
    stem = path.with_suffix("") if path.suffix == ".gz" else path
    for suffix in (".query", ".group"):
        for candidate in (Path(str(stem) + suffix), Path(str(stem) + suffix + ".gz")):
            if candidate.exists():
                return candidate
    return None


def read_query_sizes(path):
    """Read a ``.query``/``.group`` file: one query size per line, in file order.

    Returns
    -------
    ndarray of int64
        The number of consecutive rows of each query.
    """
    sizes = []
    for number, text in read_lines(path, 1000, "query-size file"):
        token = text.strip()
        if not token:
            continue
        if not (token.isascii() and token.isdigit()) or int(token) < 1:
            raise LetorFormatError(path, number, f"query size {token!r} is not a positive integer")
        sizes.append(int(token))
    if not sizes:
        raise LetorFormatError(path, None, "query-size file is empty")
    return np.asarray(sizes, dtype=np.int64)


def load_letor(path, n_features=None, *, query_file=None, return_docids=False,
               dtype=np.float64, warn_non_contiguous=True, cache=None, dense=False):
    """Read one LETOR/SVMlight ranking file, plain or gzipped.

    Parameters
    ----------
    path : str or path-like
        ``label qid:N index:value ... #comment`` per line; ``.gz`` is read
        directly. Feature indices are 1-based (column ``j - 1`` of ``X``).
    n_features : int, optional
        Number of columns of ``X``. A larger index in the file is an error.
        By default, the largest index in the file.
    query_file : str or path-like, optional
        LightGBM/SVMrank query-size file (one query size per line) for data
        without ``qid:``. By default ``<path>.query`` or ``<path>.group``
        (with the ``.gz`` of ``path`` removed, plain or gzipped) is used
        when the data has no ``qid:``.
    return_docids : bool
        Also return the document id of every row: ``X`` of a ``#docid = X``
        comment (see :func:`parse_docid`).
    dtype : numpy dtype
        Dtype of ``X`` (float64 or float32).
    warn_non_contiguous : bool
        Warn when a query's rows are not one block of the file.
    cache : True or path-like, optional
        Keep the parsed arrays as memory-mappable ``.npy`` files and read
        them instead of the text next time (see :mod:`rsrank.reading._cache`):
        ``True`` puts them in ``.rsrank-cache`` beside the file (or the
        user's cache directory when that is read-only), a path puts them
        there. The entry is keyed by the file's size, modification time and
        the hash of its first and last MiB, and by the options above, so a
        changed file is parsed again. Arrays read from the cache are
        read-only memory maps.
    dense : bool or "auto"
        ``False``: ``X`` is CSR. ``"auto"``: a file whose every line holds
        every feature gives a dense ``X``, the parsed values themselves (no
        copy, half the memory of CSR; the compiled parser keeps no column
        index per value for such a file, so its peak is the values and one
        chunk of text); others stay CSR. ``True``: always
        dense. See :func:`dense_if_complete`.

    Returns
    -------
    X : scipy.sparse.csr_matrix or ndarray of shape (n_rows, n_features)
    y : ndarray of int64
    qid : ndarray of int64
    docids : ndarray of str (object), only with ``return_docids=True``

    Raises
    ------
    LetorFormatError
        With the file, line and problem, for a non-numeric, fractional or
        negative label, a missing or malformed ``qid:``, a malformed
        ``index:value`` token, a LETOR 4.0 ``NULL``, an infinite value,
        an index beyond ``n_features``, or an empty file. A ``nan`` value
        is read as NaN, a missing value (additive models take it; linear
        ones refuse it when they fit).
    FileNotFoundError
        When ``path`` does not exist.
    """
    path = Path(path)
    if not path.is_file():
        raise not_a_file(path)
    entry = cache_entry(path, n_features, dtype, query_file, cache)
    hit = None if entry is None else _cache.load_cached(*entry)
    if hit is not None:
        X, y, qid, meta = hit
        message = meta.get("warning")
    else:
        X, y, qid, message = _parse_file(path, n_features, dtype, query_file)
        if entry is not None:
            _cache.store(*entry, X, y, qid, warning=message)
    if warn_non_contiguous and message:
        warnings.warn(message, NonContiguousQueryWarning, stacklevel=2)
    if dense is False and not sp.issparse(X):  # parsed dense: the CSR of every value
        X = complete_csr(X)
    X = dense_if_complete(X, dense)
    if return_docids:
        docids = read_docids(path)
        if len(docids) != len(y):
            raise LetorFormatError(path, None, f"{len(docids)} rows with a docid comment slot "
                                   f"against {len(y)} data rows (mixed line endings?)")
        return X, y, qid, docids
    return X, y, qid


def cache_entry(path, n_features, dtype, query_file, cache):
    """``(directory, key, description)`` of the cache entry, or None."""
    if cache is None or cache is False:
        return None
    query_file = query_file if query_file is not None else query_file_for(path)
    key, description = _cache.cache_key(path, n_features, dtype, query_file)
    return _cache.cache_directory(path, cache), key, description


def _parse_file(path, n_features, dtype, query_file):
    """``(X, y, qid, non-contiguity message or None)`` of a text file."""
    def lines():
        with reading(path), open_text(path) as handle:
            yield from enumerate(handle, start=1)

    if is_csv(path):
        if query_file is not None:
            raise LetorFormatError(path, None, "a CSV file has its query id column; it takes "
                                   "no query file")
        X, y, qid = parse_csv(path, n_features, dtype)
    else:
        X, y, qid = parse_checked(str(path), path, lines, n_features, dtype, query_file)
    message = None
    broken = _first_line_with_qid_break(path, qid)
    if broken is not None:
        row, query = broken
        line = data_line_numbers(path)[row]
        message = (f"{path}, line {line}: rows of query {query} are not contiguous (the query "
                   "appeared earlier in another block); they are grouped by qid")
    return X, y, qid, message


def with_columns(X, n_features):
    """``X`` with ``n_features`` columns, the new ones empty (zero)."""
    if not sp.issparse(X):
        if X.shape[1] == n_features:
            return X
        return np.pad(X, ((0, 0), (0, n_features - X.shape[1])))
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))


def dense_if_complete(X, dense="auto"):
    """``X`` as a dense array when ``dense`` asks for it.

    ``"auto"``: a CSR ``X`` whose every row holds every column, in order
    (LETOR and MSLR files), becomes the C-ordered array its values already
    are, a view without a copy; any other ``X`` stays as it is. ``True``:
    always dense (a copy where rows lack values). ``False``: as it is.
    """
    if dense is False or not sp.issparse(X):
        return X
    n_rows, width = X.shape
    complete = (X.format == "csr" and X.nnz == n_rows * width and
                np.all(np.diff(X.indptr) == width))
    if complete:
        columns = np.arange(width, dtype=X.indices.dtype)
        for start in range(0, n_rows, 1 << 16):  # indices in order, a block of rows at a time
            block = X.indices[start * width:min(n_rows, start + (1 << 16)) * width]
            if not np.array_equal(block.reshape(-1, width), np.broadcast_to(
                    columns, (len(block) // max(width, 1), width))):
                complete = False
                break
    if complete:
        return X.data.reshape(n_rows, width)
    if dense is True:
        return X.toarray()
    return X

