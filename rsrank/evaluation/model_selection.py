"""Model selection over queries: scorers and scikit-learn's search glue.

LETOR's train/vali/test protocol, its selection rule and its results live in
:mod:`rsrank.evaluation.experiments`.

Grid search over queries needs three things from scikit-learn's metadata
routing: the splitter must split by query (``groups`` aliased to ``qid``),
``fit`` must receive the training rows' ``qid`` and the scorer the held-out
rows' ``qid``. :class:`~rsrank.RSRank` requests ``qid`` for ``fit`` and
``score`` by default; :func:`fit_search` and :func:`cross_val_score_by_query`
switch routing on for the call and alias the splitter, so that::

    search = GridSearchCV(RSRank(), {"l1": [0, 0.1, 1]}, cv=GroupKFold(5))
    fit_search(search, X, y, qid)

just works. With routing off, scikit-learn gives ``fit`` the qid it is
passed but the scorer none, so every held-out score would be NaN (or, when
``qid`` reaches neither, every split one big query); :func:`check_search_fit`
refuses such a fit in one line that names the fix, and :func:`score_by_query`
scores a fitted search or pipeline with routing on.
"""

import sys

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.metrics import make_scorer
from sklearn.model_selection import GroupKFold, PredefinedSplit, cross_val_score

from . import metrics

__all__ = [
    "make_ndcg_scorer",
    "make_map_scorer",
    "fit_search",
    "cross_val_score_by_query",
    "score_by_query",
    "letor_fold_split",
]


def _require_qid(qid):
    if qid is None:
        raise ValueError(
            "this ranking scorer needs the held-out rows' qid; enable metadata routing "
            "(sklearn.set_config(enable_metadata_routing=True)) and pass qid=... to the "
            "search's fit, or use rsrank.model_selection.fit_search")
    return qid


def _ndcg_for_scorer(y_true, y_pred, qid=None, *, k=10, **conventions):
    return metrics.mean_ndcg(y_true, y_pred, _require_qid(qid), k, **conventions)


def _map_for_scorer(y_true, y_pred, qid=None, **options):
    return metrics.mean_average_precision(y_true, y_pred, _require_qid(qid), **options)


def make_ndcg_scorer(k=10, *, convention=metrics.DEFAULT_CONVENTION, **conventions):
    """A scikit-learn scorer of mean NDCG@k over the held-out queries.

    It requests ``qid`` through metadata routing. Keywords are those of
    :func:`rsrank.evaluation.metrics.ndcg_per_query`.

    Examples
    --------
    >>> scoring = {"ndcg@1": make_ndcg_scorer(1), "ndcg@10": make_ndcg_scorer(10)}
    """
    scorer = make_scorer(_ndcg_for_scorer, k=k, convention=convention, **conventions)
    return _requesting_qid(scorer)


def _requesting_qid(scorer):
    # set_score_request is only callable while routing is on; the request it
    # records stays with the scorer.
    with sklearn.config_context(enable_metadata_routing=True):
        return scorer.set_score_request(qid=True)


def make_map_scorer(**options):
    """A scikit-learn scorer of MAP over the held-out queries (requests ``qid``)."""
    return _requesting_qid(make_scorer(_map_for_scorer, **options))


def _query_splitter(cv):
    """A splitter that keeps queries whole, with its groups taken from qid."""
    if cv is None or isinstance(cv, (int, np.integer)):
        cv = GroupKFold(5 if cv is None else int(cv))
    if hasattr(cv, "set_split_request"):
        request = cv.get_metadata_routing().consumes("split", ["groups"])
        if "groups" in request:
            cv = cv.set_split_request(groups="qid")
    return cv


def fit_search(search, X, y, qid, **fit_params):
    """Fit a ``GridSearchCV``/``RandomizedSearchCV`` whose folds split by query.

    Metadata routing is enabled for the call. An integer or missing ``cv``
    becomes ``GroupKFold``; a group splitter gets its ``groups`` from ``qid``;
    ``fit`` receives each training split's qid and the scorers the held-out
    qid. Returns the fitted search.
    """
    if not (hasattr(search, "cv") and hasattr(search, "estimator") and hasattr(search, "fit")):
        raise TypeError(f"fit_search fits a search over an estimator (GridSearchCV or "
                        f"RandomizedSearchCV), got {type(search).__name__}: wrap it, for "
                        f"example GridSearchCV({type(search).__name__}(), {{'l1': [0.01, 0.1]}}), "
                        "or call its own fit")
    clicked = sorted(set(fit_params) & {"position", "impressions", "propensity", "session"})
    if clicked:
        raise ValueError(f"fit_search scores each fold's held-out queries by their labels, and "
                         f"{clicked[0]}= makes y a click log: search a click log with "
                         "RSRankCV().fit(X, clicks, qid=..., position=...), which reads it as "
                         "rsrank train --clicks does")
    with sklearn.config_context(enable_metadata_routing=True):
        search.set_params(cv=_query_splitter(search.cv))
        return search.fit(X, y, qid=qid, **fit_params)


