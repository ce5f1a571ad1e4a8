"""The fitted model as a value: weights, scaling, names and where they came
from. It is what :mod:`rsrank.deployment.persistence` saves and loads, what
``predict`` scores with and what :mod:`rsrank.deployment.export` writes for the
engines."""

import hashlib
from dataclasses import dataclass, replace

import numpy as np

from .. import _kernels
from ._compile import choose
from ._threads import SCORING_WORK_PER_THREAD, coding_threads, numba_threads, threads
from .binning import (BinCodes, PairEncoding, StepEncoding, bin_codes, has_missing_bin,
                      take_columns)
from .defaults import GLOBAL_NORMALIZERS, QUERY_NORMALIZERS
from .preprocessing import query_normalize
from ..reading._views import ROW_VIEWS, Filled, filled, matrix_rows

__all__ = ["LinearModel", "AdditiveModel", "InteractionModel", "linear_scores",
           "feature_name_problem"]


def feature_name_problem(names, n_features):
    """Why ``names`` cannot name ``n_features`` features (None: they can).
    Every feature needs its own non-empty name without control characters
    or surrounding spaces: engines look features up by name, so a repeated
    name would silently share or lose a weight."""
    if len(names) != n_features:
        return f"{len(names)} feature names for {n_features} features"
    seen = set()
    for j, name in enumerate(names, start=1):
        if not isinstance(name, str) or not name:
            return f"feature {j} has an empty name"
        if name != name.strip() or any(ord(c) < 32 or ord(c) == 127 for c in name):
            return (f"feature {j}'s name {name!r} has surrounding spaces or a control "
                    "character")
        if name in seen:
            return f"feature name {name!r} is used twice"
        seen.add(name)
    return None


def linear_scores(rows, w, n_jobs=None):
    """``X @ w`` of :class:`~rsrank.reading.querydata.Rows` in float64, without a
    float64 copy of float32 rows; for the bin codes of an additive model,
    the sums of the steps ``w`` each row has on."""
    w = np.ascontiguousarray(w, dtype=np.float64)
    if len(rows.bins):
        n = rows.dense_codes.shape[0] if rows.indptr.shape[0] == 0 else rows.indptr.shape[0] - 1
        return _kernels.coded_scores_all(rows, w, np.zeros(_kernels.table_size(rows)),
                                         np.empty(n))
    dense = rows.indptr.shape[0] == 0
    out = np.empty(rows.dense.shape[0] if dense else rows.indptr.shape[0] - 1)
    n = threads(n_jobs, rows.dense.size if dense else rows.data.size, SCORING_WORK_PER_THREAD)
    args = (rows.data, rows.indices, rows.indptr, rows.dense, w, out)
    with numba_threads(n):
        choose(_kernels.linear_scores_serial, _kernels.linear_scores_parallel, n, args)(*args)
    return out


def query_scores(model, data, n_jobs=None, shared=False):
    """``model``'s scores of a :class:`~rsrank.reading.querydata.QueryData`'s rows in
    query order (``data.order``), as metrics and selections read them. An
    additive model codes the columns it reads alone
    (:meth:`AdditiveModel.narrowed`); with ``shared``, where many models of
    one encoding score the same rows (a path's points on vali), every
    column is coded once and kept with the data for all of them; rows of
    the model's own encoding made already are read as they are (those of
    a fit's training rows, whose values may be gone)."""
    held = data.rows_held(model.view)
    if shared or held is not None or not isinstance(model, AdditiveModel):
        with coding_threads(n_jobs, data.n_rows * data.n_features):
            rows = data.rows(model.view) if held is None else held
        return model.score_rows(rows, n_jobs)
    narrow, features = model.narrowed()
    if len(features) == 0:
        return np.zeros(data.n_rows)
    with coding_threads(n_jobs, data.n_rows * len(features)):
        rows = data.rows(Columns(narrow.encoding, features, model.n_features))
    return narrow.score_rows(rows, n_jobs)


class Columns:
    """A view of the rows (:meth:`~rsrank.reading.querydata.QueryData.rows`):
    the columns ``features`` of rows of ``width`` features alone, as
    ``encoding`` codes them."""

    def __init__(self, encoding, features, width):
        self.encoding, self.width = encoding, width
        self.features = np.asarray(features, dtype=np.int64)
        self.key = hashlib.sha256(encoding.key.encode() + self.features.tobytes()).hexdigest()

    def query_rows(self, X, groups):
        return _narrow_rows(self.encoding, X, self.features, self.width, groups.offsets)


