"""Helpers of the OHSUMED experiments shared by ``reproduce_paper.py``,
``frontier_variants.py`` and ``lightgbm_example.py``: the fitters of RSRank
and its peers under one calling convention, selection of a peer's grid on
vali, per-query values, seed averages, the frontier's points and summaries.
The protocol, the selection rule and the results files are the library's
(:mod:`rsrank.evaluation.experiments`); what is here only drives it and the peers."""

import dataclasses
import itertools
import platform
import time

import numpy as np

import rsrank
from rsrank import QueryData, RSRank
from rsrank.evaluation import metrics as M
from rsrank.evaluation import stats
from rsrank.evaluation.experiments import per_query_from_results, sparsest_within
from rsrank.learning.path import walk

from _bench import pairwise_differences


CONVENTION = "letor"


def grid(**axes):
    return [dict(zip(axes, values)) for values in itertools.product(*axes.values())]


def ndcg10(y, scores, qid):
    return M.mean_ndcg(y, scores, qid, 10, convention=CONVENTION)


# The paper's setting, independent of the library's defaults: OHSUMED's
# features are already scaled per query, and one query per step.
PAPER = {"normalize": "none", "batch_size": 1, "learning_rate": 1e-3}


def fit_rsrank(data, params, seed=0):
    # up to 100 epochs, stopped after 30 without a better vali NDCG@10 (the
    # patience the boosted peers get), keeping the best epoch
    model = rsrank_estimator(params, seed)
    model.fit(*data.train[:2], qid=data.train[2], eval_set=data.vali[:3])
    return model, model.predict(data.vali[0]), model.predict(data.test[0]), np.count_nonzero(model.coef_)


def sorted_by_query(X, y, qid):
    order = np.argsort(qid, kind="stable")
    return X[order], y[order], qid[order]


def fit_xgb(data, params, seed=0):
    import xgboost as xgb

    X, y, q = sorted_by_query(*data.train[:3])
    Xv, yv, qv = sorted_by_query(*data.vali[:3])
    model = xgb.XGBRanker(objective="rank:ndcg", eval_metric="ndcg@10", n_jobs=1,
                          random_state=seed, early_stopping_rounds=30, **params)
    model.fit(X, y, qid=q, eval_set=[(Xv, yv)], eval_qid=[qv], verbose=False)
    nnz = (np.count_nonzero(model.coef_) if params.get("booster") == "gblinear" else None)
    return model, model.predict(data.vali[0]), model.predict(data.test[0]), nnz


def fit_lgbm(data, params, seed=0):
    import lightgbm as lgb

    X, y, q = sorted_by_query(*data.train[:3])
    Xv, yv, qv = sorted_by_query(*data.vali[:3])
    model = lgb.LGBMRanker(objective="lambdarank", n_estimators=500, random_state=seed,
                           n_jobs=1, verbose=-1, **params)
    model.fit(X, y, group=np.unique(q, return_counts=True)[1], eval_set=[(Xv, yv)],
              eval_group=[np.unique(qv, return_counts=True)[1]], eval_at=[10],
              callbacks=[lgb.early_stopping(30, verbose=False)])
    return model, model.predict(data.vali[0]), model.predict(data.test[0]), None


_PAIRS = {}


def cached_pairs(X, y, qid):
    """Pairwise differences of a training split, built once per process."""
    key = (id(X), X.shape)
    if key not in _PAIRS:
        _PAIRS[key] = pairwise_differences(X, y, qid)
    return _PAIRS[key]


def fit_sgd_pairs(data, params, seed=0):
    from sklearn.linear_model import SGDClassifier

    D, t = cached_pairs(*data.train[:3])
    model = SGDClassifier(loss="modified_huber", fit_intercept=False, max_iter=30, tol=1e-4,
                          random_state=seed, **params).fit(D, t)
    w = model.coef_.ravel()
    return model, data.vali[0] @ w, data.test[0] @ w, np.count_nonzero(w)


