"""Data-parallel RSRank on a Dask cluster (``pip install rsrank[dask]``).

The data stays on the workers: each worker prepares its partitions once
(rows grouped by query, exactly as :class:`~rsrank.RSRank` does) and keeps
them in memory. Per epoch only weight vectors travel: the client sends ``w``
and receives one vector (and a few numbers) per partition, so the traffic is
O(partitions x features), never O(data).

Each partition is a :class:`~rsrank.reading.querydata.QueryData`, built once on its
worker, and the training loop is the single-machine
:class:`~rsrank.learning.solver.Solver`'s; only the step comes from the cluster. Two
modes:

``mode="gradient"``
    One full-batch step per epoch: every partition returns the summed pair
    gradient of its queries at the current ``w``; the client adds them,
    divides by the number of queries and takes the solver's step (with its
    penalty, step schedule and averaging). This is single-machine training
    with ``batch_size=None``, up to the order of floating-point additions.
``mode="mixing"``
    Iterative parameter mixing: every partition runs one local epoch of
    RSRank SGD (``batch_size`` queries per step, truncation included) from
    the current ``w``; the client averages the partitions' weights,
    weighted by their number of queries, and truncates the average once
    (``learning_rate * truncation_period * l1``) so the mixed model is sparse
    again.

An additive model (``additive=True``) trains in both modes. Its thresholds
are those :class:`~rsrank.RSRank` fits on all the rows together: each
partition sends its few distinct values per feature, and each quantile is
found by bisection, every round asking the partitions how many of their
values lie at or below the candidates (:func:`rsrank.learning.binning.merged_thresholds`).
The partitions then keep their rows as bin codes, and a gradient is the
sum of their histograms, as for a linear model.

A partition must hold whole queries: :func:`repartition_by_query` cuts dask
arrays at query boundaries and :func:`check_query_partitions` verifies it.
``DaskRSRank.fit_files`` reads LETOR files on the workers themselves.
"""

import functools
import inspect

import numpy as np

from .reading._files import not_a_file
from .clicks import ClickLog, check_log_arguments, document_keys, graded_eval_set
from .clicks.splits import LogPart, read_clicks
from .clicks.log import SESSION_COLUMNS, Ids, checked_log, checked_rows
from .learning.binning import (SortedColumns, StepEncoding, bin_counts, merged_thresholds,
                               value_summary)
from .reading.datasets import load_letor
from .learning import fitting
from .estimator import RSRank, adopt, fit_of, warm_of
from .learning.preprocessing import combine_moments
from .learning.kinds import refuse_missing, takes_missing
from .reading.querydata import QueryData
from .learning.solver import DivergenceWatch, NDCGMonitor, SolverState, finite_check

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


def _prepare_file(path, n_features):
    return QueryData(*load_letor(path, n_features=n_features))


def _partition_log(X, clicks, qid, position, impressions, session=None, first_row=0):
    """A partition's clicks and impressions per (query, document key,
    position), or with ``session`` its rows (session, query, document key,
    position, click), each value checked as a log file's are (a bad one
    named by its row in the whole log, the partition's starting at
    ``first_row``); and per document key its features, query and first
    row."""
    X = np.asarray(X)
    n = X.shape[0]
    form, columns = checked_rows(n, clicks, qid, position, impressions, session,
                                 first_row=first_row)
    everything = np.arange(n)
    keys = document_keys(X, columns["qid"].take(everything))
    columns["docid"] = Ids.of(keys)
    if session is None:
        log = checked_log(form, columns, repeats=impressions is None)
        counts = (log.qid, log.docid, log.position, log.impressions, log.clicks)
    else:
        counts = (columns["session"].take(everything), columns["qid"].take(everything), keys,
                  columns["position"], columns["click"])
    _, first = np.unique(keys, return_index=True)
    return counts, keys[first], X[first], np.asarray(qid)[first], first


def _partition_preferences(preferences, order, chunks):
    """Per partition of rows ``chunks`` (of the documents in the ``order``
    given), the :class:`QueryData` options of its share of
    ``preferences`` (``better, worse, weight``, documents before that
    order), with its own row numbers."""
    better, worse, weight = preferences
    place = np.empty(len(order), dtype=np.int64)
    place[order] = np.arange(len(order))
    better, worse = place[better], place[worse]
    cuts = np.cumsum([0, *chunks])
    partition = np.searchsorted(cuts, better, side="right") - 1
    options = []
    for p in range(len(chunks)):
        mine = partition == p
        options.append({"preferences": (better[mine] - cuts[p], worse[mine] - cuts[p],
                                        weight[mine])})
    return options


def _partition_facts(data):
    """Rows, queries, column sums and qids of a partition."""
    return data.n_rows, data.n_queries, data.sums, data.qids


def _partition_moments(data):
    return data.moments


