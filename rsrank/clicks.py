"""Click logs: what a search engine showed and what its users clicked.

A click log is a CSV file with a header, in one of two forms:

* sessions, one row per document shown in a session:
  ``session,qid,docid,position,click`` (position 1 is the top; click 0 or
  1);
* aggregated, one row per document and position of a query:
  ``qid,docid,position,impressions,clicks``.

Other columns are ignored, and the columns may come in any order. Both
forms read as a :class:`ClickLog` of counts per query, document and
position, which is what a position-based model of the users needs; the
sessions form also keeps its sessions. A problem is one line naming the
file, its line and the fix.
"""

import csv
from dataclasses import dataclass

import numpy as np

from ._text import LetorFormatError, open_text, reading
from .propensity import click_grades, click_relevance, estimate_examination, known_examination

__all__ = ["ClickLog", "read_click_log", "feature_rows", "grade_clicks", "GradedClicks",
           "SESSION_COLUMNS", "AGGREGATED_COLUMNS"]

#: the columns of each form of a click log
SESSION_COLUMNS = ("session", "qid", "docid", "position", "click")
AGGREGATED_COLUMNS = ("qid", "docid", "position", "impressions", "clicks")


@dataclass(frozen=True)
class ClickLog:
    """Impressions and clicks per (query, document, position), one entry
    each, in the order first seen; ``sessions`` is the number of sessions
    (None for an aggregated log)."""

    qid: np.ndarray  #: query ids (strings)
    docid: np.ndarray  #: document ids (strings)
    position: np.ndarray  #: 1 is the top
    impressions: np.ndarray
    clicks: np.ndarray
    sessions: object = None

    def __post_init__(self):
        n = len(self.qid)
        if not all(len(a) == n for a in (self.docid, self.position, self.impressions,
                                         self.clicks)):
            raise ValueError("a click log's columns must have one entry per row")
        if np.any(self.clicks > self.impressions):
            raise ValueError("a click log has more clicks than impressions somewhere")

    @classmethod
    def from_sessions(cls, session, qid, docid, position, click):
        """The log of one row per document shown in a session (arrays)."""
        qid, docid = np.asarray(qid).astype(str), np.asarray(docid).astype(str)
        position, click = np.asarray(position, dtype=np.int64), np.asarray(click, dtype=np.int64)
        keys = np.rec.fromarrays([qid, docid, position])
        unique, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # in the order first seen
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        inverse = rank[inverse.ravel()]
        impressions = np.bincount(inverse, minlength=len(order))
        clicks = np.bincount(inverse, weights=click, minlength=len(order)).astype(np.int64)
        unique = unique[order]
        return cls(unique.f0, unique.f1, unique.f2.astype(np.int64), impressions, clicks,
                   int(len(np.unique(np.asarray(session)))))

    @property
    def n_clicks(self):
        return int(self.clicks.sum())

    def click_rate_by_position(self, top_k=None):
        """Clicks over impressions at each position 1 to ``top_k`` (default the
        deepest position)."""
        top_k = int(self.position.max()) if top_k is None else top_k
        shown = np.bincount(self.position, weights=self.impressions, minlength=top_k + 1)
        clicked = np.bincount(self.position, weights=self.clicks, minlength=top_k + 1)
        return np.divide(clicked, shown, out=np.zeros_like(clicked), where=shown > 0)[1:top_k + 1]


def read_click_log(path):
    """The :class:`ClickLog` of a CSV click log in either form (see the
    module's docstring), its header telling which."""
    with open_text(path) as handle, reading(path):
        rows = csv.reader(handle)
        header = next(rows, None)
        if header is None:
            raise LetorFormatError(path, None, "the file is empty: a click log starts with a "
                                   "header, " + ",".join(SESSION_COLUMNS) + " or "
                                   + ",".join(AGGREGATED_COLUMNS))
        names = [name.strip().lstrip("\ufeff").lower() for name in header]
        form = next((columns for columns in (SESSION_COLUMNS, AGGREGATED_COLUMNS)
                     if set(columns) <= set(names)), None)
        if form is None:
            lacking = min((sorted(set(columns) - set(names))
                           for columns in (SESSION_COLUMNS, AGGREGATED_COLUMNS)), key=len)
            raise LetorFormatError(path, 1, f"the header lacks {', '.join(lacking)}: a click log "
                                   "has the columns " + ",".join(SESSION_COLUMNS) + " (one row "
                                   "per document shown in a session) or "
                                   + ",".join(AGGREGATED_COLUMNS))
        where = [names.index(column) for column in form]
        values, lines = [[] for _ in form], []
        for line, row in enumerate(rows, start=2):
            if not row or not "".join(row).strip():
                continue
            if len(row) < len(names):
                raise LetorFormatError(path, line, f"{len(row)} fields where the header has "
                                       f"{len(names)}")
            for column, index, out in zip(form, where, values):
                out.append(_field(path, line, column, row[index].strip()))
            lines.append(line)
    if form == SESSION_COLUMNS:
        return ClickLog.from_sessions(*values)
    qid, docid, position, impressions, clicks = values
    impressions, clicks = (np.asarray(impressions, dtype=np.int64),
                           np.asarray(clicks, dtype=np.int64))
    over = np.flatnonzero(clicks > impressions)
    if len(over):
        raise LetorFormatError(path, lines[int(over[0])], "more clicks than impressions")
    return ClickLog(np.asarray(qid, dtype=str), np.asarray(docid, dtype=str),
                    np.asarray(position, dtype=np.int64), impressions, clicks)


