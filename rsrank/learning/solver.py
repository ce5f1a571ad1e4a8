"""The solver: epochs of gradient steps with their schedule, averaging,
early stopping, history and diagnostics.

:class:`Solver` knows how to take one epoch over a
:class:`~rsrank.reading.querydata.QueryData` (:meth:`Solver.epoch`, the numba epoch
kernel) and one step from a gradient summed elsewhere (:meth:`Solver.step`,
the same kernel step, for Dask); :meth:`Solver.run` is the loop around any
epoch: it keeps the per-epoch history, the running mean of the iterates,
the best validation epoch and the early stopping, and warns once when the
loss diverges.
"""

import time
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .. import _kernels
from ._compile import choose, settle
from ._threads import numba_threads, threads
from ..evaluation.metrics import CONVENTIONS, discount_values, gain_values, nanmean, ndcg_per_query
from .model import linear_scores
from .objective import Objective, check_weights, workspace, workspace_fits
from .penalty import L1Penalty, check_number

__all__ = ["Solver", "SolverState", "Monitoring", "DivergenceWarning", "NDCGMonitor",
           "DIVERGED", "finite_check", "scale_advice", "SCALE_SPREAD"]

#: How many times the all-zero model's loss (or the lowest loss so far) the
#: training loss must reach for the divergence warning.
DIVERGED = 100


class DivergenceWarning(ConvergenceWarning):
    """The training loss keeps rising: features on very different scales, or
    a learning rate too large for them."""


@dataclass
class SolverState:
    """What carries from step to step and from fit to fit.

    Attributes
    ----------
    w : ndarray
        The iterate the steps go on from.
    t : int
        Gradient steps taken (drives the step size and the penalty period).
    l1_state : ndarray
        The cumulative penalty's record (see :class:`~rsrank.learning.penalty.L1Penalty`).
    n_averaged : int
        Iterates in the running mean (``average=True``).
    """

    w: np.ndarray
    t: int = 0
    l1_state: np.ndarray = None
    n_averaged: int = 0

    def __post_init__(self):
        if self.l1_state is None:
            self.l1_state = L1Penalty.new_state(self.w.shape[0])


@dataclass
class Fit:
    """What :meth:`Solver.run` returns: the model's weights, the epochs run,
    the epoch kept (1-based, None without validation) and the history."""

    coef: np.ndarray
    n_iter: int
    best_iteration: object
    history: dict = field(default_factory=dict)


class NDCGMonitor:
    """Mean NDCG@k (weighted by the queries' weights, when the data has
    them) of weights on a :class:`~rsrank.reading.querydata.QueryData`,
    for the per-epoch bookkeeping: the convention's gains and ideal DCG are
    made once per data, and the top ``k`` of each query is found by a
    kernel (ties in row order). Conventions that break ties otherwise go
    through :func:`rsrank.evaluation.metrics.ndcg_per_query`."""

    def __init__(self, data, k, convention, *, view="none", scale=None, n_jobs=None):
        self.data, self.k, self.convention, self.n_jobs = data, k, convention, n_jobs
        self.rows = data.rows(view)
        self.scale = np.zeros(0) if scale is None else np.asarray(scale, dtype=np.float64)
        settings = CONVENTIONS[convention]
        self.kernel_ready = (settings["ties"] == "stable"
                             and isinstance(settings["empty"], (int, float)))
        if self.kernel_ready:
            def make():
                gains = gain_values(data.y, settings["gain"])
                discount = discount_values(np.arange(1, k + 1), settings["discount"])
                return gains, discount, _kernels.ideal_dcg(gains, data.offsets, discount)
            self.gains, self.discount, self.ideal = data.memo(("ndcg", convention, k), make)
            self.empty = float(settings["empty"])
            self.short_zero = (data.short_list or settings["short_list"]) == "zero"

    def scores(self, w):
        """Scores of the stored rows at ``w``."""
        return linear_scores(self.rows, _kernels.scaled_weights(
            np.ascontiguousarray(w, dtype=np.float64), self.scale,
            np.zeros(len(w))), self.n_jobs)

    def __call__(self, w):
        scores = self.scores(w)
        if not self.kernel_ready:
            return nanmean(ndcg_per_query(self.data.y, scores, self.data.groups, self.k,
                                          convention=self.convention,
                                          short_list=self.data.short_list),
                           self.data.query_weights)
        out = np.empty(self.data.n_queries)
        if len(out) == 0:
            return float("nan")
        n = threads(self.n_jobs)
        args = (scores, self.gains, self.data.offsets, self.discount, self.k, self.ideal,
                self.empty, self.short_zero, out)
        with numba_threads(n):
            choose(_kernels.ndcg_at_serial, _kernels.ndcg_at_parallel, n, args)(*args)
        return nanmean(out, self.data.query_weights)