PER_QUERY = ("NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10", "MAP")


def per_query_values(data, test_scores):
    """The test queries' values that the paired tests use."""
    values = M.letor_per_query(data.test[1], test_scores, data.test[2], convention=CONVENTION)
    return {"qid": [f"{data.fold}:{q}" for q in values["qid"]],
            **{name: values[name].tolist() for name in PER_QUERY}}


def linear_weights(model):
    """A linear model's weights on the raw features (None for trees)."""
    if isinstance(model, RSRank):
        return model.linear_function()[0]
    coef = getattr(model, "coef_", None)
    try:
        return None if coef is None else np.asarray(coef, dtype=float).ravel()
    except Exception:  # tree boosters have no coef_
        return None


def select_on_vali(fit, data, configs, seed=0):
    """Fit every config on train, keep the best vali NDCG@10, report its test."""
    start = time.perf_counter()
    best, tried = None, []
    for params in configs:
        model, vali_scores, test_scores, nnz = fit(data, params, seed)
        vali = ndcg10(data.vali[1], vali_scores, data.vali[2])
        tried.append({"params": params, "vali_ndcg10": vali,
                      "n_nonzero": None if nnz is None else int(nnz)})
        if best is None or vali > best[0]:
            best = (vali, params, test_scores, nnz, model)
    vali, params, test_scores, nnz, model = best
    report = M.letor_report(data.test[1], test_scores, data.test[2], convention=CONVENTION)
    weights = linear_weights(model)
    return {"fold": data.fold, "seed": seed, "params": params, "vali_ndcg10": vali,
            "test": report.as_dict(), "n_nonzero": None if nnz is None else int(nnz),
            "fit_seconds": time.perf_counter() - start, "tried": tried,
            "per_query": per_query_values(data, test_scores),
            "weights": None if weights is None else weights.tolist(),
            "test_scores": np.asarray(test_scores, dtype=float)}


def method_table(name, per_fold):
    """Mean over folds for each seed, then mean and std over seeds (``std``);
    ``fold_std`` is the spread over folds of the seeds' average."""
    names = list(per_fold[0]["test"])
    seeds = sorted({f["seed"] for f in per_fold})
    by_seed = np.array([[np.mean([f["test"][n] for f in per_fold if f["seed"] == s])
                         for n in names] for s in seeds])
    folds = sorted({f["fold"] for f in per_fold})
    by_fold = np.array([[np.mean([f["test"][n] for f in per_fold if f["fold"] == k])
                         for n in names] for k in folds])
    nnz = [f["n_nonzero"] for f in per_fold]
    return {
        "method": name, "seeds": seeds,
        "mean": dict(zip(names, by_seed.mean(axis=0).tolist())),
        "std": dict(zip(names, by_seed.std(axis=0).tolist())),
        "fold_std": dict(zip(names, by_fold.std(axis=0).tolist())),
        "fit_seconds_per_fold": float(np.mean([f["fit_seconds"] for f in per_fold])),
        "n_nonzero_mean": None if any(v is None for v in nnz) else float(np.mean(nnz)),
        "folds": [{k: v for k, v in f.items() if k != "test_scores"} for f in per_fold],
    }


def seed_averaged(per_fold):
    """Per-query values averaged over seeds, keyed by "fold:qid"."""
    return per_query_from_results(
        {"folds": [{"fold": f["fold"], "per_query": f["per_query"]} for f in per_fold]})


def rsrank_grid(quick):
    if quick:
        return grid(learning_rate=[1e-2])
    return grid(learning_rate=[1e-3, 1e-2], discount=["log2", "letor"], ndcg_k=[None, 10])


