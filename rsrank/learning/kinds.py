"""The model kinds: one row per kind of ranking function RSRank learns.

A :class:`Kind` knows everything that differs between kinds outside the
kernels: how its all-zero model starts on the training data, the penalty a
regularization path walks and that path's defaults, which parameters shape
its model (so that ``warm_start`` may go on from it), and what it refuses.
Its fitted model (:mod:`rsrank.learning.model`) answers everything after the fit:
scores, penalty groups, the features it uses, the rows the kernels read,
model files and exports. The kind is decided from the parameters in one
place, :func:`kind_of`, and from a model by its ``kind`` name in
:data:`KINDS`; nothing else asks which kind a model is.

A data source for :meth:`Kind.start` keeps :class:`DataSource`'s contract:
a :class:`~rsrank.reading.querydata.QueryData`, a stream of blocks
(:class:`rsrank.learning.blockwise.Stream`) or a cluster's partitions
(:mod:`rsrank.dask`). The pairs of a model with interactions are found
before it starts, as a stage of the fit (:func:`rsrank.learning.fitting.start`), and
given to it.
"""

from dataclasses import dataclass, fields, replace
from typing import Callable, Protocol

import numpy as np

from .model import AdditiveModel, InteractionModel, LinearModel, feature_names_or_letor
from ..reading._views import fill_values
from ..reading.querydata import QueryData
from .defaults import (AUTO_BINS as AUTO, DEFAULT_INTERACTION_BINS, DEFAULT_MAX_BINS,
                       GLOBAL_NORMALIZERS, LEVEL_ROWS, ROWS_BINS,
                       MAX_INTERACTION_BINS, PATH_EPOCHS, QUERY_NORMALIZERS)
from .preprocessing import scaling_from_moments

__all__ = ["ModelSpec", "Kind", "KINDS", "DataSource", "for_kind", "takes_missing", "check_rows", "LINEAR", "ADDITIVE", "INTERACTIONS", "kind_of", "DEFAULT_MAX_BINS",
           "DEFAULT_INTERACTION_BINS", "MAX_INTERACTION_BINS"]



class DataSource(Protocol):
    """What a model kind starts from: the training data's features
    (``n_features``, ``feature_names`` or None, ``names_from_columns``), its
    column ``sums`` and ``moments`` (:func:`rsrank.learning.preprocessing.column_sums`,
    :func:`~rsrank.learning.preprocessing.column_moments`: the second only where the
    smallest and largest values count, for a min-max scaling), an
    additive model's thresholds (``step_encoding(max_bins)``), and with
    pairs their encoding (``pair_encoding(max_bins, pairs, pair_bins)``, the
    pairs and their grids found beforehand). A source that cannot give one
    (the rows are not in memory) refuses it in words; ``rows_in_memory``
    says whether the pair search can run on it."""

    n_features: int
    feature_names: object
    names_from_columns: bool
    rows_in_memory: bool

    @property
    def sums(self): ...

    @property
    def moments(self): ...

    def step_encoding(self, max_bins): ...

    def pair_encoding(self, max_bins, pairs, pair_bins): ...


def refuse_missing(source, what="X"):
    """``ValueError`` naming the features of ``source`` (a data source with
    column ``sums``) that hold a missing value (NaN), for a kind whose
    model needs every value; ``what`` names the data (X, eval_set)."""
    sums = source.sums
    width = len(sums[1])
    missing = np.flatnonzero(np.isnan(sums[1]))  # a NaN makes its column's sum NaN
    if len(missing):
        names = feature_names_or_letor(source.feature_names, width)
        shown = ", ".join(str(names[j]) for j in missing[:3]) + (", ..." if len(missing) > 3
                                                               else "")
        raise ValueError(f"{what} has missing values (NaN) in {len(missing)} feature(s) "
                         f"({shown}): a linear model needs every value; say what one stands "
                         "for with missing='zero' or 'mean' (--missing), use additive=True "
                         "(--additive), whose shapes give a missing value a score of its own, "
                         "or impute them")


