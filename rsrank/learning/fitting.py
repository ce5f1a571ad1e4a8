"""One fit pipeline: parameters in, a :class:`Fitted` value out.

:func:`setup` turns an estimator's parameters into objects once per public
call (the model :class:`~rsrank.learning.kinds.Kind`, the
:class:`~rsrank.learning.solver.Solver` with its objective and penalty, what the
epochs record), checking every parameter. :func:`fit` is then one flat
sequence on :class:`~rsrank.reading.querydata.QueryData`: the step size (a number,
chosen on validation among :data:`AUTO_RATES`, or from the curvature of
the loss), the penalized fit, and with ``relax`` the refit on the features
it kept. :mod:`~rsrank.learning.blockwise` runs the same steps on data that
comes in blocks; :mod:`rsrank.dask` runs them on a cluster through
:func:`start`, :func:`laid_out` and :meth:`Solver.run`.
"""

import warnings
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np
from sklearn.utils import check_random_state

from .interactions import pair_grids, row_lambdas, search_rows, top_pairs
from .defaults import DEFAULT_INTERACTION_BINS, LEVEL_LOSS_PATIENCE, LEVEL_ROWS, LEVEL_STEP
from .kinds import ModelSpec, kind_of
from .objective import Objective
from .feature_keys import (FeatureKeys, check_feature_keys, excluded, monotone_directions,
                           penalty_layout, source_columns)
from .parameters import Parameters, check_parameters
from .penalty import L1Penalty
from .solver import DivergenceWarning, Monitoring, Solver, SolverState, scale_advice
from ._threads import coding_threads, numba_threads, threads

__all__ = ["Setup", "Fitted", "setup", "fit", "refit_kept",
           "refit_terms", "pair_search", "search_key", "screens", "screened", "entering",
           "start", "laid_out", "curvature_rate", "level_steps", "takes_levels", "scale_advice",
           "rate_from_parts", "part_curvature", "fit_source", "EpochSource", "InMemory",
           "AUTO_RATES", "AUTO_DEFAULT", "CURVATURE_STEP"]

#: The step sizes ``learning_rate="auto"`` tries on the validation data, and
#: the one it takes without validation data
AUTO_RATES = (1e-3, 1e-2, 1e-1)
AUTO_DEFAULT = 1e-2
#: ``learning_rate="curvature"`` takes this over the trace of the loss's
#: Hessian at w = 0 (:meth:`~rsrank.learning.objective.Objective.curvature`)
CURVATURE_STEP = 2.0


#: :meth:`Setup.but`'s mark of a parameter it keeps
KEEP = object()


@dataclass(frozen=True)
class Setup:
    """An estimator's parameters as objects: ``params`` (the
    :class:`~rsrank.learning.parameters.Parameters` a fit records), the
    model ``kind`` and its :class:`~rsrank.learning.kinds.ModelSpec`
    (``model``), the parameters that name features
    (:class:`~rsrank.learning.feature_keys.FeatureKeys`), the ``solver`` (its
    penalty not yet laid out on a model's weights; its step size
    ``learning_rate`` or 1e-2 for ``"auto"`` and ``"curvature"``) and the
    per-epoch ``monitoring``, and what concerns the fit as a whole
    (:class:`Run`)."""

    params: Parameters
    kind: object
    solver: Solver
    monitoring: Monitoring
    model: ModelSpec
    features: FeatureKeys
    run: "Run"

    @property
    def rule(self):
        """``"auto"``, ``"curvature"`` or None (a number)."""
        rate = self.run.learning_rate
        return rate if isinstance(rate, str) else None

    @property
    def relaxed(self):
        """Whether :func:`fit` refits on the penalized fit's features."""
        penalty = self.solver.penalty
        return bool(self.run.relax) and (penalty.l1 != 0 or penalty.group != 0)

    def but(self, *, learning_rate=KEEP, relax=KEEP, l1=KEEP, l1_group=KEEP, exclude=KEEP,
            max_iter=KEEP, weight_tol=KEEP):
        """This setup with changes to the parameters a fit sequence varies (a
        numeric ``learning_rate``, ``relax``, ``l1``, ``l1_group``,
        ``exclude``, ``max_iter``, ``weight_tol``), without checking the
        others again or copying them."""
        changes = {name: value for name, value in (
            ("learning_rate", learning_rate), ("relax", relax), ("l1", l1),
            ("l1_group", l1_group), ("exclude", exclude), ("max_iter", max_iter),
            ("weight_tol", weight_tol))
            if value is not KEEP}
        penalty = replace(self.solver.penalty, **{
            field: changes[name] for name, field in (("l1", "l1"), ("l1_group", "group"))
            if name in changes})
        run = replace(self.run, **{name: changes[name] for name in ("learning_rate", "relax")
                                   if name in changes})
        solver = replace(self.solver, penalty=penalty, learning_rate=(
            run.learning_rate if not isinstance(run.learning_rate, str)
            else self.solver.learning_rate), max_iter=changes.get("max_iter",
                                                                   self.solver.max_iter),
            weight_tol=changes.get("weight_tol", self.solver.weight_tol))
        features = self.features if exclude is KEEP else self.features.excluding(exclude)
        return replace(self, params=self.params.but(**changes), solver=solver,
                       features=features, run=run)


