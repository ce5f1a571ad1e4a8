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
sessions form also keeps, per entry, the sessions that reached it (no
click above it), which a cascade model needs. A problem is one line
naming the file, its line and the fix.

:func:`grade_clicks` reads a log with the position's bias taken out
(:mod:`rsrank.propensity`): a position-based sessions log as its session
lists (each click above what its session left unclicked, weighted by the
inverse of its position's examination, :func:`session_lists`), a
cascade's log or counts as the shown documents graded by their clicks;
:func:`load_click_fold` makes a fold that ``rsrank train --clicks`` trains
on.
"""

import csv
import hashlib
import io
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from ._text import LetorFormatError, open_text, reading
from .datasets import find_folds, load_files, split_file
from .layouts import held_out_queries
from .propensity import (CascadeClicks, cascade_examination, click_grades,
                         estimate_examination)
from .querydata import QueryData

__all__ = ["ClickLog", "SessionClicks", "read_click_log", "feature_rows", "grade_clicks",
           "check_log_arguments", "click_preferences",
           "GradedClicks", "session_lists", "MAX_CLICK_WEIGHT",
           "load_click_fold", "load_click_folds", "has_click_logs", "CLICK_FILES",
           "impression_log", "document_keys", "graded_eval_set",
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
    #: per entry, the sessions in which no document above it drew a click
    #: (those a user reading down to the first click reached; sessions form)
    reached: object = None
    #: the sessions with a click, and those among them with two or more
    clicked_sessions: int = 0
    repeat_sessions: int = 0
    #: the clicks of the sessions, each with the documents its session showed
    #: unclicked (a :class:`SessionClicks`; sessions form)
    session_clicks: object = None

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
        click = np.asarray(click, dtype=np.int64)
        position = np.asarray(position, dtype=np.int64)
        _, session = np.unique(np.asarray(session), return_inverse=True)
        session = session.ravel()
        count = int(session.max()) + 1 if len(session) else 0
        first = np.full(count, np.iinfo(np.int64).max)
        np.minimum.at(first, session, np.where(click > 0, position, np.iinfo(np.int64).max))
        reached = (position <= first[session]).astype(np.int64)
        per_session = np.bincount(session, weights=click, minlength=count)
        log, entry = cls._summed(qid, docid, position, np.ones_like(click), click, reached)
        return cls(log.qid, log.docid, log.position, log.impressions, log.clicks, count,
                   log.reached, int(np.count_nonzero(per_session)),
                   int(np.count_nonzero(per_session > 1)),
                   SessionClicks.of(session, entry, position, click, len(log.qid)))

    @classmethod
    def from_counts(cls, qid, docid, position, impressions, clicks, reached=None):
        """The log of rows of counts, summed per (query, document, position),
        in the order first seen."""
        return cls._summed(qid, docid, position, impressions, clicks, reached)[0]

    @classmethod
    def _summed(cls, qid, docid, position, impressions, clicks, reached):
        """:meth:`from_counts`'s log and the entry of each row."""
        position = np.asarray(position, dtype=np.int64)
        queries, q = np.unique(np.asarray(qid).astype(str), return_inverse=True)
        documents, d = np.unique(np.asarray(docid).astype(str), return_inverse=True)
        key = (q.ravel() * len(documents) + d.ravel()) * (int(position.max(initial=0)) + 1)
        _, first, inverse = np.unique(key + position, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")  # in the order first seen
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        inverse = rank[inverse.ravel()]
        total = [None if values is None else
                 np.bincount(inverse, weights=values, minlength=len(order)).astype(np.int64)
                 for values in (impressions, clicks, reached)]
        rows = first[order]
        return cls(queries[q.ravel()[rows]], documents[d.ravel()[rows]], position[rows],
                   *total[:2], reached=total[2]), inverse

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


def read_click_log(path):
    """The :class:`ClickLog` of a CSV click log in either form (see the
    module's docstring), its header telling which."""
    with open_text(path) as handle, reading(path):
        text = handle.read()
        rows = iter(csv.reader(io.StringIO(text)))
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
        values = _fast_columns(text, form, where, len(names))
        kept, lines = [], []
        for line, row in enumerate(rows if values is None else (), start=2):
            if len(row) < len(names):
                if not row or not "".join(row).strip():
                    continue
                raise LetorFormatError(path, line, f"{len(row)} fields where the header has "
                                       f"{len(names)}")
            kept.append(row)
            lines.append(line)
    if values is None:
        values = _columns(path, form, where, kept, lines)
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


def _fast_columns(text, form, where, width):
    """The columns of a well-formed log without quotes, read by NumPy
    (several times faster than row by row); None for any other, which the
    rows then read one by one, naming the first bad field."""
    if '"' in text:
        return None
    lines = [line for line in text.splitlines()[1:] if line.strip()]
    if not lines:
        return None
    try:
        table = np.loadtxt(lines, delimiter=",", dtype=str, comments=None, ndmin=2)
    except ValueError:
        return None
    if table.shape[1] != width:
        return None
    values = _well_formed(form, [np.char.strip(table[:, index]) for index in where])
    if values is not None and form == AGGREGATED_COLUMNS and np.any(values[4] > values[3]):
        return None  # read row by row, to name the line
    return values


def _columns(path, form, where, rows, lines):
    """The columns of ``form`` of the rows, numbers as int64 arrays: at
    once where every value is well formed, else field by field to name
    the first bad one."""
    values = _well_formed(form, [[row[index].strip() for row in rows] for index in where])
    if values is not None:
        return values
    for line, row in zip(lines, rows):  # the first bad field, named
        for column, index in zip(form, where):
            _field(path, line, column, row[index].strip())
    raise LetorFormatError(path, None, "a value does not read as its column's")  # unreachable


def _well_formed(form, texts):
    """Each column's texts (stripped) as its values, numbers as int64
    arrays within their bounds; None if any value is not (empty, not a
    whole number, out of bounds)."""
    values = []
    for column, column_texts in zip(form, texts):
        if column not in _LOWEST:
            if not all(len(text) for text in column_texts):
                return None
            values.append(column_texts)
            continue
        try:
            numbers = np.array(column_texts, dtype=np.int64)
        except (ValueError, OverflowError):
            return None
        if len(numbers) and (numbers.min() < _LOWEST[column] or
                             (column == "click" and numbers.max() > 1)):
            return None
        values.append(numbers)
    return values


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
    click chance when examined (per document, in the order of their rows),
    ``examination`` the curve found in this log (None when graded by
    another log's) and ``model`` the classes of click chance that graded
    them.

    A sessions log of a position-based model is not graded but read as its
    sessions' clicks (:func:`session_lists`): then ``rows`` repeat, ``lists``
    names each row's list (one per click, the clicked document above those
    its session left unclicked) and ``list_weight`` weighs it."""

    rows: np.ndarray
    y: np.ndarray
    relevance: np.ndarray
    examination: object
    model: object
    lists: object = None
    list_weight: object = None

    def queries(self, X, qid):
        """``(X, y, qid, query_weight)`` to validate on, from the features
        ``X`` and queries ``qid`` the rows index: the graded documents of
        each query (``query_weight`` None), or the session lists, each a
        query of its own."""
        if self.lists is None:
            return X[self.rows], self.y, np.asarray(qid)[self.rows], None
        return X[self.rows], self.y, self.lists, self.list_weight

    def training(self, X, qid):
        """``(X, y, qid, options)`` to train on, ``options`` those of
        :class:`~rsrank.querydata.QueryData`: the graded documents of each
        query (no options), or the documents of the session lists with
        their pairs as ``preferences`` (:func:`click_preferences`), ``y``
        1 on a document clicked in some session."""
        rows, y, preferences = self.preferred()
        options = {} if preferences is None else {"preferences": preferences}
        return X[rows], y, np.asarray(qid)[rows], options

    def preferred(self):
        """``(rows, y, preferences)`` of :meth:`training`: the rows to train
        on, their labels, and the preferences (``better, worse, weight``,
        indices into those rows) or None."""
        if self.lists is None:
            return self.rows, self.y, None
        rows, *preferences = click_preferences(self.rows, self.y, self.lists, self.list_weight)
        y = np.zeros(len(rows), dtype=np.int64)
        y[preferences[0]] = 1
        return rows, y, tuple(preferences)

    def take(self, keep):
        """These clicks with only the rows ``keep`` (a boolean per row,
        whole lists: the same on every row of a list)."""
        keep = np.asarray(keep, dtype=bool)
        if self.lists is None:
            return replace(self, rows=self.rows[keep], y=self.y[keep])
        _, lists = np.unique(self.lists[keep], return_inverse=True)
        return replace(self, rows=self.rows[keep], y=self.y[keep], lists=lists.ravel(),
                       list_weight=self.list_weight[keep])


def click_preferences(rows, y, lists, weight):
    """The pairs of session lists (:func:`session_lists`'s ``rows, y,
    lists, weight``, the lists numbered from 0 in order) summed over the
    lists: ``(documents, better, worse, weight)``, the distinct rows and per
    pair of them (indices into ``documents``) the summed weight of the lists
    that put ``better`` above ``worse``. With the unit pair weight the
    summed loss is the lists' (a pair's loss is the same in every list that
    holds it), from one query per set of documents instead of a list per
    click and session; with swap weights, the two documents' places are
    those among all the documents of their query instead of in each
    list."""
    documents, index = np.unique(rows, return_inverse=True)
    index = index.ravel()
    top = np.asarray(y) == 1
    better = index[top][np.asarray(lists)[~top]]
    key = better * len(documents) + index[~top]
    pairs, where = np.unique(key, return_inverse=True)
    summed = np.bincount(where.ravel(), weights=np.asarray(weight, dtype=np.float64)[~top],
                         minlength=len(pairs))
    return documents, pairs // len(documents), pairs % len(documents), summed


#: the share of clicked sessions with two or more clicks at or below which
#: a log is read as a cascade's (users leave after their first click)
CASCADE_REPEATS = 0.01


def reads_to_first_click(log):
    """Whether a sessions log looks like the cascade model's: users click at
    most once (at most :data:`CASCADE_REPEATS` of the sessions with a click
    have more), so a document below a click was never read."""
    return (log.reached is not None and log.clicked_sessions >= 20
            and log.repeat_sessions <= CASCADE_REPEATS * log.clicked_sessions)


#: the largest weight of a click in :func:`session_lists`: the examination
#: of its position is taken as at least 1 / this (of the top's)
MAX_CLICK_WEIGHT = 100.0


def session_lists(log, rows, curve, max_weight=MAX_CLICK_WEIGHT):
    """The clicks of a sessions ``log`` as weighted lists to train on: per
    click, the clicked document (grade 1) above the documents its session
    showed and left unclicked (grade 0), weighing the sessions that gave it
    over the examination of the clicked position (``curve``, 1 at the top;
    inverse propensity weighting of pairwise clicks, Joachims et al., WSDM
    2017). A list whose session clicked everything has no pair and is left
    out. Returns ``(rows, y, lists, weight)``: per row of the lists, the
    feature row (from ``rows``, one per log entry), the grade, the list's
    number and its weight."""
    clicks = log.session_clicks
    sizes = np.diff(clicks.offsets)
    kept = np.flatnonzero(sizes > 0)
    k = np.minimum(log.position[clicks.entry[kept]], len(curve)) - 1
    seen = np.nan_to_num(np.asarray(curve, dtype=np.float64)[k], nan=0.0)
    weight = clicks.count[kept] / np.maximum(seen, 1.0 / max_weight)
    lengths = sizes[kept] + 1
    starts = np.r_[0, np.cumsum(lengths)[:-1]].astype(np.int64)
    entries = np.empty(int(lengths.sum()), dtype=np.int64)
    top = np.zeros(len(entries), dtype=bool)
    top[starts] = True
    entries[starts] = clicks.entry[kept]
    entries[~top] = clicks.unclicked[np.repeat(sizes > 0, sizes)]
    lists = np.repeat(np.arange(len(kept), dtype=np.int64), lengths)
    return (np.asarray(rows, dtype=np.int64)[entries], top.astype(np.int64), lists,
            np.repeat(weight, lengths))


def grade_clicks(log, rows, *, model=None, propensity=None):
    """Grade the documents of ``log`` (a :class:`ClickLog` whose entry ``i``
    shows the document of feature row ``rows[i]``, as :func:`feature_rows`
    finds them).

    The classes of click chance (with the examination curve) are ``model``
    (the training log's :class:`rsrank.propensity.ClickClasses`, when
    grading the validation log), else fitted to this log with the curve
    ``propensity`` gives per position, else with the curve estimated too.

    A sessions log that is not a cascade's is read as its session lists
    (:func:`session_lists`, with that curve) instead of graded.
    """
    rows = np.asarray(rows, dtype=np.int64)
    docs, document = np.unique(rows, return_inverse=True)
    document = document.ravel()
    entries = (document, log.position, log.impressions, log.clicks)
    if model is None and propensity is None and reads_to_first_click(log):
        examination, model = cascade_examination(*entries, log.reached)
    elif model is None:
        examination, model = estimate_examination(*entries, curve=propensity)
    else:
        examination = None  # the model's
    relevance = model.relevance(*entries, reached=log.reached)
    if log.session_clicks is not None and not isinstance(model, CascadeClicks):
        list_rows, y, names, weight = session_lists(log, rows, model.theta)
        return GradedClicks(list_rows, y, relevance, examination, model, names, weight)
    return GradedClicks(docs, click_grades(relevance, model.gamma.min(), model.gamma.max()),
                        relevance, examination, model)


#: a fold's click logs beside its feature files: Fold<k>/train.clicks.csv
CLICK_FILES = {"train": "train.clicks.csv", "vali": "vali.clicks.csv"}


def load_click_fold(train, train_clicks, vali=None, vali_clicks=None, test=None, *,
                    propensity=None, vali_fraction=None, random_state=0, n_features=None,
                    fold=1, **options):
    """One fold that trains on clicks: the documents each log showed, graded
    by :func:`grade_clicks` (the examination estimated from the training
    log, or ``propensity`` per position), with the features of ``train``
    and ``vali`` joined on query and document id; ``test`` keeps its
    labels. Without ``vali``, a seeded ``vali_fraction`` (default 0.2) of
    the graded training queries validates. ``options`` go to
    :func:`rsrank.load_letor`.

    Returns a Bunch as :func:`rsrank.layouts.load_splits` gives, with
    ``examination`` (an :class:`rsrank.propensity.Examination`),
    ``clicks`` (the logs' paths) and ``query_options`` (per split, the
    options of its :class:`~rsrank.querydata.QueryData`: the training
    log's ``preferences`` (:meth:`GradedClicks.training`), the vali log's
    ``query_weight`` (:meth:`GradedClicks.queries`), or none).
    """
    if (vali is None) != (vali_clicks is None):
        given, lacking = ("vali", "vali clicks") if vali_clicks is None else ("vali clicks",
                                                                               "vali")
        raise ValueError(f"the {given} is given without the {lacking}: a vali set of click "
                         "data needs both its features and its click log")
    if vali is not None and vali_fraction is not None:
        raise ValueError("give either a validation file or a validation fraction, not both")
    paths = {"train": Path(train), "vali": None if vali is None else Path(vali),
             "test": None if test is None else Path(test)}
    logs = {"train": Path(train_clicks), "vali": None if vali_clicks is None else
            Path(vali_clicks)}
    parts, width = load_files(paths, n_features, return_docids=True, **options)
    graded, examination, model = {}, None, None
    for split in ("train", "vali"):
        if logs[split] is None:
            continue
        X, _, qid, docids = parts[split]
        log = read_click_log(logs[split])
        try:
            rows = feature_rows(log, qid, docids)
            found = grade_clicks(log, rows, model=model, propensity=propensity)
        except ValueError as error:
            raise LetorFormatError(logs[split], None, f"{error} (features: "
                                   f"{paths[split]})") from None
        examination, model = examination or found.examination, found.model
        graded[split] = found
    features = {"train": parts["train"], "vali": parts.get("vali")}
    if "vali" not in graded:
        fraction = 0.2 if vali_fraction is None else vali_fraction
        queries = np.asarray(parts["train"][2])[graded["train"].rows]  # each row's own
        held = held_out_queries(queries, fraction, random_state)
        graded["train"], graded["vali"] = (graded["train"].take(keep) for keep in (~held, held))
        features["vali"] = features["train"]
        source = f"{fraction:g} of the training log's queries (seed {random_state})"
    else:
        source = f"{logs['vali']} on {paths['vali']}"
    X, _, qid, _ = features["train"]
    *train, train_options = graded["train"].training(X, qid)
    X, _, qid, _ = features["vali"]
    *vali, vali_weight = graded["vali"].queries(X, qid)
    test_part = parts.get("test")
    return Bunch(train=tuple(train), vali=tuple(vali),
                 query_options={"train": train_options,
                                "vali": {} if vali_weight is None else
                                {"query_weight": vali_weight}},
                 test=None if test_part is None else test_part[:3], n_features=width,
                 fold=fold, paths=paths, vali_source=source, examination=examination,
                 clicks=logs)


def has_click_logs(root):
    """Whether ``root/Fold<k>`` hold training click logs beside their features."""
    return any((Path(root) / f"Fold{k}" / CLICK_FILES["train"]).is_file()
               for k in find_folds(root))


def load_click_folds(root, folds=None, **options):
    """:func:`load_click_fold` of every ``root/Fold<k>`` (or those of
    ``folds``), each with ``train.clicks.csv`` (and ``vali.clicks.csv``
    when it has a vali file) beside its features."""
    out = []
    for k in folds or find_folds(root):
        directory = Path(root) / f"Fold{k}"
        train_clicks = directory / CLICK_FILES["train"]
        if not train_clicks.is_file():
            raise FileNotFoundError(f"{directory}: no {CLICK_FILES['train']} (the click log of "
                                    "its training queries)")
        vali_clicks = directory / CLICK_FILES["vali"]
        vali = split_file(root, k, "vali") if vali_clicks.is_file() else None
        test = _optional_split(root, k, "test")
        out.append(load_click_fold(split_file(root, k, "train"), train_clicks, vali,
                                   vali_clicks if vali is not None else None, test, fold=k,
                                   **options))
    return out


def _optional_split(root, fold, split):
    try:
        return split_file(root, fold, split)
    except FileNotFoundError:
        return None


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


def impression_log(X, clicks, qid, position, impressions=None, session=None):
    """The :class:`ClickLog` of one row per impression (LightGBM's layout:
    ``X`` the shown document's features, ``clicks`` 0 or 1, ``qid``,
    ``position`` with 1 the top; with ``session``, each row's session, as
    a sessions log has it), or of one row per document and position with
    ``impressions`` given (``clicks`` then counts); and for each of its
    entries the first row of its document. A query's rows with the same
    features are one document."""
    clicks = np.asarray(clicks)
    qid, position = np.asarray(qid), np.asarray(position)
    n = X.shape[0]
    check_log_arguments(position, impressions, None, session)
    impressions = np.ones(n, dtype=np.int64) if impressions is None else np.asarray(impressions)
    for name, values in (("clicks", clicks), ("qid", qid), ("position", position),
                         ("impressions", impressions)):
        if values.shape != (n,):
            raise ValueError(f"{name} must have one entry per row of X ({n}), got shape "
                             f"{values.shape}")
    for name, values, lowest in (("position", position, 1), ("clicks", clicks, 0),
                                 ("impressions", impressions, 1)):
        if values.dtype.kind not in "iub" and not np.all(values == np.round(values)):
            raise ValueError(f"{name} must hold whole numbers")
        if n and values.min() < lowest:
            raise ValueError(f"{name} must be at least {lowest}; got {values.min()}")
    if np.any(clicks > impressions):
        raise ValueError("a row has more clicks than impressions")
    if session is not None:
        session = np.asarray(session)
        if session.shape != (n,):
            raise ValueError(f"session must have one entry per row of X ({n}), got shape "
                             f"{session.shape}")
    keys = document_keys(X, qid)
    _, first, document = np.unique(keys, return_index=True, return_inverse=True)
    columns = (qid.astype(str), first[document.ravel()].astype(str), position.astype(np.int64))
    log = (ClickLog.from_counts(*columns, impressions.astype(np.int64), clicks.astype(np.int64))
           if session is None else ClickLog.from_sessions(session, *columns,
                                                          clicks.astype(np.int64)))
    return log, log.docid.astype(np.int64)


def graded_eval_set(eval_set, model):
    """A validation click log ``(X_val, clicks_val, qid_val, position_val[,
    session_val])`` read with the training log's ``model``: ``(X, y, qid)``
    of its graded documents, or a weighted
    :class:`~rsrank.querydata.QueryData` of its session lists."""
    if not isinstance(eval_set, (tuple, list)) or len(eval_set) not in (4, 5):
        raise ValueError("with position, eval_set is a click log too: (X_val, clicks_val, "
                         "qid_val, position_val[, session_val])")
    X, clicks, qid, position, *session = eval_set
    if not hasattr(X, "tocsr"):
        X = np.asarray(X)
    log, rows = impression_log(X, clicks, qid, position, session=(session or [None])[0])
    X, y, queries, weight = grade_clicks(log, rows, model=model).queries(X, qid)
    return (X, y, queries) if weight is None else QueryData(X, y, queries, query_weight=weight)


def document_keys(X, qid):
    """A key per row naming its document: its query and a digest of its
    features as float64 (the same in every process, so that a log split
    across workers joins on it)."""
    qid = np.asarray(qid).astype(str)
    if hasattr(X, "tocsr"):
        X = X.tocsr()
        rows = (X.indices[a:b].astype(np.int64).tobytes()
                + X.data[a:b].astype(np.float64).tobytes()
                for a, b in zip(X.indptr[:-1], X.indptr[1:]))
    else:
        rows = (row.tobytes() for row in np.ascontiguousarray(np.asarray(X, dtype=np.float64)))
    return np.array([f"{q}\x00{hashlib.blake2b(row, digest_size=16).hexdigest()}"
                     for q, row in zip(qid, rows)])
