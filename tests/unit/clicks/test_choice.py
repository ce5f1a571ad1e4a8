"""rsrank.clicks.choice: of plain and debiased click training, the model
that ranks the vali log's graded documents better is kept (plain on a
tie); rsrank.clicks.estimate: a model's quality estimated from a log."""

import numpy as np
import pytest

from rsrank.clicks.choice import DebiasChoice, debias_choice
from rsrank.reading.querydata import QueryData


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


def test_the_choice_is_the_weighted_mean_difference_with_its_standard_error():
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


def test_the_better_model_on_the_judge_is_kept_and_a_tie_keeps_plain_clicks():
    assert DebiasChoice("NDCG@10", 0.010, 0.012, 100).debiased
    assert not DebiasChoice("NDCG@10", 0.0, 0.0, 0).debiased  # equal models: plain
    assert not DebiasChoice("NDCG@10", -0.001, 0.012, 100).debiased


# -- estimates from a click log (rsrank.clicks.estimate) ---------------------------------


def _logged(seed=0, n_queries=30):
    """Features with docids, a click log of them and two models' scores."""
    from rsrank.reading.synthetic import simulate_clicks

    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=n_queries * 12)
    qid = np.repeat(np.arange(n_queries), 12)
    X = rng.normal(size=(len(y), 3)) + y[:, None] * [1.0, 0.3, 0.0]
    docids = np.array([f"d{k}" for k in range(len(y))])
    sim = simulate_clicks(y, qid, X[:, 2], n_sessions=30, random_state=seed)
    return X, qid, docids, sim


class Column:
    """A model that scores a row by one of its columns."""

    def __init__(self, column):
        self.column = column

    def predict(self, X):
        return np.asarray(X)[:, self.column]


@pytest.mark.parametrize("sessions", [True, False])
def test_a_log_estimates_each_query_by_its_graded_documents_with_a_t_interval(sessions):
    from scipy import stats

    from rsrank.clicks import ClickLog, grade_clicks
    from rsrank.clicks.estimate import click_values, compare_on_clicks, estimate
    from rsrank.evaluation.metrics import ndcg_per_query

    X, qid, docids, sim = _logged(0 if sessions else 1)
    log = ClickLog.from_sessions(sim.session, sim.qid, docids[sim.docid], sim.position,
                                 sim.click)
    if not sessions:  # counts: no sessions, graded documents all the same
        log = ClickLog.from_counts(log.qid, log.docid, log.position, log.impressions,
                                   log.clicks)
    values = click_values(log, X, qid, docids)
    # the shown documents once each, graded by their click chance, a list per query
    rows = np.array([int(d[1:]) for d in log.docid])
    Xg, grades, queries = grade_clicks(log, rows).graded_documents(X, qid)
    np.testing.assert_array_equal(values.X, Xg)
    np.testing.assert_array_equal(values.y, grades)
    per_query = [ndcg_per_query(grades, Column(c).predict(Xg), queries, 10,
                                convention="letor", short_list="truncate") for c in (0, 2)]
    found = estimate(values, Column(0))
    low, high = stats.t.interval(0.95, len(per_query[0]) - 1, loc=per_query[0].mean(),
                                 scale=stats.sem(per_query[0]))
    assert found.value == pytest.approx(per_query[0].mean())
    assert (found.low, found.high) == pytest.approx((low, high))
    assert found.n_queries == 30
    estimates, (difference,) = compare_on_clicks(values, [Column(2), Column(0)])
    test = stats.ttest_rel(per_query[0], per_query[1])
    assert difference.value == pytest.approx(per_query[0].mean() - per_query[1].mean())
    assert difference.pvalue == pytest.approx(test.pvalue)
    assert (difference.low, difference.high) == pytest.approx(tuple(
        test.confidence_interval(0.95)))
    assert estimates[1].value == pytest.approx(found.value)


# -- RSRankCV on a click log: the command line's reading, from arrays --------------------


