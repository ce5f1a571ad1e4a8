"""Click logs read without the position's bias: :func:`grade_clicks` reads
a log (:mod:`rsrank.clicks.propensity`) as a position-based sessions log's
session lists (each click above what its session left unclicked,
weighted by the inverse of its position's examination,
:func:`session_lists`), or a cascade's log or counts as the shown
documents graded by their clicks; :func:`feature_rows` joins a log's
documents to their features.
"""

from dataclasses import dataclass, replace

import numpy as np

from .propensity import CascadeClicks, cascade_examination, click_grades, estimate_examination
from ..reading.querydata import QueryData
from .log import impression_log

__all__ = ["feature_rows", "grade_clicks", "click_preferences", "GradedClicks",
           "session_lists", "MAX_CLICK_WEIGHT", "CASCADE_REPEATS", "reads_to_first_click",
           "graded_eval_set", "plain_clicks", "LONG_LISTS"]


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


#: the share of its queries' documents below which a log's shown documents
#: alone no longer judge a ranking (:meth:`GradedClicks.judged_documents`):
#: between the longest lists on which they judged well (OHSUMED's ten shown of
#: about 170, 6%) and lists of 300 to 1000 where they did not (2%,
#: ``results/clicks_confirm.md``)
LONG_LISTS = 0.05


