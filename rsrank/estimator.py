"""The scikit-learn face of RSRank: parameters in, a fitted model out.

:class:`RSRank` only assembles: the data is a :class:`~rsrank.querydata.QueryData`,
the parameters build an :class:`~rsrank.objective.Objective`, an
:class:`~rsrank.penalty.L1Penalty` and a :class:`~rsrank.solver.Solver`, and
the result is a :class:`~rsrank.model.LinearModel`, which model files and
exports read.
"""

import warnings
from dataclasses import replace

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from . import persistence
from .metrics import CONVENTIONS, mean_ndcg
from .binning import StepEncoding
from .model import AdditiveModel, LinearModel
from .objective import Objective
from .penalty import L1Penalty, check_number
from .preprocessing import GLOBAL_NORMALIZERS, NORMALIZERS, QUERY_NORMALIZERS, \
    column_moments, combine_moments, query_normalize, scaling_from_moments
from .querydata import QueryData, check_labels, matrix_rows
from .solver import DivergenceWarning, Monitoring, Solver, SolverState, finite_check

__all__ = ["RSRank", "DivergenceWarning", "OneQueryWarning", "AUTO_RATES"]

#: The step sizes ``learning_rate="auto"`` tries on the validation data, and
#: the one it takes without validation data
AUTO_RATES = (1e-3, 1e-2, 1e-1)
AUTO_DEFAULT = 1e-2
#: ``learning_rate="curvature"`` takes this over the trace of the loss's
#: Hessian at w = 0 (:meth:`~rsrank.objective.Objective.curvature`)
CURVATURE_STEP = 2.0


class OneQueryWarning(UserWarning):
    """Training data came without ``qid``, so all of it is one query."""


def _warn_without_qid(method, X, qid):
    """One line when ``X`` (not a QueryData) comes without ``qid``: its rows
    are then ranked as one query, which is what scikit-learn's searches do
    with ``groups=qid`` unless ``qid`` is routed to ``fit``."""
    if qid is not None or isinstance(X, QueryData):
        return
    n_rows = X.shape[0] if hasattr(X, "shape") else len(X)
    if n_rows < 2:
        return
    warnings.warn(f"{method}() got no qid: its {n_rows} rows are ranked as one query; "
                  "pass qid= (one id per row), or for GridSearchCV and cross_val_score use "
                  "rsrank.model_selection.fit_search or cross_val_score_by_query, which "
                  "route it (qid=np.zeros(n) says one query)", OneQueryWarning, stacklevel=3)


#: bins per feature of an additive model unless ``max_bins`` says otherwise
DEFAULT_MAX_BINS = 32


