"""Fits on data that comes in blocks of whole queries: :func:`fit_stream`
(``fit_chunks``: every epoch reads the blocks again) and :func:`partial_fit`
(one pass over one block, going on from the last). Both are the one fit
assembly, :func:`~rsrank.learning.fitting.fit_source`, on a source of their
own (:class:`Blocks`, :class:`OneEpoch`); :class:`Stream` is the data source a
model starts from when its rows are never in memory at once."""

import functools
from dataclasses import replace

from sklearn.utils import check_random_state

from .fitting import InMemory, curvature_rate, fit_source, part_curvature, start
from .solver import Fit, finite_check

__all__ = ["Stream", "Blocks", "OneEpoch", "fit_stream", "partial_fit", "refuse_relax"]


class OneEpoch(InMemory):
    """One block of queries in memory, one pass over them (``partial_fit``):
    the steps go on from the state as it is; with ``average`` the model is
    the running mean of the iterates, one more per pass."""

    def run(self, solver, state, model, validation, monitoring, advice):
        solver.epoch(self.data, state, solver.query_order(self.n_queries, self.rng),
                     view=model.view, scale=model.training_scale(),
                     work=solver.new_work(self.data, model.view))
        finite_check(advice)(state)
        if solver.average:  # the steps go on from the last iterate; the model is their mean
            state.n_averaged += 1
            coef = model.coef + (state.w - model.coef) / state.n_averaged
        else:
            coef = state.w.copy()
        return Fit(coef, 1, None)


class Blocks:
    """Training data read in blocks of whole queries, every epoch
    (``blocks()`` gives one epoch's :class:`QueryData`, ``first`` is the
    first of them, ``moments()`` the column moments of all)."""

    fingerprint = None

    def __init__(self, plan, first, blocks, moments, method, warm=None):
        self.blocks, self.n_queries = blocks, None
        self.data_source = Stream(first, moments, method)
        self.moments_known = warm is None
        self.rng = check_random_state(plan.run.random_state)

    def curvature_parts(self, plan, model):
        return (part_curvature(plan, block, model) for block in self.blocks())

    def run(self, solver, state, model, validation, monitoring, advice):
        result, self.n_queries = solver.fit_blocks(
            self.blocks, state, self.rng, view=model.view, scale=model.training_scale(),
            validation=validation, monitoring=monitoring, advice=advice)
        return result


class Stream:
    """A data source for :meth:`~rsrank.learning.kinds.Kind.start` read in blocks of
    whole queries: its column moments take one pass; its rows are never in
    memory at once."""

    rows_in_memory = False

    def __init__(self, first, moments, method):
        self._moments, self.method, self.n_features = moments, method, first.n_features
        self.feature_names, self.names_from_columns = (first.feature_names,
                                                       first.names_from_columns)

    @property
    def sums(self):
        return self._moments()[:3]

    @property
    def moments(self):
        return self._moments()

    def step_encoding(self, max_bins):
        raise ValueError("additive models fit their thresholds on training data in memory: "
                         f"use fit, not {self.method}")

    def pair_encoding(self, max_bins, pairs, pair_bins):
        self.step_encoding(max_bins)


def refuse_relax(plan, method):
    if plan.relaxed:
        raise ValueError(f"relax refits on the training data in memory: use fit, not "
                         f"{method}, or set relax=False")


def fit_stream(plan, first, blocks, moments, validation=None, *, warm=None, coef_init=None):
    """Epochs over blocks of whole queries (``blocks()`` gives one epoch's
    :class:`QueryData`, ``first`` is the first of them, ``moments()`` the
    column moments of all, None with ``warm``): :func:`fit_source` on
    :class:`Blocks`. A step rule takes the curvature of all the blocks
    (``"auto"`` too: choosing on vali would take a stream pass per step)."""
    refuse_relax(plan, "fit_chunks")
    if plan.solver.early_stopping and validation is None:
        raise ValueError("fit_chunks with early_stopping needs an eval_set (no queries "
                         "can be held out of a stream)")
    moments = functools.cache(moments)  # one pass, for the scaling and any advice
    return fit_source(plan, Blocks(plan, first, blocks, moments, "fit_chunks", warm),
                      validation, warm=warm, coef_init=coef_init)


def partial_fit(plan, data, previous, rng):
    """One pass over ``data``'s queries from ``previous`` (a :class:`Fitted`,
    or None: the first block fixes the model's scaling, or an additive
    model's thresholds and pairs, and with ``learning_rate="curvature"``
    or ``"auto"`` the step size, from its curvature), through
    :func:`fit_source` (:class:`OneEpoch`). A rule's step goes on at the one
    ``previous`` took (for a fit with ``"auto"``: the one it chose on
    validation); the steps go on from ``previous``'s state, which the pass
    updates in place."""
    refuse_relax(plan, "partial_fit")
    if previous is None:
        rate = curvature_rate(plan, data, start(plan, data)) if plan.rule else None
        return fit_source(plan, OneEpoch(data, rng), rate=rate)
    rate = previous.learning_rate if plan.rule and previous.learning_rate else None
    result = fit_source(plan, OneEpoch(data, rng), warm=previous, rate=rate,
                        state=previous.state)
    return replace(previous, model=result.model, n_iter=previous.n_iter + 1)
