"""The selection rules of a path: the sparsest fit within reach of the
best (:func:`sparsest_within`) inside one kind of model, and the
one-standard-error rule between kinds (:func:`choose_fit`), on the
validation scores and per-query values of each fit."""

import numpy as np

from .defaults import check_within
from .kinds import KINDS

__all__ = ["sparsest_within", "check_within", "choose_fit", "kind_choices", "sparsest_index"]


def sparsest_within(points, within, *, key="vali_score", reference="best"):
    """The selection rule within one kind of model (:func:`choose_fit` goes
    across kinds): the point with the fewest non-zero weights
    among those whose ``key`` is at least ``(1 - within)`` times the
    reference score; ties go to the higher score, then to the earlier point.
    A point without non-zero weights is left out when any other has some:
    it ranks every query in input order, which no search engine has.

    Parameters
    ----------
    points : sequence of mapping
        Each with ``"n_nonzero"`` and ``key``: the grid points of a fold
        (``rsrank train``), or a regularization path. A point with a
        ``"cost"`` (the total cost of its features) is as sparse as that
        cost: the cheapest point within reach is kept.
    within : float in [0, 1) or "1se"
        Relative distance to the reference; 0 keeps the best (or the dense)
        score only. ``"1se"``: the one-standard-error rule of glmnet's
        cross-validation (``lambda.1se``), paired over queries: a point is
        kept when its mean difference from the reference over the queries
        is at most one standard error of that difference below 0; every
        point then needs ``"per_query"``, its values per query (NaN where
        the convention skips a query, for every point alike). The rule
        follows the size of the validation set: many queries make it
        strict, few make it lenient.
    key : str
        The score to select on. Keep it a validation score: a test score
        selects on test data, and a table made so must say it.
    reference : {"best", "dense"}
        ``"best"``: the highest score among the points (``rsrank train
        --within``). ``"dense"``: the score of the point with the most
        non-zero weights, the first of them on ties (the paper's Table 1:
        within 3% of the model without L1).
    """
    points = list(points)
    if not points:
        raise ValueError("no points to select from")
    check_within(within)
    if any(point["n_nonzero"] for point in points):
        # a model without weights ranks every query in input order: never chosen
        points = [point for point in points if point["n_nonzero"]]
    scores = [float(point[key]) for point in points]
    if reference == "best":
        target = max(range(len(points)), key=lambda i: (scores[i], -i))
    elif reference == "dense":
        target = max(range(len(points)), key=lambda i: (points[i]["n_nonzero"], -i))
    else:
        raise ValueError(f"reference must be 'best' or 'dense', got {reference!r}")
    if within == "1se":
        keep = [i for i in range(len(points))
                if _within_one_se(points[i]["per_query"], points[target]["per_query"])]
    else:
        keep = [i for i, score in enumerate(scores) if score >= (1 - within) * scores[target]]
    return points[min(keep, key=lambda i: (points[i].get("cost", points[i]["n_nonzero"]),
                                           points[i]["n_nonzero"], -scores[i], i))]


def _paired_difference(values, reference):
    """``values - reference`` per query, NaN pairs left out, and its
    standard error (None with fewer than two queries)."""
    diff = np.asarray(values, dtype=float) - np.asarray(reference, dtype=float)
    diff = diff[~np.isnan(diff)]
    return diff, (diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) >= 2 else None)


def _within_one_se(values, reference):
    """Whether ``values`` (per query) are at most one standard error of the
    paired difference below ``reference``."""
    diff, se = _paired_difference(values, reference)
    if se is None:
        return bool(len(diff) == 1 and diff[0] >= 0)
    return bool(diff.mean() >= -se)


def choose_fit(points, within):
    """The position in ``points`` (each with its ``"kind"`` of model and
    its ``"per_query"`` values) of the selection of ``rsrank train``: within
    one kind, :func:`sparsest_within`'s choice. Across kinds (``--with-linear``)
    the one-standard-error rule of Breiman et al. between kinds, the
    simplest first (:data:`rsrank.learning.kinds.KINDS`' order: linear, additive,
    interactions): a richer kind's choice replaces the simpler one only when
    its mean over the validation queries is above it by more than one
    standard error of their paired difference. The richer kind always has
    the higher best score on a small vali set, by chance alone; the rule
    keeps it only where it pays (``results/kind_rule.md``)."""
    points, chosen = list(points), None
    for best in kind_choices(points, within).values():  # the simplest kind first
        if chosen is None or _above_one_se(points[best]["per_query"],
                                           points[chosen]["per_query"]):
            chosen = best
    return chosen


def kind_choices(points, within):
    """Each kind's own choice among ``points`` (each with its ``"kind"``):
    ``{kind: position}``, the simplest kind first, each the
    :func:`sparsest_within` of its points (a point without a kind: the
    choice among all, under the key None)."""
    points = list(points)
    kinds = [name for name in KINDS if any(point.get("kind") == name for point in points)]
    if len(kinds) < 2:
        return {kinds[0] if kinds else None: sparsest_index(points, within)}
    out = {}
    for name in kinds:
        mine = [i for i, point in enumerate(points) if point.get("kind") == name]
        out[name] = mine[sparsest_index([points[i] for i in mine], within)]
    return out


def _above_one_se(values, reference):
    """Whether ``values`` (per query) are above ``reference`` by more than one
    standard error of the paired difference (NaN pairs left out)."""
    diff, se = _paired_difference(values, reference)
    return bool(se is not None and diff.mean() > se)


def sparsest_index(points, within, **rule):
    """The position in ``points`` of :func:`sparsest_within`'s choice."""
    points = list(points)
    chosen = sparsest_within(points, within, **rule)
    return next(i for i, point in enumerate(points) if point is chosen)