@pytest.fixture(scope="module")
def impressions_log():
    from rsrank.reading.synthetic import make_letor_like, simulate_clicks

    data = make_letor_like(n_queries=80, docs_per_query=(15, 25), random_state=3)
    production = data.X @ (data.coef + np.random.default_rng(3).normal(size=len(data.coef)))
    log = simulate_clicks(data.y, data.qid, production, n_sessions=20, random_state=3)
    X = data.X[log.docid]
    train, vali = log.qid < 60, log.qid >= 60
    columns = (log.click, log.qid, log.position, log.session)
    return ((X[train], *(c[train] for c in columns)), (X[vali], *(c[vali] for c in columns)))


def test_rsrankcv_on_clicks_walks_the_recipe_on_each_reading_and_keeps_the_choice(
        impressions_log):
    from rsrank import RSRankCV
    from rsrank.clicks.arrays import click_splits

    (X, clicks, qid, position, session), vali = impressions_log
    found = click_splits(X, clicks, qid, position, session=session, eval_set=vali,
                         debias="auto")
    by_reading = {debias: RSRankCV(max_iter=30).fit(found.train[debias],
                                                    eval_set=found.vali[debias])
                  for debias in ("on", "off")}
    for debias in ("on", "off"):  # one reading: the recipe on its query data
        model = RSRankCV(max_iter=30, debias=debias).fit(X, clicks, qid=qid, position=position,
                                                        session=session, eval_set=vali)
        np.testing.assert_array_equal(model.coef_, by_reading[debias].coef_)
        assert model.debias_ == debias
        assert (model.examination_ is None) == (debias == "off")
    auto = RSRankCV(max_iter=30).fit(X, clicks, qid=qid, position=position, session=session,
                                     eval_set=vali)
    kept = "on" if auto.debias_.debiased else "off"
    np.testing.assert_array_equal(auto.coef_, by_reading[kept].coef_)
    expected = debias_choice(by_reading["on"].estimator_, by_reading["off"].estimator_,
                             found.judge)
    assert auto.debias_ == expected
    with pytest.raises(ValueError, match="debias must be one of"):
        RSRankCV(debias="yes").fit(X, clicks, qid=qid, position=position, session=session)
    with pytest.raises(ValueError, match="plain click training .debias 'off'. leaves in"):
        RSRankCV(debias="off").fit(X, clicks, qid=qid, position=position, session=session,
                                   propensity=np.ones(10))


def test_rsrankcv_on_clicks_holds_every_row_of_x_to_the_rules_of_a_fit_on_labels(
        impressions_log):
    from rsrank import RSRankCV

    (X, clicks, qid, position, session), vali = impressions_log
    X = X.copy()
    quiet = ~np.isin(session, session[clicks > 0])  # sessions without a click
    X[np.flatnonzero(quiet)[0], 0] = np.nan
    with pytest.raises(ValueError, match=r"X has missing values \(NaN\) in 1 feature"):
        RSRankCV(max_iter=5).fit(X, clicks, qid=qid, position=position, session=session,
                                 eval_set=vali)
    Xv = vali[0].copy()
    Xv[0, 0] = np.nan
    with pytest.raises(ValueError, match=r"X has missing values \(NaN\) in 1 feature"):
        RSRankCV(max_iter=5).fit(impressions_log[0][0], clicks, qid=qid, position=position,
                                 session=session, eval_set=(Xv, *vali[1:]))


def test_the_regularization_path_takes_a_click_log_as_the_fits_do(impressions_log):
    from rsrank import RSRank
    from rsrank.clicks.arrays import click_splits
    from rsrank.learning.path import regularization_path

    (X, clicks, qid, position, session), vali = impressions_log
    l1s = [0.3, 0.03]
    path = regularization_path(X, clicks, qid, l1s, estimator=RSRank(max_iter=20),
                               position=position, session=session, eval_set=vali)
    found = click_splits(X, clicks, qid, position, session=session, eval_set=vali,
                         vali_fraction=None)
    for point in path:  # judged on the vali log's lists
        assert np.isfinite(point.val_ndcg)
    # the strongest point (the path's first, from zero) is a fit on the debiased reading
    first = RSRank(max_iter=20, l1=max(l1s)).fit(found.train["on"],
                                                 eval_set=found.vali["on"])
    np.testing.assert_allclose(path[-1].coef, first.coef_, rtol=1e-10, atol=1e-12)
    alone = regularization_path(X, clicks, qid, l1s, estimator=RSRank(max_iter=20),
                                position=position, session=session)  # no vali log
    assert "val_ndcg" not in alone[0]
