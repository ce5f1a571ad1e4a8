"""Click logs, read as a trust boundary.

A click log is a CSV file with a header, in one of two forms:

* sessions, one row per document shown in a session:
  ``session,qid,docid,position,click`` (position 1 is the top; click 0 or
  1);
* aggregated, one row per document and position of a query:
  ``qid,docid,position,impressions,clicks``.

Other columns are ignored, and the columns may come in any order. Both
forms read as a :class:`ClickLog` of counts per query, document and
position; the sessions form also keeps, per entry, the sessions that
reached it (no click above it), and each click with what its session left
unclicked.

Nothing in a log is trusted. Every value is checked before anything is
computed from it, and a log breaks no rule silently: a line longer than
:data:`MAX_LINE` characters, an id longer than :data:`MAX_ID`, empty, with
a control character or reading as a missing value, a position that is not
a whole number from 1 to :data:`MAX_POSITION`, a click other than 0 or 1,
impressions above :data:`MAX_IMPRESSIONS`, more clicks than impressions, a
session of two queries, two documents at one position of a session, a
document twice in one session and a repeated row are each one line that
names the file, the line and what to do (a file is read by
:func:`rsrank.clicks.reading.read_click_log`). Arrays given to a fit
(:func:`impression_log`) pass the same checks, named by their row. The
memory a log takes grows with its rows, never with one value.
"""

import hashlib
import re
from dataclasses import dataclass

import numpy as np


__all__ = ["ClickLog", "SessionClicks", "SessionRows", "Ids", "LogError", "impression_log",
           "id_problem", "first_bad_id", "checked_numbers", "allowed_values", "NUMBER_BOUNDS", "NUMBER_TYPES", "DIGITS", "BATCH",
           "check_log_arguments", "check_log", "checked_rows", "checked_log", "document_keys", "SESSION_COLUMNS",
           "AGGREGATED_COLUMNS", "MAX_POSITION", "MAX_IMPRESSIONS", "MAX_ID", "MAX_LINE"]

#: the columns of each form of a click log
SESSION_COLUMNS = ("session", "qid", "docid", "position", "click")
AGGREGATED_COLUMNS = ("qid", "docid", "position", "impressions", "clicks")

#: the deepest position a log may show (1 is the top): Elasticsearch's and
#: OpenSearch's ``index.max_result_window``, 10,000 by default, bounds how
#: deep any of their requests pages; a deeper position is a damaged value
MAX_POSITION = 10_000
#: the most impressions (and clicks) one row of an aggregated log may count
MAX_IMPRESSIONS = 2**31 - 1
#: the longest session, query or document id, in characters
MAX_ID = 2_048
#: the longest line of a click log file, in characters (the feature
#: readers' bound; a file without line breaks is refused, not read whole)
MAX_LINE = 131_072
#: ids that read as a missing value (compared without case)
MISSING_IDS = ("", "nan", "na", "n/a", "null", "none")

#: per number column, its smallest and largest value
NUMBER_BOUNDS = {"position": (1, MAX_POSITION), "click": (0, 1),
           "impressions": (1, MAX_IMPRESSIONS), "clicks": (0, MAX_IMPRESSIONS)}
#: per number column, the narrowest type its values fit (a log's rows are
#: kept in it: the memory of a long log is its rows times a few bytes)
NUMBER_TYPES = {"position": np.int16, "click": np.int8, "impressions": np.int64,
                "clicks": np.int64}
_WHAT = {"session": "session id", "qid": "query id", "docid": "document id"}
DIGITS = re.compile(r"[0-9]{1,15}(?:\n[0-9]{1,15})*")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\ufffd]")
#: rows read at a time
BATCH = 1 << 16


class LogError(ValueError):
    """A row of a click log breaks a rule: ``row`` (0-based, among the
    log's rows) and the ``problem``, said without the row's place."""

    def __init__(self, row, problem):
        self.row, self.problem = int(row), problem
        super().__init__(problem)