@dataclass(frozen=True)
class Run:
    """The parameters of a fit as a whole: its step rule as given (a number,
    ``"auto"`` or ``"curvature"``), whether it refits relaxed, its seed, and
    the share of queries early stopping holds out without an eval set."""

    learning_rate: object
    relax: object
    random_state: object
    validation_fraction: float


def setup(params):
    """The :class:`Setup` of ``params`` (an estimator's, by name); building
    it checks every parameter (:func:`rsrank.learning.parameters.check_parameters`,
    then what the kind refuses). It is the one reader of the parameters:
    each part takes its own by keyword."""
    check_parameters(params)
    params = Parameters(params)
    model = ModelSpec.of(params)
    kind = kind_of(model)
    kind.check(model)
    return _bound(params, kind, model, **params)


def _bound(params, kind, model, *, pair_loss, pair_weight, gain, discount, ndcg_k, l1,
           l1_method, truncation_period, truncation_threshold, l1_group, learning_rate,
           power_t, batch_size, shuffle, average, max_iter, early_stopping, n_iter_no_change,
           tol, restore_best, n_jobs, verbose, weight_tol, momentum, eval_k, eval_convention,
           eval_train, relax, random_state, validation_fraction, **_):
    objective = Objective(pair_loss, pair_weight, gain, discount, ndcg_k)
    penalty = L1Penalty(l1, l1_method, truncation_period, truncation_threshold, l1_group)
    solver = Solver(objective, penalty,
                    AUTO_DEFAULT if isinstance(learning_rate, str) else learning_rate, power_t,
                    batch_size, shuffle, average, max_iter, early_stopping, n_iter_no_change,
                    tol, restore_best, n_jobs, verbose, weight_tol,
                    kind.momentum if momentum is None else momentum)
    return Setup(params, kind, solver, Monitoring(eval_k, eval_convention, eval_train), model,
                 FeatureKeys.of(params),
                 Run(learning_rate, relax, random_state, validation_fraction))


@dataclass
class Fitted:
    """What a fit leaves: the ``model`` value, the solver ``state`` that
    ``warm_start`` and ``partial_fit`` go on from, the epochs run, the epoch
    kept, the per-epoch ``history``, the step size it trained with, what the
    model is made with (``shape``, see :meth:`~rsrank.learning.kinds.Kind.shape`),
    after a relaxed fit the ``penalized`` fit whose features it kept, and
    the ``params`` it was fitted with."""

    model: object
    state: SolverState
    n_iter: int
    best_iteration: object
    history: dict
    learning_rate: float
    shape: dict
    penalized: object = None
    params: dict = field(default_factory=dict)


# -- the penalty on a model's weights -----------------------------------------------------


