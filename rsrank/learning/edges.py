"""The edges of a regularization path: the smallest strength of each
penalty at which a plan keeps every weight at zero, on its training data
(the path's strengths are fractions of it, :mod:`rsrank.learning.path`)."""

from .fitting import start
from .feature_keys import penalty_layout

__all__ = ["l1_edge", "group_edge", "EDGES", "edge"]


def l1_edge(plan, data, source=None):
    """The smallest ``l1`` at which the plan keeps every weight at zero, in
    the units of the model's weights: on a :class:`QueryData`, or on an
    iterable of them (blocks of a stream, whose column moments ``source``
    holds)."""
    model = start(plan, data if source is None else source)
    weights = penalty_layout(plan.features, model)[2]
    return plan.solver.objective.l1_max(data, view=model.view,
                                        scale=model.training_scale(), weight_factors=weights)


def group_edge(plan, data):
    """The smallest ``l1_group`` at which the plan (without ``l1``) keeps
    every weight at zero."""
    model = start(plan, data)
    groups, factors, _ = penalty_layout(plan.features, model)
    return plan.solver.objective.group_max(data, groups, factors, view=model.view,
                                           scale=model.training_scale())


#: the edge of each penalty a path walks
EDGES = {"l1": l1_edge, "l1_group": group_edge}


def edge(plan, data, strength=None):
    """The edge of the path of ``strength`` (default: the kind's)."""
    return EDGES[strength or plan.kind.strength](plan, data)