def _partition_values(data, max_bins):
    return value_summary(data.X, max_bins)


def _partition_sorted(data):
    return SortedColumns(data.X)


def _partition_count(columns, features, candidates):
    return columns.count_at_most(features, candidates)


def _partition_bin_counts(data, thresholds):
    return bin_counts(data.X, thresholds)


def _partition_gradient(data, objective, w, view, scale):
    """Summed loss and pair gradient of a partition's queries at ``w``."""
    value, grad = objective.loss_and_gradient(data, w, view=view, scale=scale)
    return value, grad, data.n_queries


def _partition_epoch(data, solver, w, view, scale, seed):
    """One local epoch of RSRank SGD from ``w`` on a partition (its penalty
    schedule counts the partition's own steps)."""
    state = SolverState(w.copy())
    order = solver.query_order(data.n_queries, np.random.default_rng(seed))
    loss = solver.epoch(data, state, order, view=view, scale=scale,
                        work=solver.new_work(data, view))
    return state.w, loss * data.n_queries, data.n_queries


def _partition_curvature(data, plan, model):
    """``(trace, n_queries)`` of a partition for the curvature step."""
    return fitting.part_curvature(plan, data, model)


def _partition_ndcg(data, w, k, convention, view, scale):
    """Summed NDCG@k over a partition's queries at ``w``, and their number."""
    value = NDCGMonitor(data, k, convention, view=view, scale=scale)(w)
    return (0.0 if np.isnan(value) else value * data.n_queries), data.n_queries


# -- client side -------------------------------------------------------------------------


