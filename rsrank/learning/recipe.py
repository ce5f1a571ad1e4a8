"""``rsrank train``'s recipe as plain values: the estimator and the grid of a
LETOR run (:func:`rsrank.evaluation.experiments.run_letor_folds`), and the defaults
behind them.

By default every fold walks a regularization path scaled to its data
(strengths as fractions of the edge, :mod:`rsrank.learning.path`) with the step of
the loss's curvature and Nesterov's momentum, each point kept at its
settled last epoch, for both pair weightings; the selection keeps the
sparsest point within 1% of the best vali score (``results/paths.md``). A
training set of more than :data:`PATH_ROWS` rows walks the path on a
sample of its queries and fits the chosen point again on all of them. The kind of model
(:mod:`rsrank.learning.kinds`) says which penalty the path walks, how many epochs a
point may take and whether the points are refit on the features they keep.
"""

import os


from ..estimator import RSRank
from .defaults import (AUTO_BINS, DEFAULT_INTERACTION_BINS, DEFAULT_L1_RATIO, DEFAULT_MAX_BINS,
                       DEFAULT_MAX_ITER, DEFAULT_WITHIN, PATH_MOMENTUM, PATH_PAIR_WEIGHTS,
                       PATH_ROWS, PATH_WEIGHT_TOL, SPARSE_L1_RATIO, SPARSE_VALI_CV,
                       SPARSE_WITHIN)
from .kinds import ADDITIVE, LINEAR

__all__ = ["train_recipe", "DEFAULT_L1_RATIO", "DEFAULT_WITHIN", "PATH_WEIGHT_TOL",
           "SPARSE_WITHIN", "SPARSE_L1_RATIO", "SPARSE_VALI_CV", "vali_folds",
           "PATH_PAIR_WEIGHTS", "PATH_EPOCHS", "PATH_MOMENTUM", "PATH_ROWS", "PATH_EPOCHS_ADDITIVE",
           "fold_threads", "path_estimator"]

#: the epochs of each kind's path (every kind's: :data:`~rsrank.learning.defaults.PATH_EPOCHS`)
PATH_EPOCHS = LINEAR.path_epochs
PATH_EPOCHS_ADDITIVE = ADDITIVE.path_epochs


def _shape(additive, max_bins, interactions, interaction_bins):
    """The parameters that choose the kind and shape its model: bins not
    given are ``"auto"`` for the kinds that have them, settled by each
    training set's rows (:meth:`~rsrank.learning.kinds.ModelSpec.on_rows`)."""
    if max_bins is None:
        max_bins = AUTO_BINS if additive else DEFAULT_MAX_BINS
    if interaction_bins is None:
        interaction_bins = AUTO_BINS if additive and interactions else DEFAULT_INTERACTION_BINS
    return dict(additive=bool(additive), interactions=interactions, max_bins=max_bins,
                interaction_bins=interaction_bins)


def _kind(normalize, shape):
    """The model kind of the options (as the estimator's setup decides it),
    refusing what it cannot take."""
    return RSRank(normalize=normalize, **shape).setup().kind


def _sparse(within):
    return not isinstance(within, str) and within >= SPARSE_WITHIN


def vali_folds(within, vali_cv=None):
    """Folds of the training queries to judge every point on beside vali:
    ``vali_cv`` when given (0: vali alone), else SPARSE_VALI_CV for the
    sparse recipe (``within`` of 3% or more) and none otherwise."""
    if vali_cv is not None:
        return vali_cv or None
    return SPARSE_VALI_CV if _sparse(within) else None


