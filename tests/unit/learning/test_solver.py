"""A unit test of rsrank.learning.solver's epoch loop: with ``loss_patience``
a fit stops once that many epochs in a row bring no new lowest loss (from
``settle_after`` on), and without it runs on."""

from dataclasses import replace

import numpy as np

from rsrank import RSRank
from rsrank.learning.fitting import setup
from rsrank.learning.solver import SolverState


def solver(**changes):
    plan = setup(RSRank(max_iter=40, momentum=False).get_params(deep=False))
    return replace(plan.solver, **changes)


def epochs_of(losses):
    feed = iter(losses)
    return lambda: next(feed)


def test_a_fit_stops_after_patience_epochs_without_a_new_low():
    # lowest at epoch 4 (0.5), then 6 epochs above it: stops at epoch 4 + 3
    losses = [3.0, 2.0, 1.0, 0.5, 0.6, 0.55, 0.7, 0.51, 0.52, 0.53] + [0.9] * 30
    fit = solver(loss_patience=3).run(epochs_of(losses), SolverState(np.zeros(2)))
    assert fit.n_iter == 7 and fit.history["loss"] == losses[:7]
    # the patience counts only from settle_after on
    fit = solver(loss_patience=3).run(epochs_of(losses), SolverState(np.zeros(2)),
                                      settle_after=9)
    assert fit.n_iter == 9


def test_without_loss_patience_every_epoch_runs():
    losses = [1.0] + [2.0] * 39
    fit = solver().run(epochs_of(losses), SolverState(np.zeros(2)))
    assert fit.n_iter == 40
