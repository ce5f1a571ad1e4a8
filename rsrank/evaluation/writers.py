"""Files RSRank writes for other tools: LETOR text, score files and runs.

Every file is written whole or not at all (:func:`rsrank.reading._files.atomic_write_bytes`):
an interrupted write leaves the old file, or none. A gzipped file has no
time stamp or name inside, so the same rows give the same bytes.
"""

import gzip
import io
import re
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..reading._files import atomic_write_bytes, atomic_write_text
from ..reading._queries import group_queries

__all__ = ["run_problem", "letor_lines", "write_letor", "write_lines", "write_scores",
           "write_run", "run_text", "write_qrels", "qrels_text"]


def letor_lines(X, y, qid, *, docids=None, decimals=None):
    """The rows as LETOR lines, ``label qid:Q 1:v 2:v ... [#docid = D]``.

    Zeros are left out (valid SVMlight; LETOR 4.0's sparse style), and so
    are the explicit zeros of a sparse ``X``. ``decimals=None`` writes 17
    significant digits, which read back as the same float64 numbers;
    ``decimals=d`` rounds to ``d`` decimals and drops trailing zeros.
    """
    X = sp.csr_matrix(X)
    y, qid = np.asarray(y), np.asarray(qid)
    if decimals is None:
        number = lambda v: f"{v:.17g}"  # noqa: E731
    else:
        number = lambda v: f"{v:.{decimals}f}".rstrip("0").rstrip(".")  # noqa: E731
    lines = []
    for row in range(X.shape[0]):
        start, stop = X.indptr[row], X.indptr[row + 1]
        values = " ".join(f"{j + 1}:{number(v)}" for j, v in
                          zip(X.indices[start:stop], X.data[start:stop]) if v != 0)
        comment = "" if docids is None else f" #docid = {docids[row]}"
        lines.append(f"{int(y[row])} qid:{int(qid[row])} {values}{comment}\n")
    return lines


def write_letor(path, X, y, qid, *, docids=None, decimals=None):
    """Write the rows as LETOR text (:func:`letor_lines`), gzipped for a
    ``.gz`` path, which :func:`rsrank.load_letor` reads back. The file
    appears atomically."""
    write_lines(path, letor_lines(X, y, qid, docids=docids, decimals=decimals))


def write_lines(path, lines):
    """Write text lines as UTF-8, gzipped (no time stamp, no name) for a
    ``.gz`` path, atomically."""
    text = "".join(lines)
    if Path(path).suffix != ".gz":
        atomic_write_text(path, text)
        return
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0,
                       compresslevel=9) as handle:
        handle.write(text.encode("utf-8"))
    atomic_write_bytes(path, buffer.getvalue())


def write_scores(path, scores):
    """Write one score per line, the input format of LETOR's Eval-Score."""
    scores = np.asarray(scores, dtype=np.float64)
    atomic_write_text(path, "".join(f"{value:.10g}\n" for value in scores))


def run_problem(qid, docids, tag="rsrank"):
    """``(row, why)``: why a TREC run of these rows would be misread, and
    the 0-based row where it shows (None for the tag); None when it would
    not be. A tag or docid that is empty or holds a space (trec_eval splits
    on white space, so the line would have the wrong number of fields), or a
    docid twice in one query (trec_eval refuses the run; ranx keeps one of
    the two)."""
    if not tag or any(c.isspace() for c in tag):
        return None, f"run tag {tag!r} is empty or holds a space; give one word"
    docs = [str(d) for d in docids]
    queries = qid.tolist() if isinstance(qid, np.ndarray) else list(qid)
    # one pass in C over all rows; the row loop below only names the first problem
    if all(docs) and not _SPACE.search("\0".join(docs)) \
            and len(set(zip(queries, docs))) == len(docs):
        return None
    seen = {}
    for row, (q, d) in enumerate(zip(queries, docs)):
        if not d or any(c.isspace() for c in d):
            return row, f"docid {d!r} is empty or holds a space"
        first = seen.setdefault((q, d), row)
        if first != row:
            return row, (f"docid {d!r} of query {q} again (first on row {first + 1}); a run "
                         "needs each document of a query once")
    return None


#: white space as ``str.isspace`` sees it (``re``'s ``\s`` on str patterns)
_SPACE = re.compile(r"\s")


def write_qrels(handle, qid, docids, labels):
    """Write TREC qrels to an open text ``handle``: ``qid 0 docid label``
    per row, in the rows' order (trec_eval's judgments; the docids as
    :func:`write_run` writes them, so the two match)."""
    handle.write(qrels_text(qid, docids, labels))


def qrels_text(qid, docids, labels):
    """The lines of :func:`write_qrels` as one string."""
    labels = np.asarray(labels).astype(np.int64).tolist()
    return "".join(f"{q} 0 {d} {label}\n" for q, d, label in
                   zip(_items(qid), _items(docids), labels))


def write_run(handle, qid, docids, scores, *, tag="rsrank", form="trec", groups=None):
    """Write ranked scores to an open text ``handle``.

    ``form="trec"``: a TREC run, ``qid Q0 docid rank score tag`` per line,
    each query's documents by decreasing score (ties in file order), ranks
    from 1, as trec_eval, pytrec_eval and ranx read it. ``form="tsv"``: a
    header ``qid<TAB>docid<TAB>score`` and the rows in file order. Raises
    ``ValueError`` for rows :func:`run_problem` finds (a TSV run takes any
    tag, and docids with spaces but not tabs or line breaks). ``groups``:
    the rows' :class:`~rsrank.reading._queries.QueryGroups` when already made.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if form not in ("trec", "tsv"):
        raise ValueError(f"run format must be 'trec' or 'tsv', got {form!r}")
    problem = run_problem(qid, [str(d).replace(" ", "_") for d in docids] if form == "tsv"
                          else docids, tag if form == "trec" else "x")
    if problem:
        row, why = problem
        raise ValueError(why if row is None else f"row {row + 1}: {why}")
    if form == "tsv":
        handle.write("qid\tdocid\tscore\n")
        for q, d, v in zip(qid, docids, scores):
            handle.write(f"{q}\t{d}\t{v:.10g}\n")
        return
    handle.write(run_text(qid, docids, scores, tag=tag, groups=groups))


def run_text(qid, docids, scores, *, tag="rsrank", groups=None):
    """The lines of :func:`write_run`'s TREC form as one string (the rows
    unchecked: call :func:`run_problem` first)."""
    scores = np.asarray(scores, dtype=np.float64)
    groups = group_queries(qid if groups is None else groups, n_rows=len(scores))
    query = groups.row_query()
    # by query, then decreasing score; lexsort is stable, so ties stay in file order
    place = np.lexsort((-scores[groups.order], query))
    rows = groups.order[place]
    ranks = (np.arange(len(rows)) - groups.offsets[query] + 1).tolist()
    qids = np.asarray(groups.qids, dtype=object)[query].tolist()
    names = np.asarray(_items(docids), dtype=object)[rows].tolist()
    return "".join(f"{q} Q0 {d} {rank} {value:.10g} {tag}\n" for q, d, rank, value in
                   zip(qids, names, ranks, scores[rows].tolist()))


def _items(values):
    """A sequence as a list of Python objects (NumPy scalars print as these)."""
    return values.tolist() if isinstance(values, np.ndarray) else list(values)
