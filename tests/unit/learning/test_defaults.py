"""rsrank.learning.defaults: the plain values the command line shows are
the ones the estimator, the kinds and the recipe run with."""

import inspect

import numpy as np

from rsrank import RSRank
from rsrank.learning import defaults, kinds, penalty, preprocessing, recipe


def test_the_estimators_defaults_are_the_declared_ones():
    signature = inspect.signature(RSRank).parameters
    assert signature["normalize"].default == defaults.DEFAULT_NORMALIZE
    assert signature["l1_method"].default == defaults.DEFAULT_L1_METHOD
    assert signature["max_iter"].default == defaults.DEFAULT_MAX_ITER
    assert signature["max_bins"].default == defaults.DEFAULT_MAX_BINS
    assert signature["interaction_bins"].default == defaults.DEFAULT_INTERACTION_BINS
    assert defaults.DEFAULT_NORMALIZE in defaults.NORMALIZERS
    assert defaults.DEFAULT_L1_METHOD in defaults.L1_METHODS
    # each name is one object, wherever it is imported from
    assert penalty.L1_METHODS is defaults.L1_METHODS
    assert preprocessing.NORMALIZERS is defaults.NORMALIZERS


def test_every_kinds_path_takes_the_declared_epochs():
    assert {kind.path_epochs for kind in kinds.KINDS.values()} == {defaults.PATH_EPOCHS}
    assert recipe.PATH_EPOCHS == recipe.PATH_EPOCHS_ADDITIVE == defaults.PATH_EPOCHS


def test_the_grids_are_log_spaced_as_numpy_spaces_them():
    """Computed without NumPy, the grids are those of ``np.geomspace`` to
    three significant digits, from strong to weak, 0 last."""
    three = [float(f"{r:.3g}") for r in np.geomspace(1.0, 1e-3, 10)[1:]]
    assert defaults.DEFAULT_L1_RATIO == three + [0.0]
    six = [float(f"{r:.3g}") for r in np.geomspace(1.0, 0.1, 7)[1:]]
    assert defaults.SPARSE_L1_RATIO == six + [r for r in three if r < 0.1] + [0.0]
    for grid in (defaults.DEFAULT_L1_RATIO, defaults.SPARSE_L1_RATIO):
        assert grid == sorted(grid, reverse=True) and len(set(grid)) == len(grid)
