"""Ranking data as CSV: a header names the columns, one row per document.

The query id and the label columns are found by name (``qid``,
``query_id``, ``query``; ``label``, ``relevance``, ``rel``, ``grade``,
``target``; any case), a ``docid`` column is optional, and every other
column is a feature, named by its header. A file is CSV when its name ends
in ``.csv`` or ``.csv.gz``. Cells are numbers; an empty feature cell, or
``nan``/``NA``, is a missing value (NaN) as ``nan`` is in LETOR text.
Errors name the file, the line and the column. The header must be UTF-8
(a byte-order mark is allowed): a header in another encoding would misname
its columns, so it is refused rather than guessed.

Columns are matched by name, never by position: :func:`align_columns` puts
a CSV's feature columns in the order of the names a model was trained on
(reordered columns score as in order; a missing or unknown name is
refused in one line that names it), and the files of one dataset are
aligned to the first one's header the same way.
"""

import csv
import math

import numpy as np
import scipy.sparse as sp

from ._text import LetorFormatError, open_text, reading, whole_number

__all__ = ["is_csv", "csv_feature_names", "parse_csv", "csv_docids", "csv_data_lines",
           "align_columns", "column_order"]

QID_NAMES = ("qid", "query_id", "queryid", "query")
LABEL_NAMES = ("label", "relevance", "rel", "grade", "target")
DOCID_NAMES = ("docid", "doc_id", "document")
MISSING = ("", "nan", "na")


def is_csv(path):
    name = str(path).lower()
    return name.endswith(".csv") or name.endswith(".csv.gz")


def _rows(path):
    """``(line number, fields)`` of every non-empty line after the header,
    and the header first."""
    with reading(path), open_text(path) as handle:
        reader = csv.reader(handle)
        while True:
            try:
                fields = next(reader)
            except StopIteration:
                return
            except csv.Error as error:
                limit = csv.field_size_limit()
                problem = (f"a cell longer than {limit:,} characters (is it a CSV file?)"
                           if "field limit" in str(error) else f"not CSV: {error}")
                raise LetorFormatError(path, reader.line_num, problem) from None
            if fields and any(field.strip() for field in fields):
                yield reader.line_num, fields


def _layout(path):
    """``(header, qid column, label column, docid column or None, feature
    columns)`` from the header line."""
    try:
        number, header = next(_rows(path))
    except StopIteration:
        raise LetorFormatError(path, None, "the file holds no header and no rows") from None
    header = [name.strip() for name in header]
    if header:
        header[0] = header[0].lstrip("\ufeff")  # a byte-order mark
    if any("\ufffd" in name for name in header):
        raise LetorFormatError(path, number, "the header is not UTF-8 text; save the file as "
                               "UTF-8 (its column names would be misread)")
    seen = {}
    for column, name in enumerate(header):
        if not name:
            raise LetorFormatError(path, number, f"column {column + 1} of the header has no "
                                   "name")
        if name in seen:
            raise LetorFormatError(path, number, f"column {name!r} twice in the header "
                                   f"(columns {seen[name] + 1} and {column + 1})")
        seen[name] = column

    def find(names, what, required=True):
        found = [c for c, name in enumerate(header) if name.lower() in names]
        if len(found) > 1:
            raise LetorFormatError(path, number, f"{len(found)} {what} columns ("
                                   + ", ".join(header[c] for c in found) + "); keep one")
        if not found and required:
            raise LetorFormatError(path, number, f"no {what} column: name one "
                                   + " or ".join(repr(n) for n in names[:3])
                                   + " in the header")
        return found[0] if found else None

    qid, label = find(QID_NAMES, "query id"), find(LABEL_NAMES, "label")
    docid = find(DOCID_NAMES, "docid", required=False)
    features = [c for c in range(len(header)) if c not in (qid, label, docid)]
    if not features:
        raise LetorFormatError(path, number, "no feature columns beside the query id, label "
                               "and docid")
    return header, qid, label, docid, features


