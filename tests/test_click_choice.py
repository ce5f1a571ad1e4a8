"""rsrank.clicks.choice: plain click training is kept unless debiasing
beats it on the vali log's estimate by more than a standard error."""

import numpy as np
import pytest

from rsrank.clicks.choice import DebiasChoice, debias_choice
from rsrank.querydata import QueryData


class Scores:
    """A model that scores each row as given."""

    def __init__(self, scores):
        self.scores = np.asarray(scores, dtype=np.float64)

    def predict(self, data):
        return self.scores


def letor_ndcg_at_10(labels, scores):
    """LETOR's NDCG@10 by brute force: gain 2^label - 1, ranks 1 and 2
    undiscounted, 1 / log2(rank) after, ties in row order."""
    def dcg(order):
        gains = 2.0 ** labels[order][:10] - 1
        discount = [1.0 if rank <= 2 else 1 / np.log2(rank) for rank in range(1, len(gains) + 1)]
        return float(gains @ discount)
    ideal = dcg(np.argsort(-labels, kind="stable"))
    return dcg(np.argsort(-scores, kind="stable")) / ideal if ideal > 0 else 0.0


def test_the_choice_is_the_weighted_mean_difference_against_its_standard_error():
    rng = np.random.default_rng(0)
    n_queries, size = 40, 12
    y = rng.integers(0, 3, size=n_queries * size)
    y[::size] = 2  # every query holds a relevant document
    qid = np.repeat(np.arange(n_queries), size)
    weight = np.repeat(rng.uniform(0.5, 4.0, size=n_queries), size)
    vali = QueryData(rng.normal(size=(len(y), 2)), y, qid, query_weight=weight)
    good = y + rng.normal(scale=0.8, size=len(y))
    bad = y + rng.normal(scale=2.0, size=len(y))
    choice = debias_choice(Scores(good), Scores(bad), vali)
    d = np.array([letor_ndcg_at_10(y[qid == q], good[qid == q])
                  - letor_ndcg_at_10(y[qid == q], bad[qid == q]) for q in range(n_queries)])
    w = weight[::size] / weight[::size].sum()
    mean = w @ d
    assert choice.difference == pytest.approx(mean)
    assert choice.standard_error == pytest.approx(
        np.sqrt(np.sum(w ** 2 * (d - mean) ** 2) * n_queries / (n_queries - 1)))
    assert choice.n_queries == n_queries and choice.difference > choice.standard_error
    assert choice.debiased and choice.to_dict()["kept"] == "debiased"
    flipped = debias_choice(Scores(bad), Scores(good), vali)
    assert flipped.difference == pytest.approx(-mean) and not flipped.debiased


def test_plain_clicks_are_kept_when_debiasing_wins_by_less_than_its_standard_error():
    assert not DebiasChoice("NDCG@10", 0.010, 0.012, 100).debiased
    assert not DebiasChoice("NDCG@10", 0.0, 0.0, 0).debiased  # equal models: plain
    assert DebiasChoice("NDCG@10", 0.013, 0.012, 100).debiased
