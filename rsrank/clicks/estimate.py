"""A ranker's quality estimated from a click log, before an A/B test.

:func:`click_values` reads a log as ``rsrank train --debias auto`` reads
its vali log to compare models: the shown documents, each graded by its
click chance without the position's bias (the log's own examination
curve, :func:`~rsrank.clicks.grade_clicks`), summed over every session
that showed it, or on long lists every document of its queries
(:meth:`~rsrank.clicks.GradedClicks.judged_documents`). A
model's estimate of NDCG@10 is its mean over the log's queries, with a
95% t interval over queries; :func:`compare_on_clicks`
pairs two or more models query by query. ``scripts/click_judge.py``
measures how often such estimates order models as expert labels do.
"""

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..evaluation.metrics import letor_per_query
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
    """The shown documents of a click log to score models on: ``X`` their
    rows, ``y`` their grades, ``query`` each row's query (0, 1, ...)."""

    X: object
    y: np.ndarray
    query: np.ndarray

    def per_query(self, model, metric="NDCG@10"):
        """``metric`` of ``model``'s scores on each query (a query shorter
        than its cut-off scored on what it holds)."""
        scores = np.asarray(model.predict(self.X), dtype=np.float64)
        values = letor_per_query(self.y, scores, self.query, convention="letor",
                                 short_list="truncate")[metric]
        return np.nan_to_num(values, nan=0.0)


def click_values(log, X, qid, docids):
    """The :class:`ClickValues` of ``log`` (a :class:`~rsrank.clicks.ClickLog`)
    on the features ``X`` of its documents (``qid`` and ``docids`` per
    row, joined as :func:`~rsrank.clicks.feature_rows` joins them): its
    shown documents graded by their click chance without the position's
    bias, or on long lists every document of its queries
    (:meth:`GradedClicks.judged_documents`)."""
    graded = grade_clicks(log, feature_rows(log, qid, docids))
    Xl, y, queries = graded.judged_documents(X, qid)
    query = np.unique(np.asarray(queries).astype(str), return_inverse=True)[1].ravel()
    return ClickValues(Xl, np.asarray(y), query)


def _interval(values):
    """The mean of per-query ``values``, its 95% t interval over the
    queries, their number, and the p-value of a mean of 0."""
    n = len(values)
    value = float(values.mean()) if n else float("nan")
    if n < 2:
        return value, value, value, n, float("nan")
    error = float(stats.sem(values))
    half = stats.t.ppf(0.975, n - 1) * error
    if error == 0:  # no spread: equal systems, or a constant shift
        pvalue = 1.0 if value == 0 else 0.0
    else:
        pvalue = float(2 * stats.t.sf(abs(value / error), n - 1))
    return value, value - half, value + half, n, pvalue


def estimate(values, model, metric="NDCG@10"):
    """The :class:`ClickEstimate` of one model's ``metric`` on ``values``."""
    return ClickEstimate(*_interval(values.per_query(model, metric))[:4])


def compare_on_clicks(values, models, metric="NDCG@10"):
    """Each model's :class:`ClickEstimate` on ``values`` (one
    :class:`ClickValues`, or one per model: the same documents in each
    model's columns) and, for every model after the first, its difference
    from the first, paired over queries (a t interval and p-value)."""
    views = values if isinstance(values, (list, tuple)) else [values] * len(models)
    per_query = [view.per_query(model, metric) for view, model in zip(views, models)]
    estimates = [ClickEstimate(*_interval(v)[:4]) for v in per_query]
    differences = [ClickEstimate(*_interval(v - per_query[0])) for v in per_query[1:]]
    return estimates, differences