def csv_feature_names(path):
    """The feature columns' names, in order."""
    header, _, _, _, features = _layout(path)
    return [header[c] for c in features]


def _label(path, number, token):
    try:
        value = whole_number(path, number, token, "label")
    except LetorFormatError:
        value = -1
    if value < 0:
        raise LetorFormatError(path, number, f"label {token.strip()!r} is not a whole number "
                               "0 or more")
    return value


def _value(path, number, token, name):
    text = token.strip()
    if text.lower() in MISSING:
        return math.nan
    try:
        value = float(text)
    except ValueError:
        raise LetorFormatError(path, number, f"column {name!r}: {token!r} is not a "
                               "number") from None
    if math.isinf(value):
        raise LetorFormatError(path, number, f"column {name!r}: {token!r} is infinite")
    return value


def parse_csv(path, n_features=None, dtype=np.float64):
    """``(X as CSR, y, qid)`` of a CSV file, as :func:`rsrank.reading.datasets.load_letor`
    returns LETOR text's."""
    header, qid_column, label_column, _, features = _layout(path)
    width = len(features)
    if n_features is not None and n_features < width:
        raise LetorFormatError(path, None, f"{width} feature columns, more than n_features="
                               f"{n_features}")
    names = [header[c] for c in features]
    values, labels, qids = [], [], []
    rows = _rows(path)
    next(rows)
    for number, fields in rows:
        if len(fields) != len(header):
            raise LetorFormatError(path, number, f"{len(fields)} fields; the header has "
                                   f"{len(header)}")
        labels.append(_label(path, number, fields[label_column]))
        qids.append(whole_number(path, number, fields[qid_column], "qid"))
        values.append([_value(path, number, fields[c], name)
                       for c, name in zip(features, names)])
    if not labels:
        raise LetorFormatError(path, None, "the file holds no data rows")
    X = np.asarray(values, dtype=dtype).reshape(len(labels), width)
    if n_features is not None and n_features > width:
        X = np.pad(X, ((0, 0), (0, n_features - width)))
    qid = np.asarray(qids, dtype=np.int64)
    return sp.csr_matrix(X), np.asarray(labels, dtype=np.int64), qid


def csv_docids(path):
    """The docid column's values, or ``row<n>`` for the n-th data row."""
    _, _, _, docid, _ = _layout(path)
    rows = _rows(path)
    next(rows)
    return np.asarray([fields[docid].strip() if docid is not None else f"row{n}"
                       for n, (_, fields) in enumerate(rows, start=1)], dtype=object)


def csv_data_lines(path):
    """1-based file line number of every data row (the header and blank
    lines skipped)."""
    rows = _rows(path)
    next(rows, None)
    return [number for number, _ in rows]


def column_order(path, names, what):
    """Where each of ``names`` is among the feature columns of the CSV file
    ``path``: a list of column positions, or a :class:`LetorFormatError`
    that names the missing and the unknown columns (``what``: whose names
    they are, as in "the model's features")."""
    have = csv_feature_names(path)
    position = {name: k for k, name in enumerate(have)}
    missing = [name for name in names if name not in position]
    unknown = [name for name in have if name not in set(names)]
    if missing or unknown:
        parts = []
        if missing:
            parts.append(f"no column {_listed(missing)} of {what}")
        if unknown:
            parts.append(f"column{'s' if len(unknown) > 1 else ''} {_listed(unknown)} "
                         f"{'are' if len(unknown) > 1 else 'is'} not among {what}")
        raise LetorFormatError(path, 1, "; ".join(parts) + ": CSV columns are matched by "
                               "name, so rename or drop them")
    return [position[name] for name in names]


def _listed(names, shown=3):
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(repr(name) for name in names[:shown]) + more


def align_columns(path, X, names, what="the model's features"):
    """``X`` (the rows of the CSV file ``path`` as read, its feature columns
    in the header's order) with its columns in the order of ``names``."""
    order = column_order(path, list(names), what)
    if order == list(range(len(order))) and X.shape[1] == len(order):
        return X
    return X[:, order]
