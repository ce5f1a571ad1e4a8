"""Data-parallel RSRank on a Dask cluster (``pip install rsrank[dask]``).

The data stays on the workers: each worker prepares its partitions once
(rows grouped by query, exactly as :class:`~rsrank.RSRank` does) and keeps
them in memory. Per epoch only weight vectors travel: the client sends ``w``
and receives one vector (and a few numbers) per partition, so the traffic is
O(partitions x features), never O(data).

Two modes, both reusing the single-machine kernels on every partition:

``mode="gradient"``
    One full-batch step per epoch: every partition returns the summed pair
    gradient of its queries at the current ``w``; the client adds them,
    divides by the number of queries, steps and applies truncated gradient.
    This is single-machine training with ``batch_size=None``, up to the
    order of floating-point additions.
``mode="mixing"``
    Iterative parameter mixing: every partition runs one local epoch of
    RSRank SGD (``batch_size`` queries per step, truncation included) from
    the current ``w``; the client averages the partitions' weights,
    weighted by their number of queries, and truncates the average once
    (``learning_rate * truncation_period * l1``) so the mixed model is sparse
    again.

A partition must hold whole queries: :func:`repartition_by_query` cuts dask
arrays at query boundaries and :func:`check_query_partitions` verifies it.
``DaskRSRank.fit_files`` reads LETOR files on the workers themselves.
"""

import numpy as np

from . import _kernels
from .datasets import load_letor
from .estimator import RSRank, _check_labels

__all__ = ["DaskRSRank", "repartition_by_query", "check_query_partitions"]


def _dask_array():
    import dask.array as da

    return da


def repartition_by_query(X, y, qid, rows_per_partition=None):
    """Rechunk dask arrays ``X`` (2-D), ``y`` and ``qid`` so that every
    partition holds whole queries, each about ``rows_per_partition`` rows.

    ``qid`` is computed (one integer per row) to find the boundaries; the
    rows must already be grouped by query (contiguous blocks).
    """
    da = _dask_array()
    qid_values = np.asarray(qid.compute() if hasattr(qid, "compute") else qid)
    n = len(qid_values)
    starts = np.flatnonzero(np.r_[True, qid_values[1:] != qid_values[:-1]])
    if len(starts) != len(np.unique(qid_values)):
        raise ValueError("rows of a query are not contiguous; sort the rows by query first")
    if rows_per_partition is None:
        rows_per_partition = X.chunks[0][0] if hasattr(X, "chunks") else n
    cuts = [0]
    for start in starts[1:]:
        if start - cuts[-1] >= rows_per_partition:
            cuts.append(int(start))
    cuts.append(n)
    chunks = tuple(np.diff(cuts).tolist())
    X = da.asarray(X).rechunk((chunks, X.shape[1]))
    y = da.asarray(y).rechunk((chunks,))
    qid = da.asarray(qid_values).rechunk((chunks,))
    return X, y, qid


def check_query_partitions(qid):
    """Raise ``ValueError`` if a query's rows sit in more than one partition
    of the dask array ``qid``."""
    blocks = [np.unique(np.asarray(block)) for block in
              _dask_array().compute(*qid.to_delayed().ravel())]
    seen = {}
    for index, values in enumerate(blocks):
        for value in values:
            if value in seen:
                raise ValueError(f"query {value} spans partitions {seen[value]} and {index}; "
                                 "use repartition_by_query")
            seen[value] = index


# -- worker side ----------------------------------------------------------------------


def _prepare_partition(params, X, y, qid):
    model = RSRank(**params)
    X = model._validate_X(X, reset=True)
    return model._prepare(X, y, qid)


def _prepare_file(params, path, n_features):
    X, y, qid = load_letor(path, n_features=n_features)
    model = RSRank(**params)
    return model._prepare(model._validate_X(X, reset=True), y, qid)


def _partition_gradient(prepared, w, loss, unit_weights):
    """Summed loss and pair gradient of a partition's queries at ``w``."""
    grad = np.zeros(w.shape[0])
    value = _kernels.objective_serial(
        prepared.data, prepared.indices, prepared.indptr, prepared.dense, prepared.gains,
        prepared.labels, prepared.offsets, prepared.inv_ideal, prepared.discount,
        prepared.cutoff, loss, unit_weights, w, np.zeros(prepared.n_rows),
        np.zeros(prepared.n_rows), grad)
    return value, grad, prepared.n_queries


