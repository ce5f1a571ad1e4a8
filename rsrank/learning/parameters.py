""":class:`~rsrank.RSRank`'s parameters: what each may be, checked in one
place (:data:`CONSTRAINTS`, :func:`check_parameters`, in the manner of
scikit-learn's ``_parameter_constraints``), and their documentation and
that of the fitted attributes, one text shared by ``RSRank`` and
:class:`~rsrank.dask.DaskRSRank` (their ``__doc__``, which ``help()`` and
the API reference read).
"""

import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ..evaluation.metrics import CONVENTIONS
from .objective import PAIR_LOSSES, PAIR_WEIGHTS
from .defaults import L1_METHODS, NORMALIZERS

__all__ = ["RSRANK_DOC", "CONSTRAINTS", "check_parameters", "Parameters", "Interval",
           "Options", "Flag", "Checked"]


@dataclass(frozen=True)
class Interval:
    """A number (an integer with ``integer``) at least ``low`` (above it with
    ``strict``), not NaN."""

    low: float
    integer: bool = False
    strict: bool = False

    def holds(self, value):
        kind = numbers.Integral if self.integer else numbers.Real
        if not isinstance(value, kind) or isinstance(value, (bool, np.bool_)):
            return False
        if not self.integer and np.isnan(value):
            return False
        return value > self.low if self.strict else value >= self.low

    def words(self):
        what = "an integer" if self.integer else "a number"
        return f"{what} {'>' if self.strict else '>='} {self.low}"


@dataclass(frozen=True)
class Options:
    """One of ``values`` (strings, or None)."""

    values: tuple

    def holds(self, value):
        return isinstance(value, (str, type(None))) and value in self.values

    def words(self):
        return " or ".join(repr(v) for v in self.values)


@dataclass(frozen=True)
class Flag:
    """True or False (a string such as ``"no"`` is neither)."""

    def holds(self, value):
        return isinstance(value, (bool, np.bool_))

    def words(self):
        return "True or False"


@dataclass(frozen=True)
class Checked:
    """A value checked where it is resolved, named by ``where`` (against
    the training data's features, or by the object it configures)."""

    where: str

    def holds(self, value):
        return True

    def words(self):
        return f"what {self.where} takes"


#: every parameter of RSRank and what it may be (any of its constraints)
CONSTRAINTS = {
    "learning_rate": (Interval(0, strict=True), Options(("auto", "curvature"))),
    "power_t": (Interval(0),),
    "normalize": (Options(NORMALIZERS),),
    "l1": (Interval(0),),
    "truncation_period": (Interval(1, integer=True),),
    "truncation_threshold": (Interval(0),),
    "l1_method": (Options(L1_METHODS),),
    "average": (Flag(),),
    "max_iter": (Interval(1, integer=True),),
    "batch_size": (Interval(1, integer=True), Options((None,))),
    "shuffle": (Flag(),),
    "ndcg_k": (Interval(1, integer=True), Options((None,))),
    "gain": (Checked("rsrank.metrics.gain_values"),),
    "discount": (Checked("rsrank.metrics.discount_values"),),
    "pair_loss": (Options(PAIR_LOSSES),),
    "pair_weight": (Options(PAIR_WEIGHTS),),
    "eval_k": (Interval(1, integer=True),),
    "eval_convention": (Options(tuple(c for c in CONVENTIONS
                                      if CONVENTIONS[c]["ties"] != "docid")),),
    "early_stopping": (Flag(),),
    "validation_fraction": (Interval(0, strict=True),),
    "n_iter_no_change": (Interval(1, integer=True),),
    "tol": (Interval(-np.inf),),
    "restore_best": (Flag(),),
    "eval_train": (Flag(),),
    "random_state": (Checked("sklearn.utils.check_random_state"),),
    "warm_start": (Flag(),),
    "n_jobs": (Checked("rsrank.solver.Solver (a non-zero integer, 'auto' or None)"),),
    "verbose": (Interval(0, integer=True), Flag()),
    "weight_tol": (Interval(0), Options((None,))),
    "additive": (Flag(),),
    "max_bins": (Checked("rsrank.binning (an integer from 2 to 255)"),),
    "l1_group": (Interval(0),),
    "feature_costs": (Checked("the training data's feature names"),),
    "relax": (Flag(),),
    "exclude": (Checked("the training data's feature names"),),
    "interactions": (Checked("rsrank.kinds.kind_of"),),
    "interaction_bins": (Checked("rsrank.kinds.INTERACTIONS"),),
    "monotone": (Checked("the training data's feature names"),),
    "momentum": (Flag(), Options((None,))),
    "missing": (Options(("refuse", "zero", "mean")),),
}


