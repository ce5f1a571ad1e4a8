"""The document id of each data row of a LETOR file: its comment's
``docid = X``, else the comment's first word, else ``row<N>``; a file with
no comment at all is counted from its bytes instead of read line by line."""

import gzip
import re
from pathlib import Path

import numpy as np

from ._csv import csv_docids, is_csv
from ._text import LetorFormatError, reading

__all__ = ["parse_docid", "read_docids"]


_DOCID = re.compile(r"docid\s*[=:]\s*(\S+)")


def parse_docid(comment, row):
    """The document id in a row's comment: the value of ``docid = X`` (LETOR,
    MSLR) or ``docid:X``, else the comment's first word, else ``"row<row>"``
    (1-based data row of the file) when the row has no comment."""
    match = _DOCID.search(comment)
    if match:
        return match.group(1)
    words = comment.split()
    return words[0] if words else f"row{row}"


def read_docids(path):
    """The document id of every data row (see :func:`parse_docid`).
    Comments are decoded as UTF-8 strictly: a docid that is not valid
    UTF-8 is a :class:`LetorFormatError` with its line (replacement
    characters would give a run documents the data does not have)."""
    if is_csv(path):
        return csv_docids(path)
    rows = _rows_without_comments(path)
    if rows is not None:
        return np.asarray([f"row{row}" for row in range(1, rows + 1)], dtype=object)
    docids = []
    with reading(path), (gzip.open(path, "rb") if Path(path).suffix == ".gz"
                          else open(path, "rb")) as handle:
        for number, raw in enumerate(handle, start=1):
            body, sep, comment = raw.partition(b"#")
            if not body.strip():
                continue
            try:
                text = comment.decode("utf-8")
            except UnicodeDecodeError:
                raise LetorFormatError(path, number, "the comment (docid) is not valid "
                                       "UTF-8") from None
            docids.append(parse_docid(text, len(docids) + 1))
    return np.asarray(docids, dtype=object)


#: bytes that ``bytes.strip`` removes: a line that starts with one may be blank
_BLANK_BYTES = np.frombuffer(b" \t\n\r\x0b\x0c", dtype=np.uint8)
_SCAN_BYTES = 1 << 23


def _rows_without_comments(path):
    """The number of lines of a plain file without a ``#`` anywhere whose
    every line starts with a byte that is not white space (each one a data
    row, whose docid is ``row<N>``); None for any other file, which
    :func:`read_docids` reads line by line. The file is read in chunks
    into one buffer (a mapping would count the whole file in the process's
    memory)."""
    size = Path(path).stat().st_size
    if Path(path).suffix == ".gz" or size == 0:
        return None
    buffer = np.empty(min(_SCAN_BYTES, size), dtype=np.uint8)
    rows, line_start = 0, True
    with reading(path), open(path, "rb") as handle:
        while (size := handle.readinto(buffer)) > 0:
            chunk = buffer[:size]
            if np.any(chunk == ord("#")):
                return None
            ends = np.flatnonzero(chunk == 10)
            starts = ends[ends + 1 < size] + 1
            if line_start:
                starts = np.r_[0, starts]
            if np.isin(chunk[starts], _BLANK_BYTES).any():
                return None
            line_start = len(ends) > 0 and ends[-1] == size - 1
            rows += len(starts)
    return rows