def fold_threads(jobs=1, scheduler=None):
    """Threads per fit: every core for one fold at a time (``"auto"``, by
    the work and the cores other processes leave free); folds in parallel
    processes or on a cluster share the cores out instead."""
    if scheduler or jobs < 1:
        return 1
    if jobs == 1:
        return "auto"
    return max(1, (os.cpu_count() or 1) // jobs)


def train_recipe(*, learning_rate=("curvature",), additive=False, max_bins=None,
                 interactions=0, interaction_bins=None, monotone=None, normalize="zscore", relax=None, max_iter=None, weight_tol=None, patience=None,
                 l1=None, l1_ratio=None, pair_weight=None, ndcg_k=None, discount=None,
                 power_t=None, batch_size=None, truncation_period=None, l1_method="truncated",
                 average=False, feature_costs=None, seed=0, convention="letor", n_jobs=1,
                 verbose=0, within=DEFAULT_WITHIN, with_linear=False, missing=None):
    """``(estimator, grid)`` of ``rsrank train``: its options as keywords
    (None: the recipe's default; the grid options are lists; ``within``
    the selection's rule, whose 3% or more takes the sparse path). A
    parameter the model kind cannot take is refused here, before any
    work. ``with_linear`` (with an additive kind) also walks the linear
    kind's path at the same strengths, pair weightings and steps: the grid
    is then a list of the two, and the selection sees both kinds."""
    shape = _shape(additive, max_bins, interactions, interaction_bins)
    kind = _kind(normalize, shape)
    curvature = list(learning_rate) == ["curvature"]
    params = dict(normalize=normalize, random_state=seed, eval_convention=convention,
                  eval_train=False, verbose=verbose, n_jobs=n_jobs, l1_method=l1_method,
                  average=average, relax=kind.relax if relax is None else relax, **shape,
                  max_iter=max_iter or (kind.path_epochs if curvature else DEFAULT_MAX_ITER))
    if patience is not None:
        params.update(early_stopping=True, n_iter_no_change=patience, tol=0.0)
    if curvature:
        params.update(restore_best=False, weight_tol=PATH_WEIGHT_TOL, momentum=PATH_MOMENTUM)
    if weight_tol is not None:
        params.update(weight_tol=weight_tol or None)
    params.update({name: value for name, value in (
        ("feature_costs", feature_costs), ("monotone", monotone), ("missing", missing))
        if value is not None})
    grid = {"learning_rate": list(learning_rate)}
    if l1 is not None:
        grid["l1"] = l1
    elif l1_ratio is not None:
        grid["l1_ratio"] = l1_ratio
    else:  # the kind's path: weights, or whole features, in or out
        grid[f"{kind.strength}_ratio"] = SPARSE_L1_RATIO if _sparse(within) else DEFAULT_L1_RATIO
    for name, values in (("ndcg_k", ndcg_k), ("discount", discount), ("power_t", power_t),
                         ("batch_size", batch_size), ("truncation_period", truncation_period),
                         ("pair_weight", pair_weight)):
        if values is not None:
            grid[name] = values
    if pair_weight is None and curvature:
        grid["pair_weight"] = PATH_PAIR_WEIGHTS
    if with_linear:
        grid = [grid, _linear_grid(grid, kind, relax)]
    return RSRank(**params), grid


def _linear_grid(grid, kind, relax):
    """The linear kind's path beside ``kind``'s: its grid with the linear
    shape, the strengths of the kind's path as the weights' own."""
    if not kind.additive:
        raise ValueError("with_linear walks the linear kind beside an additive one "
                         "(additive=True; --with-linear with --additive)")
    linear = {"l1_ratio" if name == f"{kind.strength}_ratio" else name: values
              for name, values in grid.items()}
    linear.update(additive=[False], interactions=[0], max_bins=[DEFAULT_MAX_BINS],
                  interaction_bins=[DEFAULT_INTERACTION_BINS],
                  relax=[LINEAR.relax if relax is None else relax])
    return linear


def path_estimator(*, learning_rate="curvature", additive=False, max_bins=None, interactions=0,
                   interaction_bins=None, monotone=None, normalize="zscore", relax=None, max_iter=None, batch_size=None, ndcg_k=None, power_t=None,
                   l1_method="truncated", average=False, feature_costs=None, seed=0,
                   missing=None):
    """The estimator of ``rsrank path``: ``rsrank train``'s recipe at one
    setting (with ``learning_rate="curvature"`` each point at its settled
    end)."""
    shape = _shape(additive, max_bins, interactions, interaction_bins)
    kind = _kind(normalize, shape)
    recipe = {}
    if learning_rate == "curvature":
        recipe = dict(restore_best=False, weight_tol=PATH_WEIGHT_TOL)
        max_iter = max_iter or kind.path_epochs
    return RSRank(learning_rate=learning_rate, max_iter=max_iter or DEFAULT_MAX_ITER,
                  normalize=normalize, batch_size=batch_size, ndcg_k=ndcg_k,
                  random_state=seed, l1_method=l1_method, power_t=power_t or 0.0,
                  average=average, relax=kind.relax if relax is None else relax,
                  feature_costs=feature_costs, monotone=monotone, **shape, **recipe,
                  **({} if missing is None else {"missing": missing}))