def check_parameters(params):
    """``ValueError`` in one line for the first parameter of ``params``
    (RSRank's, by name) that none of its :data:`CONSTRAINTS` holds, then
    for the combinations no single parameter can refuse (those of the
    penalty's parameters are :class:`~rsrank.learning.penalty.L1Penalty`'s own)."""
    for name, constraints in CONSTRAINTS.items():
        value = params[name]
        if not any(constraint.holds(value) for constraint in constraints):
            raise ValueError(f"{name} must be "
                             f"{' or '.join(c.words() for c in constraints)}, got {value!r}"
                             + _HINTS.get(name, ""))
    _check_combinations(**params)


def _check_combinations(*, validation_fraction, relax, warm_start, **_):
    if validation_fraction >= 1:
        raise ValueError(f"validation_fraction must be in (0, 1), got "
                         f"{validation_fraction!r}")
    if relax and warm_start:
        raise ValueError("relax refits every fit from the penalized one; it does not go on "
                         "from a previous fit: set warm_start=False")


class Parameters(Mapping):
    """An estimator's parameters as a fit was made with them, read-only:
    the set :func:`~rsrank.learning.fitting.setup` was given (copied once,
    as scikit-learn's ``clone`` copies parameters), and the few values a
    fit sequence varies (:meth:`but`) laid over it, never a copy of the
    whole set."""

    __slots__ = ("_base", "_changes")

    def __init__(self, base, changes=None):
        # a base already read-only is shared (by but); any other mapping is copied
        self._base = base if isinstance(base, MappingProxyType) else MappingProxyType(
            dict(base))
        self._changes = dict(changes or {})

    def but(self, **changes):
        """These parameters with ``changes``: one layer over the same base."""
        return Parameters(self._base, {**self._changes, **changes})

    def __getitem__(self, name):
        return self._changes[name] if name in self._changes else self._base[name]

    def __iter__(self):
        return iter(self._base)

    def __len__(self):
        return len(self._base)

    def __repr__(self):
        return f"Parameters({dict(self)!r})"

    def __reduce__(self):
        return Parameters, (dict(self),)


#: what a refused value's message adds
_HINTS = {"eval_convention": " (trec_eval's convention orders tied scores by document id, "
                             "which a fit does not see: evaluate its rankings with "
                             "rsrank.metrics and docids=)"}