def laid_out(plan, model, rate=None):
    """``plan``'s solver (at step size ``rate`` if given) with the penalty
    laid out on ``model``'s weights. An excluded feature's group gets the
    factor inf: its proximal step, taken every step, is then the
    projection onto zero. ``monotone`` becomes the projections that keep
    the model monotone (:meth:`~rsrank.learning.model.AdditiveModel.monotone_layout`)."""
    solver = plan.solver if rate is None else replace(plan.solver, learning_rate=rate)
    groups, factors, weights = penalty_layout(plan.features, model)
    penalty = replace(solver.penalty, groups=groups, group_factors=factors,
                      weight_factors=weights)
    directions = monotone_directions(plan.features, model)
    if directions is not None:
        signs, blocks = model.monotone_layout(directions)
        penalty = replace(penalty, signs=signs, monotone_blocks=blocks)
    held = excluded(plan.features, model)
    if held is not None:
        if penalty.period != 1:
            raise ValueError("exclude holds features at zero at every step: use "
                             "truncation_period=1")
        kept = factors if penalty.group > 0 else np.zeros(len(factors))
        penalty = replace(penalty, group=penalty.group or 1.0,
                          group_factors=np.where(held, np.inf, kept))
    return replace(solver, penalty=penalty)


# -- where a fit starts ---------------------------------------------------------------------


def start(plan, source, warm=None):
    """The model a fit starts from: the kind's all-zero model on ``source``,
    or the model of ``warm`` (a :class:`Fitted` that ``warm_start`` goes on
    from), refused when a parameter that shapes it has changed since: going
    on would keep the old one."""
    if warm is None:
        check_feature_keys(plan.features, source_columns(source))
        spec, pairs = model_spec(plan, source), None
        with coding_threads(plan.solver.n_jobs, _values(source)):
            if plan.kind.pairs:  # a stage of its own: the search, then the model of its pairs
                if not source.rows_in_memory:
                    source.pair_encoding(spec.max_bins, None, None)  # refuses in words
                pairs = pair_search(plan, source)
            return plan.kind.start(spec, source, pairs)
    now = plan.kind.shape(plan.model)
    for name, value in warm.shape.items():
        if now.get(name) != value:
            raise ValueError(f"the fitted model has {name}={value!r}, now {name}="
                             f"{now.get(name)!r}: going on from it would keep {name}="
                             f"{value!r}; fit without warm_start to refit")
    return warm.model


def _values(source):
    """The values of a source's training rows, None when it does not hold
    them (a stream of blocks)."""
    n_rows = getattr(source, "n_rows", None)
    return None if n_rows is None else n_rows * source.n_features


def model_spec(plan, source):
    """The plan's :class:`~rsrank.learning.kinds.ModelSpec` with its bins
    settled for ``source``'s training rows (``"auto"``:
    :meth:`~rsrank.learning.kinds.ModelSpec.on_rows`)."""
    return plan.model.on_rows(getattr(source, "n_rows", None))


#: the epochs of the additive fit whose ranking a pair search reads
SEARCH_EPOCHS = 200
#: the same on levels (:func:`level_steps`, rows from
#: :data:`~rsrank.learning.defaults.LEVEL_ROWS` on), whose ranking settles
#: sooner: at a tenth and a quarter of MSLR-WEB30K's shape (``make_mslr_like``'s
#: non-linear teacher and ``make_web_like``) the search kept the same pairs
#: after 50 epochs as after 200 (which it stopped at after 147-194), and
#: after 20 it lost a true pair on ``make_web_like``
SEARCH_LEVEL_EPOCHS = 50


def pair_search(plan, source):
    """``(pairs, grids)`` of a model with ``interactions=K``: the ``K``
    pairs of largest interaction gain (:func:`rsrank.learning.interactions.top_pairs`)
    of the pair gradients at the ranking of an additive model without
    pairs, fitted on ``source`` (a :class:`QueryData`) with the plan's
    objective, no penalty and the step of the curvature, for at most
    :data:`SEARCH_EPOCHS` epochs (:data:`SEARCH_LEVEL_EPOCHS` on levels),
    and each pair's grid cut where its
    interaction changes (:func:`rsrank.learning.interactions.pair_grids`). Made once
    per training data and setting (a path fits the same data many times).
    Beyond the search's budget all of it runs on the rows the gains come
    from (:func:`rsrank.learning.interactions.search_rows`), the additive
    model too."""
    spec = model_spec(plan, source)

    def make():
        search = setup(plan.params.but(
            interactions=0, interaction_bins=DEFAULT_INTERACTION_BINS, l1=0.0, l1_group=0.0,
            relax=False, exclude=None, feature_costs=None, warm_start=False,
            early_stopping=False, learning_rate="curvature", max_iter=SEARCH_EPOCHS,
            average=False, batch_size=None, verbose=0,
            weight_tol=plan.solver.weight_tol or 1e-4, restore_best=False))
        rows = search_rows(None, source)[1]
        if takes_levels(search, in_memory=True, n_rows=rows.n_rows):
            search = search.but(max_iter=SEARCH_LEVEL_EPOCHS)
        additive = fit(search, rows).model
        lam = row_lambdas(additive, search.solver.objective, rows)  # once, for both
        pairs = top_pairs(additive, lam, rows, spec.interactions, spec.interaction_bins,
                          n_jobs=plan.solver.n_jobs)
        return pairs, pair_grids(lam, rows, pairs, additive.encoding.thresholds,
                                 spec.interaction_bins)
    return source.memo(search_key(plan, source), make)


