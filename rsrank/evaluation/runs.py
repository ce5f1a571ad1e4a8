"""Score files and runs read back against the data they score.

Three layouts are read, told apart by the first line:

* **TSV** (``rsrank predict --format tsv``): the header
  ``qid<TAB>docid<TAB>score``, then one row per document, in any order;
* **TREC run** (``rsrank predict --format trec``, trec_eval's input):
  ``qid Q0 docid rank score tag`` per line, in any order;
* **scores**, LETOR's Eval-Score input: one number per line, in the data
  file's row order, nothing else on the line.

A TSV or TREC row is matched to the data row with its qid and docid (the
data's ``#docid = ...`` comments, as :func:`rsrank.reading.datasets.read_docids`
reads them), never by its position: a run sorted by score scores the same
documents. Every data row must get exactly one score, and a run row naming
a document the data lacks, or one twice, is an error with its line.
"""

import math
from pathlib import Path

import numpy as np

from ..reading._text import whole_number
from ..reading.datasets import LetorFormatError, read_lines

__all__ = ["read_scores", "read_qrels", "run_layout", "on_file_queries"]

TSV_HEADER = ["qid", "docid", "score"]


def run_layout(first_line):
    """``"tsv"``, ``"trec"`` or ``"scores"``: the layout a file's first
    non-empty line announces."""
    if first_line.rstrip("\r\n").split("\t") == TSV_HEADER:
        return "tsv"
    fields = first_line.split()
    if len(fields) == 6 and fields[1] == "Q0":
        return "trec"
    return "scores"


def _score(path, number, token):
    try:
        value = float(token)
    except ValueError:
        value = math.nan
    if not (token.isascii() and math.isfinite(value)):
        raise LetorFormatError(path, number, f"score {token!r} is not a finite number")
    return value


def _keyed_rows(path, lines, layout):
    """``{(qid, docid): (score, line)}`` of a TSV or TREC run."""
    rows = {}
    for number, text in lines:
        if layout == "tsv":
            fields = text.rstrip("\r\n").split("\t")
            if len(fields) != 3:
                raise LetorFormatError(path, number, f"{len(fields)} tab-separated fields; "
                                       "a TSV run has qid, docid and score")
            query, docid, token = fields
        else:
            fields = text.split()
            if len(fields) != 6 or fields[1] != "Q0":
                raise LetorFormatError(path, number, "not 'qid Q0 docid rank score tag' "
                                       f"({len(fields)} fields); TREC runs have 6")
            query, _, docid, rank, token, _ = fields
            if not (rank.isascii() and rank.isdigit()):
                raise LetorFormatError(path, number, f"rank {rank!r} is not a whole number")
        if not query or not docid:
            raise LetorFormatError(path, number, "an empty qid or docid")
        key = (query, docid)
        if key in rows:
            raise LetorFormatError(path, number, f"document {docid!r} of query {query} again "
                                   f"(first on line {rows[key][1]})")
        rows[key] = (_score(path, number, token.strip()), number)
    return rows


def read_scores(path, n_rows=None, *, qid=None, docids=None, data=None):
    """The scores of a score file or run, in the data's row order.

    Parameters
    ----------
    path : path-like
        A TSV run, a TREC run or one score per line (see the module).
    n_rows : int, optional
        Number of data rows; a file of scores must have exactly that many.
    qid, docids : array-like, optional
        The data's query ids and document ids, one per row; a TSV or TREC
        run needs both (with ``n_rows`` rows).
    data : path-like, optional
        The data file, named in the messages.

    Raises
    ------
    LetorFormatError
        With the file and line: a malformed line, a score that is not a
        finite number, a run row for a document the data lacks or one seen
        before, data rows left without a score, too many or too few scores.
    """
    if Path(path).is_dir():
        raise LetorFormatError(path, None, "is a directory, not a score file")
    lines = [(number, text) for number, text in read_lines(path, 1 << 16, "score file")
             if text.strip()]
    layout = run_layout(lines[0][1]) if lines else "scores"
    if layout == "scores":
        return _positional(path, lines, n_rows)
    if layout == "tsv":
        lines = lines[1:]
    if qid is None or docids is None:
        raise LetorFormatError(path, None, f"a {layout.upper()} run is matched to the data by "
                               "qid and docid; give the data file it scores")
    rows = _keyed_rows(path, lines, layout)
    where = f"{data}" if data is not None else "the data"
    index = {}
    for row, key in enumerate(zip((str(q) for q in qid), (str(d) for d in docids))):
        if key in index:
            raise LetorFormatError(data if data is not None else path, None, f"document {key[1]!r} of query {key[0]} is on "
                                   f"data rows {index[key] + 1} and {row + 1}: a run cannot "
                                   "tell them apart (give each document its own docid)")
        index[key] = row
    scores = np.full(len(index), np.nan)
    for key, (value, number) in rows.items():
        row = index.get(key)
        if row is None:
            raise LetorFormatError(path, number, f"document {key[1]!r} of query {key[0]} is "
                                   f"not in {where}")
        scores[row] = value
    missing = np.flatnonzero(np.isnan(scores))
    if len(missing):
        q, d = str(qid[missing[0]]), str(docids[missing[0]])
        raise LetorFormatError(path, None, f"no score for {len(missing)} of the {len(index)} "
                               f"documents of {where}, the first document {d!r} of query {q}")
    return scores