#: rows of a dense matrix whose columns a narrowed model copies out to code at a time
NARROW_ROWS = 65_536


def _narrow_rows(encoding, X, features, width, offsets=None):
    """The :class:`~rsrank._kernels.Rows` of the columns ``features`` of
    ``X`` (``width`` columns) under ``encoding`` (a narrowed model's): of
    ``X`` itself when they are all of them; of a dense array, a block of
    :data:`NARROW_ROWS` rows at a time, so that no copy of those columns
    is made whole (only their codes, a byte a value)."""
    if len(features) == width:
        return encoding.rows(X, offsets)
    if not isinstance(X, np.ndarray) or X.ndim != 2:
        return encoding.rows(take_columns(X, features), offsets)
    out = np.empty((X.shape[0], encoding.n_columns), dtype=np.uint8)
    for lo in range(0, X.shape[0], NARROW_ROWS):
        block = X[lo:lo + NARROW_ROWS][:, features]
        codes = (encoding.codes(block) if isinstance(encoding, PairEncoding)
                 else bin_codes(block, encoding.thresholds))
        out[lo:lo + len(block)] = codes.codes
    offsets = np.array([0, X.shape[0]]) if offsets is None else offsets
    return encoding.rows(out, offsets, codes=BinCodes(out, out.shape))


def feature_names_or_letor(names, n_features):
    """``names`` as strings, or LETOR's 1-based ``"f1", "f2", ...``."""
    if names is None:
        return [f"f{j + 1}" for j in range(n_features)]
    return [str(name) for name in names]


