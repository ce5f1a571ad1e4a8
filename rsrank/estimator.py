"""The scikit-learn face of RSRank: parameters in, a fitted model out.

:class:`RSRank` holds the parameters, checks the data once per public call
and delegates: :mod:`rsrank.learning.fitting` turns the parameters into objects and
runs the fit, :mod:`rsrank.learning.kinds` knows each model kind, and the fitted
model (:mod:`rsrank.learning.model`) scores, names and describes itself.
"""

import copy
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from .learning import blockwise, edges, feature_keys, fitting
from .deployment import persistence
from .clicks.arrays import click_splits
from .clicks.log import check_log_arguments
from .learning.blockwise import Stream
from .learning.fitting import AUTO_RATES, CURVATURE_STEP, Fitted, scale_advice
from .learning.defaults import (DEFAULT_INTERACTION_BINS, DEFAULT_L1_METHOD, DEFAULT_MAX_BINS,
                               DEFAULT_MAX_ITER, DEFAULT_NORMALIZE)
from .learning.kinds import check_rows, takes_missing
from .evaluation.metrics import mean_ndcg
from .learning.model import query_scores
from .evaluation.model_selection import check_search_fit
from .learning.parameters import RSRANK_DOC
from .learning.preprocessing import check_csr, column_moments, combine_moments
from .reading.querydata import QueryData, check_labels
from .learning.solver import DivergenceWarning, SolverState

__all__ = ["RSRank", "FittedViews", "DivergenceWarning", "OneQueryWarning", "warn_without_qid",
           "AUTO_RATES", "CURVATURE_STEP", "scale_advice", "adopt", "fit_of", "warm_of",
           "face_on", "clicks_read_by", "save_estimator", "load_estimator"]


class OneQueryWarning(UserWarning):
    """Training data came without ``qid``, so all of it is one query."""


def warn_without_qid(method, X, qid):
    """One line when ``X`` (not a QueryData) comes without ``qid``: its rows
    are then ranked as one query, which is what scikit-learn's searches do
    with ``groups=qid`` unless ``qid`` is routed to ``fit``."""
    n_rows = 0 if qid is not None or isinstance(X, QueryData) else (
        X.shape[0] if hasattr(X, "shape") else len(X))
    if n_rows >= 2:
        warnings.warn(f"{method}() got no qid: its {n_rows} rows are ranked as one query; "
                      "pass qid= (one id per row), or for GridSearchCV and cross_val_score use "
                      "rsrank.model_selection.fit_search or cross_val_score_by_query, which "
                      "route it (qid=np.zeros(n) says one query)", OneQueryWarning, stacklevel=3)


class FittedViews:
    """What a fitted :class:`RSRank` says of its model (``self.model_``):
    its function on raw features, its features' names, the features and
    pairs it uses and their shapes, and their cost."""

    def _model(self):
        check_is_fitted(self)
        return self.model_

    def linear_function(self):
        """The model on raw features: ``(weights, constant)`` with ``predict(X)
        == X @ weights + constant`` (:meth:`rsrank.learning.model.LinearModel.linear_function`)."""
        return self._model().linear_function()

    def feature_names(self):
        """The name of every feature: those given, else the training
        DataFrame's columns, else LETOR's 1-based ``"f1", "f2", ..."``."""
        return self._model().names()

    def selected_features(self):
        """The features in use as ``[(name, weight), ...]`` by decreasing
        ``|weight|`` (on the scaled features), or for an additive model
        ``[(name, spread), ...]`` by decreasing spread of their shapes."""
        return self._model().selected_features()

    def shape_functions(self):
        """See :meth:`rsrank.learning.model.AdditiveModel.shape_functions`."""
        return self._model().shape_functions()

    def selected_interactions(self):
        """The pairs in use as ``[((name_a, name_b), spread), ...]``, largest first."""
        return self._model().selected_interactions()

    def interaction_functions(self):
        """See :meth:`rsrank.learning.model.InteractionModel.interaction_functions`."""
        return self._model().interaction_functions()

    def set_feature_names(self, names):
        """Name the features of a model trained without column names (for
        :meth:`selected_features`, model files and exports); returns self."""
        self.model_ = self._model().with_names(names)
        return self

    def feature_cost(self):
        """The total ``feature_costs`` of the features the model uses (a
        non-zero weight or step); without costs, their number."""
        used = self._model().selected_indices()
        costs = feature_keys.feature_costs(self.get_params(deep=False), self.model_)
        return float(len(used) if costs is None else costs[used].sum())