@dataclass(frozen=True)
class Ids:
    """A column of ids as ``names`` (distinct, Python strings) and each
    row's ``codes`` into them: a long id is stored once, not once a row."""

    names: np.ndarray  #: object array of str
    codes: np.ndarray  #: int64, one per row

    @classmethod
    def of(cls, values):
        """The ids of an array (numbers or text) or of :class:`Ids`."""
        if isinstance(values, Ids):
            return values
        values = np.asarray(values)
        if values.ndim != 1:
            raise ValueError(f"an id column must be one id per row, got shape {values.shape}")
        try:
            distinct, codes = np.unique(values, return_inverse=True)
        except TypeError:  # mixed types in an object array: read each as text
            distinct, codes = np.unique(np.array([str(v) for v in values], dtype=object),
                                        return_inverse=True)
        names = np.empty(len(distinct), dtype=object)
        names[:] = [str(value) for value in distinct]
        return cls(names, codes.ravel().astype(np.int64))

    def __len__(self):
        return len(self.codes)

    def take(self, rows):
        """Each of ``rows``' id (an object array of str)."""
        return self.names[self.codes[rows]]


def id_problem(column, name):
    """Why ``name`` cannot be an id of ``column``, or None."""
    what = _WHAT[column]
    if name.strip().lower() in MISSING_IDS:
        return (f"the {what} is {'empty' if not name.strip() else repr(name)}, a missing "
                f"value: every row needs its {what}")
    if len(name) > MAX_ID:
        return (f"the {what} is {len(name):,} characters long, more than {MAX_ID:,}: is the "
                "column misplaced or the file damaged?")
    bad = _CONTROL.search(name)
    if bad:
        char = bad.group()
        kind = "not UTF-8 text" if char == "\ufffd" else f"the control character {char!r}"
        return f"the {what} {name[:40]!r} holds {kind}: ids are printable text"
    return None


def first_bad_id(names):
    """The index of the first of ``names`` (a list of str) that
    :func:`id_problem` refuses, or None; each of its checks taken over all
    the names at once."""
    n = len(names)
    if not n:
        return None
    lengths = np.fromiter(map(len, names), np.int64, n)
    bad = lengths > MAX_ID
    bad |= np.fromiter(map(_MISSING.__contains__, map(str.lower, map(str.strip, names))),
                       bool, n)
    control = _CONTROL.search("".join(names))
    if control is not None:  # the name that holds the first such character
        bad[np.searchsorted(np.cumsum(lengths), control.start(), side="right")] = True
    return int(np.argmax(bad)) if bad.any() else None


_MISSING = frozenset(MISSING_IDS)


def _checked_ids(column, ids):
    """Refuse the first of ``ids.names`` that cannot be an id of ``column``
    (a :class:`LogError` at the first row that holds it)."""
    names = list(ids.names)
    index = first_bad_id(names)
    if index is not None:
        raise LogError(int(np.flatnonzero(ids.codes == index)[0]), id_problem(column,
                                                                               names[index]))
    return ids


def checked_numbers(column, values):
    """``values`` as int64 within the column's bounds, or a
    :class:`LogError` at the first row that is not (not a number, not
    whole, not finite, out of bounds)."""
    lowest, highest = NUMBER_BOUNDS[column]
    values = np.asarray(values)
    if values.ndim != 1:
        raise ValueError(f"{column} must be one value per row, got shape {values.shape}")
    if values.dtype.kind not in "iubf":
        try:
            values = values.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{column} must hold numbers, got {values.dtype}") from None
    with np.errstate(invalid="ignore"):
        bad = (values < lowest) | (values > highest)
        if values.dtype.kind == "f":
            bad |= ~np.isfinite(values) | (values != np.round(values))
    if np.any(bad):
        row = int(np.flatnonzero(bad)[0])
        raise LogError(row, f"{column} {values[row].item()} is not {allowed_values(column)}")
    return values.astype(np.int64)


def allowed_values(column):
    lowest, highest = NUMBER_BOUNDS[column]
    if column == "click":
        return "0 or 1"
    if column == "position":
        return (f"a whole number from 1 (the top) to {highest:,}, the deepest position a "
                "search engine pages to")
    return f"a whole number from {lowest} to {highest:,}"