def cross_val_score_by_query(estimator, X, y, qid, *, cv=5, scoring=None, **options):
    """``cross_val_score`` with folds of whole queries and qid routed to fit
    and scoring (mean NDCG@eval_k of :meth:`RSRank.score` by default)."""
    with sklearn.config_context(enable_metadata_routing=True):
        return cross_val_score(estimator, X, y, cv=_query_splitter(cv), scoring=scoring,
                               params={"qid": qid}, **options)


def score_by_query(estimator, X, y, qid):
    """``estimator.score(X, y, qid=qid)`` with metadata routing on, so that a
    fitted search or ``Pipeline`` (which drop ``qid`` when routing is off)
    hands ``qid`` to RSRank's ``score``."""
    with sklearn.config_context(enable_metadata_routing=True):
        return estimator.score(X, y, qid=qid)


_FIT_AND_SCORE = ("_fit_and_score", "sklearn.model_selection._validation")
_FIX = ("use rsrank.model_selection.fit_search(search, X, y, qid) or "
        "cross_val_score_by_query(estimator, X, y, qid), which route qid to both")


def _inside_cross_validation(depth=12):
    """Whether scikit-learn's cross-validation loop (GridSearchCV,
    RandomizedSearchCV, cross_val_score, cross_validate, learning_curve, ...)
    is fitting the caller: it fits with the split's fit params and scores
    with only what routing hands the scorer."""
    frame = sys._getframe(2)
    for _ in range(depth):
        if frame is None:
            return False
        if (frame.f_code.co_name, frame.f_globals.get("__name__")) == _FIT_AND_SCORE:
            return True
        frame = frame.f_back
    return False


def check_search_fit(qid):
    """Refuse a fit by scikit-learn's cross-validation whose scores would
    mean nothing, naming the fix.

    With no ``qid`` the split's rows would be ranked as one query; with a
    ``qid`` of several queries but routing off, the scorer would get no
    ``qid`` and every held-out score would be NaN, from which the search
    would still pick ``best_params_``. A one-query ``qid``
    (``np.zeros(n)``) is taken at its word.
    """
    if not _inside_cross_validation():
        return
    if qid is None:
        raise ValueError("a scikit-learn search or cross_val_score fits RSRank without qid, so "
                         "each split's rows would be ranked as one query: " + _FIX)
    if sklearn.get_config()["enable_metadata_routing"] or len(set(np.asarray(qid).tolist())) < 2:
        return
    raise ValueError("a scikit-learn search or cross_val_score with metadata routing off gives "
                     "RSRank's fit its qid but the scorer none, so every score would be NaN: "
                     + _FIX + " (or call sklearn.set_config(enable_metadata_routing=True))")


def _stack(blocks):
    if any(sp.issparse(block) for block in blocks):
        return sp.vstack([sp.csr_matrix(block) for block in blocks], format="csr")
    return np.vstack(blocks)


def letor_fold_split(train, vali):
    """Stack LETOR's train and vali splits for scikit-learn's searches.

    Parameters
    ----------
    train, vali : tuple (X, y, qid)

    Returns
    -------
    X, y, qid, cv
        The stacked data and a ``PredefinedSplit`` whose single split trains
        on the train rows and scores on the vali rows. Use it with
        ``refit=False`` to keep LETOR's protocol (the selected model is
        trained on train only).
    """
    shared = np.intersect1d(np.unique(train[2]), np.unique(vali[2]))
    if len(shared):
        raise ValueError(f"train and vali share {len(shared)} qid values (for example "
                         f"{shared[0]}); a query must be in one split only")
    if train[0].shape[1] != vali[0].shape[1]:
        raise ValueError(f"train has {train[0].shape[1]} features but vali has "
                         f"{vali[0].shape[1]}")
    X = _stack([train[0], vali[0]])
    y = np.concatenate([train[1], vali[1]])
    qid = np.concatenate([train[2], vali[2]])
    test_fold = np.r_[np.full(len(train[1]), -1), np.zeros(len(vali[1]), dtype=int)]
    return X, y, qid, PredefinedSplit(test_fold)