def peer_grids(quick):
    """The same number of grid points for every peer as for RSRank."""
    size = len(rsrank_grid(quick))
    grids = {
        "XGBoost gblinear rank:ndcg": (fit_xgb, grid(
            booster=["gblinear"], updater=["coord_descent"], n_estimators=[300],
            learning_rate=[0.05, 0.1, 0.3, 0.5], reg_lambda=[0.0, 1.0])),
        "XGBoost lambdarank trees": (fit_xgb, grid(
            booster=["gbtree"], tree_method=["hist"], n_estimators=[500],
            max_depth=[2, 4], learning_rate=[0.05, 0.1], min_child_weight=[1, 10])),
        "LightGBM lambdarank trees": (fit_lgbm, grid(
            num_leaves=[4, 16], learning_rate=[0.05, 0.1], min_child_samples=[20, 100])),
        "SGDClassifier modified_huber pairs": (fit_sgd_pairs, grid(
            penalty=[None], alpha=[1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0])),
        "SGDClassifier modified_huber pairs + L1": (fit_sgd_pairs, grid(
            penalty=["l1"], alpha=[1e-6, 1e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2])),
    }
    return {name: (fit, configs[:size]) for name, (fit, configs) in grids.items()}


BUDGETS = (3, 5, 8, 12, 16, 20, 45)


FRONTIER_L1_CUMULATIVE = [0.0, 0.3, 0.5, 1.0, 2.0, 3.0, 5.0, 7.0, 10.0, 14.0, 20.0]


def frontier_point(data, vali_scores, test_scores, n_nonzero, **extra):
    return {"n_nonzero": int(n_nonzero), **extra,
            "vali_ndcg10": ndcg10(data.vali[1], vali_scores, data.vali[2]),
            "per_query": per_query_values(data, test_scores)}


def rsrank_estimator(params, seed):
    """:func:`fit_rsrank`'s estimator: up to 100 epochs, stopped after 30
    without a better vali NDCG@10, the best epoch kept."""
    return RSRank(**{**PAPER, "max_iter": 100, "random_state": seed,
                     "eval_convention": CONVENTION, "early_stopping": True,
                     "n_iter_no_change": 30, "tol": 0.0, "eval_train": False, **params})


def rsrank_frontier_fold(data, params, seed, l1_values, l1_method="truncated", relax=True):
    """The RSRank path of one fold and seed (the library's path,
    :func:`rsrank.learning.path.walk`, without warm starts: a zero start per g, the
    best vali epoch) and, with ``relax``, for every sparse point this
    study's relaxed model: the same settings refitted from zero without L1
    on the point's support only (the library's ``relax`` instead goes on
    from the penalized weights)."""
    plain, relaxed = [], []
    n_features = data.train[0].shape[1]
    train, vali = QueryData(*data.train[:3]), QueryData(*data.vali[:3])
    path = walk(rsrank_estimator(params, seed), [{"l1": g, "l1_method": l1_method}
                                                 for g in l1_values], train,
                validation=vali, warm=False)
    for g, point in zip(l1_values, path):
        model = point.model
        plain.append(frontier_point(data, model.predict(data.vali[0]),
                                    model.predict(data.test[0]), np.count_nonzero(model.coef_),
                                    l1=g, weights=linear_weights(model).tolist()))
        support = np.flatnonzero(model.coef_)
        if not relax or not 0 < len(support) < n_features:
            continue
        sub = dataclasses.replace(data, **{split: (data[split][0][:, support],) + data[split][1:]
                                           for split in ("train", "vali", "test")})
        refit, vali_scores, test_scores, nnz = fit_rsrank(sub, params, seed)
        relaxed.append(frontier_point(data, vali_scores, test_scores, nnz, l1=g))
    return plain, relaxed


#: Step sizes at step 1 for the decaying step, chosen on the dense vali NDCG@10.
DECAYING_RATES = [0.01, 0.03, 0.1]


# the ablation of the pair weights on the sparse path: unit weights make the
# gradient tens of times larger (no 1/ideal DCG, every pair counts), so the
# step sizes are smaller and the penalties 30 times stronger
UNIT = "RSRank, unit pair weights, cumulative L1, step lr/sqrt(t)"


