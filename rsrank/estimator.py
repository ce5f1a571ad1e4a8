"""The scikit-learn estimator: parameters, validation, seeding and the epoch
loop. The arithmetic lives in :mod:`rsrank._kernels`."""

import numbers
import time
import warnings
from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _kernels
from ._queries import group_queries
from .metrics import CONVENTIONS, discount_values, gain_values, mean_ndcg
from .preprocessing import (GLOBAL_NORMALIZERS, NORMALIZERS, QUERY_NORMALIZERS, column_moments,
                            combine_moments, query_normalize, scaling_from_moments)

__all__ = ["RSRank", "DivergenceWarning"]

L1_METHODS = ("truncated", "cumulative")


#: How many times the all-zero model's loss (or the lowest loss so far) the
#: training loss must reach for :meth:`RSRank._watch_loss` to warn.
DIVERGED = 100


class DivergenceWarning(ConvergenceWarning):
    """The training loss keeps rising: features on very different scales, or
    a learning rate too large for them."""


@dataclass
class _Queries:
    """Training data laid out query after query, ready for the kernels."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    dense: np.ndarray
    gains: np.ndarray
    labels: np.ndarray
    offsets: np.ndarray
    inv_ideal: np.ndarray
    discount: np.ndarray
    cutoff: int
    qids: np.ndarray = None  # the qid value of each query, increasing
    groups: object = None  # the QueryGroups of the rows, for the NDCG bookkeeping
    rankings: np.ndarray = None  # each query's last ranking (see _kernels.ranked_order_from)
    levels: np.ndarray = None  # each row's label level (see _kernels.all_query_levels)
    n_levels: np.ndarray = None  # per query; 0 where the prefix sums do not apply
    levels_loss: int = -1  # the pair loss levels were computed for

    @property
    def n_queries(self):
        return len(self.offsets) - 1

    @property
    def n_rows(self):
        return int(self.offsets[-1])


@dataclass
class _Evaluation:
    """What the NDCG@eval_k of one set of queries needs every epoch, built
    once per fit: the rows' order into query order (None when already so),
    the convention's gains in that order, each query's ideal DCG, and the
    discount of each place. Conventions that do not break ties by row order
    keep ``labels`` and ``groups`` for :func:`rsrank.metrics.mean_ndcg`."""

    arrays: tuple  # the rows as the kernels take them (see _kernel_arrays)
    order: np.ndarray = None
    gains: np.ndarray = None
    offsets: np.ndarray = None
    ideal: np.ndarray = None
    discount: np.ndarray = None
    empty: float = 0.0
    short_zero: bool = False
    labels: np.ndarray = None
    groups: object = None


def _check_labels(y, n_rows):
    y = np.asarray(y)
    if y.dtype.kind not in "iubf":
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"Unknown label type {y.dtype}: y must hold integer relevance "
                             "grades (0, 1, 2, ...)") from None
    if y.ndim != 1 or len(y) != n_rows:
        raise ValueError(f"y must be one label per row ({n_rows}), got shape {y.shape}")
    if y.dtype.kind not in "iub":
        if y.dtype.kind != "f" or not np.all(np.isfinite(y)) or np.any(y != np.round(y)):
            raise ValueError("y must hold integer relevance grades (0, 1, 2, ...); "
                             "got non-integer values")
    if len(y) and y.min() < 0:
        raise ValueError(f"y must hold non-negative relevance grades; found {y.min()}")
    return y.astype(np.int64)


class RSRank(BaseEstimator):
    """Sparse linear ranker trained on |Delta NDCG|-weighted pairwise losses.

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
    learning_rate : float, default=1e-2
        Step size eta (the paper used 0.001 on OHSUMED's [0, 1] features).
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
    n_jobs : int or None, default=None
        Threads for the per-query work inside a batch (useful with large
        batches). None means 1, -1 all cores.
    verbose : int, default=0
        A progress bar over epochs with training and validation NDCG.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    n_iter_ : int
        Epochs run by the last ``fit``.
    t_ : int
        Gradient steps taken so far (drives the truncation schedule).
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
    """

    # qid is routed to fit, partial_fit and score by default, so that
    # scikit-learn's searches pass each split's queries once routing is on.
    __metadata_request__fit = {"qid": True}
    __metadata_request__partial_fit = {"qid": True}
    __metadata_request__score = {"qid": True}
    __metadata_request__predict = {"qid": True}

    def __init__(self, learning_rate=1e-2, power_t=0.0, normalize="zscore", l1=0.0,
                 truncation_period=1, truncation_threshold=np.inf, l1_method="truncated",
                 average=False, max_iter=100, batch_size=None, shuffle=True, ndcg_k=None,
                 gain="exp2", discount="log2", pair_loss="modified_huber",
                 pair_weight="delta_ndcg", eval_k=10, eval_convention="standard",
                 early_stopping=False, validation_fraction=0.1, n_iter_no_change=10, tol=1e-4,
                 restore_best=True, eval_train=True, random_state=None, warm_start=False,
                 n_jobs=None, verbose=0):
        self.learning_rate = learning_rate
        self.power_t = power_t
        self.normalize = normalize
        self.l1 = l1
        self.truncation_period = truncation_period
        self.truncation_threshold = truncation_threshold
        self.l1_method = l1_method
        self.average = average
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.ndcg_k = ndcg_k
        self.gain = gain
        self.discount = discount
        self.pair_loss = pair_loss
        self.pair_weight = pair_weight
        self.eval_k = eval_k
        self.eval_convention = eval_convention
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.restore_best = restore_best
        self.eval_train = eval_train
        self.random_state = random_state
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.verbose = verbose

    # -- parameter checks --------------------------------------------------------

    def _check_params(self):
        def number(name, low, *, integer=False, strict=False, allow_none=False):
            value = getattr(self, name)
            if value is None and allow_none:
                return
            kind = numbers.Integral if integer else numbers.Real
            if (not isinstance(value, kind) or isinstance(value, bool)
                    or (value <= low if strict else value < low)):
                sign = ">" if strict else ">="
                what = "an integer" if integer else "a number"
                extra = " or None" if allow_none else ""
                raise ValueError(f"{name} must be {what} {sign} {low}{extra}, got {value!r}")

        number("learning_rate", 0, strict=True)
        number("power_t", 0)
        number("l1", 0)
        number("truncation_period", 1, integer=True)
        number("truncation_threshold", 0)
        number("max_iter", 1, integer=True)
        number("batch_size", 1, integer=True, allow_none=True)
        number("ndcg_k", 1, integer=True, allow_none=True)
        number("eval_k", 1, integer=True)
        number("n_iter_no_change", 1, integer=True)
        number("tol", -np.inf)
        if not 0 < self.validation_fraction < 1:
            raise ValueError(f"validation_fraction must be in (0, 1), got {self.validation_fraction!r}")
        for name in ("learning_rate", "power_t", "l1", "truncation_threshold", "tol"):
            if np.isnan(getattr(self, name)):
                raise ValueError(f"{name} must be a number, got nan")
        if not isinstance(self.average, (bool, np.bool_)):
            raise ValueError(f"average must be True or False, got {self.average!r}")
        options = {"pair_loss": tuple(_kernels.PAIR_LOSSES), "pair_weight": ("delta_ndcg", "unit"),
                   "l1_method": L1_METHODS,
                   "eval_convention": tuple(CONVENTIONS), "normalize": NORMALIZERS}
        for name, allowed in options.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        if self.l1_method == "cumulative" and self.truncation_threshold != np.inf:
            raise ValueError("truncation_threshold applies to l1_method='truncated' only; the "
                             "cumulative penalty shrinks every weight (leave it at inf)")
        gain_values(np.array([0.0, 1.0]), self.gain)  # raises on an unknown gain
        discount_values(np.array([1.0, 2.0]), self.discount)  # raises on an unknown discount
        if self.n_jobs is not None and (not isinstance(self.n_jobs, numbers.Integral)
                                        or self.n_jobs == 0):
            raise ValueError(f"n_jobs must be a non-zero integer or None, got {self.n_jobs!r}")

    # -- data preparation ------------------------------------------------------

    def _validate_X(self, X, reset):
        return validate_data(self, X, reset=reset, accept_sparse="csr",
                             dtype=[np.float64, np.float32], order="C")

    def _fit_scaling(self, moments):
        """Set ``feature_offset_`` and ``feature_scale_`` from column moments
        of the training rows (see :func:`rsrank.preprocessing.column_moments`)."""
        width = len(moments[1])
        self._feature_range = (moments[3], moments[4])
        if self.normalize in GLOBAL_NORMALIZERS:
            self.feature_offset_, self.feature_scale_ = scaling_from_moments(
                moments, self.normalize)
        else:
            self.feature_offset_, self.feature_scale_ = np.zeros(width), np.ones(width)

    def _training_space(self, X, qid):
        """``X`` as the kernels see it. A global scaling divides by
        ``feature_scale_`` without centring (pair differences within a query,
        and so training, do not depend on the offset; a sparse X stays
        sparse), per-query scaling is applied in full; no copy without one."""
        if self.normalize in QUERY_NORMALIZERS:
            return query_normalize(X, qid, self.normalize)
        if self.normalize not in GLOBAL_NORMALIZERS:
            return X
        inverse = (1.0 / self.feature_scale_).astype(X.dtype)
        if sp.issparse(X):
            X = sp.csr_matrix(X)
            return sp.csr_matrix((X.data * inverse[X.indices], X.indices, X.indptr),
                                 shape=X.shape)
        return X * inverse

    def linear_function(self):
        """The model on raw features: ``(weights, constant)`` with
        ``predict(X) == X @ weights + constant``.

        With a global scaling, ``weights = coef_ / feature_scale_`` and
        ``constant = -sum(coef_ * feature_offset_ / feature_scale_)``; without
        one, ``(coef_, 0.0)``. A per-query scaling has no such form (it needs
        the other documents of the query) and raises ``ValueError``.
        """
        check_is_fitted(self)
        if self.normalize in QUERY_NORMALIZERS:
            raise ValueError(f"normalize={self.normalize!r} scales each feature by statistics "
                             "of the whole query, so the model is no function of one "
                             "document's raw features; retrain with normalize='zscore' or "
                             "'minmax' for a deployable model")
        scale = getattr(self, "feature_scale_", None)
        if scale is None or self.normalize == "none":
            return self.coef_.copy(), 0.0
        weights = self.coef_ / scale
        return weights, float(-np.dot(weights, self.feature_offset_))

    def _feature_label(self, j):
        names = getattr(self, "_feature_names", None)
        if names is None:
            names = getattr(self, "feature_names_in_", None)
        return str(names[j]) if names is not None else f"f{j + 1}"

    def _scale_advice(self):
        """What to do when training diverges, naming the widest features."""
        text = ""
        span = getattr(self, "_feature_range", None)
        if span is not None and len(span[0]):
            width = np.where(np.isfinite(span[1] - span[0]), span[1] - span[0], 0.0)
            widest = np.argsort(-width, kind="stable")[:3]
            listed = ", ".join(f"{self._feature_label(j)} in [{span[0][j]:.3g}, {span[1][j]:.3g}]"
                               for j in widest)
            text = f"; widest features: {listed}"
        if self.normalize == "none":
            fix = ("scale the features (normalize='zscore', rsrank train --normalize zscore) "
                   f"or lower learning_rate (now {self.learning_rate:g})")
        else:
            fix = f"lower learning_rate (now {self.learning_rate:g})"
        return f"{text}. Fix: {fix}"

    def _discount_table(self, max_size):
        cutoff = max_size if self.ndcg_k is None else min(self.ndcg_k, max_size)
        table = np.zeros(max(max_size, 1))
        table[:cutoff] = discount_values(np.arange(1, cutoff + 1), self.discount)
        return table, max(cutoff, 0)

    def _prepare(self, X, y, qid):
        """Sort rows by query (one copy of X at most) and precompute what the
        kernels need."""
        n_rows = X.shape[0]
        y = _check_labels(y, n_rows)
        groups = group_queries(qid, n_rows=n_rows)
        order = groups.order
        if not np.array_equal(order, np.arange(n_rows)):
            X, y = X[order], y[order]
        gains = gain_values(y, self.gain)
        sizes = groups.sizes
        discount, cutoff = self._discount_table(int(sizes.max()) if len(sizes) else 1)
        ideal = _kernels.ideal_dcg(gains, groups.offsets, discount)
        inv_ideal = np.divide(1.0, ideal, out=np.zeros_like(ideal), where=ideal > 0)
        return _Queries(*_kernel_arrays(X), gains, y, groups.offsets, inv_ideal, discount,
                        cutoff, groups.qids, groups)

    def _validation_data(self, X, y, qid, eval_set, rng):
        """(train X, y, qid), (validation X, y, qid) or None."""
        if eval_set is not None:
            if len(eval_set) != 3:
                raise ValueError("eval_set must be a tuple (X_val, y_val, qid_val)")
            X_val, y_val, qid_val = eval_set
            X_val = self._validate_X(X_val, reset=False)
            y_val = _check_labels(y_val, X_val.shape[0])
            # grouped once here; everything downstream takes the QueryGroups as it is
            return (X, y, qid), (X_val, y_val, group_queries(qid_val, n_rows=X_val.shape[0]))
        if not self.early_stopping:
            return (X, y, qid), None
        groups = group_queries(qid, n_rows=X.shape[0])
        n_val = int(np.ceil(self.validation_fraction * groups.n_queries))
        if groups.n_queries < 2 or n_val >= groups.n_queries:
            raise ValueError("early_stopping without eval_set needs at least 2 queries to "
                             "hold some out; pass eval_set or more queries")
        held_out = rng.permutation(groups.n_queries)[:n_val]
        is_val = np.zeros(X.shape[0], dtype=bool)
        is_val[groups.order[np.isin(groups.row_query(), held_out)]] = True
        qid_all = np.zeros(X.shape[0], dtype=np.int64) if qid is None else np.asarray(qid)
        return ((X[~is_val], y[~is_val], qid_all[~is_val]),
                (X[is_val], y[is_val], qid_all[is_val]))

    # -- training --------------------------------------------------------------

    def _run_epoch(self, data, query_order, w):
        batch = data.n_queries if self.batch_size is None else self.batch_size
        scores = np.zeros(data.n_rows)
        lam = np.zeros(data.n_rows)
        threads = _threads(self.n_jobs)
        partial = np.zeros((threads, w.shape[0]))
        kernel = _kernels.epoch_parallel if threads > 1 else _kernels.epoch_serial
        if data.rankings is None:  # each query's ranking, kept from epoch to epoch
            data.rankings = np.full(data.n_rows, -1, dtype=np.int64)
        loss = _kernels.PAIR_LOSSES[self.pair_loss]
        if data.levels is None or data.levels_loss != loss:  # labels do not change
            data.levels = np.zeros(data.n_rows, dtype=np.int64)
            data.n_levels = np.zeros(data.n_queries, dtype=np.int64)
            _kernels.all_query_levels(data.gains, data.labels, data.offsets, data.discount,
                                      loss, data.levels, data.n_levels)
            data.levels_loss = loss
        if getattr(self, "_l1_state", np.empty(0)).shape != (w.shape[0] + 1,):
            self._l1_state = np.zeros(w.shape[0] + 1)
        with _numba_threads(threads):
            total, self.t_ = kernel(
                data.data, data.indices, data.indptr, data.dense, data.gains, data.labels,
                data.offsets, data.inv_ideal, data.discount, data.cutoff,
                loss, self.pair_weight == "unit",
                query_order.astype(np.int64), batch, w, float(self.learning_rate),
                float(self.power_t), float(self.l1), int(self.truncation_period),
                float(self.truncation_threshold), self.l1_method == "cumulative",
                self._l1_state, int(self.t_), scores, lam, partial, data.rankings, data.levels,
                data.n_levels)
        if not np.all(np.isfinite(w)):
            raise ValueError(f"the weights became non-finite (NaN or inf) at step {self.t_}: "
                             f"training diverged{self._scale_advice()}")
        return total / max(len(query_order), 1)

    def _init_coef(self, n_features, coef_init):
        if coef_init is not None:
            coef = np.array(coef_init, dtype=np.float64).ravel()
            if coef.shape != (n_features,):
                raise ValueError(f"coef_init has {coef.size} values for {n_features} features")
            if not np.all(np.isfinite(coef)):
                raise ValueError("coef_init contains NaN or infinite values")
            return coef
        if self.warm_start and hasattr(self, "coef_"):
            return self.coef_.copy()
        return np.zeros(n_features)

    def fit(self, X, y, *, qid=None, eval_set=None, coef_init=None):
        """Train on queries.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_rows, n_features)
            One row per query-document pair. CSR stays sparse; float32 stays
            float32.
        y : array-like of shape (n_rows,)
            Non-negative integer relevance grades.
        qid : array-like of shape (n_rows,), optional
            Query id per row; rows of a query need not be adjacent. None: all
            rows form one query.
        eval_set : tuple (X_val, y_val, qid_val), optional
            Validation queries for ``history_``, early stopping and keeping the
            best epoch.
        coef_init : array-like of shape (n_features,), optional
            Start vector (default zeros, or the previous ``coef_`` with
            ``warm_start``).

        Returns
        -------
        self
        """
        self._check_params()
        reset = not (self.warm_start and hasattr(self, "coef_"))
        X = self._validate_X(X, reset=reset)
        y = _check_labels(y, X.shape[0])
        rng = check_random_state(self.random_state)
        train, validation = self._validation_data(X, y, qid, eval_set, rng)
        if reset or not hasattr(self, "feature_scale_"):
            self._fit_scaling(column_moments(train[0]))
        train = (self._training_space(train[0], train[2]),) + tuple(train[1:])
        if validation is not None:
            validation = ((self._training_space(validation[0], validation[2]),)
                          + tuple(validation[1:]))
        data = self._prepare(*train)
        self._reference_loss = self._zero_model_loss(data)
        # the NDCG bookkeeping runs every epoch on the rows _prepare laid out
        train_evaluation = (self._evaluation(
            (data.data, data.indices, data.indptr, data.dense), data.labels, data.groups,
            grouped=True) if self.eval_train else None)

        def epoch(w):
            query_order = (rng.permutation(data.n_queries) if self.shuffle
                           else np.arange(data.n_queries))
            return self._run_epoch(data, query_order, w)

        def train_ndcg(w):
            return self._ndcg(train_evaluation, w) if self.eval_train else float("nan")

        self._train(epoch, train_ndcg, validation, self._init_coef(X.shape[1], coef_init), reset)
        self._n_fit_queries = data.n_queries
        self._fingerprint = _fingerprint(*train[:2], data.offsets)
        return self

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
        eval_set : tuple (X_val, y_val, qid_val), optional
            In-memory validation queries, as in :meth:`fit`.
        coef_init : array-like, optional

        The training NDCG is not computed (it would take another pass), so
        ``history_["train_ndcg"]`` holds NaN. Over blocks that cover the same
        queries in the same order, with ``shuffle=False``, the result equals
        :meth:`fit`.
        """
        self._check_params()
        if self.early_stopping and eval_set is None:
            raise ValueError("fit_chunks with early_stopping needs an eval_set (no queries "
                             "can be held out of a stream)")
        reset = not (self.warm_start and hasattr(self, "coef_"))
        rng = check_random_state(self.random_state)
        state = {"n_queries": 0}

        def epoch(w):
            total, n_queries = 0.0, 0
            for X, y, qid in chunks():
                X = self._training_space(self._validate_X(X, reset=False), qid)
                data = self._prepare(X, y, qid)
                order = (rng.permutation(data.n_queries) if self.shuffle
                         else np.arange(data.n_queries))
                total += self._run_epoch(data, order, w) * data.n_queries
                n_queries += data.n_queries
            state["n_queries"] = n_queries
            return total / max(n_queries, 1)

        # the first block fixes the feature count (and checks eval_set against it)
        first = next(iter(chunks()))
        X0 = self._validate_X(first[0], reset=reset)
        if reset or not hasattr(self, "feature_scale_"):
            # one pass over the stream for the scaling statistics
            moments = None
            for X, _, _ in chunks():
                block = column_moments(self._validate_X(X, reset=False))
                moments = block if moments is None else combine_moments(moments, block)
            self._fit_scaling(moments)
        validation = None
        if eval_set is not None:
            validation = self._validation_data(X0, first[1], first[2], eval_set, rng)[1]
            validation = ((self._training_space(validation[0], validation[2]),)
                          + tuple(validation[1:]))
        self._reference_loss = None  # would cost a pass over the stream
        self._train(epoch, lambda w: float("nan"), validation,
                    self._init_coef(X0.shape[1], coef_init), reset)
        self._n_fit_queries = state["n_queries"]
        self._fingerprint = None
        return self

    def _train(self, run_epoch, train_ndcg, validation, w, reset):
        """The epoch loop shared by :meth:`fit` and :meth:`fit_chunks`:
        history, early stopping and keeping the best validation epoch."""
        if validation is not None:
            X_val, y_val, qid_val = validation
            validation = self._evaluation(_kernel_arrays(X_val), y_val,
                                          group_queries(qid_val, n_rows=X_val.shape[0]))
        if reset or not hasattr(self, "t_"):
            self.t_ = 0
            self._l1_state = np.zeros(w.shape[0] + 1)
        self._warned_divergence = False
        self.history_ = {"loss": [], "train_ndcg": [], "val_ndcg": [], "n_nonzero": [],
                         "seconds": []}
        best_score, best_w, best_epoch, stale = -np.inf, w.copy(), None, 0
        # with average, the model is the mean of the epochs' iterates
        model = w.copy() if self.average else w
        bar = _progress(range(1, self.max_iter + 1), self.verbose)
        for epoch in bar:
            start = time.perf_counter()
            loss = run_epoch(w)
            if self.average:
                model += (w - model) / epoch
            self.history_["seconds"].append(time.perf_counter() - start)
            self.history_["loss"].append(loss)
            self._watch_loss(self.history_["loss"])
            self.history_["n_nonzero"].append(int(np.count_nonzero(model)))
            train_value = train_ndcg(model)
            self.history_["train_ndcg"].append(train_value)
            status = {"loss": f"{loss:.4g}"}
            if not np.isnan(train_value):  # off with eval_train=False: shown, never as nan
                status[f"ndcg@{self.eval_k}"] = f"{train_value:.4f}"
            if validation is not None:
                val_ndcg = self._ndcg(validation, model)
                self.history_["val_ndcg"].append(val_ndcg)
                status[f"val@{self.eval_k}"] = f"{val_ndcg:.4f}"
                stale = 0 if val_ndcg > best_score + self.tol else stale + 1
                if val_ndcg > best_score:
                    best_score, best_w, best_epoch = val_ndcg, model.copy(), epoch
                if self.early_stopping and stale >= self.n_iter_no_change:
                    _set_postfix(bar, status)
                    break
            _set_postfix(bar, status)
        self.n_iter_ = epoch
        if validation is not None and self.restore_best:
            model = best_w
        self.best_iteration_ = best_epoch
        self.coef_ = model
        self._iterate, self._n_averaged = (w, epoch) if self.average else (None, 0)

    def _zero_model_loss(self, data):
        """Mean per-query loss of the all-zero weights (every pair at margin
        0): a training loss far above it means the steps overshoot."""
        n, width = data.n_rows, self.n_features_in_
        total = _kernels.objective_serial(
            data.data, data.indices, data.indptr, data.dense, data.gains, data.labels,
            data.offsets, data.inv_ideal, data.discount, data.cutoff,
            _kernels.PAIR_LOSSES[self.pair_loss], self.pair_weight == "unit",
            np.zeros(width), np.zeros(n), np.zeros(n), np.zeros(width))
        return total / max(data.n_queries, 1)

    def _watch_loss(self, losses):
        """Warn once per fit when training is diverging: the mean loss is a
        hundred times that of the all-zero model (pairs misordered by margins
        of tens of units), or, where that loss is unknown, it rose for three
        epochs in a row to a hundred times its lowest value. Gradient steps
        then overshoot, almost always because the features' scales differ by
        orders of magnitude, and the weights are on their way to overflow.

        Lesser swings are left alone: with full-batch steps the loss of
        scaled features can rise twenty-fold for a few epochs while the
        validation NDCG still improves (OHSUMED with the defaults), and a
        smaller learning rate there ranks worse."""
        if getattr(self, "_warned_divergence", False) or len(losses) < 2:
            return
        reference = getattr(self, "_reference_loss", None)
        last = losses[-4:]
        rising = len(last) == 4 and all(b > a for a, b in zip(last, last[1:]))
        lowest = min(losses)
        if reference and losses[-1] > DIVERGED * reference:
            cause = (f"the training loss is {losses[-1]:.4g} after {len(losses)} epochs, "
                     f"{losses[-1] / reference:.0f} times that of the all-zero model")
        elif not reference and rising and losses[-1] > DIVERGED * lowest and losses[-1] > 0:
            cause = (f"the training loss rose from {lowest:.4g} to {losses[-1]:.4g} over "
                     f"{len(losses)} epochs")
        else:
            return
        self._warned_divergence = True
        warnings.warn(f"{cause}: training is diverging{self._scale_advice()}",
                      DivergenceWarning, stacklevel=4)

    def partial_fit(self, X, y, *, qid=None):
        """One pass over the given queries, continuing from the current weights
        and step count (for data that arrives in blocks of whole queries)."""
        first = not hasattr(self, "coef_")
        if first:
            self._check_params()
        X = self._validate_X(X, reset=first)
        y = _check_labels(y, X.shape[0])
        if first:
            self.coef_ = np.zeros(X.shape[1])
            self.t_ = 0
            self.n_iter_ = 0
            self._fit_scaling(column_moments(X))  # the first block fixes the scaling
        if not hasattr(self, "_partial_rng"):
            self._partial_rng = check_random_state(self.random_state)
        data = self._prepare(self._training_space(X, qid), y, qid)
        query_order = (self._partial_rng.permutation(data.n_queries) if self.shuffle
                       else np.arange(data.n_queries))
        if not self.average:
            self._run_epoch(data, query_order, self.coef_)
        else:  # the steps go on from the last iterate; coef_ is their mean
            if getattr(self, "_iterate", None) is None:
                self._iterate, self._n_averaged = self.coef_.copy(), 0
            self._run_epoch(data, query_order, self._iterate)
            self._n_averaged += 1
            self.coef_ = self.coef_ + (self._iterate - self.coef_) / self._n_averaged
        self.n_iter_ += 1
        return self

    # -- prediction --------------------------------------------------------------

    def _evaluation(self, arrays, y, groups, *, grouped=False):
        """The :class:`_Evaluation` of rows ``arrays`` (kernel arrays) with
        labels ``y`` and their :class:`QueryGroups`; ``grouped``: the rows
        are already in query order."""
        settings = CONVENTIONS[self.eval_convention]
        if settings["ties"] != "stable" or not isinstance(settings["empty"], (int, float)):
            if grouped:  # the groups name rows in their input order
                sizes = np.diff(groups.offsets)
                groups = group_queries(np.repeat(np.arange(len(sizes)), sizes))
            return _Evaluation(arrays, labels=y, groups=groups)
        order = groups.order
        if grouped or np.array_equal(order, np.arange(len(order))):
            order = None
        gains = gain_values(y if order is None else y[order], settings["gain"])
        discount = discount_values(np.arange(1, self.eval_k + 1), settings["discount"])
        ideal = _kernels.ideal_dcg(gains, groups.offsets, discount)
        return _Evaluation(arrays, order, gains, groups.offsets, ideal, discount,
                           float(settings["empty"]), settings["short_list"] == "zero")

    def _ndcg(self, evaluation, w):
        """Mean NDCG@eval_k of the weights ``w`` on an :class:`_Evaluation`."""
        scores = self._scores(evaluation.arrays, w)
        if evaluation.gains is None:
            return mean_ndcg(evaluation.labels, scores, evaluation.groups, self.eval_k,
                             convention=self.eval_convention)
        if evaluation.order is not None:
            scores = scores[evaluation.order]
        out = np.empty(len(evaluation.offsets) - 1)
        if len(out) == 0:
            return float("nan")
        threads = _threads(self.n_jobs)
        kernel = _kernels.ndcg_at_parallel if threads > 1 else _kernels.ndcg_at_serial
        with _numba_threads(threads):
            kernel(scores, evaluation.gains, evaluation.offsets, evaluation.discount,
                   self.eval_k, evaluation.ideal, evaluation.empty, evaluation.short_zero, out)
        return float(out.mean())

    def _scores(self, X, w):
        """``X @ w`` in float64 without a float64 copy of a float32 ``X``;
        ``X`` may be given as its kernel arrays."""
        arrays = X if isinstance(X, tuple) else _kernel_arrays(X)
        dense = arrays[2].shape[0] == 0
        out = np.empty(arrays[3].shape[0] if dense else arrays[2].shape[0] - 1)
        threads = _threads(self.n_jobs)
        kernel = (_kernels.linear_scores_parallel if threads > 1
                  else _kernels.linear_scores_serial)
        with _numba_threads(threads):
            kernel(*arrays, np.ascontiguousarray(w, dtype=np.float64), out)
        return out

    def predict(self, X, *, qid=None):
        """Scores of the rows; sort a query's documents by decreasing score.

        With a global scaling (or none) this is ``X @ weights + constant``
        of :meth:`linear_function`. A per-query scaling needs ``qid``.
        """
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        if self.normalize in QUERY_NORMALIZERS:
            if qid is None and getattr(self, "_n_fit_queries", 1) > 1:
                raise ValueError(f"normalize={self.normalize!r} scales features within each "
                                 "query: pass qid=... (the query of every row) to predict")
            return self._scores(query_normalize(X, qid, self.normalize), self.coef_)
        weights, constant = self.linear_function()
        return self._scores(X, weights) + constant

    def score(self, X, y, *, qid=None, sample_weight=None):
        """Mean NDCG@``eval_k`` over queries with ``eval_convention``.

        ``qid=None`` treats all rows as one query; for a model trained on
        several queries that is almost always a lost ``qid`` (scikit-learn's
        searches drop it unless metadata routing is on), so it is an error.
        """
        if qid is None and getattr(self, "_n_fit_queries", 1) > 1:
            raise ValueError(
                "score() got no qid, but the model was trained on "
                f"{self._n_fit_queries} queries: pass qid=... . In GridSearchCV or "
                "cross_val_score, enable metadata routing "
                "(sklearn.set_config(enable_metadata_routing=True)) and pass qid to fit, or "
                "use rsrank.model_selection.fit_search / cross_val_score_by_query")
        if sample_weight is not None:
            raise ValueError("score() has no per-row sample weights: NDCG weighs queries, "
                             "not rows")
        scores = self.predict(X, qid=qid)
        y = _check_labels(y, X.shape[0])
        return mean_ndcg(y, scores, qid, self.eval_k, convention=self.eval_convention)

    def feature_names(self):
        """The name of every feature: those given to :meth:`set_feature_names`,
        else the training DataFrame's columns (``feature_names_in_``), else
        LETOR's 1-based ``"f1", "f2", ...``."""
        check_is_fitted(self)
        names = getattr(self, "_feature_names", None)
        if names is None:
            names = getattr(self, "feature_names_in_", None)
        if names is None:
            return [f"f{j + 1}" for j in range(self.n_features_in_)]
        return [str(name) for name in names]

    def set_feature_names(self, names):
        """Name the features of a model trained without column names (for
        :meth:`selected_features`, model files and exports); returns self."""
        check_is_fitted(self)
        names = [str(name) for name in names]
        if len(names) != self.n_features_in_:
            raise ValueError(f"{len(names)} feature names for {self.n_features_in_} features")
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"feature name {repeated[0]!r} is used twice")
        self._feature_names = names
        return self

    def selected_features(self):
        """Non-zero weights as ``[(name, weight), ...]`` by decreasing
        ``|weight|``, named by :meth:`feature_names`. The weights are those
        of ``coef_`` (on the scaled features)."""
        check_is_fitted(self)
        names = self.feature_names()
        nonzero = np.flatnonzero(self.coef_)
        nonzero = nonzero[np.argsort(-np.abs(self.coef_[nonzero]), kind="stable")]
        return [(str(names[j]), float(self.coef_[j])) for j in nonzero]

    # -- model files -------------------------------------------------------------

    def save(self, path):
        """Write the fitted model as a small versioned JSON file (atomically);
        see :func:`rsrank.persistence.save_model`."""
        from .persistence import save_model

        save_model(self, path)

    @classmethod
    def load(cls, path):
        """Read a model written by :meth:`save`; see :func:`rsrank.persistence.load_model`."""
        from .persistence import load_model

        return load_model(path)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _kernel_arrays(X):
    """``(data, indices, indptr, dense)`` as the kernels take them: the CSR
    triplet with an empty dense array, or empty CSR arrays with a C-ordered
    dense ``X``. No copy of an already CSR or C-contiguous ``X``; the kernels
    need no sorted indices, so ``X`` is never modified."""
    if sp.issparse(X):
        X = X.tocsr()
        return X.data, X.indices, X.indptr, np.zeros((0, 0), dtype=X.dtype)
    X = np.ascontiguousarray(X)
    return np.zeros(0, X.dtype), np.zeros(0, np.int32), np.zeros(0, np.int32), X