def search_key(plan, source):
    """What :func:`pair_search` keeps its pairs under on ``source``: the
    settings the search depends on."""
    spec = model_spec(plan, source)
    return ("pair search", spec.interactions, spec.interaction_bins, spec.max_bins,
            plan.solver.objective)


def start_state(n_weights, coef_init, warm=None):
    """Where the steps start: ``coef_init``, else the previous iterate
    (``warm``: with its step count and penalty record), else zeros."""
    if coef_init is not None:
        coef = np.array(coef_init, dtype=np.float64).ravel()
        if coef.shape != (n_weights,):
            raise ValueError(f"coef_init has {coef.size} values for {n_weights} features")
        if not np.all(np.isfinite(coef)):
            raise ValueError("coef_init contains NaN or infinite values")
    else:
        coef = np.zeros(n_weights) if warm is None else warm.model.coef.copy()
    if warm is None:
        return SolverState(coef)
    return SolverState(coef, warm.state.t, warm.state.l1_state.copy())


def split(plan, data, validation, rng):
    """(train, validation or None) as :class:`QueryData`: ``validation``
    as given, else with ``early_stopping`` a seeded share of the queries."""
    if validation is not None or not plan.solver.early_stopping:
        return data, validation
    n_val = int(np.ceil(plan.run.validation_fraction * data.n_queries))
    if data.n_queries < 2 or n_val >= data.n_queries:
        raise ValueError("early_stopping without eval_set needs at least 2 queries to "
                         "hold some out; pass eval_set or more queries")
    held_out = rng.permutation(data.n_queries)[:n_val]
    kept = np.setdiff1d(np.arange(data.n_queries), held_out)
    return data.subset(kept), data.subset(held_out)


def advice(plan, moments, names=None, rate=None):
    """What the divergence warning and error end with: ``moments()`` gives
    the training data's column moments (None when unknown)."""
    rate = plan.solver.learning_rate if rate is None else rate
    return lambda: scale_advice(moments(), names, plan.model.normalize, rate)


# -- the fit --------------------------------------------------------------------------------


def fit(plan, data, validation=None, *, warm=None, coef_init=None, working=None):
    """Train on ``data`` (a :class:`QueryData`), validating on
    ``validation``: the step size by ``plan``'s rule, the fit, and with
    ``relax`` the refit on the features the penalized fit kept.
    ``working``: the terms (indices of the model's groups of weights) a
    penalized fit expects to keep, which it steps on first where it can
    (:func:`screened`)."""
    if plan.relaxed:
        penalized = fit(plan.but(relax=False), data, validation, coef_init=coef_init,
                        working=working)
        return replace(refit_kept(plan, penalized, data, validation), penalized=penalized,
                       params=plan.params)
    if working is not None and screens(plan, validation, warm):
        return replace(screened(plan, data, working, coef_init), params=plan.params)
    if plan.rule == "auto" and validation is not None:
        result = _fit_auto(plan, data, validation, warm, coef_init)
    else:
        # "auto" without validation data takes the curvature step too: one
        # that full-batch descent cannot overshoot, where 1e-2 may
        rate = curvature_rate(plan, data, start(plan, data, warm)) if (
            plan.rule in ("curvature", "auto")
            and not takes_levels(plan, in_memory=True, n_rows=data.n_rows)) else None
        result = _fit_at(plan, rate, data, validation, warm, coef_init)
    return replace(result, params=plan.params)