@dataclass(frozen=True)
class LinearModel:
    """A linear ranking function ``f(x) = <coef, (x - offset) / scale>``.

    Attributes
    ----------
    coef : ndarray of shape (n_features,)
        Weights of the scaled features (comparable across features).
    normalize : str
        The scaling (see :mod:`rsrank.learning.preprocessing`): with ``"zscore"`` or
        ``"minmax"``, ``offset`` and ``scale`` per feature; with a per-query
        scaling the features are scaled within each query before ``coef``.
    offset, scale : ndarray of shape (n_features,)
        The global scaling (0 and 1 without one).
    feature_names : list of str or None
        The names given to the features (None: LETOR's ``f1, f2, ...``).
    names_from_columns : bool
        The names are a training DataFrame's columns (checked against the
        columns of a DataFrame to score).
    fingerprint : dict or None
        A digest of the training data (see
        :attr:`rsrank.reading.querydata.QueryData.fingerprint`).
    n_fit_queries : int
        Queries of the training data.
    fill : ndarray of shape (n_features,) or None
        The value a missing value (NaN) of each feature stands for
        (``missing="zero"`` or ``"mean"``), or None: NaN is refused.
    """

    coef: np.ndarray
    normalize: str = "none"
    offset: np.ndarray = None
    scale: np.ndarray = None
    feature_names: list = None
    names_from_columns: bool = False
    fingerprint: dict = None
    n_fit_queries: int = 1
    fill: np.ndarray = None

    #: the model's :class:`~rsrank.learning.kinds.Kind`, by name
    kind = "linear"
    #: how reports name what :meth:`selected_features` lists, and its numbers
    used_words = "non-zero weights"
    kept_words = "weights on the scaled features, largest first"
    kept_format = "{:+.3g}"

    def __post_init__(self):
        width = len(self.coef)
        if self.feature_names is not None:
            problem = feature_name_problem(list(self.feature_names), width)
            if problem:
                raise ValueError(problem)
        if self.offset is None:
            object.__setattr__(self, "offset", np.zeros(width))
        if self.scale is None:
            object.__setattr__(self, "scale", np.ones(width))

    @property
    def n_features(self):
        return len(self.coef)

    @property
    def deployable(self):
        return self.normalize not in QUERY_NORMALIZERS

    def missing_values(self):
        """What a feature a document lacks stands for, per feature: the
        value 0, or with ``missing="zero"``/``"mean"`` the fill (NaN would
        mean a missing value scored by a step of its own, which a linear
        model has not)."""
        return np.zeros(self.n_features) if self.fill is None else np.asarray(
            self.fill, dtype=np.float64)

    def score_rows(self, rows, n_jobs=None):
        """Scores of :class:`~rsrank._kernels.Rows` of raw features (rows
        already scaled within their query, for a per-query scaling): the
        linear function on raw features, in float64."""
        weights, constant = self.linear_function() if self.deployable else (self.coef, 0.0)
        return linear_scores(rows, weights, n_jobs) + constant

    def score_matrix(self, X, qid=None, n_jobs=None):
        """Scores of a checked matrix of raw features (C-ordered dense or
        CSR); a per-query scaling needs each row's ``qid``. A missing value
        (NaN) is refused: a linear model needs every value."""
        values = X.data if hasattr(X, "data") and not isinstance(X, np.ndarray) else X
        if np.isnan(values).any():
            if self.fill is None:
                raise ValueError("X has missing values (NaN): a linear model needs every value; "
                                 "train with missing='zero' or 'mean' (--missing), impute them, "
                                 "or train with additive=True (--additive), whose shapes give "
                                 "a missing value a score of its own")
            X = filled(X, self.fill)
        if not self.deployable:
            if qid is None and self.n_fit_queries > 1:
                raise ValueError(f"normalize={self.normalize!r} scales features within each "
                                 "query: pass qid=... (the query of every row) to predict")
            X = query_normalize(X, qid, self.normalize)
        return self.score_rows(matrix_rows(X), n_jobs)

    def names(self):
        """The name of every feature: the given names, else LETOR's
        1-based ``"f1", "f2", ...``."""
        return feature_names_or_letor(self.feature_names, self.n_features)

    def shape_functions(self):
        raise ValueError("shape_functions() and plots are for additive models (additive=True, "
                         "rsrank train --additive); a linear model's features are its "
                         "weights: selected_features()")

    def linear_function(self):
        """``(weights, constant)`` on raw features: ``f(x) = x @ weights +
        constant``. A per-query scaling has no such form and raises
        ``ValueError``."""
        if not self.deployable:
            raise ValueError(f"normalize={self.normalize!r} scales each feature by statistics "
                             "of the whole query, so the model is no function of one "
                             "document's raw features; retrain with normalize='zscore' or "
                             "'minmax' for a deployable model")
        if self.normalize not in GLOBAL_NORMALIZERS:
            return self.coef.copy(), 0.0
        weights = self.coef / self.scale
        return weights, float(-np.dot(weights, self.offset))

    def training_scale(self):
        """Per-feature factors the kernels apply during training (a
        global scaling divides by ``scale``; the offset does not change a
        query's ranking), or None."""
        if self.normalize not in GLOBAL_NORMALIZERS:
            return None
        return 1.0 / self.scale

    def selected_features(self):
        """Non-zero weights as ``[(name, weight), ...]`` by decreasing
        ``|weight|``."""
        names = self.names()
        nonzero = np.flatnonzero(self.coef)
        nonzero = nonzero[np.argsort(-np.abs(self.coef[nonzero]), kind="stable")]
        return [(str(names[j]), float(self.coef[j])) for j in nonzero]

    def with_coef(self, coef):
        """The same model with other weights."""
        return replace(self, coef=np.asarray(coef, dtype=np.float64))

    def with_names(self, names, *, from_columns=False):
        """The same model with other feature names (checked by
        :func:`feature_name_problem`)."""
        return replace(self, feature_names=[str(name) for name in names],
                       names_from_columns=from_columns)

    @property
    def view(self):
        """How the kernels read the data for this model
        (:meth:`rsrank.reading.querydata.QueryData.rows`): its per-query scaling, or
        the stored rows."""
        base = ROW_VIEWS[self.normalize]
        return base if self.fill is None else Filled(base, np.asarray(
            self.fill, dtype=np.float64).tobytes())

    def with_fit(self, coef, fingerprint, n_fit_queries):
        """The same model with trained weights and what they were trained on."""
        return replace(self, coef=np.asarray(coef, dtype=np.float64), fingerprint=fingerprint,
                       n_fit_queries=n_fit_queries)

    def selected_indices(self):
        """The features in use (a non-zero weight)."""
        return np.flatnonzero(self.coef)

    def groups(self):
        """Each feature's weights as offsets into ``coef``: one each."""
        return np.arange(self.n_features + 1, dtype=np.int64)

    def term_features(self):
        """The features of each group of weights (:meth:`groups`): one each."""
        return [(j,) for j in range(self.n_features)]

    def selected_terms(self):
        """The groups of weights in use: the features with a non-zero weight."""
        return self.selected_indices()

    def monotone_layout(self, directions):
        """``(signs, blocks)`` of monotone ``directions`` (one per feature:
        1 increasing, -1 decreasing, 0 free) for the solver: a weight's sign
        (its global scaling divides by a positive scale) and no pairs."""
        return np.asarray(directions, dtype=np.float64), None

    def selected_interactions(self):
        """A linear model has no pairwise terms: ``[]``."""
        return []

    def interaction_functions(self):
        raise ValueError("interaction_functions() is for models with pairwise interactions "
                         "(additive=True, interactions=K)")


