"""The one place where click logs become what a fit trains and validates
on: a training log and a vali log (or a seeded share of the training
log's queries), each with the feature row of every entry, read with the
position's bias taken out (:func:`~rsrank.clicks.grade_clicks`), as plain
clicks (:func:`~rsrank.clicks.plain_clicks`), or both. Logs given as
arrays (:func:`rsrank.clicks.arrays.click_splits`: ``RSRank``,
``RSRankCV``, the path, ``partial_fit``, Dask) and as files
(:func:`rsrank.clicks.load_click_fold`: the command line and ``Fold<k>``
roots) both come here, so the same log reads the same way.
"""

from dataclasses import dataclass

import numpy as np

from ..reading.layouts import held_out_queries
from .grading import below_the_unshown, grade_clicks, plain_clicks

__all__ = ["LogPart", "ReadClicks", "read_clicks", "check_debias", "READINGS", "DEBIAS"]

#: how ``debias`` reads the logs: the position's bias taken out, plain, or
#: both (the plain model kept unless the debiased one beats it)
READINGS = {"auto": ("on", "off"), "on": ("on",), "off": ("off",)}
DEBIAS = tuple(READINGS)


def check_debias(debias, propensity):
    """A ``debias`` of :data:`DEBIAS`, and no ``propensity`` for plain
    clicks alone, or a one-line error."""
    if debias not in DEBIAS:
        raise ValueError(f"debias must be one of {', '.join(map(repr, DEBIAS))}, got "
                         f"{debias!r}")
    if debias == "off" and propensity is not None:
        raise ValueError("propensities take the position's bias out of the clicks, which "
                         "plain click training (debias 'off') leaves in: give one or the other")


@dataclass(frozen=True)
class LogPart:
    """A click log with its features: ``log`` a :class:`ClickLog`, ``rows``
    the feature row of each of its entries, ``X`` and ``qid`` the features
    and queries those rows index."""

    log: object
    rows: np.ndarray
    X: object
    qid: np.ndarray
    #: whether ``X`` holds its queries' whole lists (a features file), so that
    #: a row no entry names is a document the log never showed; False for a
    #: log given as arrays, whose rows are its entries
    whole_lists: bool = True


@dataclass(frozen=True)
class ReadClicks:
    """What :func:`read_clicks` makes of the logs. Per reading (``"on"``,
    ``"off"``), ``train`` and ``vali`` are ``(X, y, qid, options)``, the
    options those of :class:`~rsrank.reading.querydata.QueryData` (``vali`` None
    without a vali log); ``judge`` is ``(X, y, qid)`` of the vali log's
    shown documents graded by their click chance (with the debiased
    reading), ``examination`` the curve and ``model`` the classes of click
    chance of the training log (None for plain clicks alone, and
    ``examination`` None when a former fit's ``model`` was given);
    ``vali_source`` says where the vali log came from. Each reading selects
    on its own lists, on long lists too: a debiased model selected on the
    ``judge`` is better alone, but then wins the choice on the data it was
    selected on (``results/clicks_judge_selection_tried.md``)."""

    train: dict
    vali: dict
    judge: object
    examination: object
    model: object
    vali_source: object = None


def read_clicks(train, vali=None, *, debias="on", propensity=None, vali_fraction=0.2,
                random_state=0, model=None, named=None, unshown=0.0):
    """Read the :class:`LogPart` ``train`` (and ``vali``) as ``debias``
    says (:data:`READINGS`). Without ``vali``, the queries of a seeded
    ``vali_fraction`` of the training log's queries validate, the same in
    every reading (``vali_fraction`` None: nothing validates). ``model``,
    a former fit's classes of click chance, reads the logs as that fit
    read its own; else the examination is ``propensity`` per position or
    estimated from the training log. ``named(split, error)``, when given,
    is what a log that cannot be read raises instead of ``error``.
    ``unshown`` above 0 puts the training features' documents the log never
    showed below each click of the debiased reading's session lists
    (:func:`~rsrank.clicks.grading.below_the_unshown`, that share of a
    list's weight); 0, the default, leaves them out."""
    parts = {"train": train, "vali": vali}
    graded, examination, trained = {}, None, model
    for reading in READINGS[debias]:
        found, fitted = {}, model
        for split in ("train", "vali"):
            if parts[split] is None:
                continue
            log, rows = parts[split].log, parts[split].rows
            try:
                found[split] = (grade_clicks(log, rows, model=fitted, propensity=propensity)
                                if reading == "on" else plain_clicks(log, rows))
            except ValueError as error:
                if named is None:
                    raise
                raise named(split, error) from None
            if reading == "on":
                examination = examination or found[split].examination
                fitted = found[split].model
        if reading == "on":
            trained = fitted
        graded[reading] = found
    source = None
    if vali is None and vali_fraction is not None:
        graded, source = _held_out(graded, train, vali_fraction, random_state), (
            f"{vali_fraction:g} of the training log's queries (seed {random_state})")
        vali = train
    training, validating, judge = {}, {}, None
    for reading, found in graded.items():
        clicks = found["train"]
        if unshown and reading == "on" and clicks.lists is not None:
            clicks = below_the_unshown(clicks, train.rows, train.qid, unshown)
        training[reading] = clicks.training(train.X, train.qid)
        if "vali" in found:
            *data, weight = found["vali"].queries(vali.X, vali.qid)
            validating[reading] = (*data, {} if weight is None else {"query_weight": weight})
    if "vali" in graded.get("on", {}):
        judge = graded["on"]["vali"].judged_documents(vali.X, vali.qid,
                                                      whole_lists=vali.whole_lists)
    return ReadClicks(training, validating, judge, examination,
                      trained if "on" in graded else None, source)


def _held_out(graded, train, fraction, random_state):
    """Each reading's training clicks split in two by query: a seeded
    ``fraction`` of the training log's queries (the same in every reading)
    validates."""
    qid = np.asarray(train.qid)
    queries = qid[np.asarray(train.rows)]  # each entry's own
    held = np.unique(queries[held_out_queries(queries, fraction, random_state)])
    out = {}
    for reading, found in graded.items():
        clicks = found["train"]
        side = np.isin(qid[clicks.rows], held)
        documents = clicks.documents
        on_side = None if documents is None else np.isin(qid[documents], held)
        out[reading] = {"train": clicks.take(~side, None if on_side is None else ~on_side),
                        "vali": clicks.take(side, on_side)}
    return out