def _groups(*columns):
    """Rows equal in every column form a group: ``(first, group)``, the
    first row of each group (groups numbered in the order first seen) and
    each row's group."""
    n = len(columns[0])
    order = np.lexsort(columns[::-1])  # stable: a group's rows in row order
    new = np.zeros(n, dtype=bool)
    if n:
        new[0] = True
        for column in columns:  # one sorted copy at a time
            ordered = column[order]
            new[1:] |= ordered[1:] != ordered[:-1]
            del ordered
    index = np.int32 if n <= np.iinfo(np.int32).max else np.int64  # rows and groups fit it
    first = order[new].astype(index)
    seen = np.argsort(first, kind="stable")
    rank = np.empty(len(first), dtype=index)
    rank[seen] = np.arange(len(first), dtype=index)
    group = np.cumsum(new, dtype=index)
    del new
    group -= 1
    out = np.empty(n, dtype=index)
    out[order] = rank[group]
    return first[seen], out


def _first_repeat(*columns):
    """``(row, earlier)``: the first row equal in every column to an
    earlier row, and that row; None if there is none."""
    first, group = _groups(*columns)
    repeats = np.flatnonzero(first[group] != np.arange(len(group)))
    if not len(repeats):
        return None
    return int(repeats[0]), int(first[group[repeats[0]]])


def check_log(form, columns, where, *, repeats=False):
    """Refuse a log whose rows break its form's rules together (see the
    module's docstring): ``columns`` maps each column of ``form`` to its
    checked values (:class:`Ids` or int64 arrays); ``where(row)`` names a
    row (``"line 7"``). ``repeats``: an aggregated log's rows may repeat a
    document and position (each row one impression). Raises
    :class:`LogError`."""
    qid, docid, position = columns["qid"], columns["docid"], columns["position"]
    if form == AGGREGATED_COLUMNS:
        over = np.flatnonzero(columns["clicks"] > columns["impressions"])
        if len(over):
            raise LogError(over[0], "more clicks than impressions")
        total = float(columns["impressions"].astype(np.float64).sum())
        if total > 2**53:
            raise LogError(len(position) - 1, f"the impressions add up to {total:.3g}, more "
                           "than 2^53, beyond what counts exactly")
        repeat = None if repeats else _first_repeat(qid.codes, docid.codes, position)
        if repeat is not None:
            row, earlier = repeat
            raise LogError(row, f"repeats {where(earlier)}: query {qid.take(row)!r}, document "
                           f"{docid.take(row)!r} at position {position[row]}; an aggregated "
                           "log has one row per document and position of a query, so add "
                           "the repeats' impressions and clicks into one row")
        return
    session = columns["session"]
    first, group = _groups(session.codes)
    other = first[group]
    mixed = np.flatnonzero(qid.codes != qid.codes[other])
    if len(mixed):
        row = int(mixed[0])
        raise LogError(row, f"session {session.take(row)!r} is of query "
                       f"{qid.take(other[row])!r} at {where(other[row])} and of query "
                       f"{qid.take(row)!r} here: a session shows one query's results, so "
                       "give every session its own id")
    repeat = _first_repeat(session.codes, position)
    if repeat is not None:
        row, earlier = repeat
        if docid.codes[row] == docid.codes[earlier]:
            raise LogError(row, f"repeats {where(earlier)} (session {session.take(row)!r}, "
                           f"document {docid.take(row)!r}, position {position[row]}): a "
                           "sessions log has one row per document a session showed; remove "
                           "the repeated row")
        raise LogError(row, f"session {session.take(row)!r} shows document "
                       f"{docid.take(earlier)!r} at position {position[row]} at "
                       f"{where(earlier)} and document {docid.take(row)!r} here: a session "
                       "shows one document per position (an aggregated log has the columns "
                       + ",".join(AGGREGATED_COLUMNS) + ")")
    repeat = _first_repeat(session.codes, docid.codes)
    if repeat is not None:
        row, earlier = repeat
        raise LogError(row, f"session {session.take(row)!r} shows document "
                       f"{docid.take(row)!r} at position {position[earlier]} at "
                       f"{where(earlier)} and again at position {position[row]}: a session "
                       "shows a document once")