@dataclass(frozen=True)
class AdditiveModel:
    """An additive ranking function: one step function per feature,
    ``f(x) = sum_j sum_b coef[bins[j] + b] * [x_j > t_jb]``, the comparison
    on the float32 value of ``x_j`` (:mod:`rsrank.learning.binning`).

    Attributes
    ----------
    coef : ndarray of shape (n_steps,)
        The step heights, feature after feature (``encoding.bins``).
    encoding : rsrank.learning.binning.StepEncoding
        Each feature's thresholds ``t_jb``.
    feature_names, names_from_columns, fingerprint, n_fit_queries
        As for :class:`LinearModel`.
    """

    coef: np.ndarray
    encoding: object
    feature_names: list = None
    names_from_columns: bool = False
    fingerprint: dict = None
    n_fit_queries: int = 1

    kind = "additive"
    used_words = "features in use"
    kept_words = "the spread of each shape function, largest first"
    kept_format = "{:.3g}"
    normalize = "none"
    deployable = True

    def __post_init__(self):
        if len(self.coef) != self.encoding.n_steps:
            raise ValueError(f"{len(self.coef)} step weights for {self.encoding.n_steps} steps")
        if self.feature_names is not None:
            problem = feature_name_problem(list(self.feature_names), self.n_features)
            if problem:
                raise ValueError(problem)

    @property
    def n_features(self):
        return self.encoding.n_features

    @property
    def view(self):
        return self.encoding

    def missing_values(self):
        """What a feature a document lacks stands for, per feature: NaN (a
        missing value, scored by its own step) for a feature trained with
        missing values, else the value 0."""
        return np.array([np.nan if has_missing_bin(cuts) else 0.0
                         for cuts in self.encoding.thresholds[:self.n_features]])

    @property
    def offset(self):
        return np.zeros(self.n_features)

    @property
    def scale(self):
        return np.ones(self.n_features)

    def training_scale(self):
        return None

    def score_rows(self, rows, n_jobs=None):
        """Scores of the bin-code :class:`~rsrank._kernels.Rows` of this
        model's encoding."""
        return linear_scores(rows, self.coef, n_jobs)

    def score_matrix(self, X, qid=None, n_jobs=None):
        """Scores of a checked matrix of raw features (``qid`` is not needed),
        from the columns the model reads alone."""
        narrow, features = self.narrowed()
        if len(features) == 0:
            return np.zeros(X.shape[0])
        with coding_threads(n_jobs, X.shape[0] * len(features)):
            rows = _narrow_rows(narrow.encoding, X, features, self.n_features)
        return narrow.score_rows(rows, n_jobs)

    def narrowed(self):
        """``(model, features)``: a model of the same scores on the columns
        ``features`` of the rows alone (their order kept): the features
        with a step off zero and those of the pairs with one. A feature
        read by its pairs alone keeps no thresholds of its own, and the
        terms without a step off zero are gone: a score reads and codes
        only what it adds up, a few columns of a sparse model's many."""
        encoding, used = self.encoding, self.selected_terms()
        width = self.n_features
        own, pairs = used[used < width], used[used >= width] - width
        features = np.union1d(own, encoding.pairs[pairs].ravel()).astype(np.int64)
        keeps = np.isin(features, own)
        thresholds = [encoding.thresholds[j] if keep else np.zeros(0, np.float32)
                      for j, keep in zip(features.tolist(), keeps)]
        bins = encoding.bins
        coef = [self.coef[bins[g]:bins[g + 1]] for g in [*own.tolist(), *(pairs + width).tolist()]]
        if encoding.n_pairs:
            narrow = PairEncoding(thresholds, np.searchsorted(features, encoding.pairs[pairs]),
                                  [encoding.grids[p] for p in pairs.tolist()])
        else:
            narrow = StepEncoding(thresholds)
        return replace(self, coef=np.concatenate([np.zeros(0), *coef]), encoding=narrow,
                       feature_names=None, names_from_columns=False), features

    def names(self):
        return feature_names_or_letor(self.feature_names, self.n_features)

    def linear_function(self):
        raise ValueError("an additive model is a step function per feature, not a linear "
                         "function: use shape_functions() (or the exports, which write its "
                         "steps as trees)")

    def shape_functions(self):
        """Per feature in use, in feature order, a dict: ``feature`` (index),
        ``name``, ``thresholds`` (float32 values, increasing) and ``values``
        (one more than thresholds: the contribution of ``x <= t_0``, of
        ``t_0 < x <= t_1``, ..., of ``x > t_last``). A constant shift of a
        feature's values changes no ranking; each starts at 0. A feature
        trained with missing values (NaN) has +inf as its last threshold:
        its last value is a missing value's, also given as ``missing``
        (None for the other features)."""
        names, bins, out = self.names(), self.encoding.bins, []
        for j in self.selected_shapes():
            steps = self.coef[bins[j]:bins[j + 1]]
            cuts, values = self.encoding.thresholds[j].copy(), np.r_[0.0, np.cumsum(steps)]
            out.append({"feature": int(j), "name": names[j], "thresholds": cuts,
                        "values": values,
                        "missing": float(values[-1]) if has_missing_bin(cuts) else None})
        return out

    def feature_ranges(self):
        """Per feature, the spread of its shape function (largest minus
        smallest contribution): how much it can move a score."""
        bins, ranges = self.encoding.bins, np.zeros(self.n_features)
        for j in range(self.n_features):  # a feature's own steps: the first groups
            values = np.r_[0.0, np.cumsum(self.coef[bins[j]:bins[j + 1]])]
            ranges[j] = values.max() - values.min()
        return ranges

    def groups(self):
        """Each feature's steps as offsets into ``coef``."""
        return self.encoding.bins

    def term_features(self):
        """The features of each group of steps (:meth:`groups`): one each."""
        return [(j,) for j in range(self.n_features)]

    def selected_terms(self):
        """The groups of steps in use (a non-zero step)."""
        bins = self.encoding.bins
        return np.flatnonzero([np.any(self.coef[bins[g]:bins[g + 1]])
                               for g in range(len(bins) - 1)])

    def selected_interactions(self):
        """An additive model without pairs has none: ``[]``."""
        return []

    def interaction_functions(self):
        """An additive model without pairs has none: ``[]``."""
        return []

    def monotone_layout(self, directions):
        """``(signs, blocks)`` of monotone ``directions`` (one per feature):
        every step of a feature's shape takes its direction's sign, and
        every pair with a constrained feature is a block of cells made
        monotone along it (for each value of the other feature)."""
        directions = np.asarray(directions, dtype=np.int64)
        bins, n, thresholds = self.encoding.bins, self.n_features, self.encoding.thresholds
        signs = np.zeros(self.encoding.n_steps)
        signs[:bins[n]] = np.repeat(directions, np.diff(bins[:n + 1]))
        for j in range(n):  # a missing value's step (the last) is free
            if has_missing_bin(thresholds[j]):
                signs[bins[j + 1] - 1] = 0.0
        blocks = []
        for p, (a, b) in enumerate(self.encoding.pairs):
            if directions[a] or directions[b]:
                shape = self.encoding.grid_shape(p)
                valued = [size - has_missing_bin(cuts)
                          for size, cuts in zip(shape, self.encoding.grids[p])]
                blocks.append([bins[n + p], *shape, directions[a], directions[b], *valued])
        return signs, np.array(blocks, dtype=np.int64).reshape(-1, 7)

    def selected_shapes(self):
        """The features whose own shape is in use (a non-zero step)."""
        terms = self.selected_terms()
        return terms[terms < self.n_features]

    def selected_indices(self):
        """The features in use (a non-zero step of a group they are in)."""
        terms = self.term_features()
        used = {j for g in self.selected_terms() for j in terms[g]}
        return np.array(sorted(used), dtype=np.int64)

    def selected_features(self):
        """The features with a shape in use as ``[(name, spread), ...]`` by
        decreasing spread of their shape functions (:meth:`feature_ranges`)."""
        names, ranges = self.names(), self.feature_ranges()
        used = self.selected_shapes()
        used = used[np.argsort(-ranges[used], kind="stable")]
        return [(str(names[j]), float(ranges[j])) for j in used]

    def with_coef(self, coef):
        return replace(self, coef=np.asarray(coef, dtype=np.float64))

    def with_fit(self, coef, fingerprint, n_fit_queries):
        return replace(self, coef=np.asarray(coef, dtype=np.float64), fingerprint=fingerprint,
                       n_fit_queries=n_fit_queries)

    def with_names(self, names, *, from_columns=False):
        return replace(self, feature_names=[str(name) for name in names],
                       names_from_columns=from_columns)


