"""Helpers of the studies on generated queries: seeded splits of the
queries, the library's recipe on one split, LightGBM early stopped on vali,
and per-query NDCG@10 with LETOR's convention."""

import numpy as np


def splits(data, seed):
    """``(train, vali, test)`` as ``(X, y, qid)``: the queries shuffled and cut
    60/20/20."""
    queries = np.unique(data.qid)
    order = np.random.default_rng(seed).permutation(queries)
    cut = np.split(order, [int(0.6 * len(order)), int(0.8 * len(order))])
    out = []
    for part in cut:
        rows = np.isin(data.qid, part)
        out.append((data.X[rows], data.y[rows], data.qid[rows]))
    return out


def per_query_ndcg(split, scores):
    """NDCG@10 of each query of ``split`` (LETOR's convention)."""
    from rsrank.evaluation.metrics import ndcg_per_query

    _, y, qid = split
    return ndcg_per_query(y, scores, qid, 10, convention="letor")


def fit_recipe(train, vali, test, names, seed, **recipe):
    """``rsrank train``'s recipe (:func:`rsrank.learning.recipe.train_recipe` with
    ``recipe``'s options) on one split, selection on vali: the test
    queries' NDCG@10 and the fitted estimator."""
    from rsrank.evaluation.experiments import run_letor_folds
    from rsrank.learning.recipe import train_recipe
    from sklearn.utils import Bunch

    estimator, grid = train_recipe(seed=seed, n_jobs=1, **recipe)
    fold = Bunch(fold=1, train=train, vali=vali, test=test, n_features=train[0].shape[1],
                 paths={}, vali_source="vali")
    result = run_letor_folds([fold], estimator, grid, feature_names=names).folds[0]
    return per_query_ndcg(test, result.model.predict(test[0])), result.model


def fit_lightgbm(train, vali, test, seed, leaves):
    """LightGBM's lambdarank with ``leaves`` leaves a tree (2: stumps), 0.05
    learning rate, early stopped on vali NDCG@10 (50 rounds of patience, at
    most 2000 trees): the test queries' NDCG@10."""
    import lightgbm

    sizes = lambda qid: np.unique(qid, return_counts=True)[1]  # noqa: E731  (contiguous)
    model = lightgbm.LGBMRanker(objective="lambdarank", num_leaves=leaves, learning_rate=0.05,
                                n_estimators=2000, min_child_samples=20, random_state=seed,
                                n_jobs=1, verbose=-1)
    model.fit(train[0], train[1], group=sizes(train[2]), eval_set=[vali[:2]],
              eval_group=[sizes(vali[2])], eval_at=[10],
              callbacks=[lightgbm.early_stopping(50, verbose=False)])
    return per_query_ndcg(test, model.predict(test[0]))