class RSRank(FittedViews, BaseEstimator):
    __doc__ = RSRANK_DOC

    # qid is routed to fit, partial_fit and score by default, so that
    # scikit-learn's searches pass each split's queries once routing is on.
    __metadata_request__fit = {"qid": True}
    __metadata_request__partial_fit = {"qid": True}
    __metadata_request__score = {"qid": True}
    __metadata_request__predict = {"qid": True}

    def __init__(self, learning_rate="auto", power_t=0.0, normalize=DEFAULT_NORMALIZE, l1=0.0,
                 truncation_period=1, truncation_threshold=np.inf, l1_method=DEFAULT_L1_METHOD,
                 average=False, max_iter=DEFAULT_MAX_ITER, batch_size=None, shuffle=True, ndcg_k=None,
                 gain="exp2", discount="log2", pair_loss="modified_huber",
                 pair_weight="delta_ndcg", eval_k=10, eval_convention="letor",
                 early_stopping=False, validation_fraction=0.1, n_iter_no_change=10, tol=1e-4,
                 restore_best=True, eval_train=True, random_state=None, warm_start=False,
                 n_jobs=None, verbose=0, weight_tol=None, additive=False, max_bins=DEFAULT_MAX_BINS,
                 l1_group=0.0, feature_costs=None, relax=False, exclude=None, interactions=0,
                 interaction_bins=DEFAULT_INTERACTION_BINS, monotone=None, momentum=None,
                 missing="refuse"):
        vars(self).update({name: value for name, value in locals().items() if name != "self"})

    # -- the parameters as objects ------------------------------------------------

    def setup(self):
        """The :class:`~rsrank.learning.fitting.Setup` of the parameters (kind,
        solver, monitoring); building it checks every parameter."""
        return fitting.setup(self.get_params(deep=False))

    def solver(self):
        """The :class:`~rsrank.learning.solver.Solver` that ``fit`` runs."""
        return self.setup().solver

    def penalty_layout(self, model):  # see rsrank.learning.feature_keys.penalty_layout
        return feature_keys.penalty_layout(self.get_params(deep=False), model)

    def _data(self, X, y=None, qid=None, *, reset=False, **options):
        """``X`` as a :class:`QueryData` (with its ``options``), checked
        against the fitted width and names (``reset``: record them)."""
        if not isinstance(X, QueryData):
            validate_data(self, X, reset=reset, skip_check_array=True)
            return QueryData(X, y, qid, **options)
        if not reset and X.n_features != self.n_features_in_:
            raise ValueError(f"X has {X.n_features} features, but RSRank is expecting "
                             f"{self.n_features_in_} features as input.")
        if reset:
            self.n_features_in_ = X.n_features
            vars(self).pop("feature_names_in_", None)
            if X.names_from_columns:
                self.feature_names_in_ = np.asarray(X.feature_names, dtype=object)
        return X

    def _scorable(self, data):
        """``data``, refused in one line when it holds a missing value the
        model cannot score (as ``predict`` refuses one in an array)."""
        check_rows(self.model_, self.get_params(deep=False), data, "X")
        return data

    def validation_data(self, eval_set):
        """``eval_set`` (``(X, y, qid)`` or a QueryData, or None) as the
        QueryData a fit validates on, checked against the training width."""
        if eval_set is None or isinstance(eval_set, QueryData):
            return eval_set if eval_set is None else self._data(eval_set)
        if len(eval_set) != 3:
            raise ValueError("eval_set must be a tuple (X_val, y_val, qid_val) or a QueryData")
        return self._data(*eval_set)

    # -- training --------------------------------------------------------------

    def fit(self, X, y=None, *, qid=None, eval_set=None, coef_init=None, position=None,
            impressions=None, propensity=None, session=None):
        """Train on queries, graded or clicked.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_rows, n_features) or QueryData
            One row per query-document pair. CSR stays sparse; float32 stays
            float32.
        y : array-like of shape (n_rows,)
            Non-negative integer relevance grades (not with a QueryData).
        qid : array-like of shape (n_rows,), optional
            Query id per row; rows of a query need not be adjacent. None: all
            rows form one query.
        eval_set : tuple (X_val, y_val, qid_val) or QueryData, optional
            Validation queries for ``history_``, early stopping and keeping the
            best epoch.
        coef_init : array-like of shape (n_features,), optional
            Start vector (default zeros, or the previous ``coef_`` with
            ``warm_start``).
        position : array-like of shape (n_rows,), optional
            With it, the rows are a click log: each row one impression of a
            document at this position (1 is the top) and ``y`` its click (0
            or 1), as LightGBM takes positions; or, with ``impressions``,
            each row a document at a position, shown ``impressions`` times
            and clicked ``y`` times. The examination of each position is
            estimated from the log (or taken from ``propensity``, one chance
            per position from the top) and the documents are graded by
            their clicks without its bias (:mod:`rsrank.clicks.propensity`;
            ``examination_`` holds the curve). ``eval_set`` is then a click
            log too: ``(X_val, clicks_val, qid_val, position_val)``.
        impressions, propensity : array-like, optional
            See ``position``.
        session : array-like of shape (n_rows,), optional
            With ``position`` (and without ``impressions``), each row's
            session. A position-based log then trains on its sessions'
            clicks, each over what its session left unclicked and weighted
            by the inverse of its position's examination
            (:func:`rsrank.clicks.session_lists`), summed per pair of
            documents of a query (:func:`rsrank.clicks.click_preferences`);
            ``eval_set`` then takes ``session_val`` fifth, and validates on
            its lists. A cascade's log is graded as without it.

        Returns
        -------
        self
        """
        check_log_arguments(position, impressions, propensity, session)
        vars(self).pop("click_model_", None)
        if position is not None:
            X, eval_set = clicks_read_by(self, X, y, qid, position, impressions, propensity,
                                            session, eval_set)
            y = qid = None
        if not isinstance(X, QueryData):
            check_search_fit(qid)
        warn_without_qid("fit", X, qid)
        plan, warm = self.setup(), warm_of(self)
        data = self._data(X, y, qid, reset=warm is None)
        return adopt(self, fitting.fit(plan, data, self.validation_data(eval_set), warm=warm,
                                       coef_init=coef_init))

    def refit_kept(self, X, y=None, *, qid=None, eval_set=None):
        """A new estimator fitted from this fit's weights on the features it
        keeps, without ``l1`` or ``l1_group``, the others excluded (the
        relaxed fit of ``relax``; see :func:`rsrank.learning.fitting.refit_kept`)."""
        check_is_fitted(self)
        fitted = fitting.refit_kept(self.setup(), fit_of(self), self._data(X, y, qid),
                                    self.validation_data(eval_set))
        return _face(self, fitted)

    def fit_chunks(self, chunks, *, eval_set=None, coef_init=None):
        """Train on data that does not fit in memory, one block of queries at a time.

        Parameters
        ----------
        chunks : callable
            Called once per epoch; returns an iterable of ``(X, y, qid)``
            blocks holding whole queries, for example
            ``lambda: rsrank.iter_letor_chunks(path, 1000, n_features=136)``.
            Within a block the queries are visited in random order when
            ``shuffle`` is on; blocks come in the order given.
        eval_set : tuple (X_val, y_val, qid_val) or QueryData, optional
            In-memory validation queries, as in :meth:`fit`.
        coef_init : array-like, optional

        The training NDCG is not computed (it would take another pass), so
        ``history_["train_ndcg"]`` holds NaN. Over blocks that cover the same
        queries in the same order, with ``shuffle=False``, the result equals
        :meth:`fit`.
        """
        plan, warm = self.setup(), warm_of(self)
        if warm is not None and getattr(self, "click_model_", None) is not None:
            raise ValueError("this model was fitted on a click log: fit_chunks would continue "
                             "it on labels; continue it on clicks with partial_fit(..., "
                             "position=...), or set warm_start=False")
        vars(self).pop("click_model_", None)
        first = self._data(*_first_block(chunks, "fit_chunks"), reset=warm is None)
        return adopt(self, blockwise.fit_stream(
            plan, first, lambda: (self._data(*_block(block, "fit_chunks"))
                                  for block in chunks()),
            lambda: _stream_moments(chunks, first.n_features), self.validation_data(eval_set),
            warm=warm, coef_init=coef_init))

    def partial_fit(self, X, y=None, *, qid=None, position=None, impressions=None,
                    session=None):
        """One pass over the given queries, continuing from the current weights
        and step count (for data that arrives in blocks of whole queries).
        Without a fit, the first block fixes what a fit would take from the
        training data: the scaling, an additive model's thresholds and
        pairs, and with ``learning_rate="curvature"`` or ``"auto"`` the
        step size; after a fit, the blocks go on with the fit's.

        With ``position`` (and ``impressions`` or ``session``, as :meth:`fit`
        takes them) a block is a click log, read with the examination and
        classes of click chance of the fit on clicks it continues (or,
        first, of its own). A model fitted on clicks continues on clicks
        only, and one fitted on labels on labels only."""
        plan, first = self.setup(), not hasattr(self, "model_")
        clicked = getattr(self, "click_model_", None)
        if position is not None or clicked is not None:
            if position is None:
                raise ValueError("this model was fitted on a click log: give partial_fit the "
                                 "block's position= (and session= or impressions=) too, so that "
                                 "its clicks are read as the fit's were, not as grades")
            if clicked is None and not first:
                raise ValueError("this model was fitted on labels: partial_fit continues it "
                                 "on labels; fit a click log with fit(..., position=...)")
            X, _ = clicks_read_by(self, X, y, qid, position, impressions, None, session, None,
                                     model=clicked)
            y = qid = None
        warn_without_qid("partial_fit", X, qid)
        data = self._data(X, y, qid, reset=first)
        if not hasattr(self, "_partial_rng"):
            self._partial_rng = check_random_state(self.random_state)
        return adopt(self, blockwise.partial_fit(plan, data, None if first else fit_of(self),
                                               self._partial_rng))

    def l1_max(self, X, y=None, *, qid=None):
        """The smallest ``l1`` at which this estimator, fitted on the data,
        keeps every weight at zero (in the units of ``coef_``, the scaled
        features): the top of a regularization path scaled to the data."""
        data = X if isinstance(X, QueryData) else QueryData(X, y, qid)
        return edges.l1_edge(self.setup(), data)

    def l1_group_max(self, X, y=None, *, qid=None):
        """The smallest ``l1_group`` at which this estimator (without
        ``l1``) keeps every weight at zero."""
        data = X if isinstance(X, QueryData) else QueryData(X, y, qid)
        return edges.group_edge(self.setup(), data)

    def l1_max_chunks(self, chunks):
        """:meth:`l1_max` of training data read in blocks of whole queries,
        as :meth:`fit_chunks` reads it: one pass for the scaling, one for
        the gradient at zero."""
        first = QueryData(*_first_block(chunks, "l1_max_chunks"))
        moments = _stream_moments(chunks, first.n_features, "l1_max_chunks")
        return edges.l1_edge(self.setup(), (QueryData(*block) for block in chunks()),
                               source=Stream(first, lambda: moments, "l1_max_chunks"))

    # -- the fitted model --------------------------------------------------------

    coef_ = property(lambda self: self._fitted("model_").coef)
    feature_offset_ = property(lambda self: self._fitted("model_").offset)
    feature_scale_ = property(lambda self: self._fitted("model_").scale)
    t_ = property(lambda self: self._fitted("solver_state_").t)

    def _fitted(self, name):
        if name not in vars(self):
            raise AttributeError("this RSRank is not fitted yet")
        return vars(self)[name]

    def predict(self, X, *, qid=None):
        """Scores of the rows; sort a query's documents by decreasing score.
        A per-query scaling needs ``qid``. The scores of a :class:`QueryData`
        come in the row order it was built from."""
        check_is_fitted(self)
        if isinstance(X, QueryData):
            return self._data(X).in_input_order(query_scores(self.model_, self._scorable(X),
                                                             self.n_jobs))
        X = validate_data(self, X, reset=False, accept_sparse="csr",
                          dtype=[np.float64, np.float32], order="C",
                          ensure_all_finite="allow-nan")  # the model takes or refuses NaN
        return self.model_.score_matrix(check_csr(X), qid, self.n_jobs)

    def score(self, X, y=None, *, qid=None, sample_weight=None):
        """Mean NDCG@``eval_k`` over queries with ``eval_convention``.
        ``qid=None`` with a model trained on several queries is almost
        always a lost ``qid``, so it is an error."""
        if sample_weight is not None:
            raise ValueError("score() has no per-row sample weights: NDCG weighs queries, "
                             "not rows")
        check_is_fitted(self)
        if isinstance(X, QueryData):
            return mean_ndcg(X.y, query_scores(self.model_, self._scorable(self._data(X)),
                                               self.n_jobs),
                             X.groups, self.eval_k, convention=self.eval_convention)
        if qid is None and self.model_.n_fit_queries > 1:
            raise ValueError(
                "score() got no qid, but the model was trained on "
                f"{self.model_.n_fit_queries} queries: pass qid=...; a Pipeline or a fitted "
                "search drops it while metadata routing is off: use "
                "rsrank.model_selection.score_by_query(estimator, X, y, qid), or "
                "sklearn.set_config(enable_metadata_routing=True)")
        scores = self.predict(X, qid=qid)
        return mean_ndcg(check_labels(y, scores.shape[0]), scores, qid, self.eval_k,
                         convention=self.eval_convention)

    # -- model files -------------------------------------------------------------

    def save(self, path):
        """Write the fitted model as a small versioned JSON file (atomically);
        see :func:`rsrank.deployment.persistence.save_model`."""
        save_estimator(self, path)

    @classmethod
    def load(cls, path):
        """Read a model written by :meth:`save`; see :func:`rsrank.deployment.persistence.load_model`."""
        return load_estimator(cls, path)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = takes_missing(self.get_params(deep=False))
        return tags