def _fit_at(plan, rate, data, validation, warm, coef_init, moving=None):
    """One run of the solver at step size ``rate`` (None: the plan's) on
    training data in memory; ``moving`` as for :func:`level_steps`."""
    rng = check_random_state(plan.run.random_state)
    train, validation = split(plan, data, validation, rng)
    if train.n_mixed_queries == 0:
        if train.n_rows < 2:
            raise ValueError(f"{train.n_rows} sample: no pair of documents to learn from")
        raise ValueError(f"no pair to learn from: in each of the {train.n_queries} training "
                         "queries every document has the same label (or the query has one "
                         "document); RSRank learns from pairs of documents with different "
                         "labels: check the labels and the qid")
    return fit_source(plan, InMemory(train, rng), validation, warm=warm, coef_init=coef_init,
                      rate=rate, moving=moving)


def fit_source(plan, source, validation=None, *, warm=None, coef_init=None, rate=None,
               state=None, moving=None):
    """The one assembly of a fit, for every kind of training data (an
    :class:`EpochSource`: rows in memory, blocks of a stream, a cluster's
    partitions, one block of ``partial_fit``): the kind's model started on
    it (or ``warm``'s), the step (``rate``; else by the plan's rule: the
    curvature of all its parts, or ``warm``'s step), the penalty laid out on
    the model, the state (``state`` to go on from in place, else a new one:
    :func:`start_state`), the epochs, and the :class:`Fitted` they leave;
    ``moving`` as for :func:`level_steps`."""
    model = start(plan, source.data_source, warm)
    if validation is not None:  # its scores choose the epoch: a NaN would choose blindly
        plan.kind.check_rows(plan.model, validation, "eval_set")
    levels = level_steps(plan, source, model,
                         rate=warm.learning_rate if warm is not None else None, moving=moving)
    if levels is not None:
        rate, levels = levels
    elif rate is None and plan.rule:
        rate = warm.learning_rate if warm is not None else rate_from_parts(
            source.curvature_parts(plan, model))
    solver = laid_out(plan, model, rate)
    if levels is not None:
        solver = replace(solver, levels=levels, loss_patience=(
            LEVEL_LOSS_PATIENCE if plan.solver.objective.pair_weight != "unit" else None))
    if state is None:
        state = start_state(len(model.coef), coef_init, warm)
    names = source.data_source.feature_names
    moments = (lambda: None) if warm is not None and not source.moments_known else (
        lambda: source.data_source.moments)
    result = source.run(solver, state, model, validation, plan.monitoring,
                        advice(plan, moments, names, solver.learning_rate))
    return fitted(plan, model, result, state, source.n_queries, source.fingerprint,
                  solver.learning_rate)


class EpochSource(Protocol):
    """Training data as :func:`fit_source` runs epochs over it: the
    :class:`~rsrank.learning.kinds.DataSource` its model starts from, its queries'
    number and fingerprint (None when unknown), the ``(trace, n_queries)``
    of each part for the curvature step (:func:`rate_from_parts`), and
    ``run``, the epochs (:meth:`~rsrank.learning.solver.Solver.run`) of a laid-out
    solver from a state, returning their :class:`~rsrank.learning.solver.Fit`."""

    data_source: object
    n_queries: int
    fingerprint: object
    moments_known: bool

    def curvature_parts(self, plan, model): ...

    def run(self, solver, state, model, validation, monitoring, advice): ...


class InMemory:
    """Training rows in memory (a :class:`QueryData`): epochs over its
    queries in ``rng``'s order, the training NDCG, full-batch momentum."""

    moments_known = True

    def __init__(self, data, rng):
        self.data, self.rng = data, rng
        self.data_source, self.n_queries = data, data.n_queries

    @property
    def fingerprint(self):
        return self.data.fingerprint

    def curvature_parts(self, plan, model):
        return [part_curvature(plan, self.data, model)]

    def run(self, solver, state, model, validation, monitoring, advice):
        return solver.fit(self.data, state, self.rng, view=model.view,
                          scale=model.training_scale(), validation=validation,
                          monitoring=monitoring, advice=advice)