@dataclass(frozen=True)
class GradedClicks:
    """The documents a click log showed, graded by their clicks with the
    position's bias taken out (:mod:`rsrank.clicks.propensity`): ``rows`` index
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
    #: the lists are sessions trained on as queries, their clicks the labels
    #: (:func:`plain_clicks`), not session lists summed into preferences
    plain: bool = False
    #: the documents ``relevance`` grades (their feature rows, increasing),
    #: when ``rows`` are lists' (None: ``rows`` themselves)
    documents: object = None

    def graded_documents(self, X, qid):
        """``(X, y, qid)`` of the shown documents graded by their click
        chance without the position's bias (:func:`click_grades` of
        ``relevance``), each once: what the clicks say of each document,
        summed over every session that showed it."""
        docs = self.rows if self.documents is None else self.documents
        if self.model is None:  # plain clicks: graded by their raw click rate
            return X[docs], self.y, np.asarray(qid)[docs]
        gamma = self.model.gamma
        return (X[docs], click_grades(self.relevance, gamma.min(), gamma.max()),
                np.asarray(qid)[docs])

    def judged_documents(self, X, qid, *, whole_lists=True):
        """``(X, y, qid)`` on which a model's ranking is judged from the
        clicks: the shown documents graded by their click chance
        (:meth:`graded_documents`), or, where the log shows little of its
        queries' lists (:meth:`unshown_rows`), every document of those
        queries, the ones it never showed graded 0.

        On such long lists a model's top ten is mostly documents no session
        saw, and the shown documents alone cannot tell a model that keeps
        what the engine found from one that lifts what nobody judged; with
        the rest graded 0, lifting them costs what it would if they were not
        relevant."""
        Xs, y, shown = self.graded_documents(X, qid)
        unshown = self.unshown_rows(qid, whole_lists=whole_lists)
        if unshown is None:
            return Xs, y, shown
        qid = np.asarray(qid)
        grades = np.zeros(len(qid), dtype=np.asarray(y).dtype)
        docs = self.rows if self.documents is None else self.documents
        grades[docs] = y
        rows = np.sort(np.concatenate([docs, unshown]))  # in the features' order
        return X[rows], grades[rows], qid[rows]

    def unshown_rows(self, qid, *, whole_lists=True):
        """The rows of ``qid`` (the queries of the rows the log indexes) of
        the log's queries that no entry names, where the log shows on average
        less than :data:`LONG_LISTS` of each of those queries' documents;
        None where it shows more, and where ``whole_lists`` is False (the
        rows hold the log's entries alone: a log given as arrays)."""
        if not whole_lists:
            return None
        qid = np.asarray(qid)
        docs = self.rows if self.documents is None else self.documents
        queries, n_shown = np.unique(qid[docs], return_counts=True)
        seen = np.zeros(len(qid), dtype=bool)  # rows the log names (arrays: one per entry)
        seen[self.rows] = True
        unshown = np.flatnonzero(np.isin(qid, queries) & ~seen)
        n_unshown = np.zeros(len(queries), dtype=np.int64)
        found, counts = np.unique(qid[unshown], return_counts=True)
        n_unshown[np.searchsorted(queries, found)] = counts
        if not len(unshown) or np.mean(n_shown / (n_shown + n_unshown)) >= LONG_LISTS:
            return None
        return unshown

    def queries(self, X, qid):
        """``(X, y, qid, query_weight)`` to validate on, from the features
        ``X`` and queries ``qid`` the rows index: the graded documents of
        each query (``query_weight`` None), the session lists, each a query
        of its own, or for plain clicks the sessions, each a query weighted
        by its count."""
        if self.lists is None:
            return X[self.rows], self.y, np.asarray(qid)[self.rows], None
        return X[self.rows], self.y, self.lists, self.list_weight

    def training(self, X, qid):
        """``(X, y, qid, options)`` to train on, ``options`` those of
        :class:`~rsrank.reading.querydata.QueryData`: the graded documents of each
        query (no options), or the documents of the session lists with
        their pairs as ``preferences`` (:func:`click_preferences`), ``y``
        1 on a document clicked in some session; for plain clicks the
        sessions' pairs summed per set of documents shown
        (:func:`session_preferences`), the set's number as ``qid``."""
        if self.plain:
            rows, y, sets, preferences = session_preferences(self.rows, self.y, self.lists,
                                                             self.list_weight)
            return X[rows], y, sets, {"preferences": preferences}
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

    def take(self, keep, documents=None):
        """These clicks with only the rows ``keep`` (a boolean per row,
        whole lists: the same on every row of a list), and of the graded
        :attr:`documents` those of ``documents`` (a boolean per document;
        needed when there are lists)."""
        keep = np.asarray(keep, dtype=bool)
        if self.lists is None:
            return replace(self, rows=self.rows[keep], y=self.y[keep],
                           relevance=None if self.relevance is None else self.relevance[keep])
        _, lists = np.unique(self.lists[keep], return_inverse=True)
        taken = replace(self, rows=self.rows[keep], y=self.y[keep], lists=lists.ravel(),
                        list_weight=self.list_weight[keep])
        if self.documents is None:
            return taken
        documents = np.asarray(documents, dtype=bool)
        return replace(taken, documents=self.documents[documents],
                       relevance=self.relevance[documents])


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


def session_preferences(rows, y, lists, weight):
    """Sessions as queries (:func:`plain_clicks`'s ``rows, y, lists,
    list_weight``: per row the feature row, the click, the session and its
    weight) as one query per set of documents shown, with the pairs of its
    sessions summed: ``(rows, y, qid, (better, worse, weight, relevant))``,
    the distinct rows of each set (in the features' order), 1 on those
    clicked in one of its sessions, the set's number, and per pair of them
    (indices into those rows) the summed weight of the sessions with the
    same number of clicks that put ``better`` above ``worse``, and that
    number. With unit or swap pair weights alike the loss is the sessions'
    (a document's place is among the same documents in either; see
    :meth:`~rsrank.learning.objective.Objective.preference_weights`), from
    as many rows as there are sets instead of sessions."""
    rows, y = np.asarray(rows, dtype=np.int64), np.asarray(y, dtype=np.int64)
    lists = np.asarray(lists, dtype=np.int64)
    n = int(lists.max()) + 1 if len(lists) else 0
    documents, index = np.unique(rows, return_inverse=True)
    index = index.ravel()
    # each session's set named by a sum of random 64-bit codes of its rows
    codes = np.random.default_rng(2).integers(1, 2**63, size=max(len(documents), 1),
                                              dtype=np.uint64)
    name = np.zeros(n, dtype=np.uint64)
    np.add.at(name, lists, codes[index])
    group = np.unique(name, return_inverse=True)[1].ravel()
    keys, row_at = np.unique(group[lists] * len(documents) + index, return_inverse=True)
    row_at = row_at.ravel()
    clicks = np.bincount(lists, weights=y, minlength=n).astype(np.int64)
    unclicked_count = np.bincount(lists, minlength=n) - clicks
    order = np.lexsort((-y, lists))  # by session, its clicks first
    unclicked = order[y[order] == 0]
    unclicked_start = np.cumsum(unclicked_count) - unclicked_count
    clicked = order[y[order] == 1]
    session = lists[clicked]
    count = unclicked_count[session]
    pair_session = np.repeat(session, count)
    within = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
    better = np.repeat(row_at[clicked], count)
    worse = row_at[unclicked[unclicked_start[pair_session] + within]]
    relevant = clicks[pair_session]
    session_weight = np.zeros(n)
    session_weight[lists] = np.asarray(weight, dtype=np.float64)
    by = np.lexsort((relevant, worse, better))
    better, worse, relevant = better[by], worse[by], relevant[by]
    first = np.r_[True, (np.diff(better) != 0) | (np.diff(worse) != 0)
                  | (np.diff(relevant) != 0)] if len(by) else np.zeros(0, dtype=bool)
    summed = np.add.reduceat(session_weight[pair_session][by], np.flatnonzero(first)) \
        if len(by) else np.zeros(0)
    labels = np.zeros(len(keys), dtype=np.int64)
    labels[better] = 1
    return (documents[keys % len(documents)], labels, keys // len(documents),
            (better[first], worse[first], summed, relevant[first]))


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
#: of its position is taken as at least 1 / this (of the top's). Clipping
#: the inverse propensity trades a little bias for much less variance: on
#: the 78 logs of ``results/clicks_broad.md`` (against 100 in
#: ``results/clicks_broad_before.md``) and the 52 long-list logs of
#: ``results/clicks_confirm.md`` (``results/clicks_confirm_before.md``),
#: 10 closes more of the gap to labels and is below plain clicks on fewer
MAX_CLICK_WEIGHT = 10.0


def session_lists(log, rows, curve, max_weight=None):
    """The clicks of a sessions ``log`` as weighted lists to train on: per
    click, the clicked document (grade 1) above the documents its session
    showed and left unclicked (grade 0), weighing the sessions that gave it
    over the examination of the clicked position (``curve``, 1 at the top;
    inverse propensity weighting of pairwise clicks, Joachims et al., WSDM
    2017), at most ``max_weight`` (default :data:`MAX_CLICK_WEIGHT`, read
    when called). A list whose session clicked everything has no pair and
    is left out. Returns ``(rows, y, lists, weight)``: per row of the lists, the
    feature row (from ``rows``, one per log entry), the grade, the list's
    number and its weight."""
    clicks = log.session_clicks
    sizes = np.diff(clicks.offsets)
    kept = np.flatnonzero(sizes > 0)
    k = np.minimum(log.position[clicks.entry[kept]], len(curve)) - 1
    seen = np.nan_to_num(np.asarray(curve, dtype=np.float64)[k], nan=0.0)
    max_weight = MAX_CLICK_WEIGHT if max_weight is None else max_weight
    weight = clicks.count[kept] / np.maximum(seen, 1.0 / max_weight)
    lengths = sizes[kept] + 1
    starts = (np.cumsum(lengths) - lengths).astype(np.int64)
    entries = np.empty(int(lengths.sum()), dtype=np.int64)
    top = np.zeros(len(entries), dtype=bool)
    top[starts] = True
    entries[starts] = clicks.entry[kept]
    entries[~top] = clicks.unclicked[np.repeat(sizes > 0, sizes)]
    lists = np.repeat(np.arange(len(kept), dtype=np.int64), lengths)
    return (np.asarray(rows, dtype=np.int64)[entries], top.astype(np.int64), lists,
            np.repeat(weight, lengths))


def below_the_unshown(clicks, shown, qid, share):
    """Session lists (a :class:`GradedClicks` with ``lists``) with, below
    each click, the documents of its query that the log never showed: the
    rows of ``qid`` (the features' queries) outside ``shown`` (the feature
    rows the log shows), each weighing ``share`` times the list's shown
    unclicked documents' weight in all. The engine's choice of what to show
    then counts as a preference: right where its top is better than the
    rest, wrong where it is not (``results/clicks_unshown*.md``)."""
    qid = np.asarray(qid)
    seen = np.zeros(len(qid), dtype=bool)
    seen[np.asarray(shown)] = True
    _, query = np.unique(qid, return_inverse=True)
    query = query.ravel()
    unshown = np.flatnonzero(~seen)
    unshown = unshown[np.argsort(query[unshown], kind="stable")]
    bounds = np.searchsorted(query[unshown], np.arange(query.max() + 2))
    top = np.flatnonzero(clicks.y == 1)  # the k-th is list k's click
    sizes = np.bincount(clicks.lists, minlength=len(top))
    first, last = bounds[query[clicks.rows[top]]], bounds[query[clicks.rows[top]] + 1]
    counts = last - first
    held = np.flatnonzero(counts > 0)
    if not len(held):
        return clicks
    lengths = counts[held]
    offsets = np.repeat(first[held] - np.cumsum(lengths) + lengths, lengths)
    rows = unshown[np.arange(int(lengths.sum())) + offsets]
    each = clicks.list_weight[top[held]] * share * np.maximum(sizes[held] - 1, 1) / lengths
    return replace(clicks, rows=np.concatenate([clicks.rows, rows]),
                   y=np.concatenate([clicks.y, np.zeros(len(rows), dtype=clicks.y.dtype)]),
                   lists=np.concatenate([clicks.lists, np.repeat(held, lengths)]),
                   list_weight=np.concatenate([clicks.list_weight, np.repeat(each, lengths)]))


def grade_clicks(log, rows, *, model=None, propensity=None):
    """Grade the documents of ``log`` (a :class:`ClickLog` whose entry ``i``
    shows the document of feature row ``rows[i]``, as :func:`feature_rows`
    finds them).

    The classes of click chance (with the examination curve) are ``model``
    (the training log's :class:`rsrank.clicks.propensity.ClickClasses`, when
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
        if not len(list_rows):
            raise ValueError("no pair to learn from: every session that clicked clicked every "
                             "document it showed, so no click prefers one document to another; "
                             "a click log needs sessions that left a shown document unclicked")
        return GradedClicks(list_rows, y, relevance, examination, model, names, weight,
                            documents=docs)
    return GradedClicks(docs, click_grades(relevance, model.gamma.min(), model.gamma.max()),
                        relevance, examination, model)


def plain_clicks(log, rows):
    """The clicks of ``log`` as they are, without the position's bias
    taken out (plain click training, the baseline debiasing must beat):
    a sessions log's sessions as queries, each shown document labelled by
    its click (sessions without a click, or clicking everything, hold no
    pair and are left out; sessions that showed and clicked alike are one
    query, weighted by their count); an aggregated log's documents graded
    by their click rate over every position
    (:func:`~rsrank.clicks.propensity.click_grades`). Returns a
    :class:`GradedClicks` with ``lists`` naming each row's query and
    ``list_weight`` its weight (``rows`` index the features as ``rows`` of
    the log's entries do)."""
    rows = np.asarray(rows, dtype=np.int64)
    shown = log.session_rows
    if shown is None:
        docs, document = np.unique(rows, return_inverse=True)
        document = document.ravel()
        clicks = np.bincount(document, weights=log.clicks, minlength=len(docs))
        impressions = np.bincount(document, weights=log.impressions, minlength=len(docs))
        rate = clicks / impressions
        return GradedClicks(docs, click_grades(rate, rate.min(), rate.max()), rate, None, None)
    per_session = np.bincount(shown.session, weights=shown.click)
    size = np.bincount(shown.session)
    kept = (per_session > 0) & (per_session < size)
    # sessions that showed the same entries with the same clicks are one query,
    # weighted by their count: each named by a sum of random 64-bit codes of its
    # (entry, click) rows (two different sessions share a name with chance 2^-64)
    codes = np.random.default_rng(1).integers(1, 2**63, size=2 * max(len(log.qid), 1),
                                              dtype=np.uint64)
    name = np.zeros(len(size), dtype=np.uint64)
    np.add.at(name, shown.session,
              codes[2 * shown.entry.astype(np.int64) + shown.click])
    sessions = np.flatnonzero(kept)
    _, first, count = np.unique(name[sessions], return_index=True, return_counts=True)
    chosen = np.full(len(size), -1)
    chosen[sessions[np.sort(first)]] = np.arange(len(first))
    weight = count[np.argsort(first)].astype(np.float64)  # per query, in that order
    keep = np.flatnonzero(chosen[shown.session] >= 0)
    query = chosen[shown.session[keep]]
    order = np.argsort(query, kind="stable")
    keep, query = keep[order], query[order]
    if not len(keep):
        raise ValueError("no pair to learn from: no session both clicked a document and left "
                         "one unclicked")
    return GradedClicks(rows[shown.entry[keep]], shown.click[keep].astype(np.int64), None, None,
                        None, query, weight[query], plain=True)


def graded_eval_set(eval_set, model):
    """A validation click log ``(X_val, clicks_val, qid_val, position_val[,
    session_val])`` read with the training log's ``model``: ``(X, y, qid)``
    of its graded documents, or a weighted
    :class:`~rsrank.reading.querydata.QueryData` of its session lists."""
    if not isinstance(eval_set, (tuple, list)) or len(eval_set) not in (4, 5):
        raise ValueError("with position, eval_set is a click log too: (X_val, clicks_val, "
                         "qid_val, position_val[, session_val])")
    X, clicks, qid, position, *session = eval_set
    if not hasattr(X, "tocsr"):
        X = np.asarray(X)
    log, rows = impression_log(X, clicks, qid, position, session=(session or [None])[0])
    X, y, queries, weight = grade_clicks(log, rows, model=model).queries(X, qid)
    return (X, y, queries) if weight is None else QueryData(X, y, queries, query_weight=weight)