def clicks_read_by(estimator, X, clicks, qid, position, impressions, propensity, session,
                   eval_set, model=None):
    """A click log ``estimator`` fits on (:meth:`RSRank.fit`,
    :meth:`RSRank.partial_fit`), read as
    :func:`rsrank.clicks.arrays.click_splits` reads one, with the
    position's bias taken out: ``(train, validation)`` as
    :class:`QueryData` (validation None without ``eval_set``). ``model``: a former fit's classes of click chance,
    read with instead of the log's own. X is held to the rules of a fit
    on labels, every row of it."""
    found = click_splits(X, clicks, qid, position, impressions=impressions,
                         session=session, propensity=propensity, eval_set=eval_set,
                         vali_fraction=None, params=estimator.get_params(deep=False),
                         model=model)
    if model is None:
        estimator.examination_ = found.examination
    estimator.click_model_ = found.model
    return found.train["on"], found.vali.get("on")


def save_estimator(estimator, path):
    """:meth:`RSRank.save`."""
    check_is_fitted(estimator)
    model, params = estimator.model_, estimator.get_params(deep=False)
    if isinstance(estimator.feature_costs, dict):  # JSON keys are text: one cost per feature
        params["feature_costs"] = feature_keys.feature_costs(params, model).tolist()
    if isinstance(estimator.monotone, dict):  # ... and one direction per feature
        directions = feature_keys.monotone_directions(params, model)
        params["monotone"] = None if directions is None else directions.tolist()
    persistence.save_model(path, model, params, {
        "n_iter": estimator.n_iter_, "t": estimator.t_,
        "best_iteration": estimator.best_iteration_})