def _start_linear(spec, source, pairs):
    """All-zero weights with the scaling fitted on ``source``'s column
    sums (its moments for a min-max scaling); with ``missing="zero"`` or
    ``"mean"`` and missing values in ``source``, what each stands for (the
    model's ``fill``) and the scaling of the filled values."""
    fill = None
    if spec.missing != "refuse":
        counts, sums = source.sums[:2]
        if np.isnan(sums).any():
            if not isinstance(source, QueryData):
                raise ValueError(f"missing={spec.missing!r} fills missing values from the "
                                 "training rows, which a stream of blocks does not hold: impute "
                                 "them, or fit in memory")
            fill = fill_values(source.X, spec.missing)
            source = source.filled(fill)
        else:  # none in training: the fill of one met in vali, test or predict
            fill = np.zeros(len(sums)) if spec.missing == "zero" else np.divide(
                sums, counts, out=np.zeros(len(sums)), where=np.asarray(counts) > 0)
    refuse_missing(source)
    width = source.n_features
    offset, scale = np.zeros(width), np.ones(width)
    if spec.normalize == "minmax":
        offset, scale = scaling_from_moments(source.moments, "minmax")
    elif spec.normalize in GLOBAL_NORMALIZERS:
        offset, scale = scaling_from_moments(source.sums, spec.normalize,
                                             lambda: source.moments[3:])
    return LinearModel(np.zeros(width), spec.normalize, offset, scale,
                       source.feature_names, source.names_from_columns, fill=fill)


def _start_additive(spec, source, pairs):
    """All-zero steps at thresholds fitted on ``source``'s rows."""
    encoding = source.step_encoding(spec.max_bins)
    return AdditiveModel(np.zeros(encoding.n_steps), encoding, source.feature_names,
                         source.names_from_columns)


def _start_interactions(spec, source, pairs):
    """All-zero steps of every feature and all-zero cells of ``pairs``
    (``(pairs, grids)`` found by :func:`rsrank.learning.fitting.pair_search`: the
    pairs of largest interaction gain at an additive model's ranking)."""
    encoding = source.pair_encoding(spec.max_bins, pairs, spec.interaction_bins)
    return InteractionModel(np.zeros(encoding.n_steps), encoding, source.feature_names,
                            source.names_from_columns)


def _refuse_bins(spec, what):
    if spec.interaction_bins not in (DEFAULT_INTERACTION_BINS, AUTO):
        return (f"interaction_bins={spec.interaction_bins!r} applies to pairwise "
                f"interactions (additive=True, interactions=K; --interactions K); {what}")
    return None


def _refuse_missing_policy(spec):
    if spec.missing != "refuse":
        return (f"missing={spec.missing!r} says what a missing value stands for in a "
                "linear model; an additive model gives it a step of its own: leave missing "
                "out (--missing)")
    return None


def _refuse_linear(spec):
    if spec.missing not in ("refuse", "zero", "mean"):
        return (f"missing must be 'refuse', 'zero' or 'mean' (what a missing value stands "
                f"for), got {spec.missing!r}")
    if spec.max_bins not in (DEFAULT_MAX_BINS, AUTO):
        return (f"max_bins={spec.max_bins!r} applies to additive models (additive=True; "
                "--max-bins with --additive); a linear model has no bins")
    return _refuse_bins(spec, "a linear model has none")


def _refuse_additive(spec):
    return (_refuse_missing_policy(spec) or _refuse_query_scaling(spec)
            or _refuse_bins(spec, "this model has none (interactions=0)"))


def _refuse_interactions(spec):
    bins = spec.interaction_bins
    if bins != AUTO and (not isinstance(bins, (int, np.integer)) or isinstance(bins, bool)
                         or not 2 <= bins <= MAX_INTERACTION_BINS):
        return (f"interaction_bins must be an integer from 2 to {MAX_INTERACTION_BINS} (a "
                f"pair's grid has at most {MAX_INTERACTION_BINS ** 2} cells), got {bins!r}")
    return _refuse_missing_policy(spec) or _refuse_query_scaling(spec)