def read_qrels(path):
    """TREC qrels, ``qid iteration docid label`` per line (what ``rsrank
    train --out`` writes in ``trec/``), as the data a run is scored on:
    ``(y, qid, docids)`` in file order. Query ids and labels are whole
    numbers, labels 0 or more; a malformed line, or a document judged twice
    in a query, is a :class:`LetorFormatError` with its line."""
    labels, qids, docids, seen = [], [], [], {}
    for number, text in read_lines(path, 1 << 16, "qrels line"):
        fields = text.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise LetorFormatError(path, number, f"{len(fields)} fields; qrels lines are "
                                   "'qid iteration docid label'")
        query, _, docid, label = fields
        qid, grade = whole_number(path, number, query, "qid"), whole_number(path, number,
                                                                           label, "label")
        if grade < 0:
            raise LetorFormatError(path, number, f"label {label} is negative; map such "
                                   "judgments (spam, junk) to 0 first")
        first = seen.setdefault((query, docid), number)
        if first != number:
            raise LetorFormatError(path, number, f"document {docid!r} of query {query} is "
                                   f"judged again (first on line {first})")
        labels.append(grade)
        qids.append(qid)
        docids.append(docid)
    if not qids:
        raise LetorFormatError(path, None, "no judgments")
    return (np.asarray(labels, dtype=np.int64), np.asarray(qids, dtype=np.int64),
            np.asarray(docids, dtype=object))


def _positional(path, lines, n_rows):
    values = []
    for number, text in lines:
        fields = text.split()
        if len(fields) != 1:
            raise LetorFormatError(path, number, f"{len(fields)} fields; a score file has one "
                                   "number per line (or is a TSV run with the header "
                                   "qid<TAB>docid<TAB>score, or a TREC run)")
        values.append(_score(path, number, fields[0]))
        if n_rows is not None and len(values) > n_rows:
            raise LetorFormatError(path, number, f"more scores than the {n_rows} rows")
    if n_rows is not None and len(values) != n_rows:
        raise LetorFormatError(path, None, f"{len(values)} scores for {n_rows} rows")
    return np.asarray(values, dtype=np.float64)


def on_file_queries(values, file_qids, *, run, data):
    """A results directory's per-query values (keyed ``fold:qid``) on the
    queries of the one data file its score files are compared on: keyed by
    qid, from the only fold whose test queries are exactly the file's, or
    every fold when the file holds all their queries, each once (the whole
    collection).
    Returns ``(values, fold)``; ``ValueError`` names ``run`` and ``data``
    when no fold, or more than one, holds exactly those queries."""
    keys = np.asarray(values["qid"]).astype(str)
    folds = np.array([key.rpartition(":")[0] for key in keys])
    qids = np.array([key.rpartition(":")[2] for key in keys])
    wanted = set(np.unique(np.asarray(file_qids).astype(str)))
    if len(set(qids)) == len(qids) and set(qids) == wanted:  # the whole collection
        return {metric: (qids if metric == "qid" else np.asarray(v))
                for metric, v in values.items()}, None
    matching = [fold for fold in dict.fromkeys(folds)
                if set(qids[folds == fold]) == wanted]
    if len(matching) != 1:
        raise ValueError(f"{run}: {'no' if not matching else 'more than one'} fold of the "
                         f"run holds exactly the queries of {data} (folds: "
                         f"{', '.join(dict.fromkeys(folds))}); compare score files with the "
                         "run of the fold whose test file they score")
    keep = folds == matching[0]
    return ({metric: (qids[keep] if metric == "qid" else np.asarray(v)[keep])
             for metric, v in values.items()}, matching[0] if not keep.all() else None)