def load_estimator(cls, path):
    """:meth:`RSRank.load`: an estimator of class ``cls``."""
    saved = persistence.load_model(path)
    unknown = sorted(set(saved.params) - set(cls._get_param_names()))
    if unknown:
        raise persistence.ModelFileError(path, f"unknown parameters {unknown}")
    try:
        estimator = cls(**saved.params)
        plan = estimator.setup()
    except (TypeError, ValueError) as error:
        raise persistence.ModelFileError(path, f"invalid parameter: {error}") from None
    _take_columns(estimator, saved.model)
    return adopt(estimator, Fitted(
        saved.model, SolverState(saved.model.coef.copy(), saved.fitted["t"]),
        saved.fitted["n_iter"], saved.fitted["best_iteration"], {}, None,
        plan.kind.shape(plan.model)))


def _face(estimator, fitted):
    """A new estimator of ``fitted``'s parameters holding it."""
    face = _blank(estimator, fitted)
    face.n_features_in_ = estimator.n_features_in_
    if hasattr(estimator, "feature_names_in_"):
        face.feature_names_in_ = estimator.feature_names_in_
    return adopt(face, fitted)


def _blank(template, fitted):
    """A new estimator of ``template``'s type with ``fitted``'s parameters,
    each copied as scikit-learn's ``clone`` copies them (a fit shares
    them with its setup)."""
    names = template.get_params(deep=False)
    return type(template)(**{k: copy.deepcopy(v) for k, v in fitted.params.items()
                             if k in names})