def fitted(plan, model, result, state, n_queries, fingerprint, rate):
    """The :class:`Fitted` of a solver's ``result`` on ``model``."""
    if not plan.solver.average:
        state.w = result.coef.copy()  # partial_fit and warm_start go on from the model
    return Fitted(model.with_fit(result.coef, fingerprint, n_queries), state, result.n_iter,
                  result.best_iteration, result.history, rate, plan.kind.shape(plan.model))


def _fit_auto(plan, data, validation, warm, coef_init):
    """``learning_rate="auto"`` with validation data: one fit per rate of
    :data:`AUTO_RATES` on the data built once; the best validation
    NDCG@eval_k wins (the smaller rate on ties), among the rates whose
    training loss did not diverge (:class:`DivergenceWarning`) when there
    are any: such a fit may rank well on validation while its weights grow
    without bound."""
    best, failure = None, None
    for rate in AUTO_RATES:
        # a rate too large for the data warns or fails; that counts only if it wins
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = fit(plan.but(learning_rate=rate), data, validation, warm=warm,
                             coef_init=coef_init)
            except ValueError as error:
                if "non-finite" not in str(error):
                    raise
                failure = error
                continue
        # a rate whose loss diverged ranks after every rate whose loss did not
        stable = not any(issubclass(w.category, DivergenceWarning) for w in caught)
        score = (stable, float(np.nanmax(result.history["val_ndcg"], initial=-np.inf)))
        if best is None or score > best[0]:
            best = (score, result, caught)
    if best is None:
        raise failure
    for warning in best[2]:
        warnings.warn_explicit(warning.message, warning.category, warning.filename,
                               warning.lineno)
    return best[1]


def takes_levels(plan, *, in_memory, n_rows):
    """Whether a fit by ``plan`` on ``n_rows`` training rows steps on levels
    (:func:`level_steps`): rule ``"curvature"``, an additive kind, its rows
    in memory, and at least :data:`~rsrank.learning.defaults.LEVEL_ROWS` of
    them (known before the model starts, so no step size is worked out for
    it)."""
    return (plan.rule == "curvature" and plan.kind.additive and in_memory
            and n_rows >= LEVEL_ROWS)


def level_steps(plan, source, model, rate=None, moving=None):
    """``(rate, (bins, levels))`` for steps on the levels of ``model``'s coded
    columns (:func:`rsrank._kernels.level_moves`) when ``plan``'s rule is
    ``"curvature"``, the model is additive and ``source`` holds its rows in
    memory; else None (steps on the weights, at the trace's step). A
    level's step is :data:`LEVEL_STEP` (at most one over the estimate of
    :meth:`~rsrank.learning.objective.Objective.level_step_bound`) over its
    curvature: a step function's
    steps are strongly correlated, and on the trace's step an additive
    model with pairs was still far from settled after 3,000 epochs where
    level steps settle in about 100 (``results/level_steps.md``).
    ``moving``: a boolean per term (group of weights), the terms the fit
    can move (a relaxed fit's kept terms, the others held at zero), whose
    levels alone the bound is taken over (None: every term's)."""
    in_memory = isinstance(source, InMemory)
    if not takes_levels(plan, in_memory=in_memory,
                        n_rows=source.data.n_rows if in_memory else 0):
        return None
    objective = plan.solver.objective
    curvature = objective.level_curvature(source.data, view=model.view)
    inverse = np.divide(1.0, curvature, out=np.zeros_like(curvature), where=curvature > 0)
    if rate is None:  # a fit that goes on (warm_start, partial_fit) keeps its factor
        # its gradient passes on the fit's threads, the same bound on any number of them
        with numba_threads(threads(plan.solver.n_jobs, _values(source.data))):
            bound = objective.level_step_bound(source.data, view=model.view, steps=None if (
                moving is None) else np.repeat(moving, np.diff(model.groups())))
        rate = LEVEL_STEP if bound * LEVEL_STEP <= 1 else 1.0 / bound
    return rate, (np.asarray(model.encoding.bins, dtype=np.int64), inverse)


