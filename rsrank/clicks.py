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

:func:`grade_clicks` grades the shown documents by their clicks with the
position's bias taken out (:mod:`rsrank.propensity`);
:func:`load_click_fold` makes a fold that ``rsrank train --clicks`` trains
on.
"""

import csv
import hashlib
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from ._text import LetorFormatError, open_text, reading
from .datasets import find_folds, load_files, split_file
from .layouts import split_queries
from .propensity import cascade_examination, click_grades, estimate_examination

__all__ = ["ClickLog", "read_click_log", "feature_rows", "grade_clicks", "GradedClicks",
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
        log = cls.from_counts(qid, docid, position, np.ones_like(click), click, reached)
        return cls(log.qid, log.docid, log.position, log.impressions, log.clicks, count,
                   log.reached, int(np.count_nonzero(per_session)),
                   int(np.count_nonzero(per_session > 1)))

    @classmethod
    def from_counts(cls, qid, docid, position, impressions, clicks, reached=None):
        """The log of rows of counts, summed per (query, document, position),
        in the order first seen."""
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
                   *total[:2], reached=total[2])

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
    click chance when examined, ``examination`` the curve found in this
    log (None when graded by another log's) and ``model`` the classes of
    click chance that graded them."""

    rows: np.ndarray
    y: np.ndarray
    relevance: np.ndarray
    examination: object
    model: object


#: the share of clicked sessions with two or more clicks at or below which
#: a log is read as a cascade's (users leave after their first click)
CASCADE_REPEATS = 0.01


def reads_to_first_click(log):
    """Whether a sessions log looks like the cascade model's: users click at
    most once (at most :data:`CASCADE_REPEATS` of the sessions with a click
    have more), so a document below a click was never read."""
    return (log.reached is not None and log.clicked_sessions >= 20
            and log.repeat_sessions <= CASCADE_REPEATS * log.clicked_sessions)


def grade_clicks(log, rows, *, model=None, propensity=None):
    """Grade the documents of ``log`` (a :class:`ClickLog` whose entry ``i``
    shows the document of feature row ``rows[i]``, as :func:`feature_rows`
    finds them).

    The classes of click chance (with the examination curve) are ``model``
    (the training log's :class:`rsrank.propensity.ClickClasses`, when
    grading the validation log), else fitted to this log with the curve
    ``propensity`` gives per position, else with the curve estimated too.
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
    ``examination`` (an :class:`rsrank.propensity.Examination`) and
    ``clicks`` (the logs' paths).
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
        graded[split] = (X[found.rows], found.y, qid[found.rows])
    if "vali" not in graded:
        fraction = 0.2 if vali_fraction is None else vali_fraction
        graded["train"], graded["vali"] = split_queries(graded["train"], fraction, random_state)
        source = f"{fraction:g} of the training log's queries (seed {random_state})"
    else:
        source = f"{logs['vali']} on {paths['vali']}"
    test_part = parts.get("test")
    return Bunch(train=graded["train"], vali=graded["vali"],
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


def impression_log(X, clicks, qid, position, impressions=None):
    """The :class:`ClickLog` of one row per impression (LightGBM's layout:
    ``X`` the shown document's features, ``clicks`` 0 or 1, ``qid``,
    ``position`` with 1 the top), or of one row per document and position
    with ``impressions`` given (``clicks`` then counts); and for each of
    its entries the first row of its document. A query's rows with the
    same features are one document."""
    clicks = np.asarray(clicks)
    qid, position = np.asarray(qid), np.asarray(position)
    n = X.shape[0]
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
    keys = document_keys(X, qid)
    _, first, document = np.unique(keys, return_index=True, return_inverse=True)
    log = ClickLog.from_counts(qid.astype(str), first[document.ravel()].astype(str),
                               position.astype(np.int64), impressions.astype(np.int64),
                               clicks.astype(np.int64))
    return log, log.docid.astype(np.int64)


def graded_eval_set(eval_set, model):
    """A validation click log ``(X_val, clicks_val, qid_val, position_val)``
    graded by the training log's ``model``: ``(X, y, qid)`` of its shown
    documents."""
    if not isinstance(eval_set, (tuple, list)) or len(eval_set) != 4:
        raise ValueError("with position, eval_set is a click log too: (X_val, clicks_val, "
                         "qid_val, position_val)")
    X, clicks, qid, position = eval_set
    if not hasattr(X, "tocsr"):
        X = np.asarray(X)
    vali = grade_clicks(*impression_log(X, clicks, qid, position), model=model)
    return X[vali.rows], vali.y, np.asarray(qid)[vali.rows]


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