@dataclass(frozen=True)
class ClickLog:
    """Impressions and clicks per (query, document, position), one entry
    each, in the order first seen; ``sessions`` is the number of sessions
    (None for an aggregated log)."""

    qid: np.ndarray  #: query ids (str, in an object array)
    docid: np.ndarray  #: document ids (str, in an object array)
    position: np.ndarray  #: 1 is the top
    impressions: np.ndarray
    clicks: np.ndarray
    sessions: object = None
    #: per entry, the sessions in which no document above it drew a click
    #: (those a user reading down to the first click reached; sessions form)
    reached: object = None
    #: the sessions with a click, and those among them with two or more
    clicked_sessions: int = 0
    repeat_sessions: int = 0
    #: the clicks of the sessions, each with the documents its session showed
    #: unclicked (a :class:`SessionClicks`; sessions form)
    session_clicks: object = None
    #: the rows of the sessions as shown: per row its session's code, its
    #: entry and its click (a :class:`SessionRows`; sessions form)
    session_rows: object = None

    def __post_init__(self):
        n = len(self.qid)
        if not all(len(a) == n for a in (self.docid, self.position, self.impressions,
                                         self.clicks)):
            raise ValueError("a click log's columns must have one entry per row")
        if np.any(self.clicks > self.impressions):
            raise ValueError("a click log has more clicks than impressions somewhere")
        if n and (self.position.min() < 1 or self.position.max() > MAX_POSITION):
            raise ValueError(f"a click log's positions must be from 1 to {MAX_POSITION:,}")

    @classmethod
    def from_sessions(cls, session, qid, docid, position, click):
        """The log of one row per document shown in a session (arrays or
        :class:`Ids`; checked by :func:`check_log` before)."""
        click = _narrow(click, "click")
        position = _narrow(position, "position")
        session = _narrow(Ids.of(session).codes, None)
        count = int(session.max()) + 1 if len(session) else 0
        clicked = click > 0
        first = np.full(count, MAX_POSITION + 1, dtype=position.dtype)
        np.minimum.at(first, session[clicked], position[clicked])
        reached = position <= first[session]
        del first
        per_session = np.bincount(session[clicked], minlength=count)
        log, entry = cls._summed(qid, docid, position, None, clicked, reached)
        del reached
        entry = _narrow(entry, None)
        return cls(log.qid, log.docid, log.position, log.impressions, log.clicks, count,
                   log.reached, int(np.count_nonzero(per_session)),
                   int(np.count_nonzero(per_session > 1)),
                   SessionClicks.of(session, entry, position, click, len(log.qid)),
                   SessionRows(session, entry, click))

    @classmethod
    def from_counts(cls, qid, docid, position, impressions, clicks, reached=None):
        """The log of rows of counts, summed per (query, document, position),
        in the order first seen."""
        return cls._summed(qid, docid, position, impressions, clicks, reached)[0]

    @classmethod
    def _summed(cls, qid, docid, position, impressions, clicks, reached):
        """:meth:`from_counts`'s log and the entry of each row (``impressions``
        None: one a row; 0/1 counts may come as booleans)."""
        position = np.asarray(position)
        qid, docid = Ids.of(qid), Ids.of(docid)
        rows, inverse = _groups(qid.codes, docid.codes, position)
        shown = (np.bincount(inverse, minlength=len(rows)).astype(np.int64) if impressions is None
                 else _sum_by(inverse, impressions, len(rows)))
        clicked, reached = (_sum_by(inverse, values, len(rows)) for values in (clicks, reached))
        return cls(qid.take(rows), docid.take(rows), position[rows].astype(np.int64), shown,
                   clicked, reached=reached), inverse

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