def curvature_rate(plan, data, model=None, *, support=None, step=CURVATURE_STEP,
                   otherwise=AUTO_DEFAULT):
    """``learning_rate="curvature"``: ``step`` over the trace of the
    training loss's Hessian at w = 0 on the features as ``model`` (default:
    the plan's all-zero model on ``data``) reads them, over the weights of
    the terms ``support`` keeps (a boolean per group of weights, a
    feature's or a pair's; default all);
    ``otherwise`` when the trace is 0 (no pair to learn from)."""
    model = start(plan, data) if model is None else model
    weights = None if support is None else np.repeat(support, np.diff(model.groups()))
    trace = plan.solver.objective.curvature(data, view=model.view, scale=model.training_scale(),
                                            support=weights)
    return step / trace if trace > 0 else otherwise


def rate_from_parts(parts):
    """``learning_rate="curvature"`` on data in parts (blocks of a stream, a
    cluster's partitions): :data:`CURVATURE_STEP` over the trace of the
    Hessian of the mean per-query loss of them all, from each part's
    ``(trace, n_queries)``: the trace is a sum over queries, so the parts'
    traces weighted by their queries give the one of all the data, as
    :func:`curvature_rate` does in memory."""
    total = queries = 0
    for trace, n_queries in parts:
        total, queries = total + trace * n_queries, queries + n_queries
    trace = total / queries if queries else 0.0
    return CURVATURE_STEP / trace if trace > 0 else AUTO_DEFAULT


def part_curvature(plan, data, model):
    """``(trace, n_queries)`` of one part of the training data for
    :func:`rate_from_parts`."""
    return (plan.solver.objective.curvature(data, view=model.view,
                                            scale=model.training_scale()), data.n_queries)


def screens(plan, validation, warm):
    """Whether a fit by ``plan`` can step on a working set of terms first
    (:func:`screened`): a penalized additive kind (whose epochs then read
    the working set's codes alone), whose model is its last iterate (no
    validation to keep an epoch by or to stop on, no averaging), of steps
    on all the queries at once (whose settled weights a step on them all
    checks), from a start of its own (not ``warm``), with the penalty taken
    at every step."""
    solver, penalty = plan.solver, plan.solver.penalty
    return (plan.kind.additive and (penalty.l1 > 0 or penalty.group > 0)
            and validation is None and not solver.early_stopping and warm is None
            and not solver.average and solver.batch_size is None
            and penalty.period == 1 and plan.rule != "auto")


def screened(plan, data, working, coef_init=None):
    """The penalized fit of ``plan`` on ``data`` (from ``coef_init``, else
    zero), its steps on a working set of terms first: ``working`` (term
    indices), the terms ``coef_init`` uses and, from weights that are not
    all zero, the terms a step from them would move off zero. The others
    are held at zero (excluded: the epochs read the working set's codes
    alone) until the fit settles; then a step from the settled weights on
    all the data tells which held terms would enter (the group penalty's
    optimality condition, on the fit's own step: levels included), and the
    fit goes on with them from where it was, until no held term would
    move. The result is a fit of the whole model: every held term would
    stay at zero at its weights.

    A penalized fit keeps a few of its terms, and a path on a sample of the
    queries tells which: from zero, the first steps move almost every term
    at the strengths such a path chooses, and an epoch reads the codes of
    every term that has moved or may. Given such terms (a choice fitted
    again on all rows), a round on levels bounds its steps over its working
    set (:func:`level_steps`' ``moving``), not in passes over every column."""
    model = start(plan, data)
    terms = model.term_features()
    groups = np.asarray(model.groups(), dtype=np.int64)
    user = excluded(plan.features, model)
    user = np.zeros(len(terms), dtype=bool) if user is None else user
    w = np.zeros(len(model.coef)) if coef_init is None else np.array(coef_init, dtype=np.float64)
    work = np.isin(np.arange(len(terms)), np.asarray(working, dtype=np.int64)) | _used(w, groups)
    if w.any():
        work |= entering(plan, data, model, w, groups)
    work, rounds = work & ~user, []
    own = len(working) > 0 and takes_levels(plan, in_memory=True, n_rows=data.n_rows)
    while True:
        held = ~work | user
        screen = plan.but(exclude=[terms[g] for g in np.flatnonzero(held)]) if (
            held & ~user).any() else plan
        result = (_fit_at(screen, None, data, None, None, w, moving=work & ~user) if own
                  else fit(screen, data, coef_init=w))
        rounds.append(result)
        w = result.model.coef
        moving = entering(plan, data, model, w, groups, rate=result.learning_rate) & ~work
        if held.sum() == user.sum() or not moving.any():
            break
        work |= moving
    history = {name: [value for r in rounds for value in r.history.get(name, [])]
               for name in result.history}
    return replace(result, n_iter=sum(r.n_iter for r in rounds), history=history)