class DaskRSRank(RSRank):
    """:class:`~rsrank.RSRank` trained on a Dask cluster.

    Parameters are those of ``RSRank``, with the same defaults, plus
    ``mode`` (``"gradient"`` or ``"mixing"``, see the module docstring). The
    column sums of the z-score scaling come from the partitions as they are
    built, so ``normalize`` costs no extra pass (``"minmax"``: one round for
    the columns' extremes). The training NDCG
    (``eval_train``) takes one more round over the partitions per epoch. The
    cluster is the current ``distributed`` client
    (``distributed.Client(address)`` or a ``LocalCluster``). :meth:`to_local`
    returns a plain ``RSRank`` with the same model for prediction and model
    files without a cluster.
    """

    def __init__(self, mode="gradient", **params):
        super().__init__(**params)
        self.mode = mode

    # RSRank's parameters and defaults, plus mode, from RSRank's one definition
    __init__.__signature__ = inspect.signature(RSRank.__init__).replace(parameters=[
        inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter("mode", inspect.Parameter.POSITIONAL_OR_KEYWORD, default="gradient"),
        *[parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY) for name, parameter
          in inspect.signature(RSRank.__init__).parameters.items() if name != "self"]])

    def _client(self):
        from distributed import default_client

        return default_client()

    def fit(self, X, y, *, qid, eval_set=None, coef_init=None, position=None,
            impressions=None, propensity=None, session=None):
        """Train on dask arrays (or a dask DataFrame ``X``) whose partitions
        hold whole queries, or on a click log.

        Parameters
        ----------
        X : dask array of shape (n_rows, n_features) or dask DataFrame
        y, qid : dask arrays chunked like the rows of ``X``
        eval_set : tuple (X_val, y_val, qid_val) of in-memory arrays or QueryData, optional
        coef_init : array-like, optional
        position, impressions, propensity, session : optional
            A click log, as :meth:`RSRank.fit` takes one (``position``,
            ``impressions`` and ``session`` dask arrays chunked like ``X``;
            ``eval_set`` then ``(X_val, clicks_val, qid_val, position_val[,
            session_val])`` in memory). Its partitions may split a query
            (partitioned by session, say): the workers count each
            partition's clicks per document and position (or, with
            ``session``, name its documents), the log is gathered here and
            read (:func:`rsrank.clicks.splits.read_clicks`, as every fit on
            clicks reads one), and its graded
            documents, or its documents with the preferences of its session
            lists, trained on in partitions of whole queries.
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
        client = self._client()
        check_log_arguments(position, impressions, propensity, session)
        options = None
        if position is not None:
            X, y, qid, options, eval_set = self._graded_log(
                client, X, y, qid, position, impressions, propensity, session, eval_set)
        check_query_partitions(qid)
        blocks = X.to_delayed().ravel()
        parts = zip(blocks, y.to_delayed().ravel(), qid.to_delayed().ravel(),
                    options or [{}] * len(blocks))
        futures = [client.compute(_delayed(QueryData)(X_part, y_part, qid_part, **part))
                   for X_part, y_part, qid_part, part in parts]
        return self._fit_partitions(client, futures, X.shape[1], eval_set, coef_init)

    def _graded_log(self, client, X, clicks, qid, position, impressions, propensity, session,
                    eval_set):
        """A click log in dask arrays, read (graded documents, or the
        documents of session lists with their preferences), as dask arrays
        of whole queries (about as many partitions as the log's) and each
        partition's :class:`QueryData` options (None for graded documents)."""
        da = _dask_array()
        columns = [None if values is None else da.asarray(values)
                   for values in (position, impressions, session)]
        if any(column.chunks[0] != X.chunks[0] for column in columns if column is not None):
            raise ValueError("position, impressions and session must have the row chunks of X")
        offsets = np.cumsum([0, *X.chunks[0][:-1]])
        blocks = zip(*(array.to_delayed().ravel() if array is not None else [None] * len(offsets)
                       for array in (X, clicks, qid, *columns)))
        parts = client.gather([
            client.compute(_delayed(_partition_log)(*block, first_row=int(offset)))
            for block, offset in zip(blocks, offsets)])
        gathered = [np.concatenate([part[0][i] for part in parts]) for i in range(5)]
        if session is None:
            log = ClickLog.from_counts(*gathered)
        else:  # the sessions checked together: a session may span partitions
            log = checked_log(SESSION_COLUMNS, {
                "session": Ids.of(gathered[0]), "qid": Ids.of(gathered[1]),
                "docid": Ids.of(gathered[2]), "position": gathered[3], "click": gathered[4]})
        # a document is named by its first row in the whole log, as RSRank.fit
        # names it: the same documents in the same order within each query
        keys, first = np.unique(np.concatenate([part[1] for part in parts]), return_index=True)
        first_row = np.concatenate([part[4] + offset for part, offset in zip(parts, offsets)])
        by_row = np.argsort(first_row[first])  # the documents in the order of their first rows
        features = np.concatenate([part[2] for part in parts])[first][by_row]
        queries = np.concatenate([part[3] for part in parts])[first][by_row]
        if not takes_missing(self.get_params(deep=False)):  # every row, as a fit on labels
            refuse_missing(QueryData(features, np.zeros(len(features), dtype=np.int64),
                                     queries), "X")
        document = np.empty_like(by_row)
        document[by_row] = np.arange(len(by_row))
        read = read_clicks(LogPart(log, document[np.searchsorted(keys, log.docid)], features,
                                   queries), propensity=propensity, vali_fraction=None)
        self.examination_ = read.examination
        graded_X, y, names, options = read.train["on"]
        order = np.argsort(names, kind="stable")  # whole queries, rows kept
        y = y[order]
        size = max(1, -(-len(y) // max(len(parts), 1)))
        graded_X = da.from_array(graded_X[order], chunks=(size, features.shape[1]))
        X, y, qid = repartition_by_query(graded_X, y, names[order], size)
        if eval_set is not None:
            eval_set = graded_eval_set(eval_set, read.model)
        if "preferences" not in options:
            return X, y, qid, None, eval_set
        return (X, y, qid, _partition_preferences(options["preferences"], order, X.chunks[0]),
                eval_set)

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
                raise not_a_file(path)
            key = path.resolve()
            if key in seen:
                raise ValueError(f"{path}: given twice (also as {seen[key]}); each file is one "
                                 "partition")
            seen[key] = path
        client = self._client()
        futures = [client.submit(_prepare_file, str(path), n_features, pure=False)
                   for path in paths]
        return self._fit_partitions(client, futures, n_features, eval_set, coef_init, paths)

    def _fit_partitions(self, client, parts, n_features, eval_set, coef_init, paths=None):
        plan = self.setup()  # checks the parameters before any work
        if plan.relaxed:
            raise ValueError("DaskRSRank does not relax (refit on the kept features): set "
                             "relax=False, or refit with a DaskRSRank on those features")
        if self.mode not in ("gradient", "mixing"):
            raise ValueError(f"mode must be 'gradient' or 'mixing', got {self.mode!r}")
        if self.early_stopping and eval_set is None:
            raise ValueError("DaskRSRank with early_stopping needs an eval_set")
        facts = client.gather([client.submit(_partition_facts, p) for p in parts])
        if paths is not None:
            owner = {}
            for path, (_, _, _, qids) in zip(paths, facts):
                for value in qids.tolist():
                    if value in owner:
                        raise ValueError(f"query {value} is in both {owner[value]} and {path}; "
                                         "a query must be in one file (one partition)")
                    owner[value] = path
        warm = warm_of(self)
        self.n_features_in_ = n_features
        rng = np.random.default_rng(self.random_state if isinstance(self.random_state, int)
                                    else None)
        source = _Partitions(client, parts, facts, self.mode, rng)
        fitted = fitting.fit_source(plan, source, self.validation_data(eval_set), warm=warm,
                                    coef_init=coef_init)
        self.bytes_per_epoch_ = source.bytes_per_epoch
        return adopt(self, fitted)

    def to_local(self):
        """A plain :class:`~rsrank.RSRank` with this model (and its fitted
        attributes)."""
        params = self.get_params(deep=False)
        del params["mode"]
        local = adopt(RSRank(**params), fit_of(self))
        for name in ("n_features_in_", "feature_names_in_"):
            if hasattr(self, name):
                setattr(local, name, getattr(self, name))
        return local


class _Partitions:
    """A cluster's partitions as an epoch source for
    :func:`rsrank.learning.fitting.fit_source`: per epoch the partitions' summed
    gradient for one full-batch step (``"gradient"``) or their local epochs
    averaged (``"mixing"``), the training NDCG summed over them, and the
    bytes an epoch sends."""

    fingerprint, moments_known = None, True

    def __init__(self, client, parts, facts, mode, rng):
        self.client, self.parts, self.mode, self.rng = client, parts, mode, rng
        self.data_source = _Cluster(client, parts, facts)
        self.n_queries = sum(fact[1] for fact in facts)
        self.bytes_per_epoch = 0

    def _each(self, function, *args):
        client = self.client
        return client.gather([client.submit(function, p, *args, pure=False)
                              for p in self.parts])

    def curvature_parts(self, plan, model):
        return self._each(_partition_curvature, plan, model)

    def run(self, solver, state, model, validation, monitoring, advice):
        view, scale, parts, n_queries = model.view, model.training_scale(), self.parts, \
            self.n_queries

        def gradient_epoch():
            results = self._each(_partition_gradient, solver.objective, state.w, view, scale)
            solver.step(state, np.sum([g for _, g, _ in results], axis=0) / max(n_queries, 1))
            self.bytes_per_epoch = 2 * len(parts) * state.w.nbytes
            return sum(v for v, _, _ in results) / max(n_queries, 1)

        def mixing_epoch():
            seeds = self.rng.integers(0, 2**31, size=len(parts))
            results = self.client.gather([self.client.submit(
                _partition_epoch, p, solver, state.w, view, scale, int(seed), pure=False)
                for p, seed in zip(parts, seeds)])
            total = sum(q for _, _, q in results)
            solver.mix(state, np.sum([local * q for local, _, q in results], axis=0)
                       / max(total, 1))
            self.bytes_per_epoch = 2 * len(parts) * state.w.nbytes
            return sum(loss for _, loss, _ in results) / max(total, 1)

        def train_ndcg(w):
            results = self._each(_partition_ndcg, w, monitoring.k, monitoring.convention,
                                 view, scale)
            self.bytes_per_epoch += len(parts) * w.nbytes
            return sum(v for v, _ in results) / max(sum(q for _, q in results), 1)
        train_ndcg.k = monitoring.k

        epoch = (solver.accelerated(gradient_epoch, state) if self.mode == "gradient"
                 else mixing_epoch)
        return solver.run(epoch, state, train_ndcg=train_ndcg if monitoring.train else None,
                          validation=monitoring.on(validation, view, scale, solver.n_jobs),
                          watch=DivergenceWatch(None, advice), check=finite_check(advice))


class _Cluster:
    """The partitions on the workers as a data source for
    :meth:`~rsrank.learning.kinds.Kind.start`: their column sums, combined from what
    the partitions reported as they were built (their moments in a round of
    their own, on first use), and a step encoding the same as on all their
    rows in one place."""

    feature_names, names_from_columns, rows_in_memory = None, False, False

    def __init__(self, client, parts, facts):
        self.client, self.parts = client, parts
        self.sums = functools.reduce(combine_moments, [fact[2] for fact in facts])
        self.n_features = len(self.sums[1])

    @functools.cached_property
    def moments(self):
        client = self.client
        return functools.reduce(combine_moments, client.gather(
            [client.submit(_partition_moments, p) for p in self.parts]))

    def step_encoding(self, max_bins):
        client, parts = self.client, self.parts
        summaries = client.gather([client.submit(_partition_values, p, max_bins)
                                   for p in parts])
        columns = [client.submit(_partition_sorted, p) for p in parts]

        def count_at_most(features, candidates):
            return np.sum(client.gather([client.submit(_partition_count, c, features, candidates)
                                         for c in columns]), axis=0)
        thresholds = merged_thresholds(summaries, max_bins, count_at_most)
        columns.clear()  # the workers drop the sorted copies
        counts = client.gather([client.submit(_partition_bin_counts, p, thresholds)
                                for p in parts])
        return StepEncoding(thresholds, [np.sum(c, axis=0) for c in zip(*counts)])

    def pair_encoding(self, max_bins, pairs, pair_bins):
        raise ValueError("interactions search pairs on training data in memory: fit "
                         "RSRank(additive=True, interactions=K) on one machine")


def _delayed(function):
    from dask import delayed

    return delayed(function, pure=True)