def _narrow(values, column):
    """A sessions log's per-row ``values`` in the narrowest type they fit:
    a number column's :data:`NUMBER_TYPES` (within its bounds, else a
    ValueError),
    codes (``column`` None) int32 while they fit it."""
    values = np.asarray(values)
    if column is not None:
        lowest, highest = NUMBER_BOUNDS[column]
        if len(values) and (values.min() < lowest or values.max() > highest):
            raise ValueError(f"a click log's {column} must be {allowed_values(column)}")
        return values.astype(NUMBER_TYPES[column], copy=False)
    fits = not len(values) or int(values.max()) <= np.iinfo(np.int32).max
    return values.astype(np.int32 if fits else np.int64, copy=False)


def _sum_by(group, values, n):
    """Per group (0 to ``n`` - 1), the sum of ``values`` over its rows
    (int64; None for None), counting booleans without a float copy."""
    if values is None:
        return None
    values = np.asarray(values)
    if values.dtype == bool:
        return np.bincount(group[values], minlength=n).astype(np.int64)
    return np.bincount(group, weights=values, minlength=n).astype(np.int64)


@dataclass(frozen=True)
class SessionClicks:
    """The clicks of a sessions log, each with the documents its session
    showed and left unclicked: click ``i`` is of log entry ``entry[i]``, in
    ``count[i]`` sessions that left exactly the entries
    ``unclicked[offsets[i]:offsets[i + 1]]`` (in position order) unclicked.
    Identical (click, unclicked documents) of different sessions are one,
    counted."""

    entry: np.ndarray
    count: np.ndarray
    offsets: np.ndarray
    unclicked: np.ndarray

    @classmethod
    def of(cls, session, entry, position, click, n_entries):
        """The clicks of rows with their ``session`` codes (0 to S - 1),
        log ``entry``, ``position`` and ``click``."""
        order = np.lexsort((position, session))
        session, entry, click = session[order], entry[order], click[order]
        n_sessions = int(session.max()) + 1 if len(session) else 0
        # a session's unclicked documents, named by a sum of random 64-bit codes
        # of their entries (two different sets share a name with chance 2^-64)
        codes = np.random.default_rng(0).integers(1, 2**63, size=max(n_entries, 1),
                                                  dtype=np.uint64)
        left = click == 0
        name = np.zeros(n_sessions, dtype=np.uint64)
        np.add.at(name, session[left], codes[entry[left]])
        clicked = np.flatnonzero(click > 0)
        keys = np.stack([entry[clicked].astype(np.uint64), name[session[clicked]]], axis=1)
        _, first, count = np.unique(keys, axis=0, return_index=True, return_counts=True)
        seen = np.argsort(first)  # in the order of the sessions
        first, count = first[seen], count[seen].astype(np.int64)
        held = session[clicked[first]]
        # each kept click's session: its unclicked rows (sorted by session, position)
        unclicked_session = session[left]
        start = np.searchsorted(unclicked_session, held)
        stop = np.searchsorted(unclicked_session, held, side="right")
        sizes = stop - start
        offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
        take = np.repeat(start - offsets[:-1], sizes) + np.arange(offsets[-1])
        return cls(entry[clicked[first]], count, offsets, entry[left][take])


@dataclass(frozen=True)
class SessionRows:
    """The rows of a sessions log as they were shown: row ``i`` is log
    entry ``entry[i]`` in session ``session[i]`` (codes 0 to S - 1), with
    its ``click``."""

    session: np.ndarray
    entry: np.ndarray
    click: np.ndarray


def check_log_arguments(position, impressions, propensity, session):
    """Refuse the arguments of a click log that do not go together:
    ``impressions``, ``propensity`` or ``session`` without ``position``,
    and ``session`` with ``impressions``."""
    if position is None and not (impressions is None and propensity is None
                                 and session is None):
        raise ValueError("impressions, propensity and session describe a click log: give "
                         "position too (the position of each row, 1 the top)")
    if session is not None and impressions is not None:
        raise ValueError("a row of a session is one impression: give session or impressions, "
                         "not both")