UNIT_RATES = [0.001, 0.003, 0.01]


UNIT_L1_SCALE = 30


def best_within_budget(points, budget):
    fitting = [p for p in points if 0 < p["n_nonzero"] <= budget]
    return max(fitting, key=lambda p: p["vali_ndcg10"]) if fitting else None


def summarize_frontier(frontier, n_folds, reference="RSRank"):
    """At each feature budget: each method's vali-selected model per fold and
    seed; mean test NDCG@10 (over folds, then mean ± std over seeds) and the
    paired tests of RSRank against each method over the test queries."""
    rows, runs_by_budget = [], {}
    for budget in BUDGETS:
        runs = {}
        for name, entries in frontier.items():
            chosen = [(e, best_within_budget(e["points"], budget)) for e in entries]
            complete = all(p is not None for _, p in chosen)
            row = {"budget": budget, "method": name,
                   "runs": sum(p is not None for _, p in chosen), "of": len(chosen)}
            if complete:
                seeds = sorted({e["seed"] for e, _ in chosen})
                by_seed = [np.mean([np.mean(p["per_query"]["NDCG@10"]) for e, p in chosen
                                    if e["seed"] == s]) for s in seeds]
                row.update(mean=float(np.mean(by_seed)), std=float(np.std(by_seed)),
                           n_nonzero=float(np.mean([p["n_nonzero"] for _, p in chosen])))
                runs[name] = per_query_from_results(
                    {"folds": [{"fold": e["fold"], "per_query": p["per_query"]}
                               for e, p in chosen]})
            rows.append(row)
        runs_by_budget[budget] = runs
    tests = []
    for budget, runs in runs_by_budget.items():
        for variant in [name for name in runs if name.startswith(reference)]:
            others = [name for name in runs if name != variant and not
                      (name.startswith(reference) and variant != reference)]
            if not others:
                continue
            subset = {variant: runs[variant], **{name: runs[name] for name in others}}
            for row in stats.compare(subset, ["NDCG@10"], baseline=variant,
                                     n_resamples=100_000):
                tests.append({"budget": budget, **row})
    if tests:  # Holm over every budget and pair at once
        for key in ("t_pvalue", "permutation_pvalue"):
            for row, value in zip(tests, stats.holm([t[key] for t in tests])):
                row[f"{key}_holm"] = float(value)
    return {"rows": rows, "tests": tests, "methods": list(frontier)}


def sparsest_within_dense(frontier, name, n_features, tolerance=0.03):
    """Per fold and seed: the sparsest point whose vali NDCG@10 is within
    ``tolerance`` of the dense (g = 0) point's; mean fraction of features
    and test NDCG@10, next to the dense test NDCG@10."""
    fractions, tests, dense = [], [], []
    for entry in frontier[name]:
        points = entry["points"]
        chosen = sparsest_within(points, tolerance, key="vali_ndcg10", reference="dense")
        fractions.append(chosen["n_nonzero"] / n_features)
        tests.append(np.mean(chosen["per_query"]["NDCG@10"]))
        dense.append(np.mean(points[0]["per_query"]["NDCG@10"]))
    return {"fraction": float(np.mean(fractions)), "test_ndcg10": float(np.mean(tests)),
            "dense_test_ndcg10": float(np.mean(dense)), "runs": len(fractions)}


def fmt(mean, std=None):
    return f"{mean:.4f}" if std is None else f"{mean:.4f} ± {std:.4f}"


def versions():
    out = {"rsrank": rsrank.__version__, "python": platform.python_version(),
           "numpy": np.__version__}
    for name in ("scipy", "sklearn", "numba", "xgboost", "lightgbm"):
        try:
            out[name] = __import__(name).__version__
        except ImportError:
            out[name] = None
    return out
