"""A ranker's quality estimated from a click log, before an A/B test.

:func:`click_values` reads a log as ``rsrank train --debias auto`` reads
its vali log to compare models: the shown documents, each graded by its
click chance without the position's bias (the log's own examination
curve, :func:`~rsrank.clicks.grade_clicks`), summed over every session
that showed it (:meth:`~rsrank.clicks.GradedClicks.graded_documents`). A
model's estimate of NDCG@10 is its mean over the log's queries, with a
95% interval over queries (a ratio's standard error by linearisation,
which weighted lists would need as well); :func:`compare_on_clicks`
pairs two or more models query by query. ``scripts/click_judge.py``
measures how often such estimates order models as expert labels do.
"""

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..metrics import letor_per_query
from .grading import feature_rows, grade_clicks

__all__ = ["ClickValues", "ClickEstimate", "click_values", "estimate", "compare_on_clicks"]


@dataclass(frozen=True)
class ClickEstimate:
    """An estimate over queries with its 95% interval (``difference`` when
    it is one model's minus another's, with the paired test's
    ``pvalue``)."""

    value: float
    low: float
    high: float
    n_queries: int
    pvalue: float = None

    def to_dict(self):
        return {key: float(value) if key != "n_queries" else int(value)
                for key, value in vars(self).items() if value is not None}


@dataclass(frozen=True)
class ClickValues:
    """The lists of a click log to score models on: ``X`` their rows,
    ``y`` the clicks' grades, ``lists`` each row's list, ``weight`` each
    row's list weight (None: 1), ``query`` each list's query (indices into
    ``queries``)."""

    X: object
    y: np.ndarray
    lists: np.ndarray
    weight: object
    query: np.ndarray
    queries: np.ndarray

    def sums(self, model, metric="NDCG@10"):
        """Per query, the weighted sum of ``metric`` over its lists and
        their summed weight."""
        scores = np.asarray(model.predict(self.X), dtype=np.float64)
        per_list = letor_per_query(self.y, scores, self.lists, convention="letor",
                                   short_list="truncate")
        lists = per_list["qid"]
        values = np.nan_to_num(per_list[metric], nan=0.0)
        first = np.unique(self.lists, return_index=True)[1]
        weight = (np.ones(len(lists)) if self.weight is None
                  else np.asarray(self.weight, dtype=np.float64)[first])
        query = self.query[np.searchsorted(np.unique(self.lists), lists)]
        total = np.bincount(query, weights=weight * values, minlength=len(self.queries))
        weights = np.bincount(query, weights=weight, minlength=len(self.queries))
        return total, weights


def click_values(log, X, qid, docids):
    """The :class:`ClickValues` of ``log`` (a :class:`~rsrank.clicks.ClickLog`)
    on the features ``X`` of its documents (``qid`` and ``docids`` per
    row, joined as :func:`~rsrank.clicks.feature_rows` joins them): its
    shown documents, each query a list, graded by their click chance
    without the position's bias (:meth:`GradedClicks.graded_documents`)."""
    rows = feature_rows(log, qid, docids)
    graded = grade_clicks(log, rows)
    Xl, y, lists = graded.graded_documents(X, qid)
    queries, query = np.unique(np.asarray(lists).astype(str), return_inverse=True)
    first = np.unique(query.ravel(), return_index=True)[1]
    return ClickValues(Xl, np.asarray(y), query.ravel(), None, query.ravel()[first], queries)


def _ratio(total, weights):
    """The ratio ``sum(total) / sum(weights)`` over the queries with a
    weight, and its 95% interval by linearisation (a t interval)."""
    kept = weights > 0
    total, weights = total[kept], weights[kept]
    n = len(total)
    value = float(total.sum() / weights.sum()) if n else float("nan")
    if n < 2:
        return value, value, value, n, float("nan")
    z = total - value * weights
    error = np.sqrt(n / (n - 1) * np.sum(z ** 2)) / weights.sum()
    half = stats.t.ppf(0.975, n - 1) * error
    t = value / error if error > 0 else (0.0 if value == 0 else np.copysign(np.inf, value))
    pvalue = float(2 * stats.t.sf(abs(t), n - 1)) if error > 0 else (1.0 if value == 0 else 0.0)
    return value, float(value - half), float(value + half), n, pvalue


def estimate(values, model, metric="NDCG@10"):
    """The :class:`ClickEstimate` of one model's ``metric`` on ``values``."""
    value, low, high, n, _ = _ratio(*values.sums(model, metric))
    return ClickEstimate(value, low, high, n)


def compare_on_clicks(values, models, metric="NDCG@10"):
    """Each model's :class:`ClickEstimate` on ``values`` (one
    :class:`ClickValues`, or one per model: the same lists in each model's
    columns) and, for every model after the first, its difference from the
    first, paired over queries (a t interval and p-value of the ratio's
    linearisation)."""
    views = values if isinstance(values, (list, tuple)) else [values] * len(models)
    sums = [view.sums(model, metric) for view, model in zip(views, models)]
    estimates = [ClickEstimate(*_ratio(total, weights)[:4]) for total, weights in sums]
    base, weights = sums[0]
    differences = [ClickEstimate(*_ratio(total - base, weights)) for total, _ in sums[1:]]
    return estimates, differences