#: Features whose ranges differ by more than this factor are named as the
#: cause of a divergence when the model does not scale them
SCALE_SPREAD = 100.0


def scale_advice(moments, names, normalize, learning_rate):
    """What to do when training diverges, by the cause that applies: with
    ``normalize="none"`` and feature ranges (the column ``moments`` of the
    training data, None when unknown) more than :data:`SCALE_SPREAD` apart,
    the widest features and scaling; otherwise the step size itself."""
    step = (f"take a step from the data (learning_rate='curvature', or 'auto' with an "
            f"eval_set) or lower learning_rate (now {learning_rate:g})")
    if normalize != "none" or moments is None or not len(moments[3]):
        return f". Fix: {step}"
    low, high = moments[3], moments[4]
    width = np.where(np.isfinite(high - low), high - low, 0.0)
    if width.max(initial=0.0) <= SCALE_SPREAD * max(np.median(width[width > 0]) if np.any(
            width > 0) else 0.0, np.finfo(float).tiny):
        return f"; the features' ranges are alike, so the step is too long. Fix: {step}"
    widest = np.argsort(-width, kind="stable")[:3]
    label = (lambda j: names[j]) if names is not None else (lambda j: f"f{j + 1}")
    listed = ", ".join(f"{label(j)} in [{low[j]:.3g}, {high[j]:.3g}]" for j in widest)
    return (f"; widest features: {listed}. Fix: scale the features (normalize='zscore', "
            f"rsrank train --normalize zscore) or {step}")


def finite_check(advice):
    """A check that the iterate is finite, whose error ends with ``advice()``."""
    def check(state):
        if not np.all(np.isfinite(state.w)):
            raise ValueError(f"the weights became non-finite (NaN or inf) at step {state.t}: "
                             f"training diverged{advice()}")
    return check


@dataclass(frozen=True)
class Monitoring:
    """What a fit records after every epoch: NDCG@``k`` with ``convention``
    on the validation queries, and on the training queries too when
    ``train`` (one sort of every query)."""

    k: int = 10
    convention: str = "standard"
    train: bool = True

    def on(self, data, view, scale, n_jobs):
        """The :class:`NDCGMonitor` of ``data`` (None for no data)."""
        if data is None:
            return None
        return NDCGMonitor(data, self.k, self.convention, view=view, scale=scale,
                           n_jobs=n_jobs)


class DivergenceWatch:
    """Warn once when training diverges: the mean loss is a hundred times
    that of the all-zero model (pairs misordered by margins of tens of
    units), or, where that loss is unknown (``reference=None``), it rose for
    three epochs in a row to a hundred times its lowest value. ``reference``
    may also be a function of the losses so far, called once, when the
    second epoch's loss arrives (the first comparison). Gradient steps
    then overshoot, almost always because the features' scales differ by
    orders of magnitude, and the weights are on their way to overflow.

    Lesser swings are left alone: with full-batch steps the loss of scaled
    features can rise twenty-fold for a few epochs while the validation NDCG
    still improves (OHSUMED with the defaults), and a smaller learning rate
    there ranks worse. ``advice()`` gives the text that follows the cause."""

    def __init__(self, reference, advice):
        self.reference, self.advice, self.warned = reference, advice, False
        self.lowest, self.seen = None, 0

    def __call__(self, losses):
        # min(losses) kept up to date as they arrive (taken anew every epoch,
        # it made a long fit's watch quadratic in its epochs), with min()'s
        # own comparisons: the first loss, then any one below
        for value in losses[self.seen:]:
            if self.lowest is None or value < self.lowest:
                self.lowest = value
        self.seen = len(losses)
        if self.warned or len(losses) < 2:
            return
        if callable(self.reference):
            self.reference = self.reference(losses)
        last = losses[-4:]
        rising = len(last) == 4 and all(b > a for a, b in zip(last, last[1:]))
        lowest = self.lowest
        if self.reference and losses[-1] > DIVERGED * self.reference:
            cause = (f"the training loss is {losses[-1]:.4g} after {len(losses)} epochs, "
                     f"{losses[-1] / self.reference:.0f} times that of the all-zero model")
        elif not self.reference and rising and losses[-1] > DIVERGED * lowest and losses[-1] > 0:
            cause = (f"the training loss rose from {lowest:.4g} to {losses[-1]:.4g} over "
                     f"{len(losses)} epochs")
        else:
            return
        self.warned = True
        warnings.warn(f"{cause}: training is diverging{self.advice()}", DivergenceWarning,
                      stacklevel=5)


