"""``rsrank train``'s recipe as one scikit-learn estimator, in the manner of
``LassoCV``: :class:`RSRankCV` walks the regularization path scaled to the
data for both pair weightings and keeps the sparsest point within 1% of the
best, judged on an ``eval_set`` (as ``rsrank train`` judges on vali, by the
same function, :func:`rsrank.evaluation.experiments.fit_and_select`) or, without one,
on folds of the training queries.
"""

import contextlib
import sys
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.model_selection import ParameterGrid
from sklearn.utils.validation import check_is_fitted

from .clicks.arrays import click_splits
from .clicks.choice import debias_choice
from .clicks.log import check_log_arguments
from .estimator import OneQueryWarning, warn_without_qid
from .evaluation.experiments import fit_and_select, parse_metric
from .evaluation.model_selection import check_search_fit
from .learning._blas import serial_blas
from .learning.path import reporting_fits
from .reading.querydata import QueryData
from .learning.recipe import DEFAULT_WITHIN, train_recipe, vali_folds
from .learning.selection import check_within

__all__ = ["RSRankCV"]


class RSRankCV(BaseEstimator):
    """``rsrank train``'s recipe as an estimator: a regularization path
    with model selection built in, as ``LassoCV`` is for the lasso.

    :meth:`fit` walks the path of :func:`rsrank.learning.recipe.train_recipe` (L1
    strengths as fractions of the data's edge, from strong to weak, each
    point warm-started and kept at its settled last epoch at the step of
    the loss's curvature; with ``additive`` whole shapes in or out, each
    point refit on the shapes it kept), for every pair weighting, and keeps
    the sparsest fit whose mean validation score is within ``within`` of
    the best (:func:`rsrank.learning.selection.sparsest_within`; with
    ``with_linear``, each kind's so, and the one-standard-error rule
    between them, :func:`rsrank.learning.selection.choose_fit`):

    * with an ``eval_set``, scored on its queries, exactly as ``rsrank
      train`` selects on vali (one implementation,
      :func:`rsrank.evaluation.experiments.fit_and_select`);
    * without one, scored on the held-out queries of ``cv`` folds of the
      training queries (each query's value from the fold that held it
      out), and the choice is that point of the path fitted on all of
      them.
    * with fewer training queries than folds (one, without ``qid``), scored
      on the training data itself, with a warning (``validated_on_`` says
      so), as ``LassoCV`` still fits on tiny data.

    Parameters
    ----------
    l1_ratio : list of float, optional
        The path's strengths as fractions of the data's edge (``l1_max``,
        or ``l1_group_max`` for the additive kinds), strong to weak;
        default :data:`rsrank.learning.recipe.DEFAULT_L1_RATIO`, or with ``within``
        of 0.03 or more :data:`rsrank.learning.recipe.SPARSE_L1_RATIO`.
    pair_weight : list of str, optional
        The pair weightings walked (default both, ``"unit"`` and
        ``"delta_ndcg"``).
    within : float or "1se", default=0.01
        The selection rule: the sparsest fit within this fraction of the
        best mean score (0: the best), or within one standard error of it
        over the queries. 0.03 or more takes the sparse recipe (``rsrank
        train --within 0.03``): the path denser where the models are
        sparse, and the ``cv`` folds judged on beside an ``eval_set``.
    cv : int or splitter, default=3
        Without an ``eval_set``, or beside it in the sparse recipe: the
        number of folds of the training queries, or a splitter whose
        ``split(X, y, groups)`` is given one row per query (``groups``:
        the query's position).
    select : str, default="ndcg@10"
        The score: ``"ndcg@K"``, ``"p@K"`` or ``"map"``.
    convention : str, default="letor"
        Its convention (:mod:`rsrank.evaluation.metrics`).
    additive, max_bins, interactions, interaction_bins, monotone, feature_costs, normalize, max_iter
        The model, as for :class:`~rsrank.estimator.RSRank` (None: the
        recipe's default).
    with_linear : bool, default=False
        With ``additive``: also walk the linear model's path; the linear
        model is kept unless the shapes beat it on the validation queries
        by more than one standard error of the paired difference
        (:func:`rsrank.learning.selection.choose_fit`; ``rsrank train
        --with-linear``).
    random_state : int, default=0
    n_jobs : int, "auto" or None, default="auto"
        Threads per fit.
    verbose : int, default=0
        0: silent, as scikit-learn's CV estimators are. 1: one line on
        stderr per fit of the path as it ends (its point, and which of
        how many), wherever stderr goes (a log file, a notebook). 2 and
        more: also each fit's epochs (:class:`RSRank`'s ``verbose``).
    missing : {"refuse", "zero", "mean"} or None, default=None
        What a missing value stands for in a linear model
        (:class:`RSRank`'s ``missing``; None: its default, refuse).
    debias : {"auto", "on", "off"}, default="auto"
        How :meth:`fit` reads a click log (given ``position``), as ``rsrank
        train --clicks --debias``: with the position's bias taken out
        (``"on"``), as plain clicks, each session a query (``"off"``), or
        both, keeping the one that ranks the vali log's documents better
        (``"auto"``, :func:`rsrank.clicks.choice.debias_choice`).

    Attributes
    ----------
    estimator_ : RSRank
        The chosen fit; :meth:`predict`, :meth:`score` and the model's
        descriptions are its own.
    best_params_ : dict
        Its parameters on the grid (``l1_ratio`` or ``l1_group_ratio``,
        the strength it stood for, ``pair_weight``, ``relax``).
    best_index_ : int
        Its position in ``path_``.
    path_ : list of dict
        Every fit of the path: ``params``, ``kind`` (the model's kind,
        ``"linear"`` or the additive one: with ``with_linear`` the path
        holds both), ``vali_score`` (the mean over the validation
        queries), ``n_nonzero`` (features in use) and with
        ``feature_costs`` their ``cost``; ``per_query`` holds the values
        per query.
    validated_on_ : str
        ``"eval_set"``, ``"k folds"`` of the training queries, or (the
        sparse recipe with an ``eval_set``) ``"eval_set and k folds"``.
    examination_ : Examination or None
        On a click log read with its bias taken out: the curve found.
    debias_ : str or DebiasChoice
        On a click log: ``"on"`` or ``"off"``, or with ``debias="auto"``
        the comparison that chose (its ``debiased``).
    """

    __metadata_request__fit = {"qid": True}
    __metadata_request__score = {"qid": True}
    __metadata_request__predict = {"qid": True}

    def __init__(self, *, l1_ratio=None, pair_weight=None, within=DEFAULT_WITHIN, cv=3,
                 select="ndcg@10", convention="letor", additive=False, max_bins=None,
                 interactions=0, interaction_bins=None, monotone=None, feature_costs=None,
                 normalize="zscore", max_iter=None, with_linear=False, random_state=0,
                 n_jobs="auto", verbose=0, missing=None, debias="auto"):
        vars(self).update({name: value for name, value in locals().items() if name != "self"})

    def recipe(self):
        """``(estimator, grid)``: the base :class:`RSRank` and the list of
        grid points the path walks."""
        estimator, grid = train_recipe(
            additive=self.additive, max_bins=self.max_bins, interactions=self.interactions,
            interaction_bins=self.interaction_bins, monotone=self.monotone,
            normalize=self.normalize, max_iter=self.max_iter, feature_costs=self.feature_costs,
            pair_weight=None if self.pair_weight is None else list(self.pair_weight),
            seed=self.random_state, convention=self.convention, n_jobs=self.n_jobs,
            verbose=max(self.verbose - 1, 0), within=self.within,
            with_linear=self.with_linear, missing=self.missing)
        if self.l1_ratio is not None:  # each kind's path: weights, or whole shapes
            for part in grid if isinstance(grid, list) else [grid]:
                strength = next(name for name in part if name.endswith("_ratio"))
                part[strength] = [float(r) for r in self.l1_ratio]
        return estimator, list(ParameterGrid(grid))

    @serial_blas()  # between the path's fits too, as the command line holds it
    def fit(self, X, y=None, *, qid=None, eval_set=None, position=None, impressions=None,
            propensity=None, session=None):
        """Walk the path on ``X`` (arrays with ``qid``, or a
        :class:`~rsrank.reading.querydata.QueryData`) and keep the chosen fit,
        judged on ``eval_set`` (``(X, y, qid)`` or a QueryData) or on
        ``cv`` folds of the training queries. With ``position`` (and
        ``impressions``, ``propensity`` or ``session``, as
        :meth:`RSRank.fit` takes them) the rows are a click log, read as
        ``debias`` says and judged on ``eval_set``'s click log ``(X_val,
        clicks_val, qid_val, position_val[, session_val])``, or without one
        on a seeded fifth of the log's queries, as ``rsrank train --clicks``
        does. Returns self."""
        parse_metric(self.select)
        check_within(self.within)
        if position is not None:
            return self._fit_clicks(X, y, qid, eval_set, position, impressions, propensity,
                                    session)
        check_log_arguments(position, impressions, propensity, session)
        if not isinstance(X, QueryData):
            check_search_fit(qid)
            warn_without_qid("RSRankCV.fit", X, qid)
        train = X if isinstance(X, QueryData) else QueryData(X, y, qid)
        validation = None
        if eval_set is not None:
            validation = (eval_set if isinstance(eval_set, QueryData)
                          else QueryData(*_triple(eval_set)))
        vars(self).pop("examination_", None)
        vars(self).pop("debias_", None)
        return self._walk(train, validation)

    def _fit_clicks(self, X, clicks, qid, eval_set, position, impressions, propensity,
                    session):
        """:meth:`fit` on a click log (:func:`rsrank.clicks.arrays.click_splits`)."""
        found = click_splits(X, clicks, qid, position, impressions=impressions,
                             session=session, propensity=propensity, eval_set=eval_set,
                             debias=self.debias, random_state=self.random_state,
                             params=self.recipe()[0].get_params(deep=False))
        readings = {debias: self._walk(found.train[debias], found.vali[debias]).__dict__.copy()
                    for debias in found.train}
        if len(readings) == 1:
            (kept, fitted), = readings.items()
            choice = kept
        else:
            choice = debias_choice(readings["on"]["estimator_"], readings["off"]["estimator_"],
                                   found.judge, metric=_metric_name(self.select))
            fitted = readings["on" if choice.debiased else "off"]
        vars(self).update(fitted)
        self.examination_ = found.examination if "on" in readings else None
        self.debias_ = choice
        return self

    def _walk(self, train, validation):
        """Walk the path on ``train``, judged on ``validation`` or folds, and
        keep the chosen fit. Returns self."""
        estimator, grid = self.recipe()
        cv = self.cv if validation is None or vali_folds(self.within) else None
        in_sample = cv is not None and len(train.qids) < self._folds_of(cv)
        if in_sample:  # too few queries for the folds: the path judged on its own data
            warnings.warn(f"RSRankCV.fit: {len(train.qids)} training "
                          f"quer{'y' if len(train.qids) == 1 else 'ies'} for {self._folds()} "
                          "folds, so each point of the path is judged on the training data; "
                          "give more queries (qid=) or an eval_set", OneQueryWarning,
                          stacklevel=3)
            validation, cv = validation or train, None
        report = contextlib.nullcontext()
        if self.verbose:
            report = reporting_fits(_FitLines(len(_points(grid)) * (1 + self._folds_of(cv))))
        with report:
            selection = fit_and_select(estimator, grid, train, validation, select=self.select,
                                       convention=self.convention, within=self.within,
                                       path=True, cv=cv)
        tried, per_query, chosen = selection.tried, selection.per_query, selection.chosen
        self.validated_on_ = "the training data" if in_sample else " and ".join(
            ([] if validation is None else ["eval_set"])
            + ([] if cv is None else [f"{self._folds()} folds"]))
        self.path_ = [{**t, "per_query": np.asarray(v)} for t, v in zip(tried, per_query)]
        self.best_index_, self.best_params_ = chosen, tried[chosen]["params"]
        self.estimator_ = selection.model
        self.n_features_in_ = self.estimator_.n_features_in_
        if hasattr(self.estimator_, "feature_names_in_"):
            self.feature_names_in_ = self.estimator_.feature_names_in_
        return self

    def _folds_of(self, cv):
        if cv is None:
            return 0
        return cv if isinstance(cv, (int, np.integer)) else cv.get_n_splits()

    def _folds(self):
        return self.cv if isinstance(self.cv, (int, np.integer)) else self.cv.get_n_splits()

    # -- the chosen fit --------------------------------------------------------

    def _chosen(self):
        check_is_fitted(self, "estimator_")
        return self.estimator_

    def predict(self, X, *, qid=None):
        """The chosen fit's scores (:meth:`RSRank.predict`)."""
        return self._chosen().predict(X, qid=qid)

    def score(self, X, y=None, *, qid=None, sample_weight=None):
        """The chosen fit's mean NDCG (:meth:`RSRank.score`)."""
        return self._chosen().score(X, y, qid=qid, sample_weight=sample_weight)

    def selected_features(self):
        return self._chosen().selected_features()

    def selected_interactions(self):
        return self._chosen().selected_interactions()

    def save(self, path):
        """Write the chosen fit's model file (:meth:`RSRank.save`)."""
        self._chosen().save(path)

    @property
    def coef_(self):
        return self._chosen().coef_

    @property
    def l1_ratio_(self):
        """The chosen strength as a fraction of the edge."""
        self._chosen()
        return self.best_params_.get("l1_ratio", self.best_params_.get("l1_group_ratio"))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _metric_name(select):
    """The per-query metric of ``select`` (``"ndcg@10"``) as
    :func:`rsrank.evaluation.metrics.letor_per_query` names it (``"NDCG@10"``)."""
    kind, k = parse_metric(select)
    return "MAP" if kind == "map" else f"{kind.upper()}@{k}"


def _triple(eval_set):
    if len(eval_set) != 3:
        raise ValueError("eval_set must be a tuple (X_val, y_val, qid_val) or a QueryData")
    return eval_set


def _points(grid):
    """The points of a path's grid: a list of points, or a dict of lists."""
    if isinstance(grid, dict):
        return list(ParameterGrid(grid))
    return [point for part in grid for point in _points(part)] if any(
        isinstance(part, dict) and any(isinstance(v, list) for v in part.values())
        for part in grid) else list(grid)


class _FitLines:
    """``RSRankCV(verbose=1)``'s progress: a line on stderr per fit."""

    def __init__(self, total):
        self.total, self.done, self.start = total, 0, time.perf_counter()

    def __call__(self, params):
        self.done += 1
        shown = ", ".join(f"{name}={value:.4g}" if isinstance(value, float) else
                          f"{name}={value}" for name, value in sorted(params.items()))
        print(f"RSRankCV: fit {self.done} of about {self.total} ({shown}), "
              f"{time.perf_counter() - self.start:.1f} s", file=sys.stderr, flush=True)