def face_on(template, fitted):
    """A new estimator of ``template``'s type and ``fitted``'s parameters
    holding the fit (a :class:`~rsrank.learning.fitting.Fitted`), as ``fit``
    would have left it: the width and column names of the rows it was
    fitted on are its model's (every kind starts from them), so the face
    needs no rows."""
    face = _blank(template, fitted)
    _take_columns(face, fitted.model)
    return adopt(face, fitted)


def _take_columns(estimator, model):
    """``n_features_in_`` and, when a DataFrame's columns named them,
    ``feature_names_in_`` from a model value."""
    estimator.n_features_in_ = model.n_features
    if model.names_from_columns:
        estimator.feature_names_in_ = np.asarray(model.feature_names, dtype=object)


def adopt(estimator, fitted):
    """Take a :class:`~rsrank.learning.fitting.Fitted` as ``estimator``'s fit (the
    fitted attributes of :class:`RSRank` and of faces like
    :class:`~rsrank.dask.DaskRSRank`); returns ``estimator``."""
    vars(estimator).pop("penalized_", None)
    estimator.model_, estimator.solver_state_ = fitted.model, fitted.state
    estimator.model_shape_, estimator.learning_rate_ = fitted.shape, fitted.learning_rate
    estimator.n_iter_, estimator.best_iteration_ = fitted.n_iter, fitted.best_iteration
    estimator.history_ = fitted.history
    if fitted.penalized is not None:
        estimator.penalized_ = _face(estimator, fitted.penalized)
    return estimator


