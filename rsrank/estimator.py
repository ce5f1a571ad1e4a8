"""The scikit-learn estimator: parameters, validation, seeding and the epoch
loop. The arithmetic lives in :mod:`rsrank._kernels`."""

import json
import numbers
import time
from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _kernels
from ._queries import group_queries
from .metrics import CONVENTIONS, discount_values, gain_values, mean_ndcg

__all__ = ["RSRank"]

MODEL_FORMAT = "rsrank-model"
MODEL_FORMAT_VERSION = 1


def _library_version():
    from . import __version__

    return __version__


def _to_json(value):
    """JSON has no inf/nan: write them as strings."""
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if not np.isfinite(value):
            return str(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def _from_json(value):
    if value in ("inf", "-inf", "nan"):
        return float(value)
    return value


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

    @property
    def n_queries(self):
        return len(self.offsets) - 1

    @property
    def n_rows(self):
        return int(self.offsets[-1])


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
    learning_rate : float, default=1e-3
        Step size eta (the paper's 0.001).
    l1 : float, default=0.0
        L1 strength g. 0 gives plain (dense) gradient descent.
    truncation_period : int, default=1
        K: truncate every K steps (the paper's K = 1).
    truncation_threshold : float, default=inf
        theta: only weights with ``|w_j| <= theta`` are shrunk. ``inf`` with
        ``K = 1`` is soft-thresholding.
    max_iter : int, default=100
        Number of epochs (passes over the training queries).
    batch_size : int or None, default=1
        Queries per step; 1 is the paper's online update, None a full batch.
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
    """

    # qid is routed to fit, partial_fit and score by default, so that
    # scikit-learn's searches pass each split's queries once routing is on.
    __metadata_request__fit = {"qid": True}
    __metadata_request__partial_fit = {"qid": True}
    __metadata_request__score = {"qid": True}

    def __init__(self, learning_rate=1e-3, l1=0.0, truncation_period=1,
                 truncation_threshold=np.inf, max_iter=100, batch_size=1, shuffle=True,
                 ndcg_k=None, gain="exp2", discount="log2", pair_loss="modified_huber",
                 pair_weight="delta_ndcg", eval_k=10, eval_convention="standard",
                 early_stopping=False, validation_fraction=0.1, n_iter_no_change=10, tol=1e-4,
                 restore_best=True, eval_train=True, random_state=None, warm_start=False,
                 n_jobs=None, verbose=0):
        self.learning_rate = learning_rate
        self.l1 = l1
        self.truncation_period = truncation_period
        self.truncation_threshold = truncation_threshold
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
        number("l1", 0)
        number("truncation_period", 1, integer=True)
        number("truncation_threshold", 0)
        number("max_iter", 1, integer=True)
        number("batch_size", 1, integer=True, allow_none=True)
        number("ndcg_k", 1, integer=True, allow_none=True)
        number("eval_k", 1, integer=True)
        number("n_iter_no_change", 1, integer=True)
        if not 0 < self.validation_fraction < 1:
            raise ValueError(f"validation_fraction must be in (0, 1), got {self.validation_fraction!r}")
        options = {"pair_loss": tuple(_kernels.PAIR_LOSSES), "pair_weight": ("delta_ndcg", "unit"),
                   "eval_convention": tuple(CONVENTIONS)}
        for name, allowed in options.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        gain_values(np.array([0.0, 1.0]), self.gain)  # raises on an unknown gain
        discount_values(np.array([1.0, 2.0]), self.discount)  # raises on an unknown discount
        if self.n_jobs is not None and (not isinstance(self.n_jobs, numbers.Integral)
                                        or self.n_jobs == 0):
            raise ValueError(f"n_jobs must be a non-zero integer or None, got {self.n_jobs!r}")

    # -- data preparation ------------------------------------------------------

    def _validate_X(self, X, reset):
        return validate_data(self, X, reset=reset, accept_sparse="csr",
                             dtype=[np.float64, np.float32], order="C")

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
                        cutoff)

    def _validation_data(self, X, y, qid, eval_set, rng):
        """(train X, y, qid), (validation X, y, qid) or None."""
        if eval_set is not None:
            if len(eval_set) != 3:
                raise ValueError("eval_set must be a tuple (X_val, y_val, qid_val)")
            X_val, y_val, qid_val = eval_set
            X_val = self._validate_X(X_val, reset=False)
            y_val = _check_labels(y_val, X_val.shape[0])
            group_queries(qid_val, n_rows=X_val.shape[0])
            return (X, y, qid), (X_val, y_val, qid_val)
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
        with _numba_threads(threads):
            total, self.t_ = kernel(
                data.data, data.indices, data.indptr, data.dense, data.gains, data.labels,
                data.offsets, data.inv_ideal, data.discount, data.cutoff,
                _kernels.PAIR_LOSSES[self.pair_loss], self.pair_weight == "unit",
                query_order.astype(np.int64), batch, w, float(self.learning_rate),
                float(self.l1), int(self.truncation_period), float(self.truncation_threshold),
                int(self.t_), scores, lam, partial)
        if not np.all(np.isfinite(w)):
            raise ValueError(
                f"the weights became non-finite (NaN or inf) at step {self.t_}: training "
                f"diverged; use a smaller learning_rate (now {self.learning_rate})")
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
        data = self._prepare(*train)
        # group once: the NDCG bookkeeping runs every epoch
        train = (train[0], train[1], group_queries(train[2], n_rows=train[0].shape[0]))

        def epoch(w):
            query_order = (rng.permutation(data.n_queries) if self.shuffle
                           else np.arange(data.n_queries))
            return self._run_epoch(data, query_order, w)

        def train_ndcg(w):
            return self._ndcg(*train, w) if self.eval_train else float("nan")

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
                X = self._validate_X(X, reset=False)
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
        validation = None
        if eval_set is not None:
            validation = self._validation_data(X0, first[1], first[2], eval_set, rng)[1]
        self._train(epoch, lambda w: float("nan"), validation,
                    self._init_coef(X0.shape[1], coef_init), reset)
        self._n_fit_queries = state["n_queries"]
        self._fingerprint = None
        return self

    def _train(self, run_epoch, train_ndcg, validation, w, reset):
        """The epoch loop shared by :meth:`fit` and :meth:`fit_chunks`:
        history, early stopping and keeping the best validation epoch."""
        if validation is not None:
            validation = (validation[0], validation[1],
                          group_queries(validation[2], n_rows=validation[0].shape[0]))
        if reset or not hasattr(self, "t_"):
            self.t_ = 0
        self.history_ = {"loss": [], "train_ndcg": [], "val_ndcg": [], "n_nonzero": [],
                         "seconds": []}
        best_score, best_w, best_epoch, stale = -np.inf, w.copy(), None, 0
        bar = _progress(range(1, self.max_iter + 1), self.verbose)
        for epoch in bar:
            start = time.perf_counter()
            loss = run_epoch(w)
            self.history_["seconds"].append(time.perf_counter() - start)
            self.history_["loss"].append(loss)
            self.history_["n_nonzero"].append(int(np.count_nonzero(w)))
            train_value = train_ndcg(w)
            self.history_["train_ndcg"].append(train_value)
            status = {"loss": f"{loss:.4g}", f"ndcg@{self.eval_k}": f"{train_value:.4f}"}
            if validation is not None:
                val_ndcg = self._ndcg(*validation, w)
                self.history_["val_ndcg"].append(val_ndcg)
                status[f"val@{self.eval_k}"] = f"{val_ndcg:.4f}"
                stale = 0 if val_ndcg > best_score + self.tol else stale + 1
                if val_ndcg > best_score:
                    best_score, best_w, best_epoch = val_ndcg, w.copy(), epoch
                if self.early_stopping and stale >= self.n_iter_no_change:
                    _set_postfix(bar, status)
                    break
            _set_postfix(bar, status)
        self.n_iter_ = epoch
        if validation is not None and self.restore_best:
            w = best_w
        self.best_iteration_ = best_epoch
        self.coef_ = w

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
        if not hasattr(self, "_partial_rng"):
            self._partial_rng = check_random_state(self.random_state)
        data = self._prepare(X, y, qid)
        query_order = (self._partial_rng.permutation(data.n_queries) if self.shuffle
                       else np.arange(data.n_queries))
        self._run_epoch(data, query_order, self.coef_)
        self.n_iter_ += 1
        return self

    # -- prediction --------------------------------------------------------------

    def _ndcg(self, X, y, qid, w):
        return mean_ndcg(y, self._scores(X, w), qid, self.eval_k,
                         convention=self.eval_convention)

    def _scores(self, X, w):
        """``X @ w`` in float64 without a float64 copy of a float32 ``X``."""
        out = np.empty(X.shape[0])
        threads = _threads(self.n_jobs)
        kernel = (_kernels.linear_scores_parallel if threads > 1
                  else _kernels.linear_scores_serial)
        with _numba_threads(threads):
            kernel(*_kernel_arrays(X), np.ascontiguousarray(w, dtype=np.float64), out)
        return out

    def predict(self, X):
        """Scores ``X @ coef_``; sort a query's documents by decreasing score."""
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        return self._scores(X, self.coef_)

    def score(self, X, y, *, qid=None):
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
        scores = self.predict(X)
        y = _check_labels(y, X.shape[0])
        return mean_ndcg(y, scores, qid, self.eval_k, convention=self.eval_convention)

    def selected_features(self):
        """Non-zero weights as ``[(name, weight), ...]`` by decreasing
        ``|weight|``. Names are ``feature_names_in_`` or LETOR's 1-based
        ``"f1", "f2", ...``."""
        check_is_fitted(self)
        names = getattr(self, "feature_names_in_", None)
        if names is None:
            names = [f"f{j + 1}" for j in range(len(self.coef_))]
        nonzero = np.flatnonzero(self.coef_)
        nonzero = nonzero[np.argsort(-np.abs(self.coef_[nonzero]), kind="stable")]
        return [(str(names[j]), float(self.coef_[j])) for j in nonzero]

    # -- model files -------------------------------------------------------------

    def save(self, path):
        """Write the fitted model as versioned, human-readable JSON (atomically).

        The file holds the weights, every parameter, the feature count and
        names, the library version, the fit's bookkeeping and a fingerprint
        of the training data. Pickle and joblib work too.
        """
        check_is_fitted(self)
        params = {}
        for name, value in self.get_params().items():
            if isinstance(value, np.random.RandomState):
                value = None  # seeds training only; predictions do not depend on it
            if callable(value):
                raise ValueError(f"cannot save parameter {name}={value!r}: a callable has no "
                                 "JSON form; use pickle or joblib for this model")
            params[name] = _to_json(value)
        names = getattr(self, "feature_names_in_", None)
        document = {
            "format": MODEL_FORMAT,
            "format_version": MODEL_FORMAT_VERSION,
            "rsrank_version": _library_version(),
            "n_features": int(self.n_features_in_),
            "feature_names": None if names is None else [str(n) for n in names],
            "coef": [float(v) for v in self.coef_],
            "params": params,
            "fitted": {
                "n_iter": int(getattr(self, "n_iter_", 0)),
                "t": int(getattr(self, "t_", 0)),
                "best_iteration": getattr(self, "best_iteration_", None),
                "n_fit_queries": int(getattr(self, "_n_fit_queries", 1)),
                "history": {k: [_to_json(v) for v in values]
                            for k, values in getattr(self, "history_", {}).items()},
            },
            "training_data": getattr(self, "_fingerprint", None),
        }
        from .datasets import _atomic_write_text

        _atomic_write_text(path, json.dumps(document, indent=1, allow_nan=False) + "\n")

    @classmethod
    def load(cls, path):
        """Read a model written by :meth:`save`; checks format, version and shape."""
        try:
            with open(path, encoding="utf-8") as handle:
                document = json.load(handle)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}: not a valid RSRank model file ({error})") from None
        if not isinstance(document, dict) or document.get("format") != MODEL_FORMAT:
            raise ValueError(f"{path}: not an RSRank model file (no format: {MODEL_FORMAT!r})")
        version = document.get("format_version")
        if not isinstance(version, int) or version > MODEL_FORMAT_VERSION:
            raise ValueError(f"{path}: model format version {version!r} is newer than this "
                             f"rsrank ({MODEL_FORMAT_VERSION}); upgrade rsrank")
        try:
            coef = np.asarray(document["coef"], dtype=np.float64)
            n_features = int(document["n_features"])
            params = {k: _from_json(v) for k, v in document["params"].items()}
            fitted = document["fitted"]
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"{path}: corrupted RSRank model file ({error!r})") from None
        if coef.shape != (n_features,) or not np.all(np.isfinite(coef)):
            raise ValueError(f"{path}: corrupted RSRank model file: {coef.size} finite "
                             f"weights expected {n_features}")
        unknown = set(params) - set(cls().get_params())
        if unknown:
            raise ValueError(f"{path}: unknown parameters {sorted(unknown)} (written by "
                             f"rsrank {document.get('rsrank_version')})")
        model = cls(**params)
        model.coef_ = coef
        model.n_features_in_ = n_features
        if document.get("feature_names") is not None:
            names = np.asarray(document["feature_names"], dtype=object)
            if names.shape != (n_features,):
                raise ValueError(f"{path}: {names.size} feature names for {n_features} features")
            model.feature_names_in_ = names
        model.n_iter_ = fitted.get("n_iter", 0)
        model.t_ = fitted.get("t", 0)
        model.best_iteration_ = fitted.get("best_iteration")
        model._n_fit_queries = fitted.get("n_fit_queries", 1)
        model.history_ = {k: [_from_json(v) for v in values]
                          for k, values in fitted.get("history", {}).items()}
        model._fingerprint = document.get("training_data")
        return model

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
