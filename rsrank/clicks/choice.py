"""Debiasing only where it beats plain clicks.

Taking the position's bias out of clicks trades bias for variance: its
inverse-propensity weights can cost more than they remove, and on some
logs plain click training (each session a query, its clicks the labels)
ranks better. ``rsrank train --clicks`` therefore fits both and keeps the
model that ranks the vali log's documents better, the plain one on a tie:
:func:`keep_plain_unless_debiased`.

Both models are judged on the same queries by the same estimate: NDCG@10
of the vali log's shown documents graded by their click chance without
the position's bias, summed over every session that showed them, and
where the log shows under 5% of its queries' documents, their whole lists
with the documents never shown graded 0
(:meth:`~rsrank.clicks.GradedClicks.judged_documents`). Over the models a
path visits, it orders them as the expert labels of the same documents do
more often than the session lists selection judges on
(``scripts/click_judge.py``). The standard error of the difference is
reported beside it; requiring the debiased model to win by more than it
kept plain clicks too often where debiasing was better, and no less often
where it was worse (``results/clicks_auto.md``).
"""

from dataclasses import dataclass, replace

import numpy as np

from ..evaluation.experiments import LetorExperiment
from ..evaluation.metrics import letor_per_query
from ..reading.querydata import QueryData

__all__ = ["DebiasChoice", "debias_choice", "keep_plain_unless_debiased"]


@dataclass(frozen=True)
class DebiasChoice:
    """The comparison of a debiased and a plain model on the vali log's
    estimate: the weighted mean difference (debiased minus plain) of
    ``metric`` over its queries, its standard error, and the choice."""

    metric: str
    difference: float
    standard_error: float
    n_queries: int

    @property
    def debiased(self):
        """Whether the debiased model is kept: it ranks the vali log's
        documents better than the plain one (a tie keeps plain clicks)."""
        return bool(self.difference > 0)

    def to_dict(self):
        return {"metric": self.metric, "difference": self.difference,
                "standard_error": self.standard_error, "n_queries": self.n_queries,
                "kept": "debiased" if self.debiased else "plain"}


def debias_choice(debiased, plain, vali, *, metric="NDCG@10", convention="letor"):
    """:class:`DebiasChoice` of two fitted models (anything with
    ``predict`` on a :class:`QueryData`) on ``vali``, the vali log as
    debiasing reads it (a :class:`QueryData`, its query weights the
    lists')."""
    values = []
    for model in (debiased, plain):
        scores = np.asarray(model.predict(vali))
        per_query = letor_per_query(vali.y, scores[vali.order], vali.groups,
                                    convention=convention, short_list=vali.short_list)
        values.append(per_query[metric])
    difference = values[0] - values[1]
    weight = (np.ones(len(difference)) if vali.query_weights is None
              else np.asarray(vali.query_weights, dtype=np.float64))
    kept = ~np.isnan(difference) & (weight > 0)
    difference, weight = difference[kept], weight[kept]
    if not len(difference):
        return DebiasChoice(metric, 0.0, 0.0, 0)
    share = weight / weight.sum()
    mean = float(share @ difference)
    spread = float(np.sqrt(share ** 2 @ (difference - mean) ** 2))
    # the weighted mean's standard error, with the n / (n - 1) of a sample's variance
    n = len(difference)
    error = spread * np.sqrt(n / (n - 1)) if n > 1 else np.inf
    return DebiasChoice(metric, mean, float(error), n)


def keep_plain_unless_debiased(debiased, plain, folds, *, metric="NDCG@10"):
    """One experiment of two runs of the same folds (and seeds): per fold,
    the debiased run's result where its model beats the plain run's on the
    fold's vali log (``folds``, the debiased folds as
    :func:`~rsrank.clicks.load_click_fold` makes them: their ``judge``;
    :func:`debias_choice`), the plain run's otherwise. Each
    result's ``params`` say which (``"clicks"``), and the returned
    experiment's ``choices`` hold each :class:`DebiasChoice`."""
    if len(debiased.folds) != len(plain.folds):
        raise ValueError("the debiased and plain runs have different folds")
    by_fold = {fold.fold: fold for fold in folds}
    chosen, choices = [], []
    for one, other in zip(debiased.folds, plain.folds):
        if (one.fold, one.seed) != (other.fold, other.seed):
            raise ValueError("the debiased and plain runs have different folds")
        vali = QueryData(*by_fold[one.fold].judge)
        choice = debias_choice(one.model, other.model, vali, metric=metric,
                               convention=debiased.convention)
        kept = one if choice.debiased else other
        chosen.append(replace(kept, params={**kept.params, "clicks": "debiased" if
                                            choice.debiased else "plain"}))
        choices.append(choice)
    experiment = LetorExperiment(chosen, debiased.select, debiased.convention,
                                 debiased.within, debiased.vali_cv, debiased.path_rows)
    experiment.choices = choices
    return experiment
