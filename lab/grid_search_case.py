"""A grid search as a newcomer writes it, against ``rsrank train`` on the
same fold.

    python scripts/grid_search_case.py [--data ../shared/data/OHSUMED] [--folds 1] [--out results]

For each fold: ``GridSearchCV(RSRank(), {"l1": [0, 0.1, 1], "pair_weight":
["delta_ndcg", "unit"]}, cv=GroupKFold(k))`` on the fold's training queries
with ``qid`` routed (k = 3 and 5), counting the ``DivergenceWarning``s it
raises, its pick, and the test NDCG@10 (LETOR convention) of its refit
model; ``RSRankCV()`` (``rsrank train``'s recipe as an estimator) judged on
3 folds of the training queries, and on vali; then ``rsrank train`` on the
same fold (vali selects). p: paired
t-test over the test queries, search against ``rsrank train``.
"""

import argparse
import json
import warnings

import numpy as np

from _bench import SHARED_DATA, command_line, fold_per_query, train_folds, write_report

GRID = {"l1": [0, 0.1, 1], "pair_weight": ["delta_ndcg", "unit"]}


def search_case(fold, n_splits, seed=0):
    """The search's warnings, pick and test queries' NDCG@10."""
    from sklearn.model_selection import GridSearchCV, GroupKFold

    from rsrank import RSRank
    from rsrank.estimator import DivergenceWarning
    from rsrank.evaluation.metrics import ndcg_per_query
    from rsrank.evaluation.model_selection import fit_search

    X, y, qid = fold.train[:3]
    search = GridSearchCV(RSRank(random_state=seed), GRID, cv=GroupKFold(n_splits))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit_search(search, X, y, qid)
    diverged = sum(issubclass(w.category, DivergenceWarning) for w in caught)
    Xt, yt, qt = fold.test[:3]
    per_query = ndcg_per_query(yt, search.best_estimator_.predict(Xt), qt, 10,
                               convention="letor")
    queries = list(dict.fromkeys(qt.tolist()))  # per_query's order: first appearance
    return {"divergence_warnings": diverged, "best_params": search.best_params_,
            "n_features": int(np.count_nonzero(search.best_estimator_.coef_)),
            "test_ndcg10": float(np.nanmean(per_query)),
            "per_query": dict(zip(queries, per_query.tolist()))}


def cv_case(fold, eval_set):
    """:class:`rsrank.RSRankCV` on the fold's training queries, judged on
    ``cv=3`` folds of them or (``eval_set``) on vali."""
    from rsrank import RSRankCV
    from rsrank.estimator import DivergenceWarning
    from rsrank.evaluation.metrics import ndcg_per_query

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = RSRankCV().fit(*fold.train[:2], qid=fold.train[2],
                               eval_set=fold.vali[:3] if eval_set else None)
    Xt, yt, qt = fold.test[:3]
    per_query = ndcg_per_query(yt, model.predict(Xt), qt, 10, convention="letor")
    queries = list(dict.fromkeys(qt.tolist()))
    return {"divergence_warnings": sum(issubclass(w.category, DivergenceWarning)
                                       for w in caught),
            "best_params": model.best_params_, "n_features": len(model.selected_features()),
            "test_ndcg10": float(np.nanmean(per_query)),
            "per_query": dict(zip(queries, per_query.tolist()))}


def train_case(root, k):
    """``rsrank train ROOT --folds k``: its test queries' NDCG@10 and features."""
    result = train_folds(root, ["--folds", str(k)])[0]
    per_query = fold_per_query(result)
    return {"params": result["params"], "n_features": result["n_nonzero"],
            "test_ndcg10": float(np.nanmean(list(per_query.values()))), "per_query": per_query}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(SHARED_DATA / "OHSUMED"))
    parser.add_argument("--folds", default="1")
    parser.add_argument("--out", default="results")
    parser.add_argument("--name", default="grid_search")
    args = parser.parse_args(argv)
    from rsrank import load_letor_fold
    from rsrank.evaluation.stats import paired_t_test

    rows, report = [], {"command": command_line(), "folds": {}}
    for k in [int(v) for v in args.folds.split(",")]:
        fold = load_letor_fold(args.data, k)
        train = train_case(args.data, k)
        cases = {"rsrank train": train}
        for n_splits in (3, 5):
            cases[f"GridSearchCV, GroupKFold({n_splits})"] = search_case(fold, n_splits)
        cases["RSRankCV(), 3 folds of train"] = cv_case(fold, eval_set=False)
        cases["RSRankCV(), eval_set=vali"] = cv_case(fold, eval_set=True)
        report["folds"][k] = cases
        for name, case in cases.items():
            ratio = case["test_ndcg10"] / train["test_ndcg10"]
            if case is train:
                compared = ""
            else:
                a = np.array([case["per_query"][q] for q in train["per_query"]])
                b = np.array(list(train["per_query"].values()))
                both = np.isfinite(a) & np.isfinite(b)
                compared = f"{ratio:.3f}x (p = {paired_t_test(a[both], b[both]).pvalue:.2g})"
            pick = case.get("best_params", case.get("params"))
            rows.append(f"| {k} | {name} | {case.get('divergence_warnings', '')} | "
                        f"{json.dumps(pick, default=str)} | {case['n_features']} | "
                        f"{case['test_ndcg10']:.4f} | {compared} |")
    summary = []
    for name in report["folds"][min(report["folds"])]:
        cases = [report["folds"][k][name] for k in report["folds"]]
        base = [report["folds"][k]["rsrank train"] for k in report["folds"]]
        a = np.concatenate([[c["per_query"][q] for q in b["per_query"]]
                            for c, b in zip(cases, base)])
        b = np.concatenate([list(b["per_query"].values()) for b in base])
        both = np.isfinite(a) & np.isfinite(b)
        compared = ("" if name == "rsrank train" else
                    f"{np.nanmean(a) / np.nanmean(b):.3f}x (p = "
                    f"{paired_t_test(a[both], b[both]).pvalue:.2g})")
        warned = sum(c.get("divergence_warnings", 0) for c in cases)
        summary.append(f"| {name} | {'' if name == 'rsrank train' else warned} | "
                       f"{np.mean([c['n_features'] for c in cases]):.1f} | "
                       f"{np.nanmean(a):.4f} | {compared} |")
    markdown = "\n".join([
        "# A grid search as a newcomer writes it", "",
        f"`{command_line()}`: `GridSearchCV(RSRank(), {GRID}, cv=GroupKFold(k))` on each "
        "fold's training queries (qid routed by `rsrank.evaluation.model_selection.fit_search`), its "
        "DivergenceWarnings, its pick and the test NDCG@10 (LETOR convention) of the refit "
        "model; `RSRankCV()` on 3 folds of the training queries and with vali as its "
        "`eval_set`; against `rsrank train` on the same fold; p: paired t-test over the test "
        "queries.", "",
        "Over the folds (the test queries of every fold; p: paired over all of them):", "",
        "| method | DivergenceWarnings | features | test NDCG@10 | against rsrank train |",
        "|---|---|---|---|---|", *summary, "", "Per fold:", "",
        "| fold | method | DivergenceWarnings | pick | features | test NDCG@10 | "
        "against rsrank train |", "|---|---|---|---|---|---|---|", *rows])
    write_report(args.out, args.name, report, markdown)
    print(markdown)


if __name__ == "__main__":
    main()
