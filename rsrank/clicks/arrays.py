"""A click log given as arrays, read once for every estimator that takes
one: :func:`click_splits` turns the rows of a log (and a vali log, or a
share of the log's queries held out) into the training and validation
query data of the debiased reading, the plain one, or both, as the
command line's folds hold them (:func:`rsrank.clicks.load_click_fold`).
"""

from dataclasses import dataclass

import numpy as np
from sklearn.utils.validation import check_array

from ..learning.kinds import refuse_missing, takes_missing
from ..reading.querydata import QueryData
from .log import check_log_arguments, impression_log
from .splits import DEBIAS, LogPart, check_debias, read_clicks

__all__ = ["ClickSplits", "click_splits", "click_features", "DEBIAS"]

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
    without it a seeded ``vali_fraction`` of the log's queries validates,
    as ``rsrank train --clicks`` does without ``--vali``
    (:func:`rsrank.clicks.splits.read_clicks`, which reads files too)
    (``vali_fraction`` None: none, and ``vali`` and ``judge`` are empty).
    ``debias``: ``"on"``, ``"off"`` (plain clicks) or ``"auto"`` (both).
    ``params``, an estimator's, hold both logs' ``X`` to its rules
    (:func:`click_features`); ``model``, a former fit's classes of click
    chance, reads the log as that fit read its own (``examination`` is
    then None)."""
    check_debias(debias, propensity)
    check_log_arguments(position, impressions, propensity, session)
    X = click_features(X, qid, params)
    train = LogPart(*impression_log(X, clicks, qid, position, impressions, session), X,
                    np.asarray(qid), whole_lists=False)
    vali = None
    if eval_set is not None:
        if not isinstance(eval_set, (tuple, list)) or len(eval_set) not in (4, 5):
            raise ValueError("with position, eval_set is a click log too: (X_val, clicks_val, "
                             "qid_val, position_val[, session_val])")
        Xv, cv, qv, pv, *sv = eval_set
        Xv = click_features(Xv, qv, params)
        vali = LogPart(*impression_log(Xv, cv, qv, pv, None, (sv or [None])[0]), Xv,
                       np.asarray(qv), whole_lists=False)
    read = read_clicks(train, vali, debias=debias, propensity=propensity,
                       vali_fraction=vali_fraction, random_state=random_state, model=model)
    options = {"feature_names": feature_names}
    return ClickSplits(
        {reading: QueryData(*data, **options, **extra)
         for reading, (*data, extra) in read.train.items()},
        {reading: QueryData(*data, **options, **extra)
         for reading, (*data, extra) in read.vali.items()},
        None if read.judge is None else QueryData(*read.judge, **options),
        read.examination, read.model)