def _used(w, groups):
    """Whether each group of ``w``'s weights has one that is not zero."""
    return np.array([bool(np.any(w[lo:hi])) for lo, hi in zip(groups[:-1], groups[1:])],
                    dtype=bool)


def entering(plan, data, model, w, groups, rate=None):
    """The groups of weights that one of ``plan``'s steps from ``w`` (all
    of ``data``'s queries, at step size ``rate``: else the plan's rule)
    leaves with a weight off zero, among those at zero."""
    source = InMemory(data, None)
    levels = level_steps(plan, source, model, rate=rate)
    if levels is not None:
        rate, levels = levels
    elif rate is None and plan.rule:
        rate = rate_from_parts(source.curvature_parts(plan, model))
    solver = laid_out(plan, model, rate)
    if levels is not None:
        solver = replace(solver, levels=levels)
    _, grad = plan.solver.objective.loss_and_gradient(data, w, view=model.view,
                                                      scale=model.training_scale())
    state = SolverState(w.copy())
    solver.step(state, grad / max(data.n_queries, 1))
    return _used(state.w, groups) & ~_used(w, groups)


def refit_kept(plan, penalized, data, validation=None):
    """A fit from ``penalized``'s weights on the terms it keeps (features,
    and pairs), without ``l1`` or ``l1_group``, the others excluded (the
    relaxed fit; the same training data). With ``learning_rate="curvature"``
    its step is 2 over the curvature of the kept weights alone, or for an
    additive model in memory the same steps on levels as the penalized fit;
    otherwise it keeps the penalized fit's step."""
    model = penalized.model
    return _on_terms(plan, model, model.selected_terms(), data, validation,
                     penalized.learning_rate, coef_init=model.coef)


def refit_terms(plan, data, kept, validation=None):
    """The relaxed fit of ``plan`` on ``data``, from zero, on the terms
    ``kept`` (indices of the kind's ``term_features``, as a model of the
    same kind and pairs fitted on a sample of these queries keeps them):
    the relaxed choice of a path walked on a sample, fitted again on all
    rows without a penalized fit there that would only choose the terms
    again. On levels, its step is bounded over the kept terms' levels
    alone, as off levels its trace is over their weights."""
    return _on_terms(plan, start(plan, data), kept, data, validation, KEEP, own_bound=True)


def _on_terms(plan, model, kept, data, validation, rate, coef_init=None, own_bound=False):
    """A fit without ``l1`` or ``l1_group`` of the terms ``kept`` of
    ``model`` (the plan's model on ``data``), the others excluded, at step
    ``rate`` (:data:`KEEP`: the plan's) unless the plan's rule sets one;
    with ``own_bound``, on levels, the bound of its level steps over the
    kept terms alone (:func:`level_steps`' ``moving``)."""
    terms = model.term_features()
    held = np.ones(len(terms), dtype=bool)
    held[np.asarray(kept, dtype=np.int64)] = False
    levels = takes_levels(plan, in_memory=True, n_rows=data.n_rows)
    if levels:
        rate = KEEP  # steps on levels again, by the rule
    elif plan.rule == "curvature":
        rate = curvature_rate(plan, data, model, support=~held,
                              otherwise=AUTO_DEFAULT if rate is KEEP else rate)
    refit = plan.but(relax=False, l1=0.0, l1_group=0.0, learning_rate=rate,
                     exclude=[terms[g] for g in np.flatnonzero(held)])
    if levels and own_bound:
        return replace(_fit_at(refit, None, data, validation, None, coef_init, moving=~held),
                       params=refit.params)
    return fit(refit, data, validation, coef_init=coef_init)