#: what each column holds: a whole number at least this, or text
_LOWEST = {"position": 1, "click": 0, "impressions": 1, "clicks": 0}


def _field(path, line, column, text):
    if not text:
        raise LetorFormatError(path, line, f"the {column} is empty")
    if column not in _LOWEST:
        return text
    try:
        value = int(text)
    except ValueError:
        raise LetorFormatError(path, line, f"{column} {text!r} is not a whole number") from None
    if value < _LOWEST[column] or (column == "click" and value > 1):
        allowed = "0 or 1" if column == "click" else f"at least {_LOWEST[column]}"
        raise LetorFormatError(path, line, f"{column} {value} must be {allowed}")
    return value


def feature_rows(log, qid, docids):
    """The row of the features (their ``qid`` and ``docids``, one per row)
    of every entry of ``log``, joined on the query and the document (a
    document's features may differ between queries). A (query, document)
    the log names but the features lack, or one the features hold twice,
    is one line that says what to give."""
    keys = [f"{q}\x00{d}" for q, d in zip(np.asarray(qid).astype(str),
                                          np.asarray(docids).astype(str))]
    where = {}
    for row, key in enumerate(keys):
        if where.setdefault(key, row) != row:
            q, d = key.split("\x00")
            raise ValueError(f"the features hold document {d!r} of query {q!r} twice (rows "
                             f"{where[key] + 1} and {row + 1}): a click log is joined on query "
                             "and document, so each needs one row")
    wanted = [f"{q}\x00{d}" for q, d in zip(log.qid, log.docid)]
    rows = np.array([where.get(key, -1) for key in wanted], dtype=np.int64)
    lacking = np.flatnonzero(rows < 0)
    if len(lacking):
        q, d = str(log.qid[lacking[0]]), str(log.docid[lacking[0]])
        raise ValueError(f"the click log names {len(np.unique(np.asarray(wanted)[lacking]))} "
                         f"shown documents the features lack, for example document {d!r} of "
                         f"query {q!r}: give each a feature row (# docid = D after its LETOR "
                         "line, or a docid column in CSV)")
    return rows



@dataclass(frozen=True)
class GradedClicks:
    """The documents a click log showed, graded by their clicks with the
    position's bias taken out (:mod:`rsrank.propensity`): ``rows`` index
    the features given, ``y`` are the grades, ``relevance`` the estimated
    click chance when examined, ``examination`` the curve used."""

    rows: np.ndarray
    y: np.ndarray
    relevance: np.ndarray
    examination: object


def grade_clicks(log, rows, X, *, examination=None, propensity=None):
    """Grade the documents of ``log`` (a :class:`ClickLog` whose entry ``i``
    has the features ``X[rows[i]]``, as :func:`feature_rows` finds them).

    The examination curve is ``examination`` (an
    :class:`rsrank.propensity.Examination`, for example the training
    log's when grading the validation log), else the ``propensity`` given
    per position, else estimated from this log and ``X``.
    """
    rows = np.asarray(rows, dtype=np.int64)
    docs, document = np.unique(rows, return_inverse=True)
    entries = (log.position, log.impressions, log.clicks)
    if examination is None:
        if propensity is not None:
            examination = known_examination(propensity, *entries)
        else:
            examination, _ = estimate_examination(_take(X, rows), *entries)
    shown = len(examination.curve)
    if len(log.position) and log.position.max() > shown:
        raise ValueError(f"the log shows documents down to position {log.position.max()}, "
                         f"but the examination curve stops at {shown}")
    relevance = click_relevance(document.ravel(), log.position, log.impressions, log.clicks,
                                np.nan_to_num(examination.curve, nan=1.0))
    return GradedClicks(docs, click_grades(relevance), relevance, examination)


def _take(X, rows):
    return X[rows] if not hasattr(X, "tocsr") else X.tocsr()[rows]