def _fingerprint(X, y, offsets):
    """A cheap digest of the training data: shapes, sums and a hash of the
    labels and query sizes (not of every feature value)."""
    import hashlib

    digest = hashlib.sha256()
    digest.update(np.ascontiguousarray(y, dtype=np.int64).tobytes())
    digest.update(np.diff(offsets).astype(np.int64).tobytes())
    values = X.data if sp.issparse(X) else X
    return {"n_rows": int(X.shape[0]), "n_features": int(X.shape[1]),
            "n_queries": int(len(offsets) - 1),
            "feature_sum": float(np.sum(values, dtype=np.float64)),
            "labels_and_sizes_sha256": digest.hexdigest()}


def _threads(n_jobs):
    if n_jobs is None:
        return 1
    available = numba.config.NUMBA_NUM_THREADS
    if n_jobs < 0:
        return max(1, available + 1 + n_jobs)
    return max(1, min(int(n_jobs), available))


class _numba_threads:
    """Temporarily set numba's thread count."""

    def __init__(self, n):
        self.n = n

    def __enter__(self):
        self.previous = numba.get_num_threads()
        if self.n != self.previous:
            numba.set_num_threads(self.n)

    def __exit__(self, *exc):
        if self.n != self.previous:
            numba.set_num_threads(self.previous)


def _progress(iterable, verbose):
    if not verbose:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, desc="epochs", leave=False)


def _set_postfix(bar, status):
    if hasattr(bar, "set_postfix"):
        bar.set_postfix(status)