@dataclass(frozen=True)
class Solver:
    """Gradient steps on an :class:`~rsrank.learning.objective.Objective` with an
    :class:`~rsrank.learning.penalty.L1Penalty`.

    The options are :class:`~rsrank.RSRank`'s of the same names:
    ``learning_rate``, ``power_t``, ``batch_size`` (None: one step per epoch
    on all queries), ``shuffle``, ``average``, ``max_iter``,
    ``early_stopping``, ``n_iter_no_change``, ``tol``, ``restore_best``,
    ``n_jobs``, ``verbose`` and ``weight_tol``.
    """

    objective: Objective
    penalty: L1Penalty
    learning_rate: float = 1e-2
    power_t: float = 0.0
    batch_size: object = None
    shuffle: bool = True
    average: bool = False
    max_iter: int = 100
    early_stopping: bool = False
    n_iter_no_change: int = 10
    tol: float = 1e-4
    restore_best: bool = True
    n_jobs: object = None
    verbose: int = 0
    weight_tol: object = None
    momentum: bool = False
    #: ``(bins, levels)``: steps on the levels of coded columns
    #: (:func:`rsrank._kernels.level_moves`), or None: on the weights
    levels: object = None
    #: epochs without a new lowest training loss after which a fit stops
    #: (from epoch ``settle_after`` on), or None: a loss whose pair weights
    #: follow the ranking keeps moving where its weights no longer settle
    loss_patience: object = None

    def __post_init__(self):
        check_number("learning_rate", self.learning_rate, 0, strict=True)
        check_number("power_t", self.power_t, 0)
        check_number("max_iter", self.max_iter, 1, integer=True)
        check_number("batch_size", self.batch_size, 1, integer=True, allow_none=True)
        check_number("n_iter_no_change", self.n_iter_no_change, 1, integer=True)
        check_number("tol", self.tol, -np.inf)
        check_number("weight_tol", self.weight_tol, 0, allow_none=True)
        if not isinstance(self.average, (bool, np.bool_)):
            raise ValueError(f"average must be True or False, got {self.average!r}")
        if self.n_jobs is not None and self.n_jobs != "auto" and (
                not isinstance(self.n_jobs, (int, np.integer))
                or isinstance(self.n_jobs, bool) or self.n_jobs == 0):
            raise ValueError(f"n_jobs must be a non-zero integer, 'auto' or None, got "
                             f"{self.n_jobs!r}")

    def for_work(self, work=None):
        """This solver with ``n_jobs="auto"`` settled into a thread count for
        ``work`` stored values (see :func:`rsrank.learning._threads.threads`), once
        per fit rather than every epoch."""
        if isinstance(self.n_jobs, str):
            return replace(self, n_jobs=threads(self.n_jobs, work))
        return self

    @property
    def steps(self):
        """The :class:`~rsrank._kernels.Steps` record of the schedule and
        penalty."""
        penalty = self.penalty
        return _kernels.Steps(float(self.learning_rate), float(self.power_t), float(penalty.l1),
                              int(penalty.period), float(penalty.threshold), penalty.cumulative,
                              float(penalty.group), penalty.groups, penalty.group_factors,
                              penalty.weight_factors, penalty.signs, penalty.monotone_blocks,
                              *(() if self.levels is None else self.levels))

    def new_work(self, data, view="none"):
        """Scratch arrays for the epochs of one fit on ``data`` (they keep
        each query's last ranking from epoch to epoch)."""
        return workspace(data, threads(self.n_jobs), view)

    @property
    def shuffles(self):
        """Whether each epoch visits the queries in a new order: with
        ``shuffle`` and batches. Full-batch steps sum over all the queries,
        which an order changes only by rounding, and read X front to back
        in the stored order."""
        return self.shuffle and self.batch_size is not None

    def query_order(self, n_queries, rng):
        """The order of an epoch's queries: a new permutation from ``rng``
        when it :attr:`shuffles`, else as stored."""
        return rng.permutation(n_queries) if self.shuffles else np.arange(n_queries)

    def epoch(self, data, state, query_order, *, view="none", scale=None, work=None,
              kernels=None):
        """One pass over ``data``'s queries in ``query_order``, stepping
        ``state``; returns the mean per-query loss. ``work``: the
        :func:`~rsrank.learning.objective.workspace` kept across the epochs of a fit
        (it holds each query's last ranking); ``kernels``: a dict keeping
        the epoch kernel's build across them (:func:`rsrank.learning._compile.choose`)."""
        return self.epochs(data, state, view=view, scale=scale, work=work,
                           kernels=kernels)(query_order)

    def epochs(self, data, state, *, view="none", scale=None, work=None, kernels=None):
        """:meth:`epoch` as a function of ``query_order`` alone, its checks
        and arguments made once: a fit's epochs on the same data and state
        (on a small query set the per-epoch work in Python cost a quarter
        of the epoch)."""
        n = threads(self.n_jobs)
        if work is None:
            work = workspace(data, n, view)
        rows = data.rows(view)
        check_weights(data, view, state.w)
        if not workspace_fits(work, rows, len(state.w)):
            raise ValueError("the workspace was made for other rows: make it with new_work(data, "
                             "view) of the same view")
        batch = max(data.n_queries if self.batch_size is None else self.batch_size, 1)
        scale = np.zeros(0) if scale is None else np.ascontiguousarray(scale, dtype=np.float64)
        fixed = (_kernels.moving_rows(rows, self.steps, state.w), self.objective.pairs(data),
                 self.steps, scale)
        kernels = {} if kernels is None else kernels

        def run(query_order):
            args = fixed + (np.ascontiguousarray(query_order, dtype=np.int64), batch, state.w,
                            state.l1_state, int(state.t), work)
            if "epoch" not in kernels:
                settle()
                kernels["epoch"] = choose(*_kernels.epoch_kernels(rows), n, args)
            with numba_threads(n):
                total, state.t = kernels["epoch"](*args)
            return total / max(len(query_order), 1)
        return run

    def accelerated(self, epoch, state):
        """``epoch`` (one full-batch step of ``state``) with Nesterov's
        momentum when ``momentum`` is on and the steps are full batches of
        plain iterates (no ``batch_size``, no ``average``); else ``epoch``."""
        if self.takes_momentum:
            return _accelerated(epoch, state)
        return epoch

    @property
    def takes_momentum(self):
        """Whether :meth:`accelerated` adds momentum to this solver's epochs."""
        return self.momentum and self.batch_size is None and not self.average

    def step(self, state, grad):
        """One step from ``grad``, the batch's mean gradient with respect to
        the weights (as :meth:`~rsrank.learning.objective.Objective.loss_and_gradient`
        gives it, scaling included), with the penalty: the step of
        :meth:`epoch`, for a gradient summed elsewhere."""
        state.t = _kernels.take_step(state.w, np.ascontiguousarray(grad, dtype=np.float64)[None],
                                     1, np.zeros(0), self.steps, state.l1_state, int(state.t))

    def mix(self, state, w):
        """The step of iterative parameter mixing: the mixed weights ``w``
        become the iterate, and one period's truncation (``learning_rate *
        truncation_period * l1``) and group shrinkage make them sparse
        again."""
        state.w[:] = w
        state.t += 1
        penalty, period = self.penalty, self.learning_rate * self.penalty.period
        if penalty.l1 > 0:
            _kernels.truncate(state.w, period * penalty.l1, penalty.threshold,
                              penalty.weight_factors)
        if penalty.group > 0 and len(penalty.groups):
            _kernels.group_shrink(state.w, penalty.groups, penalty.group_factors,
                                  period * penalty.group)

    def fit(self, train, state, rng, *, view="none", scale=None, validation=None,
            monitoring=Monitoring(), advice=lambda: ""):
        """Epochs over ``train`` (a :class:`~rsrank.reading.querydata.QueryData`)
        from ``state``, with validation on ``validation``; returns the
        :class:`Fit` of :meth:`run`. ``advice()`` ends the divergence
        warning and error.

        The divergence watch compares with the all-zero model's loss: full
        batch steps from zero weights compute it as their first epoch's loss,
        other settings ask the objective for it when the watch first looks.
        """
        if isinstance(self.n_jobs, str):
            return self.for_work(train.n_stored).fit(
                train, state, rng, view=view, scale=scale, validation=validation,
                monitoring=monitoring, advice=advice)
        work, kernels = self.new_work(train, view), {}
        self.objective.pairs(train)  # per-row gains and levels: setup, not the first epoch
        if self.batch_size is None and not state.w.any():
            reference = lambda losses: losses[0]  # noqa: E731
        else:
            reference = lambda losses: self.objective.zero_model_loss(train, view)  # noqa: E731

        step = self.epochs(train, state, view=view, scale=scale, work=work, kernels=kernels)
        ordered = None if self.shuffles else self.query_order(train.n_queries, rng)

        def epoch():
            return step(self.query_order(train.n_queries, rng) if ordered is None else ordered)
        with numba_threads(threads(self.n_jobs)):  # held for every epoch and evaluation
            return self.run(
                self.accelerated(epoch, state),
                state, validation=monitoring.on(validation, view, scale, self.n_jobs),
                train_ndcg=monitoring.on(train if monitoring.train else None, view, scale,
                                         self.n_jobs),
                watch=DivergenceWatch(reference, advice), check=finite_check(advice),
                settle_after=SETTLE_AFTER if self.takes_momentum else 1)

    def fit_blocks(self, blocks, state, rng, *, view="none", scale=None, validation=None,
                   monitoring=Monitoring(), advice=lambda: ""):
        """Epochs over a stream: ``blocks()`` gives one epoch's
        :class:`~rsrank.reading.querydata.QueryData` blocks of whole queries, in
        order (queries shuffled within a block). No training NDCG (it would
        take another pass). The first epoch also sums each block's all-zero
        model loss (from the labels only) for the divergence watch. Returns
        ``(Fit, queries in an epoch)``."""
        if isinstance(self.n_jobs, str):
            return self.for_work().fit_blocks(blocks, state, rng, view=view,
                                              scale=scale, validation=validation,
                                              monitoring=monitoring, advice=advice)
        seen = {"queries": 0, "zero_loss": 0.0, "epochs": 0}

        def epoch():
            total, n_queries = 0.0, 0
            for data in blocks():
                if not seen["epochs"]:
                    seen["zero_loss"] += self.objective.zero_model_loss(data) * data.n_queries
                order = self.query_order(data.n_queries, rng)
                total += self.epoch(data, state, order, view=view,
                                    scale=scale) * data.n_queries
                n_queries += data.n_queries
            seen["queries"], seen["epochs"] = n_queries, seen["epochs"] + 1
            return total / max(n_queries, 1)

        reference = lambda losses: seen["zero_loss"] / max(seen["queries"], 1)  # noqa: E731
        fit = self.run(epoch, state, validation=monitoring.on(validation, view, scale,
                                                              self.n_jobs),
                       watch=DivergenceWatch(reference, advice), check=finite_check(advice))
        return fit, seen["queries"]

    def run(self, epoch, state, *, train_ndcg=None, validation=None, watch=None,
            check=None, settle_after=1):
        """The epoch loop: ``epoch()`` steps ``state`` once over the training
        queries and returns the mean loss; ``train_ndcg(w)`` and
        ``validation(w)`` give NDCG of a model (None: not recorded);
        ``watch(losses)`` looks for divergence; ``check(state)`` runs after
        every epoch (the finiteness check).

        With ``average`` the model is the running mean of the epochs'
        iterates (validation, early stopping and the kept epoch use it) and
        the steps go on from the last iterate. With validation, the epoch of
        the best validation NDCG is kept (``restore_best``) and training
        stops when it has not improved by ``tol`` for ``n_iter_no_change``
        epochs (``early_stopping``). With ``weight_tol``, training stops
        after the first epoch from epoch ``settle_after`` on in which no
        weight of the model moved by more than ``weight_tol`` times its
        largest weight (at once when the model stays all-zero)."""
        history = {"loss": [], "train_ndcg": [], "val_ndcg": [], "n_nonzero": [],
                   "seconds": []}
        w = state.w
        best_score, best_w, best_epoch, stale = -np.inf, w.copy(), None, 0
        lowest, since = np.inf, 0
        model = w.copy() if self.average else w
        previous = model.copy() if self.weight_tol is not None else None
        bar = _progress(range(1, self.max_iter + 1), self.verbose)
        for n_epoch in bar:
            start = time.perf_counter()
            loss = epoch()
            if check is not None:
                check(state)
            if self.average:
                model += (w - model) / n_epoch
            history["seconds"].append(time.perf_counter() - start)
            history["loss"].append(loss)
            if watch is not None:
                watch(history["loss"])
            history["n_nonzero"].append(int(np.count_nonzero(model)))
            train_value = train_ndcg(model) if train_ndcg is not None else float("nan")
            history["train_ndcg"].append(train_value)
            status = {"loss": loss}
            if not np.isnan(train_value):
                status[f"ndcg@{getattr(train_ndcg, 'k', '')}"] = train_value
            if validation is not None:
                value = validation(model)
                history["val_ndcg"].append(value)
                status[f"val@{getattr(validation, 'k', '')}"] = value
                stale = 0 if value > best_score + self.tol else stale + 1
                if value > best_score:
                    best_score, best_w, best_epoch = value, model.copy(), n_epoch
                if self.early_stopping and stale >= self.n_iter_no_change:
                    _set_postfix(bar, status)
                    break
            _set_postfix(bar, status)
            if self.loss_patience is not None:
                lowest, since = (loss, 0) if loss < lowest else (lowest, since + 1)
                if n_epoch >= settle_after and since >= self.loss_patience:
                    break
            if previous is not None:
                if n_epoch >= settle_after and _settled(previous, model, self.weight_tol):
                    break
                previous[:] = model
        state.n_averaged = n_epoch if self.average else 0
        if validation is not None and self.restore_best:
            model = best_w
        return Fit(model, n_epoch, best_epoch, history)