def _refuse_query_scaling(spec):
    normalize = spec.normalize
    if normalize in QUERY_NORMALIZERS:
        return (f"normalize={normalize!r} (--normalize {normalize}) scales features within "
                "each query, which the thresholds of an additive model (additive=True, "
                "--additive) cannot follow: an engine compares a document's raw value with "
                "them; use normalize='zscore' or 'none' (a global scaling changes no step)")
    return None


@dataclass(frozen=True)
class ModelSpec:
    """What an estimator's parameters say of its model, the part the kinds
    own: which kind (``additive``, ``interactions``), its bins, the scaling
    of its features and what a missing value stands for. Read from the
    parameters once (:meth:`of`); the kinds take it, not the parameters."""

    additive: object
    interactions: object
    max_bins: object
    interaction_bins: object
    normalize: object
    missing: object

    @classmethod
    def of(cls, params):
        """The spec of an estimator's parameters (a dict holding at least
        this spec's fields), unchecked: :func:`kind_of` and
        :meth:`Kind.check` refuse what cannot be made."""
        return cls(*(params[field.name] for field in fields(cls)))

    def on_rows(self, n_rows):
        """This spec with ``max_bins="auto"`` and ``interaction_bins="auto"``
        (``rsrank train``'s for the additive kinds) settled for a training
        set of ``n_rows`` rows (None: not known, as for a stream read in
        blocks): :data:`ROWS_BINS` on at
        least :data:`~rsrank.learning.defaults.LEVEL_ROWS` rows, where fits
        step on levels, else the estimator's defaults."""
        many = n_rows is not None and n_rows >= LEVEL_ROWS
        max_bins, pair_bins = ROWS_BINS if many else (DEFAULT_MAX_BINS,
                                                      DEFAULT_INTERACTION_BINS)
        return replace(self, max_bins=max_bins if self.max_bins == AUTO else self.max_bins,
                       interaction_bins=(pair_bins if self.interaction_bins == AUTO
                                         else self.interaction_bins))


@dataclass(frozen=True)
class Kind:
    """One kind of model.

    Attributes
    ----------
    name : str
        The ``kind`` of its models and of model files.
    additive : bool
        The estimator's ``additive`` parameter that asks for it.
    pairs : bool
        Whether it asks for ``interactions`` (a number of pairs above 0).
    model : type
        Its fitted model's class (:mod:`rsrank.learning.model`).
    strength : str
        The penalty its regularization path walks: ``"l1"`` (weights in or
        out) or ``"l1_group"`` (whole features in or out).
    relax : bool
        Whether ``rsrank train`` refits each point of the path on the
        features it kept (``--relax``) unless told otherwise: a group
        penalty shrinks the shapes it keeps (``results/additive.md``).
    path_epochs : int
        Epochs of a path point with ``learning_rate="curvature"`` unless
        ``max_iter`` is given.
    momentum : bool
        Whether its full-batch steps take Nesterov's momentum unless
        ``momentum`` says otherwise: the steps of a feature's shape (or a
        pair's cells) are strongly correlated, and plain steps at a
        curvature-safe size take thousands of epochs to settle
        (``results/interactions.md``).
    shaping : tuple of str
        The parameters its model is made with: ``warm_start`` goes on
        from a fitted model only while they are unchanged.
    start : callable
        ``start(spec, source, pairs)``: the all-zero model of a
        :class:`ModelSpec` on a data
        source (:class:`DataSource`); ``pairs``: for a kind with ``pairs``,
        the ``(pairs, grids)`` the pair search found on it, else None.
    refuse : callable
        ``refuse(spec)``: why the kind cannot take a :class:`ModelSpec`, or None.
    missing : bool
        Whether its model scores a missing value (NaN); a kind that does not
        refuses data that holds one, training and validation alike.
    """

    name: str
    additive: bool
    pairs: bool
    model: type
    strength: str
    relax: bool
    path_epochs: int
    momentum: bool
    shaping: tuple
    start: Callable
    refuse: Callable
    missing: bool = True

    def shape(self, spec):
        """What the model of a :class:`ModelSpec` is made with, for the
        ``warm_start`` check."""
        return {"additive": self.additive, "interactions": spec.interactions if self.pairs
                else 0, **{name: getattr(spec, name) for name in self.shaping}}

    def check_rows(self, spec, source, what):
        """``ValueError`` when ``source`` holds a missing value this kind's
        model cannot score (``what`` names the data: eval_set); a linear
        model with ``missing="zero"`` or ``"mean"`` scores one as its fill."""
        if not self.takes_missing(spec):
            refuse_missing(source, what)

    def takes_missing(self, spec):
        """Whether its models, made as ``spec`` says, take a missing value."""
        return self.missing or spec.missing != "refuse"

    def check(self, spec):
        """``ValueError`` when the kind refuses ``spec``."""
        problem = self.refuse(spec)
        if problem:
            raise ValueError(problem)