RSRANK_DOC = """Sparse linear ranker trained on |Delta NDCG|-weighted pairwise losses.

``X`` may also be a :class:`~rsrank.reading.querydata.QueryData` (built once,
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
    which); without an ``eval_set`` (as in scikit-learn's searches)
    :meth:`fit` takes the ``"curvature"`` step below, which full-batch
    descent does not overshoot where a fixed 1e-2 can
    (``results/grid_search.md``), and so do ``fit_chunks``,
    :class:`~rsrank.dask.DaskRSRank` and ``partial_fit``, where choosing
    on validation would take a pass per step size. The step that suits
    the data varies more than anything else in the recipe: 1e-2
    oscillates on noisy data with few relevant documents, 1e-3 stops
    short on clean data with many grades (``results/recipes.md``).
    ``"curvature"``: :meth:`fit` takes :data:`CURVATURE_STEP` (2) over
    the trace of the training loss's Hessian at w = 0
    (:meth:`~rsrank.learning.objective.Objective.curvature`): on z-scored
    features full-batch descent then decreases the loss every epoch, so
    that with ``restore_best=False`` and enough epochs the model is the
    penalized optimum (``rsrank train``'s L1 path; ``results/paths.md``).
    Unscaled features of very different scales can still oscillate. An
    additive model on at least ``LEVEL_ROWS`` (50,000) rows in memory
    steps on the level of each bin and pair cell instead
    (``results/level_steps.md``). Where the training data comes in parts, the trace is summed over them
    (``fit_chunks``: one more pass over the blocks; Dask: over the
    partitions; ``partial_fit``: on the first block).
power_t : float, default=0.0
    Decay of the step size: gradient step ``t`` (counted from 1 over
    the whole fit, ``t_``) takes ``learning_rate / t ** power_t``, as
    scikit-learn's ``learning_rate="invscaling"``; the L1 penalty of a
    step scales with it. 0 keeps the step size constant; 0.5 is the
    classical 1/sqrt(t) of stochastic gradient descent.
normalize : {"zscore", "minmax", "query-zscore", "query-minmax", "none"}, default="zscore"
    Feature scaling applied before the linear function (see
    :mod:`rsrank.learning.preprocessing`). ``"zscore"`` and ``"minmax"`` fit one
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
    Visit the queries in a new random order each epoch of batches
    (``batch_size`` set). Full-batch steps visit them as stored whatever
    it says: their one step per epoch sums over every query, which an
    order changes only by rounding, and reading the rows in order is
    about a tenth faster.
ndcg_k : int or None, default=None
    Cut-off of the NDCG in the swap weights: positions from ``ndcg_k``
    on are not discounted, so pairs with both documents there have
    weight 0 and are skipped (O(n k) work per query instead of O(n^2)).
gain : {"exp2", "linear"} or callable, default="exp2"
    Gain of a label in the swap weights (see :func:`rsrank.evaluation.metrics.gain_values`).
discount : {"log2", "letor", "zipf"}, float or callable, default="log2"
    Discount in the swap weights (see :func:`rsrank.evaluation.metrics.discount_values`).
pair_loss : {"modified_huber", "hinge", "logistic"}, default="modified_huber"
    Loss of a pair's margin.
pair_weight : {"delta_ndcg", "unit"}, default="delta_ndcg"
    ``"unit"`` weighs every pair 1 (plain pairwise classification, as in
    RankSVM), for ablations.
eval_k : int, default=10
    Cut-off of the NDCG reported by :meth:`score`, in ``history_`` and
    used for early stopping.
eval_convention : str, default="letor"
    NDCG convention of :meth:`score`, the history and early stopping:
    LETOR's Eval-Score, as ``RSRankCV``, the scorers and ``rsrank train``
    use (see :mod:`rsrank.evaluation.metrics`, which names the convention of each
    tool; ``"trec_eval"`` needs document ids, which a fit does not see).
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
    (every distinct value when there are few; :mod:`rsrank.learning.binning`).
    Each step is a depth-1 tree, so every engine runs the model.
    ``coef_`` holds the steps; ``normalize`` does not apply (the steps
    only compare values). Needs the training data in memory (``fit``).
max_bins : int or "auto", default=32
    Bins per feature of an additive model (2 to 256). ``"auto"``
    (``rsrank train``'s): 255 on a training set of at least ``LEVEL_ROWS``
    (50,000) rows, else 32 (``rsrank.learning.defaults.ROWS_BINS``).
interactions : int, default=0
    With ``additive=True``, the most pairs of features the model may use
    beside its one-feature shapes: each pair ``(a, b)`` adds a value per
    cell of a grid of both features (``interaction_bins`` bins each), a
    function of the two at once such as an AND of two thresholds or a
    product. The pairs are found from the ranking objective itself: the
    ``interactions`` pairs whose cells explain most of the pair gradients
    at an additive model's ranking beyond each feature's own bins
    (:func:`rsrank.learning.interactions.top_pairs`; one pass over the rows for all
    pairs). Each pair is a group of its own for ``l1_group``, so the
    penalty keeps only the pairs that pay (and a pair does not need its
    features' own shapes: an XOR has none). 0: no pairs.
interaction_bins : int or "auto", default=8
    Quantile bins per feature of a pair's grid (2 to 16). ``"auto"``
    (``rsrank train``'s): 16 on at least 50,000 training rows, else 8.
l1_group : float, default=0.0
    The group penalty ``l1_group * sum_j c_j sqrt(n_j) ||w_j||``, with
    ``w_j`` feature j's weights (its ``n_j`` steps; or a pair's cells),
    ``c_j`` its cost (a pair's: both features' costs): it takes whole
    features (and pairs) out (``l1`` then keeps few steps inside the
    features left). ``l1_group_max`` gives the smallest value that keeps
    every weight at zero.
feature_costs : sequence or dict, optional
    A cost per feature (in feature order, or by name or index; omitted
    features cost 1), multiplying that feature's ``l1`` and
    ``l1_group``: a feature that is dear to compute must earn more to be
    kept.
exclude : sequence, optional
    Features (by name or index) held at zero: the model does not use
    them, as if their columns were absent. A tuple of one feature holds
    only its own shape, a tuple of two only their pair. ``relax`` refits
    with the terms its penalized fit left out excluded.
monotone : dict or sequence, optional
    Monotone constraints: a direction per feature, 1 (the score never
    falls as the feature grows), -1 (never rises) or 0 (free), as a dict
    by name or index (``{"bm25": 1, "age": -1}``; features left out are
    free) or a sequence in feature order. A linear weight keeps its sign;
    a one-feature shape its steps' sign; a pair's cells are monotone along
    each constrained feature for every value of the other. Enforced by a
    projection after every step (not checked afterwards), so the penalized
    fit, its relaxed refit and every export are monotone.
momentum : bool or None, default=None
    Full-batch steps (``batch_size=None``, without ``average``) with
    Nesterov's momentum, as FISTA takes them, restarted whenever the
    momentum points against the step. None: the model kind's choice, on
    for additive models (the steps of one feature's shape are strongly
    correlated and plain steps settle slowly), off for linear ones.
relax : bool, default=False
    After the penalized fit, fit again from its weights on the features
    it kept, without ``l1`` or ``l1_group``, the other features held at
    0 (the relaxed lasso, Meinshausen 2007): the penalties choose the
    features, and the refit undoes their shrinkage of the weights kept.
    ``learning_rate="curvature"`` steps by the curvature of the kept
    weights alone. Without a penalty there is nothing to relax.
missing : {"refuse", "zero", "mean"}, default="refuse"
    What a missing value (NaN) in a linear model's features stands for:
    ``"refuse"``, none (a NaN in ``X`` or the ``eval_set`` is an error);
    ``"zero"``, the value 0 (what an absent feature of a sparse LETOR file
    is); ``"mean"``, the feature's mean over the training values. The fill
    values are the model's (``model_.fill``): ``predict`` uses them, model
    files keep them, and the exports give the engine the same (Vespa reads
    a lacking attribute as its fill; Solr's feature store needs the fill as
    the feature's ``defaultValue``, which ``rsrank export --solr-features``
    writes; the Elasticsearch/OpenSearch plugin holds 0, so ``"mean"`` is
    refused there). Additive models give a missing value a step of their
    own and take the default only.

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
model_ : rsrank.model.LinearModel or rsrank.model.AdditiveModel
    The fitted model as a value (weights, scaling or thresholds, names,
    fingerprint): what model files, ``predict``, plots and the exports
    read.
model_shape_ : dict
    The parameters the model was made with (its kind, its scaling or
    bins): ``warm_start`` and ``partial_fit`` go on from it only while
    they are unchanged.
solver_state_ : rsrank.solver.SolverState
    The iterate, step count and penalty record that ``warm_start`` and
    ``partial_fit`` continue from.
"""