def _partition_epoch(prepared, w, params, seed):
    """One local epoch of RSRank SGD from ``w`` on a partition (its
    truncation schedule counts the partition's own steps)."""
    model = RSRank(**params)
    model.t_ = 0
    w = w.copy()
    rng = np.random.default_rng(seed)
    order = (rng.permutation(prepared.n_queries) if model.shuffle
             else np.arange(prepared.n_queries))
    loss = model._run_epoch(prepared, order, w)
    return w, loss * prepared.n_queries, prepared.n_queries


def _partition_rows(prepared):
    return prepared.n_rows, prepared.n_queries


def _partition_qids(prepared):
    return prepared.qids


# -- client side -------------------------------------------------------------------------


class DaskRSRank(RSRank):
    """:class:`~rsrank.RSRank` trained on a Dask cluster.

    Parameters are those of ``RSRank`` plus ``mode`` (``"gradient"`` or
    ``"mixing"``, see the module docstring). The training NDCG is not
    recorded (it would cost another pass over the cluster's data), so
    ``eval_train`` has no effect and ``history_["train_ndcg"]`` holds NaN. The cluster is the current
    ``distributed`` client (``distributed.Client(address)`` or a
    ``LocalCluster``). :meth:`to_local` returns a plain ``RSRank`` with the
    same weights for prediction and model files without a cluster.
    """

    def __init__(self, mode="gradient", learning_rate=1e-2, normalize="none", l1=0.0,
                 truncation_period=1, truncation_threshold=np.inf, max_iter=100,
                 batch_size=None, shuffle=True,
                 ndcg_k=None, gain="exp2", discount="log2", pair_loss="modified_huber",
                 pair_weight="delta_ndcg", eval_k=10, eval_convention="standard",
                 early_stopping=False, validation_fraction=0.1, n_iter_no_change=10, tol=1e-4,
                 restore_best=True, eval_train=False, random_state=None, warm_start=False,
                 n_jobs=None, verbose=0):
        super().__init__(
            learning_rate=learning_rate, normalize=normalize, l1=l1,
            truncation_period=truncation_period,
            truncation_threshold=truncation_threshold, max_iter=max_iter,
            batch_size=batch_size, shuffle=shuffle, ndcg_k=ndcg_k, gain=gain,
            discount=discount, pair_loss=pair_loss, pair_weight=pair_weight, eval_k=eval_k,
            eval_convention=eval_convention, early_stopping=early_stopping,
            validation_fraction=validation_fraction, n_iter_no_change=n_iter_no_change,
            tol=tol, restore_best=restore_best, eval_train=eval_train,
            random_state=random_state, warm_start=warm_start, n_jobs=n_jobs, verbose=verbose)
        self.mode = mode

    def _local_params(self):
        params = RSRank().get_params()
        return {name: getattr(self, name) for name in params}

    def _client(self):
        from distributed import default_client

        return default_client()

    def fit(self, X, y, *, qid, eval_set=None, coef_init=None):
        """Train on dask arrays (or a dask DataFrame ``X``) whose partitions
        hold whole queries.

        Parameters
        ----------
        X : dask array of shape (n_rows, n_features) or dask DataFrame
        y, qid : dask arrays chunked like the rows of ``X``
        eval_set : tuple (X_val, y_val, qid_val) of in-memory arrays, optional
        coef_init : array-like, optional
        """
        if qid is None:
            raise ValueError("DaskRSRank.fit needs qid=... (a dask array of query ids, chunked "
                             "like the rows of X)")
        da = _dask_array()
        if hasattr(X, "to_dask_array"):
            X = X.to_dask_array(lengths=True)
        X, y, qid = da.asarray(X), da.asarray(y), da.asarray(qid)
        if not (X.chunks[0] == y.chunks[0] == qid.chunks[0]):
            raise ValueError("X, y and qid must have the same row chunks")
        check_query_partitions(qid)
        client = self._client()
        params = self._local_params()
        parts = zip(X.to_delayed().ravel(), y.to_delayed().ravel(), qid.to_delayed().ravel())
        futures = [client.compute(_delayed(_prepare_partition)(params, *part)) for part in parts]
        return self._fit_partitions(client, futures, X.shape[1], eval_set, coef_init)

    def fit_files(self, paths, *, n_features, eval_set=None, coef_init=None):
        """Train on LETOR files read by the workers (one partition per file;
        each file holds whole queries, and no query spans two files).

        The checks of :meth:`fit` apply: at least one file, no file twice,
        and a query in one file only (a query id found in two files is an
        error that names both)."""
        from pathlib import Path

        paths = [Path(path) for path in paths]
        if not paths:
            raise ValueError("fit_files needs at least one file")
        seen = {}
        for path in paths:
            if not path.is_file():
                raise FileNotFoundError(f"{path}: no such file")
            key = path.resolve()
            if key in seen:
                raise ValueError(f"{path}: given twice (also as {seen[key]}); each file is one "
                                 "partition")
            seen[key] = path
        client = self._client()
        params = self._local_params()
        futures = [client.submit(_prepare_file, params, str(path), n_features, pure=False)
                   for path in paths]
        qids = client.gather([client.submit(_partition_qids, f) for f in futures])
        owner = {}
        for path, values in zip(paths, qids):
            for value in values.tolist():
                if value in owner:
                    raise ValueError(f"query {value} is in both {owner[value]} and {path}; a "
                                     "query must be in one file (one partition)")
                owner[value] = path
        return self._fit_partitions(client, futures, n_features, eval_set, coef_init)

    def _fit_partitions(self, client, prepared, n_features, eval_set, coef_init):
        self._check_params()
        if self.normalize != "none":
            # the scaling statistics would take another pass over the cluster's data
            raise ValueError(f"DaskRSRank supports normalize='none' only (got "
                             f"{self.normalize!r}): scale the features before training")
        self._fit_scaling((0, np.zeros(n_features), np.zeros(n_features),
                           np.zeros(n_features), np.zeros(n_features)))
        if self.mode not in ("gradient", "mixing"):
            raise ValueError(f"mode must be 'gradient' or 'mixing', got {self.mode!r}")
        if self.early_stopping and eval_set is None:
            raise ValueError("DaskRSRank with early_stopping needs an eval_set")
        self.n_features_in_ = n_features
        counts = client.gather([client.submit(_partition_rows, p) for p in prepared])
        n_queries = sum(q for _, q in counts)
        validation = None
        if eval_set is not None:
            X_val = self._validate_X(eval_set[0], reset=False)
            validation = (X_val, _check_labels(eval_set[1], X_val.shape[0]), eval_set[2])
        rng = np.random.default_rng(self.random_state if isinstance(self.random_state, int)
                                    else None)
        loss_code = _kernels.PAIR_LOSSES[self.pair_loss]
        unit = self.pair_weight == "unit"
        params = self._local_params()
        self.bytes_per_epoch_ = 0

        def gradient_epoch(w):
            results = client.gather([client.submit(_partition_gradient, p, w, loss_code, unit,
                                                   pure=False) for p in prepared])
            grad = np.sum([g for _, g, _ in results], axis=0) / max(n_queries, 1)
            w -= self.learning_rate * grad
            self.t_ += 1
            if self.l1 > 0 and self.t_ % self.truncation_period == 0:
                _kernels.truncate(w, self.learning_rate * self.truncation_period * self.l1,
                                  self.truncation_threshold)
            self.bytes_per_epoch_ = 2 * len(prepared) * w.nbytes
            _check_finite(w, self)
            return sum(v for v, _, _ in results) / max(n_queries, 1)

        def mixing_epoch(w):
            seeds = rng.integers(0, 2**31, size=len(prepared))
            results = client.gather([client.submit(_partition_epoch, p, w, params, int(s),
                                                   pure=False)
                                     for p, s in zip(prepared, seeds)])
            total = sum(q for _, _, q in results)
            w[:] = np.sum([local * q for local, _, q in results], axis=0) / max(total, 1)
            self.t_ += 1
            if self.l1 > 0:
                _kernels.truncate(w, self.learning_rate * self.truncation_period * self.l1,
                                  self.truncation_threshold)
            self.bytes_per_epoch_ = 2 * len(prepared) * w.nbytes
            _check_finite(w, self)
            return sum(loss for _, loss, _ in results) / max(total, 1)

        reset = not (self.warm_start and hasattr(self, "coef_"))
        self._reference_loss = None
        epoch = gradient_epoch if self.mode == "gradient" else mixing_epoch
        self._train(epoch, lambda w: float("nan"), validation,
                    self._init_coef(n_features, coef_init), reset)
        self._n_fit_queries = n_queries
        self._fingerprint = None
        return self

    def to_local(self):
        """A plain :class:`~rsrank.RSRank` with this model's weights."""
        local = RSRank(**self._local_params())
        for name in ("coef_", "n_features_in_", "n_iter_", "t_", "best_iteration_",
                     "history_", "_n_fit_queries", "feature_offset_", "feature_scale_"):
            if hasattr(self, name):
                setattr(local, name, getattr(self, name))
        return local


def _check_finite(w, model):
    if not np.all(np.isfinite(w)):
        raise ValueError(f"the weights became non-finite at step {model.t_}: training "
                         f"diverged; use a smaller learning_rate (now {model.learning_rate})")


def _delayed(function):
    from dask import delayed

    return delayed(function, pure=True)