class RSRank(BaseEstimator):
    """Sparse linear ranker trained on |Delta NDCG|-weighted pairwise losses.

    ``X`` may also be a :class:`~rsrank.querydata.QueryData` (built once,
    reused across fits), for ``fit``, ``eval_set``, ``predict`` and ``score``.

    For each query, documents are ranked by the current scores
    ``s = X @ coef_``; every pair with ``y_i > y_j`` is weighted by the change
    in NDCG if the two swapped places and pays ``pair_loss(s_i - s_j)``
    (modified Huber by default). A step over ``batch_size`` queries takes a
    gradient step on their mean loss; every ``truncation_period`` steps the
    truncated gradient of Langford, Li and Zhang (2009) moves each weight with
    ``|w_j| <= truncation_threshold`` toward 0 by
    ``learning_rate * truncation_period * l1`` without crossing it, which
    yields exact zeros. This is RSRank (Sun, Qin, Tao and Wang, SIGIR 2009).

    Parameters
    ----------
    learning_rate : float, "auto" or "curvature", default="auto"
        Step size eta (the paper used 0.001 on OHSUMED's [0, 1] features).
        ``"auto"``: with an ``eval_set``, :meth:`fit` trains once with each
        of :data:`AUTO_RATES` (1e-3, 1e-2, 1e-1) on the query data built
        once and keeps the fit of the best validation NDCG@eval_k among
        those whose training loss did not diverge (``learning_rate_`` says
        which); elsewhere (no ``eval_set``,
        ``partial_fit``, ``fit_chunks``, :class:`~rsrank.dask.DaskRSRank`)
        it is 1e-2. The step that suits
        the data varies more than anything else in the recipe: 1e-2
        oscillates on noisy data with few relevant documents, 1e-3 stops
        short on clean data with many grades (``results/recipes.md``).
        ``"curvature"``: :meth:`fit` takes :data:`CURVATURE_STEP` (2) over
        the trace of the training loss's Hessian at w = 0
        (:meth:`~rsrank.objective.Objective.curvature`): on z-scored
        features full-batch descent then decreases the loss every epoch, so
        that with ``restore_best=False`` and enough epochs the model is the
        penalized optimum (``rsrank train``'s L1 path; ``results/paths.md``).
        Unscaled features of very different scales can still oscillate.
        1e-2 where there is no training data at once (``partial_fit``,
        ``fit_chunks``, Dask).
    power_t : float, default=0.0
        Decay of the step size: gradient step ``t`` (counted from 1 over
        the whole fit, ``t_``) takes ``learning_rate / t ** power_t``, as
        scikit-learn's ``learning_rate="invscaling"``; the L1 penalty of a
        step scales with it. 0 keeps the step size constant; 0.5 is the
        classical 1/sqrt(t) of stochastic gradient descent.
    normalize : {"zscore", "minmax", "query-zscore", "query-minmax", "none"}, default="zscore"
        Feature scaling applied before the linear function (see
        :mod:`rsrank.preprocessing`). ``"zscore"`` and ``"minmax"`` fit one
        offset and scale per feature on the training rows and remain
        deployable in a search engine; the ``"query-*"`` variants scale
        within each query (LETOR's QueryLevelNorm) and need ``qid`` in
        :meth:`predict`. ``coef_`` weighs the scaled features, so weights
        are comparable across features; :meth:`linear_function` gives the
        equivalent weights and constant on raw features. Centring does not
        change training (a query's pair differences ignore it), so sparse
        ``X`` stays sparse.
    l1 : float, default=0.0
        L1 strength g. 0 gives plain (dense) gradient descent.
    truncation_period : int, default=1
        K: truncate every K steps (the paper's K = 1).
    truncation_threshold : float, default=inf
        theta: only weights with ``|w_j| <= theta`` are shrunk. ``inf`` with
        ``K = 1`` is soft-thresholding. Applies to ``l1_method="truncated"``.
    l1_method : {"truncated", "cumulative"}, default="truncated"
        How the L1 penalty is applied. ``"truncated"``: the truncated
        gradient above. ``"cumulative"``: the cumulative penalty of
        Tsuruoka, Tsujii and Ananiadou (2009), scikit-learn's L1 for
        ``SGDClassifier``: every ``truncation_period`` steps each weight
        moves toward 0 by the penalty it is still owed, the running total
        ``learning_rate * l1`` per step minus what it has already paid, so a
        weight that noisy steps keep pushing off zero is charged what it
        missed. Its state carries over ``warm_start`` and ``partial_fit``.
    average : bool, default=False
        Make the model the running mean of the weights at the end of every
        epoch (Polyak-Ruppert averaging of the iterates; per step with the
        default full batch): validation, early stopping, the best epoch and
        ``coef_`` all use the mean, while the steps go on from the last
        iterate. The mean smooths the noise of the steps and of an epoch
        choice on few validation queries. With ``l1``, a weight of the mean
        is exactly 0 only where every averaged iterate was 0. With
        ``warm_start`` the mean starts again from ``coef_``; ``partial_fit``
        keeps the iterate and the mean across calls.
    max_iter : int, default=100
        Number of epochs (passes over the training queries).
    batch_size : int or None, default=None
        Queries per step. None takes one step per epoch on the mean over all
        queries (deterministic, and stable on scaled features); 1 is the
        paper's online update (with ``normalize="none"`` and
        ``learning_rate=1e-3`` on LETOR's per-query normalised features).
    shuffle : bool, default=True
        Visit the queries in a new random order each epoch.
    ndcg_k : int or None, default=None
        Cut-off of the NDCG in the swap weights: positions from ``ndcg_k``
        on are not discounted, so pairs with both documents there have
        weight 0 and are skipped (O(n k) work per query instead of O(n^2)).
    gain : {"exp2", "linear"} or callable, default="exp2"
        Gain of a label in the swap weights (see :func:`rsrank.metrics.gain_values`).
    discount : {"log2", "letor", "zipf"}, float or callable, default="log2"
        Discount in the swap weights (see :func:`rsrank.metrics.discount_values`).
    pair_loss : {"modified_huber", "hinge", "logistic"}, default="modified_huber"
        Loss of a pair's margin.
    pair_weight : {"delta_ndcg", "unit"}, default="delta_ndcg"
        ``"unit"`` weighs every pair 1 (plain pairwise classification, as in
        RankSVM), for ablations.
    eval_k : int, default=10
        Cut-off of the NDCG reported by :meth:`score`, in ``history_`` and
        used for early stopping.
    eval_convention : str, default="standard"
        NDCG convention of :meth:`score` (see :mod:`rsrank.metrics`).
    early_stopping : bool, default=False
        Stop when validation NDCG@eval_k has not improved by ``tol`` for
        ``n_iter_no_change`` epochs. Validation data is ``eval_set`` if given,
        else ``validation_fraction`` of the training queries.
    validation_fraction : float, default=0.1
        Share of training queries held out when ``early_stopping`` is on and
        no ``eval_set`` is given.
    n_iter_no_change : int, default=10
    tol : float, default=1e-4
    restore_best : bool, default=True
        With validation data, end with the weights of the best validation
        epoch (the paper chose the number of iterations on validation).
    eval_train : bool, default=True
        Record the training NDCG@eval_k after every epoch in ``history_``
        (NaN when off). On millions of documents it costs more than the
        epoch itself: one sort of every query.
    random_state : int, RandomState or None, default=None
        Seeds the query order and the validation split.
    warm_start : bool, default=False
        Start ``fit`` from the previous ``coef_``.
    n_jobs : int, "auto" or None, default=None
        Threads for the per-query work inside a batch (useful with large
        batches). None means 1, -1 all cores. ``"auto"`` (``rsrank train``'s
        choice) settles the count once per fit: one thread per core that
        other processes leave idle, and no more threads than the data has
        ten thousand stored values (``results/threads.md``).
    verbose : int, default=0
        A progress bar over epochs with training and validation NDCG.
    weight_tol : float or None, default=None
        Stop after the first epoch in which no weight moved by more than
        ``weight_tol`` times the largest weight (at once when the weights
        stay all zero, as strong ``l1`` keeps them). With full-batch steps
        the weights then sit at the penalized optimum, up to that tolerance;
        ``rsrank train``'s path uses it. None: always ``max_iter`` epochs.
    additive : bool, default=False
        Learn one step function per feature instead of one weight:
        ``f(x) = sum_j sum_b w_jb [x_j > t_jb]``, with at most ``max_bins - 1``
        thresholds ``t_jb`` per feature from the training values' quantiles
        (every distinct value when there are few; :mod:`rsrank.binning`).
        Each step is a depth-1 tree, so every engine runs the model.
        ``coef_`` holds the steps; ``normalize`` does not apply (the steps
        only compare values). Needs the training data in memory (``fit``).
    max_bins : int, default=32
        Bins per feature of an additive model (2 to 256).
    l1_group : float, default=0.0
        The group penalty ``l1_group * sum_j c_j sqrt(n_j) ||w_j||``, with
        ``w_j`` feature j's weights (its ``n_j`` steps), ``c_j`` its cost:
        it takes whole features out (``l1`` then keeps few steps inside the
        features left). ``l1_group_max`` gives the smallest value that keeps
        every weight at zero.
    feature_costs : sequence or dict, optional
        A cost per feature (in feature order, or by name or index; omitted
        features cost 1), multiplying that feature's ``l1`` and
        ``l1_group``: a feature that is dear to compute must earn more to be
        kept.
    exclude : sequence, optional
        Features (by name or index) held at zero: the model does not use
        them, as if their columns were absent. ``relax`` refits with the
        features its penalized fit left out excluded.
    relax : bool, default=False
        After the penalized fit, fit again from its weights on the features
        it kept, without ``l1`` or ``l1_group``, the other features held at
        0 (the relaxed lasso, Meinshausen 2007): the penalties choose the
        features, and the refit undoes their shrinkage of the weights kept.
        ``learning_rate="curvature"`` steps by the curvature of the kept
        weights alone. Without a penalty there is nothing to relax.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    n_iter_ : int
        Epochs run by the last ``fit``.
    t_ : int
        Gradient steps taken so far (drives the truncation schedule).
    learning_rate_ : float
        The step size the last ``fit`` trained with (``learning_rate``, or
        the one ``"auto"`` chose; with ``relax``, the refit's).
    penalized_ : RSRank, with ``relax``
        The penalized fit (``relax=False``), whose features the refit kept: a
        path warm-starts its next point from it, and ``rsrank train``'s
        selection sees both fits.
    best_iteration_ : int or None
        Epoch (1-based) whose weights were kept, with validation data.
    history_ : dict of lists
        Per epoch: ``loss`` (mean per-query training loss), ``train_ndcg``,
        ``val_ndcg`` (with validation data), ``n_nonzero`` and ``seconds``
        (wall time of the training pass, without the NDCG bookkeeping).
    n_features_in_ : int
    feature_names_in_ : ndarray of str, when X has column names
    feature_offset_, feature_scale_ : ndarray of shape (n_features,)
        The global scaling ``(x - offset) / scale`` (offset 0 and scale 1
        for ``normalize="none"`` or a per-query scaling).
    model_ : rsrank.model.LinearModel
        The fitted model as a value (weights, scaling, names, fingerprint):
        what model files, ``predict`` and the exports read.
    solver_state_ : rsrank.solver.SolverState
        The iterate, step count and penalty record that ``warm_start`` and
        ``partial_fit`` continue from.
    """

    # qid is routed to fit, partial_fit and score by default, so that
    # scikit-learn's searches pass each split's queries once routing is on.
    __metadata_request__fit = {"qid": True}
    __metadata_request__partial_fit = {"qid": True}
    __metadata_request__score = {"qid": True}
    __metadata_request__predict = {"qid": True}

    def __init__(self, learning_rate="auto", power_t=0.0, normalize="zscore", l1=0.0,
                 truncation_period=1, truncation_threshold=np.inf, l1_method="truncated",
                 average=False, max_iter=100, batch_size=None, shuffle=True, ndcg_k=None,
                 gain="exp2", discount="log2", pair_loss="modified_huber",
                 pair_weight="delta_ndcg", eval_k=10, eval_convention="standard",
                 early_stopping=False, validation_fraction=0.1, n_iter_no_change=10, tol=1e-4,
                 restore_best=True, eval_train=True, random_state=None, warm_start=False,
                 n_jobs=None, verbose=0, weight_tol=None, additive=False, max_bins=DEFAULT_MAX_BINS,
                 l1_group=0.0, feature_costs=None, relax=False, exclude=None):
        vars(self).update({name: value for name, value in locals().items() if name != "self"})

    # -- assembling ------------------------------------------------------------

    def solver(self):
        """The :class:`~rsrank.solver.Solver` (with its objective and
        penalty) that ``fit`` runs; building it checks every parameter."""
        check_number("eval_k", self.eval_k, 1, integer=True)
        if not (isinstance(self.validation_fraction, (int, float, np.number))
                and 0 < self.validation_fraction < 1):
            raise ValueError(f"validation_fraction must be in (0, 1), got "
                             f"{self.validation_fraction!r}")
        for name, allowed in (("eval_convention", tuple(CONVENTIONS)),
                              ("normalize", NORMALIZERS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        objective = Objective(self.pair_loss, self.pair_weight, self.gain, self.discount,
                              self.ndcg_k)
        for name in ("additive", "relax"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.relax and self.warm_start:
            raise ValueError("relax refits every fit from the penalized one; it does not go on "
                             "from a previous fit: set warm_start=False")
        if self.additive and self.normalize in QUERY_NORMALIZERS:
            raise ValueError(f"normalize={self.normalize!r} scales features within each query, "
                             "which an additive model's thresholds cannot follow (an engine "
                             "compares a document's raw value with them): use "
                             "normalize='zscore' or 'none' (a global scaling changes no step)")
        if not self.additive and self.max_bins != DEFAULT_MAX_BINS:
            raise ValueError(f"max_bins={self.max_bins!r} applies to additive models "
                             "(additive=True); a linear model has no bins")
        penalty = L1Penalty(self.l1, self.l1_method, self.truncation_period,
                            self.truncation_threshold, self.l1_group)
        return Solver(objective, penalty, self.rate(), self.power_t, self.batch_size,
                      self.shuffle, self.average, self.max_iter, self.early_stopping,
                      self.n_iter_no_change, self.tol, self.restore_best, self.n_jobs,
                      self.verbose, self.weight_tol)

    def rate(self):
        """The step size of a single fit: ``learning_rate``, or 1e-2 for
        ``"auto"`` (which :meth:`fit` with an ``eval_set`` chooses among
        :data:`AUTO_RATES`) and ``"curvature"`` (which :meth:`fit` computes
        from the training data) where they do not apply."""
        if isinstance(self.learning_rate, str):
            if self.learning_rate not in ("auto", "curvature"):
                raise ValueError(f"learning_rate must be a number > 0, 'auto' or 'curvature', "
                                 f"got {self.learning_rate!r}")
            return AUTO_DEFAULT
        return self.learning_rate

    def _data(self, X, y, qid, *, reset):
        """``X`` as a :class:`QueryData`, checked against the fitted width
        and names (``reset``: record them)."""
        if isinstance(X, QueryData):
            if not reset and X.n_features != self.n_features_in_:
                raise ValueError(f"X has {X.n_features} features, but RSRank is expecting "
                                 f"{self.n_features_in_} features as input.")
            if reset:
                self.n_features_in_ = X.n_features
                if X.names_from_columns:
                    self.feature_names_in_ = np.asarray(X.feature_names, dtype=object)
                elif hasattr(self, "feature_names_in_"):
                    del self.feature_names_in_
            return X
        validate_data(self, X, reset=reset, skip_check_array=True)
        return QueryData(X, y, qid)

    def _model(self, moments, data=None):
        """An all-zero :class:`LinearModel` with the scaling fitted on
        column ``moments`` and the feature names of ``data``; with
        ``additive``, an all-zero :class:`AdditiveModel` whose thresholds
        are fitted on ``data``'s rows."""
        if self.additive:
            if not hasattr(data, "X"):
                raise ValueError("additive models fit their thresholds on training data in "
                                 "memory: use fit, not fit_chunks or partial_fit")
            # made once per data and bin count: a path fits the same data many times
            encoding = data.memo(("steps", self.max_bins),
                                 lambda: StepEncoding.fit(data.X, self.max_bins))
            return AdditiveModel(np.zeros(encoding.n_steps), encoding,
                                 getattr(data, "feature_names", None),
                                 getattr(data, "names_from_columns", False))
        width = len(moments[1])
        offset, scale = np.zeros(width), np.ones(width)
        if self.normalize in GLOBAL_NORMALIZERS:
            offset, scale = scaling_from_moments(moments, self.normalize)
        return LinearModel(np.zeros(width), self.normalize, offset, scale,
                           getattr(data, "feature_names", None),
                           getattr(data, "names_from_columns", False))

    def penalty_layout(self, model):
        """``(groups, group_factors, weight_factors)`` of ``model``'s weights
        for :class:`~rsrank.penalty.L1Penalty`: one group per feature (its
        steps, or its one weight), each weighed by the square root of its
        size times the feature's cost; the L1 of each weight times its
        feature's cost (None without ``feature_costs``)."""
        costs = self._costs(model)
        if isinstance(model, AdditiveModel):
            groups = model.encoding.bins
        else:
            groups = np.arange(model.n_features + 1, dtype=np.int64)
        sizes = np.diff(groups)
        factors = np.sqrt(sizes) * (1.0 if costs is None else costs)
        weights = None if costs is None else np.repeat(costs, sizes)
        return groups, factors, weights

    def _costs(self, model):
        """``feature_costs`` as one positive number per feature of ``model``
        (a sequence in feature order, or a dict by name or index; features
        a dict leaves out cost 1), or None."""
        costs = self.feature_costs
        if costs is None:
            return None
        width = model.n_features
        if isinstance(costs, dict):
            out = np.ones(width)
            out[_feature_indices(model, costs, "feature_costs")] = list(costs.values())
        else:
            out = np.asarray(costs, dtype=np.float64).ravel()
            if out.shape != (width,):
                raise ValueError(f"feature_costs has {out.size} values for {width} features")
        out = np.asarray(out, dtype=np.float64)
        if not np.all(np.isfinite(out)) or np.any(out <= 0):
            raise ValueError("feature_costs must be finite and > 0")
        return out

    def _solver_for(self, model):
        """:meth:`solver` with the penalty laid out on ``model``'s weights.
        An excluded feature's group gets the factor inf: its proximal
        step, taken every step, is then the projection onto zero."""
        solver = self.solver()
        groups, factors, weights = self.penalty_layout(model)
        penalty = replace(solver.penalty, groups=groups, group_factors=factors,
                          weight_factors=weights)
        excluded = self._excluded(model)
        if excluded is not None:
            if penalty.period != 1:
                raise ValueError("exclude holds features at zero at every step: use "
                                 "truncation_period=1")
            kept = factors if penalty.group > 0 else np.zeros(len(factors))
            penalty = replace(penalty, group=penalty.group or 1.0,
                              group_factors=np.where(excluded, np.inf, kept))
        return replace(solver, penalty=penalty)

    def _excluded(self, model):
        """``exclude`` as a boolean per feature of ``model``, or None."""
        if self.exclude is None:
            return None
        if isinstance(self.exclude, (str, bytes)) or not hasattr(self.exclude, "__iter__"):
            raise ValueError(f"exclude must be a sequence of feature names or indices, got "
                             f"{self.exclude!r}")
        out = np.zeros(model.n_features, dtype=bool)
        out[_feature_indices(model, self.exclude, "exclude")] = True
        return out

    def _advice(self, moments, names=None):
        """What the divergence warning and error end with: ``moments()``
        gives the training data's column moments (None when unknown)."""
        return lambda: scale_advice(moments(), names, self.normalize, self.rate())

    def _monitoring(self):
        return Monitoring(self.eval_k, self.eval_convention, self.eval_train)

    # -- training --------------------------------------------------------------

    def fit(self, X, y=None, *, qid=None, eval_set=None, coef_init=None):
        """Train on queries.

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

        Returns
        -------
        self
        """
        _warn_without_qid("fit", X, qid)
        if self._relaxed():
            return self._fit_relaxed(X, y, qid, eval_set, coef_init)
        vars(self).pop("penalized_", None)
        if self.learning_rate == "auto" and eval_set is not None:
            return self._fit_auto(X, y, qid, eval_set, coef_init)
        if self.learning_rate == "curvature":
            return self._fit_curvature(X, y, qid, eval_set, coef_init)
        solver = self.solver()
        reset = not (self.warm_start and hasattr(self, "model_"))
        data = self._data(X, y, qid, reset=reset)
        rng = check_random_state(self.random_state)
        train, validation = self._split(data, eval_set, rng)
        if train.n_mixed_queries == 0:
            if train.n_rows < 2:
                raise ValueError(f"{train.n_rows} sample: no pair of documents to learn from")
            raise ValueError(f"no pair to learn from: in each of the {train.n_queries} training "
                             "queries every document has the same label (or the query has one "
                             "document); RSRank learns from pairs of documents with different "
                             "labels: check the labels and the qid")
        model = self._model(train.moments, train) if reset else self._warm_model()
        solver = self._solver_for(model)
        state = self._state(len(model.coef), coef_init, reset)
        fit = solver.fit(train, state, rng, normalize=model.view,
                         scale=model.training_scale(), validation=validation,
                         monitoring=self._monitoring(), advice=self._advice(lambda: train.moments, train.feature_names))
        self._fitted(model, fit, state, train.n_queries, train.fingerprint)
        return self

    def _relaxed(self):
        """Whether ``fit`` refits on the penalized fit's features."""
        self.solver()  # checks relax
        return bool(self.relax) and (self.l1 != 0 or self.l1_group != 0)

    def _refuse_relax(self, method):
        if self._relaxed():
            raise ValueError(f"relax refits on the training data in memory: use fit, not "
                             f"{method}, or set relax=False")

    def _fit_relaxed(self, X, y, qid, eval_set, coef_init):
        """``relax``: the penalized fit, then :meth:`refit_kept` of it."""
        data = X if isinstance(X, QueryData) else QueryData(X, y, qid)
        if eval_set is not None and not isinstance(eval_set, QueryData):
            eval_set = QueryData(*_eval_tuple(eval_set))
        penalized = clone(self).set_params(relax=False).fit(data, eval_set=eval_set,
                                                             coef_init=coef_init)
        vars(self).pop("penalized_", None)
        self._adopt(penalized.refit_kept(data, eval_set=eval_set))
        self.penalized_ = penalized
        return self

    def refit_kept(self, X, y=None, *, qid=None, eval_set=None):
        """A new estimator fitted from this fit's weights on the features it
        keeps, without ``l1`` or ``l1_group``, the others excluded (the
        relaxed fit of ``relax``; the same training data). With
        ``learning_rate="curvature"`` its step is 2 over the curvature of
        the kept weights alone; otherwise it keeps this fit's step."""
        check_is_fitted(self)
        data = X if isinstance(X, QueryData) else QueryData(X, y, qid)
        model = self.model_
        held = np.ones(model.n_features, dtype=bool)
        held[model.selected_indices()] = False
        rate = self.learning_rate_
        if self.learning_rate == "curvature":
            groups = self.penalty_layout(model)[0]
            trace = self.solver().objective.curvature(
                data, normalize=model.view, scale=model.training_scale(),
                support=np.repeat(~held, np.diff(groups)))
            rate = CURVATURE_STEP / trace if trace > 0 else rate
        refit = clone(self).set_params(relax=False, l1=0.0, l1_group=0.0, learning_rate=rate,
                                       exclude=np.flatnonzero(held).tolist())
        return refit.fit(data, eval_set=eval_set, coef_init=self.coef_)

    def _fit_curvature(self, X, y, qid, eval_set, coef_init):
        """``learning_rate="curvature"``: one fit at :data:`CURVATURE_STEP`
        over the trace of the training loss's Hessian at w = 0, on the
        features as this model scales them."""
        solver = self.solver()  # checks the other parameters before any work
        data = X if isinstance(X, QueryData) else QueryData(X, y, qid)
        model = self._model(data.moments, data) if not (
            self.warm_start and hasattr(self, "model_")) else self._warm_model()
        trace = solver.objective.curvature(data, normalize=model.view,
                                           scale=model.training_scale())
        rate = CURVATURE_STEP / trace if trace > 0 else AUTO_DEFAULT
        return self._adopt(self._at_rate(rate).fit(data, eval_set=eval_set,
                                                   coef_init=coef_init))

    def _at_rate(self, rate):
        """A copy of this estimator at step size ``rate``, carrying on from
        this fit's state with ``warm_start``."""
        fitted = clone(self).set_params(learning_rate=rate)
        if self.warm_start and hasattr(self, "model_"):  # go on from this fit's state
            vars(fitted).update({k: v for k, v in vars(self).items() if k.endswith("_")})
        return fitted

    def _adopt(self, fitted):
        """Take ``fitted``'s fitted attributes as this estimator's."""
        vars(self).pop("feature_names_in_", None)
        vars(self).update({k: v for k, v in vars(fitted).items()
                           if k.endswith("_") and not k.startswith("__")})
        return self

    def _fit_auto(self, X, y, qid, eval_set, coef_init):
        """``learning_rate="auto"`` with validation data: one fit per rate of
        :data:`AUTO_RATES` on the data built once; the best validation
        NDCG@eval_k wins (the smaller rate on ties), among the rates whose
        training loss did not diverge (:class:`DivergenceWarning`) when
        there are any: such a fit may rank well on validation while its
        weights grow without bound."""
        self.solver()  # checks the other parameters before any work
        data = X if isinstance(X, QueryData) else QueryData(X, y, qid)
        if not isinstance(eval_set, QueryData):
            eval_set = QueryData(*_eval_tuple(eval_set))
        best, failure = None, None
        for rate in AUTO_RATES:
            fitted = self._at_rate(rate)
            # a rate too large for the data warns or fails; that counts only if it wins
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    fitted.fit(data, eval_set=eval_set, coef_init=coef_init)
                except ValueError as error:
                    if "non-finite" not in str(error):
                        raise
                    failure = error
                    continue
            # a rate whose loss diverged ranks after every rate whose loss did not
            stable = not any(issubclass(w.category, DivergenceWarning) for w in caught)
            score = (stable, float(np.nanmax(fitted.history_["val_ndcg"], initial=-np.inf)))
            if best is None or score > best[0]:
                best = (score, fitted, caught)
        if best is None:
            raise failure
        for warning in best[2]:
            warnings.warn_explicit(warning.message, warning.category, warning.filename,
                                   warning.lineno)
        return self._adopt(best[1])

    def _warm_model(self):
        """The fitted model that ``warm_start`` and ``partial_fit`` go on
        from, refused when a parameter that shapes it has changed since (its
        kind, its bins, its scaling): going on would keep the old one."""
        model = self.model_
        additive = isinstance(model, AdditiveModel)
        was = {"additive": additive,
               "max_bins": getattr(self, "fitted_max_bins_", self.max_bins) if additive
               else self.max_bins,
               "normalize": self.normalize if additive else model.normalize}
        for name, value in was.items():
            if getattr(self, name) != value:
                raise ValueError(f"the fitted model has {name}={value!r}, now {name}="
                                 f"{getattr(self, name)!r}: going on from it would keep "
                                 f"{name}={value!r}; fit without warm_start to refit")
        return model

    def _fitted(self, model, fit, state, n_queries, fingerprint):
        if isinstance(model, AdditiveModel):
            self.fitted_max_bins_ = self.max_bins
        if not self.average:
            state.w = fit.coef.copy()  # partial_fit and warm_start go on from coef_
        self.model_ = model.with_fit(fit.coef, fingerprint, n_queries)
        self.n_iter_, self.best_iteration_, self.history_ = (fit.n_iter, fit.best_iteration,
                                                             fit.history)
        self.learning_rate_ = self.rate()
        self.solver_state_ = state

    def _split(self, data, eval_set, rng):
        """(train, validation or None) as :class:`QueryData`."""
        if eval_set is not None:
            if isinstance(eval_set, QueryData):
                return data, self._data(eval_set, None, None, reset=False)
            X_val, y_val, qid_val = _eval_tuple(eval_set)
            validate_data(self, X_val, reset=False, skip_check_array=True)
            return data, QueryData(X_val, y_val, qid_val)
        if not self.early_stopping:
            return data, None
        n_val = int(np.ceil(self.validation_fraction * data.n_queries))
        if data.n_queries < 2 or n_val >= data.n_queries:
            raise ValueError("early_stopping without eval_set needs at least 2 queries to "
                             "hold some out; pass eval_set or more queries")
        held_out = rng.permutation(data.n_queries)[:n_val]
        kept = np.setdiff1d(np.arange(data.n_queries), held_out)
        return data.subset(kept), data.subset(held_out)

    def _state(self, n_features, coef_init, reset):
        """Where the steps start: ``coef_init``, else the previous iterate
        (``warm_start``: with its step count and penalty record), else zeros."""
        if coef_init is not None:
            coef = np.array(coef_init, dtype=np.float64).ravel()
            if coef.shape != (n_features,):
                raise ValueError(f"coef_init has {coef.size} values for {n_features} features")
            if not np.all(np.isfinite(coef)):
                raise ValueError("coef_init contains NaN or infinite values")
        else:
            coef = np.zeros(n_features) if reset else self.model_.coef.copy()
        if reset:
            return SolverState(coef)
        return SolverState(coef, self.solver_state_.t, self.solver_state_.l1_state)

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
        solver = self.solver()
        self._refuse_relax("fit_chunks")
        if self.early_stopping and eval_set is None:
            raise ValueError("fit_chunks with early_stopping needs an eval_set (no queries "
                             "can be held out of a stream)")
        if self.additive:
            raise ValueError("additive models fit their thresholds on training data in memory: "
                             "use fit, not fit_chunks")
        reset = not (self.warm_start and hasattr(self, "model_"))
        rng = check_random_state(self.random_state)
        first = next(iter(chunks()), None)
        if first is None:
            raise ValueError("fit_chunks: the chunks gave no block of queries")
        first = self._data(*first, reset=reset)  # fixes the width (and checks eval_set's)
        moments = None if not reset else _stream_moments(chunks, first.n_features)
        model = self._warm_model() if not reset else self._model(moments, first)
        validation = self._split(first, eval_set, rng)[1] if eval_set is not None else None
        state = self._state(first.n_features, coef_init, reset)
        fit, n_queries = solver.fit_blocks(
            lambda: (self._data(X, y, qid, reset=False) for X, y, qid in chunks()), state, rng,
            normalize=self.normalize, scale=model.training_scale(), validation=validation,
            monitoring=self._monitoring(),
            advice=self._advice(lambda: moments, first.feature_names))
        self._fitted(model, fit, state, n_queries, None)
        return self

    def l1_max(self, X, y=None, *, qid=None):
        """The smallest ``l1`` at which this estimator, fitted on the data,
        keeps every weight at zero (see
        :meth:`rsrank.objective.Objective.l1_max`), in the units of
        ``coef_`` (the scaled features): the top of a regularization path
        scaled to the data, :func:`rsrank.experiments.l1_grid`."""
        data = X if isinstance(X, QueryData) else QueryData(X, y, qid)
        model = self._model(data.moments, data)
        weights = self.penalty_layout(model)[2]
        return self.solver().objective.l1_max(data, normalize=model.view,
                                              scale=model.training_scale(),
                                              weight_factors=weights)

    def l1_group_max(self, X, y=None, *, qid=None):
        """The smallest ``l1_group`` at which this estimator (without
        ``l1``) keeps every weight at zero: the largest norm of a feature's
        gradient at zero over its group factor
        (:meth:`rsrank.objective.Objective.group_max`)."""
        data = X if isinstance(X, QueryData) else QueryData(X, y, qid)
        model = self._model(data.moments, data)
        groups, factors, _ = self.penalty_layout(model)
        return self.solver().objective.group_max(data, groups, factors, normalize=model.view,
                                                 scale=model.training_scale())

    def l1_max_chunks(self, chunks):
        """:meth:`l1_max` of training data read in blocks of whole queries,
        as :meth:`fit_chunks` reads it: one pass for the scaling, one for
        the gradient at zero."""
        first = next(iter(chunks()), None)
        if first is None:
            raise ValueError("l1_max_chunks: the chunks gave no block of queries")
        moments = _stream_moments(chunks, QueryData(*first).n_features)
        return self.solver().objective.l1_max(
            (QueryData(X, y, qid) for X, y, qid in chunks()), normalize=self.normalize,
            scale=self._model(moments).training_scale())

    def partial_fit(self, X, y=None, *, qid=None):
        """One pass over the given queries, continuing from the current weights
        and step count (for data that arrives in blocks of whole queries)."""
        first = not hasattr(self, "model_")
        solver = self.solver()
        self._refuse_relax("partial_fit")
        if self.additive:
            raise ValueError("additive models fit their thresholds on training data in memory: "
                             "use fit, not partial_fit")
        _warn_without_qid("partial_fit", X, qid)
        data = self._data(X, y, qid, reset=first)
        if first:  # the first block fixes the scaling
            self.model_ = self._model(data.moments, data)
            self.solver_state_ = SolverState(np.zeros(data.n_features))
            self.n_iter_ = 0
        if not hasattr(self, "_partial_rng"):
            self._partial_rng = check_random_state(self.random_state)
        state, model = self.solver_state_, self._warm_model()
        solver.epoch(data, state, solver.query_order(data.n_queries, self._partial_rng),
                     normalize=self.normalize, scale=model.training_scale(),
                     work=solver.new_work(data))
        finite_check(self._advice(lambda: data.moments, data.feature_names))(state)
        if self.average:  # the steps go on from the last iterate; coef_ is their mean
            state.n_averaged += 1
            coef = model.coef + (state.w - model.coef) / state.n_averaged
        else:
            coef = state.w.copy()
        self.model_ = LinearModel(coef, model.normalize, model.offset, model.scale,
                                  model.feature_names, model.names_from_columns)
        self.n_iter_ += 1
        return self

    # -- the fitted model --------------------------------------------------------

    coef_ = property(lambda self: self._fitted_model().coef)
    feature_offset_ = property(lambda self: self._fitted_model().offset)
    feature_scale_ = property(lambda self: self._fitted_model().scale)
    t_ = property(lambda self: self._fitted_state().t)

    def _fitted_model(self):
        if "model_" not in vars(self):
            raise AttributeError("this RSRank is not fitted yet")
        return self.model_

    def _fitted_state(self):
        if "solver_state_" not in vars(self):
            raise AttributeError("this RSRank is not fitted yet")
        return self.solver_state_

    def linear_function(self):
        """The model on raw features: ``(weights, constant)`` with
        ``predict(X) == X @ weights + constant``.

        With a global scaling, ``weights = coef_ / feature_scale_`` and
        ``constant = -sum(coef_ * feature_offset_ / feature_scale_)``; without
        one, ``(coef_, 0.0)``. A per-query scaling has no such form (it needs
        the other documents of the query) and raises ``ValueError``.
        """
        check_is_fitted(self)
        return self.model_.linear_function()

    def predict(self, X, *, qid=None):
        """Scores of the rows; sort a query's documents by decreasing score.

        With a global scaling (or none) this is ``X @ weights + constant``
        of :meth:`linear_function`. A per-query scaling needs ``qid``. The
        scores of a :class:`QueryData` come in the row order it was built
        from.
        """
        check_is_fitted(self)
        if isinstance(X, QueryData):
            data = self._data(X, None, None, reset=False)
            return data.in_input_order(self.model_.score_rows(data.rows(self.model_.view),
                                                              self.n_jobs))
        X = validate_data(self, X, reset=False, accept_sparse="csr",
                          dtype=[np.float64, np.float32], order="C")
        if isinstance(self.model_, AdditiveModel):
            return self.model_.score_rows(self.model_.encoding.rows(X), self.n_jobs)
        if self.normalize in QUERY_NORMALIZERS:
            if qid is None and self.model_.n_fit_queries > 1:
                raise ValueError(f"normalize={self.normalize!r} scales features within each "
                                 "query: pass qid=... (the query of every row) to predict")
            X = query_normalize(X, qid, self.normalize)
        return self.model_.score_rows(matrix_rows(X), self.n_jobs)

    def score(self, X, y=None, *, qid=None, sample_weight=None):
        """Mean NDCG@``eval_k`` over queries with ``eval_convention``.

        ``qid=None`` treats all rows as one query; for a model trained on
        several queries that is almost always a lost ``qid`` (scikit-learn's
        searches drop it unless metadata routing is on), so it is an error.
        """
        if sample_weight is not None:
            raise ValueError("score() has no per-row sample weights: NDCG weighs queries, "
                             "not rows")
        if isinstance(X, QueryData):
            return mean_ndcg(X.y, self.predict(X)[X.order], X.groups, self.eval_k,
                             convention=self.eval_convention)
        check_is_fitted(self)
        if qid is None and self.model_.n_fit_queries > 1:
            raise ValueError(
                "score() got no qid, but the model was trained on "
                f"{self.model_.n_fit_queries} queries: pass qid=... . In GridSearchCV or "
                "cross_val_score, enable metadata routing "
                "(sklearn.set_config(enable_metadata_routing=True)) and pass qid to fit, or "
                "use rsrank.model_selection.fit_search / cross_val_score_by_query")
        scores = self.predict(X, qid=qid)
        return mean_ndcg(check_labels(y, scores.shape[0]), scores, qid, self.eval_k,
                         convention=self.eval_convention)

    def feature_names(self):
        """The name of every feature: those given to :meth:`set_feature_names`
        or with the data, else the training DataFrame's columns
        (``feature_names_in_``), else LETOR's 1-based ``"f1", "f2", ..."``."""
        check_is_fitted(self)
        return self.model_.names()

    def set_feature_names(self, names):
        """Name the features of a model trained without column names (for
        :meth:`selected_features`, model files and exports); returns self."""
        check_is_fitted(self)
        self.model_ = self.model_.with_names(names)
        return self

    def selected_features(self):
        """Non-zero weights as ``[(name, weight), ...]`` by decreasing
        ``|weight|``, named by :meth:`feature_names`. The weights are those
        of ``coef_`` (on the scaled features). For an additive model, the
        features with a non-zero step as ``[(name, spread), ...]``, the
        spread of each shape function (largest minus smallest value) in
        decreasing order."""
        check_is_fitted(self)
        return self.model_.selected_features()

    def feature_cost(self):
        """The total ``feature_costs`` of the features the model uses (a
        non-zero weight or step); without costs, their number."""
        check_is_fitted(self)
        used = self.model_.selected_indices()
        costs = self._costs(self.model_)
        return float(len(used) if costs is None else costs[used].sum())

    def shape_functions(self):
        """An additive model's shape function per feature in use: a list of
        dicts with ``feature`` (index), ``name``, ``thresholds`` and
        ``values`` (the contribution below the first threshold, between
        each two, and above the last; see
        :meth:`rsrank.model.AdditiveModel.shape_functions`)."""
        check_is_fitted(self)
        if not isinstance(self.model_, AdditiveModel):
            raise ValueError("shape_functions() is for additive models (additive=True); a "
                             "linear model's shape is its weight: selected_features()")
        return self.model_.shape_functions()

    # -- model files -------------------------------------------------------------

    def save(self, path):
        """Write the fitted model as a small versioned JSON file (atomically);
        see :func:`rsrank.persistence.save_model`."""
        check_is_fitted(self)
        params = self.get_params()
        if isinstance(self.feature_costs, dict):  # JSON keys are text: one cost per feature
            params["feature_costs"] = self._costs(self.model_).tolist()
        persistence.save_model(path, self.model_, params, {
            "n_iter": self.n_iter_, "t": self.t_, "best_iteration": self.best_iteration_})

    @classmethod
    def load(cls, path):
        """Read a model written by :meth:`save`; see :func:`rsrank.persistence.load_model`."""
        saved = persistence.load_model(path)
        unknown = sorted(set(saved.params) - set(cls._get_param_names()))
        if unknown:
            raise persistence.ModelFileError(path, f"unknown parameters {unknown}")
        try:
            estimator = cls(**saved.params)
            estimator.solver()
        except (TypeError, ValueError) as error:
            raise persistence.ModelFileError(path, f"invalid parameter: {error}") from None
        estimator.model_ = saved.model
        if isinstance(saved.model, AdditiveModel):
            estimator.fitted_max_bins_ = estimator.max_bins
        estimator.n_features_in_ = saved.model.n_features
        if saved.model.names_from_columns:
            estimator.feature_names_in_ = np.asarray(saved.model.feature_names, dtype=object)
        estimator.n_iter_ = saved.fitted["n_iter"]
        estimator.best_iteration_ = saved.fitted["best_iteration"]
        estimator.history_ = {}
        estimator.solver_state_ = SolverState(saved.model.coef.copy(), saved.fitted["t"])
        return estimator

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _feature_indices(model, keys, what):
    """The feature index of each of ``keys`` (an index, or a name of
    ``model``'s features), for the parameter ``what``; a feature given
    twice (by name and by index, say) is an error, not the later value."""
    width, names = model.n_features, model.names()
    where = {name: j for j, name in enumerate(names)}
    out, given = [], {}
    for key in keys:
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            if not 0 <= key < width:
                raise ValueError(f"{what}: feature index {key} is not in 0..{width - 1}")
            j = int(key)
        elif key in where:
            j = where[key]
        else:
            shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
            raise ValueError(f"{what}: no feature is named {key!r} (the features are {shown})")
        if j in given:
            how = {True: "its name", False: "its index"}
            raise ValueError(f"{what}: feature {names[j]!r} is given twice (by "
                             f"{how[isinstance(given[j], str)]} and by "
                             f"{how[isinstance(key, str)]}); give it once")
        given[j] = key
        out.append(j)
    return np.array(out, dtype=np.int64)


def _eval_tuple(eval_set):
    """``eval_set`` given as ``(X_val, y_val, qid_val)``, checked."""
    if len(eval_set) != 3:
        raise ValueError("eval_set must be a tuple (X_val, y_val, qid_val) or a QueryData")
    return eval_set


def _stream_moments(chunks, width):
    """Column moments of every block of a stream (one pass)."""
    moments = None
    for X, _, _ in chunks():
        X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32])
        if X.shape[1] != width:
            raise ValueError(f"X has {X.shape[1]} features, but RSRank is expecting {width} "
                             "features as input.")
        block = column_moments(X)
        moments = block if moments is None else combine_moments(moments, block)
    return moments


def scale_advice(moments, names, normalize, learning_rate):
    """What to do when training diverges, naming the widest features by the
    column ``moments`` of the training data (None when unknown)."""
    text = ""
    if moments is not None and len(moments[3]):
        low, high = moments[3], moments[4]
        width = np.where(np.isfinite(high - low), high - low, 0.0)
        widest = np.argsort(-width, kind="stable")[:3]
        label = (lambda j: names[j]) if names is not None else (lambda j: f"f{j + 1}")
        listed = ", ".join(f"{label(j)} in [{low[j]:.3g}, {high[j]:.3g}]" for j in widest)
        text = f"; widest features: {listed}"
    if normalize == "none":
        fix = ("scale the features (normalize='zscore', rsrank train --normalize zscore) "
               f"or lower learning_rate (now {learning_rate:g})")
    else:
        fix = f"lower learning_rate (now {learning_rate:g})"
    return f"{text}. Fix: {fix}"
