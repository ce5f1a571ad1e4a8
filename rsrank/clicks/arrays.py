"""A click log given as arrays, read once for every estimator that takes
one: :func:`click_splits` turns the rows of a log (and a vali log, or a
share of the log's queries held out) into the training and validation
query data of the debiased reading, the plain one, or both, as the
command line's folds hold them (:func:`rsrank.clicks.load_click_fold`).
"""

from dataclasses import dataclass

import numpy as np
from sklearn.utils.validation import check_array

from ..kinds import refuse_missing, takes_missing
from ..layouts import held_out_queries
from ..querydata import QueryData
from .grading import grade_clicks, plain_clicks
from .log import check_log_arguments, impression_log

__all__ = ["ClickSplits", "click_splits", "click_features", "DEBIAS"]

#: how a click log is read: the position's bias taken out, plain, or both
#: (the plain model kept unless the debiased one beats it)
DEBIAS = ("auto", "on", "off")


@dataclass(frozen=True)
class ClickSplits:
    """What a fit takes from a click log: per reading (``"on"``,
    ``"off"``), ``train`` and ``vali`` :class:`QueryData`; ``judge`` the
    vali log's documents graded by their click chance (a QueryData, for
    the debiased reading); ``examination`` the curve and ``model`` the
    classes of click chance of the training log."""

    train: dict
    vali: dict
    judge: object
    examination: object
    model: object


def click_features(X, qid, params=None):
    """The features ``X`` of a click log's rows, checked as a fit on labels
    checks them, every row (a row no session list holds too): numbers, no
    infinity, and no missing value unless the model ``params`` (an
    estimator's) ask for takes one."""
    if isinstance(X, QueryData):
        raise ValueError("a click log is rows of X with their clicks and positions, not a "
                         "QueryData")
    if qid is None:
        raise ValueError("a click log needs qid: the query of each row")
    X = check_array(X, accept_sparse="csr", dtype=(np.float64, np.float32),
                    ensure_all_finite="allow-nan")
    if params is not None and not takes_missing(params):
        refuse_missing(QueryData(X, np.zeros(X.shape[0], dtype=np.int64), qid), "X")
    return X


def click_splits(X, clicks, qid, position, *, impressions=None, session=None,
                 propensity=None, eval_set=None, debias="on", vali_fraction=0.2,
                 random_state=0, feature_names=None, params=None, model=None):
    """The :class:`ClickSplits` of a click log given as arrays (``X`` the
    shown document's features, ``clicks``, ``qid``, ``position``, and
    ``impressions`` or ``session`` as :meth:`rsrank.RSRank.fit` takes them).
    ``eval_set`` is the vali log ``(X, clicks, qid, position[, session])``;
    without it a seeded ``vali_fraction`` of the log's queries is held out
    as one, as ``rsrank train --clicks`` does without ``--vali``
    (``vali_fraction`` None: none, and ``vali`` and ``judge`` are empty).
    ``debias``: ``"on"``, ``"off"`` (plain clicks) or ``"auto"`` (both).
    ``params``, an estimator's, hold both logs' ``X`` to its rules
    (:func:`click_features`); ``model``, a former fit's classes of click
    chance, reads the log as that fit read its own (``examination`` is
    then None)."""
    if debias not in DEBIAS:
        raise ValueError(f"debias must be one of {DEBIAS}, got {debias!r}")
    check_log_arguments(position, impressions, propensity, session)
    if debias == "off" and propensity is not None:
        raise ValueError("propensities take the position's bias out of the clicks, which "
                         "plain click training (debias='off') leaves in: give one or the other")
    X = click_features(X, qid, params)
    columns = [clicks, qid, position, impressions, session]
    if eval_set is not None:
        if not isinstance(eval_set, (tuple, list)) or len(eval_set) not in (4, 5):
            raise ValueError("with position, eval_set is a click log too: (X_val, clicks_val, "
                             "qid_val, position_val[, session_val])")
        Xv, cv, qv, pv, *sv = eval_set
        Xv = click_features(Xv, qv, params)
        eval_set = (Xv, cv, qv, pv, None, (sv or [None])[0])
    elif vali_fraction is not None:  # the vali log: a seeded share of the log's queries
        held = held_out_queries(np.asarray(qid), vali_fraction, random_state)
        eval_set = (X[held], *(None if c is None else np.asarray(c)[held]
                               for c in columns))
        X, columns = X[~held], [None if c is None else np.asarray(c)[~held] for c in columns]
    clicks, qid, position, impressions, session = columns
    log, rows = impression_log(X, clicks, qid, position, impressions, session)
    if eval_set is None:  # no vali log: the training log's readings alone
        Xv = qv = vali_log = vali_rows = None
    else:
        Xv, cv, qv, pv, iv, sv = eval_set
        vali_log, vali_rows = impression_log(Xv, cv, qv, pv, iv, sv)
    options = {"feature_names": feature_names}
    train, vali, judge, examination, model = {}, {}, None, None, None
    if debias in ("on", "auto"):
        graded = grade_clicks(log, rows, model=model, propensity=propensity)
        examination, model = graded.examination, graded.model
        Xt, yt, qt, extra = graded.training(X, qid)
        train["on"] = QueryData(Xt, yt, qt, **options, **extra)
        if vali_log is not None:
            read = grade_clicks(vali_log, vali_rows, model=model)
            Xs, ys, qs, weight = read.queries(Xv, qv)
            vali["on"] = QueryData(Xs, ys, qs, query_weight=weight, **options)
            judge = QueryData(*read.graded_documents(Xv, qv), **options)
    if debias in ("off", "auto"):
        for out, read, features, queries in ((train, (log, rows), X, qid),
                                             (vali, (vali_log, vali_rows), Xv, qv)):
            if read[0] is None:
                continue
            Xp, yp, qp, weight = plain_clicks(*read).queries(features, queries)
            out["off"] = QueryData(Xp, yp, qp, query_weight=weight, **options)
    return ClickSplits(train, vali, judge, examination, model)