LINEAR = Kind("linear", False, False, LinearModel, "l1", relax=False, path_epochs=PATH_EPOCHS,
              momentum=False,
              shaping=("normalize",), start=_start_linear, refuse=_refuse_linear,
              missing=False)
ADDITIVE = Kind("additive", True, False, AdditiveModel, "l1_group", relax=True, path_epochs=PATH_EPOCHS,
                momentum=True,
                shaping=("max_bins",), start=_start_additive, refuse=_refuse_additive)
INTERACTIONS = Kind("interactions", True, True, InteractionModel, "l1_group", relax=True,
                    path_epochs=PATH_EPOCHS, momentum=True, shaping=("max_bins", "interaction_bins"),
                    start=_start_interactions, refuse=_refuse_interactions)

#: every kind by name (a model's ``kind`` and a model file's ``"model"``)
KINDS = {kind.name: kind for kind in (LINEAR, ADDITIVE, INTERACTIONS)}


def for_kind(table, kind, what):
    """``table``'s entry for the model kind named ``kind``: a module that
    keeps a part of each kind of its own (an export writer, a model file's
    form) asks for it here, and a kind it lacks is one line naming ``what``."""
    if kind not in KINDS or kind not in table:
        raise ValueError(f"no {what} for a model of kind {kind!r} (the kinds are "
                         f"{', '.join(KINDS)})")
    return table[kind]


def takes_missing(params):
    """Whether the model ``params`` (an estimator's) ask for takes a missing
    value (NaN): an additive model's own bin, or a linear model's
    ``missing`` fill; False for parameters :func:`kind_of` refuses."""
    spec = ModelSpec.of(params)
    try:
        return kind_of(spec).takes_missing(spec)
    except ValueError:
        return False


def check_rows(model, params, source, what):
    """``ValueError`` when ``source`` holds a missing value that ``model``
    (fitted with ``params``) cannot score (:meth:`Kind.check_rows`)."""
    KINDS[model.kind].check_rows(ModelSpec.of(params), source, what)


def kind_of(spec):
    """The :class:`Kind` that ``spec`` (a :class:`ModelSpec`) asks for: the
    one place where parameters decide the kind."""
    additive, interactions = spec.additive, spec.interactions
    if not isinstance(additive, (bool, np.bool_)):
        raise ValueError(f"additive must be True or False, got {additive!r}")
    if (not isinstance(interactions, (int, np.integer)) or isinstance(interactions, bool)
            or interactions < 0):
        raise ValueError(f"interactions must be an integer >= 0 (the most pairs of features "
                         f"the model may use), got {interactions!r}")
    if interactions and not additive:
        raise ValueError(f"interactions={interactions} are pairs of features in an additive "
                         "model: set additive=True as well (--additive --interactions K)")
    pairs = bool(interactions)
    return next(kind for kind in KINDS.values()
                if kind.additive == additive and kind.pairs == pairs)