def checked_rows(n, clicks, qid, position, impressions=None, session=None, docid=None, *,
                 first_row=0):
    """The columns of a click log given as arrays of ``n`` rows (one row
    per impression, or with ``impressions`` per document and position;
    ``docid`` each row's document, default its row), checked one by one as
    a log file's are: ``(form, columns)`` for :func:`check_log` and
    :class:`ClickLog`. A bad value is a ``ValueError`` that names its row
    (counted from ``first_row``: a partition's place in the whole log)."""
    try:
        return _checked_rows(n, clicks, qid, position, impressions, session, docid)
    except LogError as error:
        raise ValueError(f"row {first_row + error.row} of the click log: "
                         f"{error.problem}") from None


def _checked_rows(n, clicks, qid, position, impressions, session, docid):
    check_log_arguments(position, impressions, None, session)
    given = {"clicks": clicks, "qid": qid, "position": position}
    if impressions is not None:
        given["impressions"] = impressions
    if session is not None:
        given["session"] = session
    for name, values in given.items():
        shape = np.shape(values)
        if shape != (n,):
            raise ValueError(f"{name} must have one entry per row of X ({n}), got shape "
                             f"{shape}")
    columns = {"position": checked_numbers("position", position),
               "qid": _checked_ids("qid", Ids.of(qid)),
               "docid": Ids.of(np.arange(n) if docid is None else docid)}
    if session is not None:
        columns["session"] = _checked_ids("session", Ids.of(session))
        columns["click"] = checked_numbers("click", clicks)
        return SESSION_COLUMNS, columns
    if impressions is None:
        columns["impressions"] = np.ones(n, dtype=np.int64)
        columns["clicks"] = checked_numbers("click", clicks)
    else:
        columns["impressions"] = checked_numbers("impressions", impressions)
        columns["clicks"] = checked_numbers("clicks", clicks)
    return AGGREGATED_COLUMNS, columns


def checked_log(form, columns, *, repeats=False):
    """The :class:`ClickLog` of :func:`checked_rows`' columns, checked
    together by :func:`check_log` (a bad row named by its index)."""
    try:
        check_log(form, columns, lambda row: f"row {row}", repeats=repeats)
    except LogError as error:
        raise ValueError(f"row {error.row} of the click log: {error.problem}") from None
    values = [columns[column] for column in form]
    if form == SESSION_COLUMNS:
        return ClickLog.from_sessions(*values)
    return ClickLog.from_counts(*values)


def impression_log(X, clicks, qid, position, impressions=None, session=None):
    """The :class:`ClickLog` of one row per impression (LightGBM's layout:
    ``X`` the shown document's features, ``clicks`` 0 or 1, ``qid``,
    ``position`` with 1 the top; with ``session``, each row's session, as
    a sessions log has it), or of one row per document and position with
    ``impressions`` given (``clicks`` then counts); and for each of its
    entries the first row of its document. A query's rows with the same
    features are one document. Every value is checked as a log file's
    are (see the module's docstring), a bad one named by its row."""
    n = X.shape[0]
    form, columns = checked_rows(n, clicks, qid, position, impressions, session)
    keys = document_keys(X, columns["qid"].take(np.arange(n)))
    _, first, document = np.unique(keys, return_index=True, return_inverse=True)
    columns["docid"] = Ids.of(first[document.ravel()])
    log = checked_log(form, columns, repeats=session is None and impressions is None)
    return log, log.docid.astype(np.int64)


def document_keys(X, qid):
    """A key per row naming its document: its query and a digest of its
    features as float64 (the same in every process, so that a log split
    across workers joins on it)."""
    qid = [str(q) for q in np.asarray(qid)]
    if hasattr(X, "tocsr"):
        X = X.tocsr()
        rows = (X.indices[a:b].astype(np.int64).tobytes()
                + X.data[a:b].astype(np.float64).tobytes()
                for a, b in zip(X.indptr[:-1], X.indptr[1:]))
    else:
        rows = (row.tobytes() for row in np.ascontiguousarray(np.asarray(X, dtype=np.float64)))
    keys = np.empty(len(qid), dtype=object)  # a long query id is not padded to every row
    keys[:] = [f"{q}\x00{hashlib.blake2b(row, digest_size=16).hexdigest()}"
               for q, row in zip(qid, rows)]
    return keys