#: With momentum, the first epoch whose move may end a fit by ``weight_tol``.
#: The first steps are plain while the momentum builds up (by the 20th the
#: push is about 0.86 of the last move), and a fit that starts from the
#: previous point of a path moves little at first because its step is
#: small, not because it has settled: tested from its first epoch, such a
#: fit stopped there at the weak strengths.
SETTLE_AFTER = 20


def _accelerated(epoch, state):
    """``epoch`` (a full-batch proximal gradient step of ``state``) with
    Nesterov's momentum, as FISTA takes it (Beck and Teboulle 2009): each
    step starts from the last iterate pushed further along its last move,
    and the momentum restarts whenever that push points against the step
    taken (the gradient restart of O'Donoghue and Candes 2015), which keeps
    the descent monotone in practice and copes with pair weights that
    change with the ranking. After each epoch ``state.w`` is the iterate
    itself, not the pushed point."""
    memory = {"previous": state.w.copy(), "t": 1.0}

    def step():
        x = state.w.copy()
        t_next = (1.0 + np.sqrt(1.0 + 4.0 * memory["t"] ** 2)) / 2.0
        beta = (memory["t"] - 1.0) / t_next
        y = x + beta * (x - memory["previous"])
        state.w[:] = y
        loss = epoch()
        # restart when the pushed point and the step disagree; summed by NumPy,
        # not BLAS: a threaded BLAS leaves its threads spinning on the cores
        # the next epoch's threads need (an additive epoch at 255 bins on two
        # cores took twice as long, results/additive_speed.md)
        if float(np.multiply(y - state.w, state.w - x).sum()) > 0.0:
            t_next = 1.0
        memory["previous"], memory["t"] = x, t_next
        return loss
    return step


def _settled(before, after, tol):
    """No weight moved from ``before`` to ``after`` by more than ``tol``
    times the largest weight of ``after``."""
    return float(np.max(np.abs(after - before), initial=0.0)) <= tol * float(
        np.max(np.abs(after), initial=0.0))


def _progress(iterable, verbose):
    if not verbose:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, desc="epochs", leave=False)


def _set_postfix(bar, status):
    """The progress bar's figures (formatted only when there is a bar)."""
    if hasattr(bar, "set_postfix"):
        bar.set_postfix({name: f"{value:.4g}" if name == "loss" else f"{value:.4f}"
                         for name, value in status.items()})