@dataclass(frozen=True)
class InteractionModel(AdditiveModel):
    """An additive ranking function with pairwise interactions: one step
    function per feature (as :class:`AdditiveModel`) plus, per pair of
    features ``(a, b)``, a value per cell of a grid of both features,
    ``f(x) = sum_j f_j(x_j) + sum_p g_p(cell_p(x_a, x_b))``. Its encoding
    is a :class:`~rsrank.learning.binning.PairEncoding`; each pair is a group of
    weights of its own, as each feature's steps are."""

    kind = "interactions"
    used_words = "features in use"
    kept_words = "the spread of each shape function and pair table, largest first"

    def term_features(self):
        """The features of each group: each feature's own steps, then each
        pair's cells."""
        return ([(j,) for j in range(self.n_features)]
                + [(int(a), int(b)) for a, b in self.encoding.pairs])

    def pair_tables(self):
        """Per pair, its values per cell as an ``(n_a, n_b)`` array (the
        running sums of its steps; the first cell 0)."""
        bins, out = self.encoding.bins, []
        for p in range(self.encoding.n_pairs):
            g = self.n_features + p
            steps = self.coef[bins[g]:bins[g + 1]]
            out.append(np.r_[0.0, np.cumsum(steps)].reshape(self.encoding.grid_shape(p)))
        return out

    def interaction_functions(self):
        """Per pair in use: a dict with ``features`` (the two indices),
        ``names``, ``thresholds`` (the grid cuts of each, float32,
        increasing) and ``values``, an ``(n_a, n_b)`` array: the
        contribution of the cell ``(i, k)``, the rows with ``i`` cuts of
        ``a`` and ``k`` cuts of ``b`` below their values; ``counts``, the
        training rows per cell (None when unknown)."""
        names, tables, out = self.names(), self.pair_tables(), []
        counts = self.encoding.counts
        for p, table in enumerate(tables):
            if not np.any(table):
                continue
            a, b = (int(j) for j in self.encoding.pairs[p])
            cell_counts = None if counts is None else counts[self.n_features + p].reshape(
                table.shape)
            out.append({"features": (a, b), "names": (names[a], names[b]),
                        "thresholds": tuple(cuts.copy() for cuts in self.encoding.grids[p]),
                        "values": table, "counts": cell_counts})
        return out

    def feature_ranges(self):
        """The spread of each feature's shape, then of each pair's table."""
        tables = [table.max() - table.min() for table in self.pair_tables()]
        return np.r_[super().feature_ranges(), tables]

    def selected_interactions(self):
        """The pairs in use as ``[((name_a, name_b), spread), ...]`` by
        decreasing spread of their tables (largest minus smallest cell)."""
        names, ranges = self.names(), self.feature_ranges()
        used = [g for g in self.selected_terms() if g >= self.n_features]
        used = sorted(used, key=lambda g: -ranges[g])
        pairs = self.encoding.pairs
        return [((str(names[pairs[g - self.n_features][0]]),
                  str(names[pairs[g - self.n_features][1]])), float(ranges[g])) for g in used]