def fit_of(estimator):
    """The fit of a fitted ``estimator`` as a :class:`~rsrank.learning.fitting.Fitted`
    (the inverse of :func:`adopt`)."""
    check_is_fitted(estimator)
    return Fitted(estimator.model_, estimator.solver_state_, estimator.n_iter_,
                  getattr(estimator, "best_iteration_", None), getattr(estimator, "history_", {}),
                  getattr(estimator, "learning_rate_", None), estimator.model_shape_,
                  params=estimator.get_params(deep=False))


def warm_of(estimator):
    """What ``estimator``'s ``warm_start`` goes on from: its fit, or None
    for a fresh one."""
    if not (estimator.warm_start and hasattr(estimator, "model_")):
        return None
    return fit_of(estimator)


def _first_block(chunks, method):
    first = next(iter(chunks()), None)
    if first is None:
        raise ValueError(f"{method}: the chunks gave no block of queries")
    return _block(first, method)


def _block(block, method):
    """A block ``(X, y, qid)`` of a stream, or a one-line error."""
    if not isinstance(block, (tuple, list)) or len(block) != 3:
        size = f"{len(block)} items" if isinstance(block, (tuple, list)) else \
            type(block).__name__
        raise ValueError(f"{method}: each block is (X, y, qid) of judged queries, got {size}; "
                         "a click log is read whole (its examination is estimated over all "
                         "its sessions): fit(X, clicks, qid=..., position=...) reads one, "
                         "and partial_fit(..., position=...) continues that fit a block at "
                         "a time")
    return block


def _stream_moments(chunks, width, method="fit_chunks"):
    """Column moments of every block of a stream (one pass)."""
    moments = None
    for block in chunks():
        X = check_array(_block(block, method)[0], accept_sparse="csr",
                        dtype=[np.float64, np.float32])
        if X.shape[1] != width:
            raise ValueError(f"X has {X.shape[1]} features, but RSRank is expecting {width} "
                             "features as input.")
        found = column_moments(X)
        moments = found if moments is None else combine_moments(moments, found)
    return moments
