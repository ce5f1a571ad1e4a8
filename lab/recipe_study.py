"""Training recipes across datasets: which default holds on any data.

    python scripts/recipe_study.py [--out results] [--seeds 3] [--data ../shared/data]
        [--datasets NAME,...] [--recipes NAME,...] [--jobs 2]

Writes ``recipes.md`` and ``recipes.json`` into ``--out``.

For every dataset, every seed and every fold (train / vali / test, LETOR's
protocol), each recipe is fitted as ``RSRank(**recipe).fit(train,
eval_set=vali)`` (a list of settings: each fitted, the best vali kept) and
scored on test; the peers are tuned on the same vali:
XGBoost's linear ranker (``booster="gblinear"``, ``rank:ndcg``, step size
chosen on vali among six, rounds early-stopped on vali) and LightGBM's
lambdarank (early-stopped on vali). ``cli`` runs ``rsrank train DIR`` with
no flags on the same folds written as files, ``cli-1se`` and ``cli-before``
with the flags of :data:`CLI_VARIANTS`. Scores are test NDCG@10 with
LETOR's convention, per query, so every method is compared with XGBoost (or
``--baseline``) by a paired t-test over the test queries of all folds and
seeds. ``cli-additive`` is ``rsrank train DIR --additive`` and
``lightgbm-stumps`` LightGBM with ``num_leaves=2`` (an additive model of
its own); the ``nonlinear`` sets (:func:`rsrank.reading.synthetic.make_nonlinear`)
are for them.

Datasets: ``_datasets.py``, the real folds (OHSUMED, the bundled data,
LightGBM's example) and generated sets that differ the way real data does.
Real data gives the same test queries for every seed: the paired tests take
each of them once, its values averaged over the seeds.
"""

import argparse
import contextlib
import io
import json
import tempfile
import time
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from scipy import stats

from rsrank import RSRank
from rsrank.cli import main as rsrank_main
from rsrank.learning.binning import bin_codes, fit_thresholds
from rsrank.evaluation.experiments import per_query_from_results
from rsrank.evaluation.metrics import ndcg_per_query
from rsrank.evaluation.writers import write_letor

from _bench import SHARED_DATA, command_line, write_report
from _datasets import DATASETS, FIXED_TEST, dataset_folds

#: rsrank train DIR with these flags
CLI_VARIANTS = {
    "cli": [],
    "cli-1se": ["--within", "1se"],
    # ... judged on vali and on 3 folds of the training queries
    "cli-valicv3": ["--vali-cv", "3"],
    # the dense model (no L1), the reference of a sparsity trade
    "cli-dense": ["--l1-ratio", "0"],
    # the sparsest point within 3% of the best on the default path, judged on vali alone
    # (--within 0.03 before it took the sparse recipe) ...
    "cli-within3": ["--within", "0.03", "--vali-cv", "0", "--l1-ratio",
                    "0.464,0.215,0.1,0.0464,0.0215,0.01,0.00464,0.00215,0.001,0"],
    # ... and with the strong end of the path sampled more finely (0.681, 0.316 and 0.147
    # of the edge added) and judged on vali and on 3 folds of the training queries: the
    # sparse recipe, what --within 0.03 now does
    "cli-sparse3": ["--within", "0.03", "--vali-cv", "3", "--l1-ratio",
                    "0.681,0.464,0.316,0.215,0.147,0.1,0.0464,0.0215,0.01,0.00464,0.00215,"
                    "0.001,0"],
    # ... with each point's relaxed refit on the features it kept beside it
    "cli-sparse3-relax": ["--within", "0.03", "--vali-cv", "3", "--relax", "--l1-ratio",
                          "0.681,0.464,0.316,0.215,0.147,0.1,0.0464,0.0215,0.01,0.00464,"
                          "0.00215,0.001,0"],
    # the defaults of rsrank 0.x before the grid scaled to the data
    "cli-before": ["--l1", "0,0.3,1,3", "--learning-rate", "0.01"],
    # the path's points at every one of their epochs, none stopped by --weight-tol
    "cli-full": ["--weight-tol", "0"],
    # stopped sooner than the default 1e-4
    "cli-tol1e-3": ["--weight-tol", "1e-3"],
    # one step function per feature, whole features along the path
    "cli-additive": ["--additive"],
    # ... selecting the sparsest point within 2% of the best vali, or one standard error
    "cli-additive-2pct": ["--additive", "--within", "0.02"],
    "cli-additive-1se": ["--additive", "--within", "1se"],
    # ... with a budget of ten pairs of features
    "cli-interactions": ["--additive", "--interactions", "10"],
    # ... with 255 bins a feature instead of 32
    "cli-additive-bins255": ["--additive", "--max-bins", "255"],
    # ... and pairs on grids of 16 x 16 cells, not 8 x 8
    "cli-interactions-fine": ["--additive", "--interactions", "10", "--max-bins", "255",
                              "--interaction-bins", "16"],
    # ... each path point as penalized, without its relaxed refit
    "cli-additive-norelax": ["--additive", "--no-relax"],
    "cli-interactions-norelax": ["--additive", "--interactions", "10", "--no-relax"],
    # ... with the linear model's path beside the shapes', the selection seeing both kinds
    "cli-additive-with-linear": ["--additive", "--with-linear"],
    "cli-interactions-with-linear": ["--additive", "--interactions", "10", "--with-linear"],
    # ... the additive kinds with their path's points stopped at --weight-tol 1e-3
    "cli-additive-tol1e-3": ["--additive", "--weight-tol", "1e-3"],
    "cli-interactions-tol1e-3": ["--additive", "--interactions", "10", "--weight-tol", "1e-3"],
}

RECIPES = {
    "default": {},
    "before": {"learning_rate": 1e-2},  # the default step size before "auto"
    "average": {"average": True},
    "lr0.1": {"learning_rate": 0.1},
    "lr0.1+average": {"learning_rate": 0.1, "average": True},
    "lr1e-3": {"learning_rate": 1e-3},
    "lr1e-3+average+300": {"learning_rate": 1e-3, "average": True, "max_iter": 300},
    "select-lr": [{"learning_rate": r} for r in (1e-3, 1e-2, 1e-1)],
    "select-lr+average": [{"learning_rate": r, "average": a} for r in (1e-2, 1e-1)
                          for a in (False, True)],
    "last-epoch": {"restore_best": False},
    "last-epoch+average": {"restore_best": False, "average": True},
    "online": {"batch_size": 1},
    "online+average": {"batch_size": 1, "average": True},
    "paper": {"batch_size": 1, "normalize": "none", "learning_rate": 1e-3},
    # RSRank() as scikit-learn's searches fit it: no eval_set (the step from the
    # data's curvature), and the fixed step that "auto" took there before
    "no-eval": {"eval_set": False},
    "no-eval-lr1e-2": {"eval_set": False, "learning_rate": 1e-2},
}

#: converged L1 paths (see :func:`fit_paths`), by their pair weights
PATHS = {"path-unit": ("unit",), "path-ndcg": ("delta_ndcg",),
         "path-both": ("unit", "delta_ndcg")}
PATH_TEXT = {name: "converged L1 path (stable_path.py), pair weights " + " and ".join(w)
             + ", sparsest within 1% of the best vali" for name, w in PATHS.items()}
PATH_RATIOS = (0.464, 0.215, 0.1, 0.0464, 0.0215, 0.01, 0.00464, 0.00215, 0.001, 0.0)


def dense(X):
    return X.toarray() if hasattr(X, "toarray") else np.asarray(X)


# -- methods ------------------------------------------------------------------------------------


def ndcg10(split, scores):
    X, y, qid = split
    return ndcg_per_query(y, scores, qid, 10, convention="letor")


def fit_rsrank(fold, params, seed):
    """``params``: one setting, or a list of them of which the best vali
    NDCG@10 is kept."""
    best = None
    for setting in params if isinstance(params, list) else [params]:
        setting = dict(setting)
        watched = setting.pop("eval_set", True)  # False: trained without validation data
        model = RSRank(random_state=seed, eval_train=False, **setting)
        model.fit(*fold["train"][:2], qid=fold["train"][2],
                  eval_set=fold["vali"] if watched else None)
        vali = (float(np.nanmax(model.history_["val_ndcg"])) if watched
                else float(np.nanmean(ndcg10(fold["vali"], model.predict(fold["vali"][0])))))
        if best is None or vali > best[0]:
            best = (vali, model)
    model = best[1]
    test = fold["test"]
    return ndcg10(test, model.predict(test[0])), {
        "nonzero": int(np.count_nonzero(model.coef_)),
        "best_epoch": int(model.best_iteration_ or 0), "epochs": int(model.n_iter_)}


def fit_paths(fold, seed, epochs=300, within=0.01):
    """The library's L1 path (:func:`rsrank.learning.path.walk`) for each pair
    weighting: ``learning_rate="curvature"`` (2 over the trace of the pair
    loss's Hessian at w = 0), each point's last iterate after ``epochs``
    full-batch epochs, warm-started from strong to weak L1; then, for each
    of :data:`PATHS`, the sparsest point within ``within`` of the best vali
    NDCG@10 among its weightings' points.
    Returns ``{path name: (test values, info)}``."""
    from rsrank import QueryData
    from rsrank.evaluation.experiments import sparsest_within
    from rsrank.learning.path import walk

    (X, y, qid), vali, test = fold["train"], fold["vali"], fold["test"]
    data = QueryData(X, y, qid)
    points = {}
    for weighting in ("unit", "delta_ndcg"):
        estimator = RSRank(learning_rate="curvature", max_iter=epochs, pair_weight=weighting,
                           random_state=seed, eval_train=False)
        points[weighting] = []
        for ratio, point in zip(PATH_RATIOS, walk(estimator, [{"l1_ratio": r} for r in
                                                              PATH_RATIOS], data)):
            model = point.model
            per_query = ndcg10(vali, model.predict(vali[0]))
            points[weighting].append({"n_nonzero": int(np.count_nonzero(model.coef_)),
                                      "vali_score": float(np.nanmean(per_query)),
                                      "per_query": per_query, "model": model,
                                      "weighting": weighting, "ratio": ratio})
    out = {}
    for name, weightings in PATHS.items():
        chosen = sparsest_within([p for w in weightings for p in points[w]], within)
        out[name] = (ndcg10(test, chosen["model"].predict(test[0])), {
            "nonzero": chosen["n_nonzero"], "weighting": chosen["weighting"],
            "l1_ratio": chosen["ratio"]})
    return out


XGB_RATES = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0)


def fit_xgboost(fold, seed):
    import xgboost

    best = None
    for rate in XGB_RATES:
        model = xgboost.XGBRanker(booster="gblinear", objective="rank:ndcg", eval_metric="ndcg@10",
                                  learning_rate=rate, n_estimators=500, early_stopping_rounds=50,
                                  n_jobs=1, random_state=seed)
        (X, y, qid), (Xv, yv, qv) = fold["train"], fold["vali"]
        model.fit(X, y, qid=qid, eval_set=[(Xv, yv)], eval_qid=[qv], verbose=False)
        vali = float(np.mean(ndcg10(fold["vali"], model.predict(Xv))))
        if best is None or vali > best[0]:
            best = (vali, model, rate)
    _, model, rate = best
    coef = np.asarray(model.coef_).ravel()
    return ndcg10(fold["test"], model.predict(fold["test"][0])), {
        "nonzero": int(np.count_nonzero(coef)), "rate": rate}


def fit_lightgbm(fold, seed, num_leaves=31):
    """LightGBM's lambdarank with its defaults (``num_leaves=2``: stumps, an
    additive model), early-stopped on vali."""
    import lightgbm

    (X, y, qid), (Xv, yv, qv) = fold["train"], fold["vali"]
    sizes = lambda q: np.unique(q, return_counts=True)[1]  # noqa: E731 (queries are contiguous)
    model = lightgbm.LGBMRanker(n_estimators=1000, random_state=seed, n_jobs=1, verbose=-1,
                                num_leaves=num_leaves)
    model.fit(X, y, group=sizes(qid), eval_X=(Xv,), eval_y=(yv,), eval_group=[sizes(qv)],
              eval_at=[10], callbacks=[lightgbm.early_stopping(50, verbose=False)])
    return ndcg10(fold["test"], model.predict(fold["test"][0])), {}


def run_cli(folds, seed, flags=()):
    """``rsrank train DIR`` (with no flags but ``flags``) on the folds
    written as files."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "data"
        for k, fold in enumerate(folds, 1):
            (root / f"Fold{k}").mkdir(parents=True)
            for split, (X, y, qid) in fold.items():
                write_letor(root / f"Fold{k}" / f"{split}.txt", dense(X), y, qid)
        out = Path(tmp) / "run"
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = rsrank_main(["train", str(root), "--out", str(out), "--seed", str(seed),
                                "--quiet", *flags])
        if code != 0:
            raise RuntimeError(f"rsrank train exited with {code}")
        document = json.loads((out / "results.json").read_text())
    per_query = per_query_from_results(document)
    by_key = dict(zip(per_query["qid"], per_query["NDCG@10"]))
    # The order of the other methods: fold by fold, queries by increasing qid.
    values = np.array([by_key[f"{k}:{q}"] for k, fold in enumerate(folds, 1)
                       for q in np.unique(fold["test"][2])], dtype=float)
    kept = [sorted(name for name, _ in entry["selected_features"])
            for entry in document["folds"]]
    return values, {"nonzero": float(np.mean([len(names) for names in kept])), "kept": kept}


TREE_AND_LINEAR_PEERS = ("xgboost", "lightgbm", "lightgbm-stumps")
#: ``cli-binned<B>``: linear ``rsrank train`` on the staircase that an additive
#: model of B bins sees (:func:`staircase`), for the B of this tuple
BINNED = (32, 128, 255)


def staircase(folds, max_bins):
    """Each fold with every value replaced by the largest of its feature's
    thresholds (:func:`rsrank.learning.binning.fit_thresholds` on the fold's
    training rows) at or below it, or the training minimum below them all:
    a linear model on these values is an additive model of ``max_bins``
    bins whose steps are proportional to the gaps between thresholds, so
    what it loses against the raw values is what the bins cost."""
    out = []
    for fold in folds:
        train = dense(fold["train"][0])
        cuts = fit_thresholds(train, max_bins)
        edges = [np.r_[np.float32(train[:, j].min()), c].astype(float) for j, c in enumerate(cuts)]
        binned = {}
        for split, (X, y, qid) in fold.items():
            codes = bin_codes(dense(X), cuts).codes
            # a value equal to a threshold is not above it: its code counts the
            # thresholds strictly below, so the edge is the last of those
            values = np.column_stack([edges[j][codes[:, j]] for j in range(len(cuts))])
            binned[split] = (values, y, qid)
        out.append(binned)
    return out


def run_one(name, seed, data_root, recipes, peers, peer_cache=None):
    """Every method on one dataset and seed: {method: (per-query values, info per fold)}.
    ``peer_cache``: a directory keeping the peers' results between runs."""
    folds = dataset_folds(name, seed, data_root)
    results = {}
    cached = Path(peer_cache) / f"{name}-{seed}.json" if peer_cache else None
    if cached is not None and cached.exists():
        kept = json.loads(cached.read_text())
        results.update({m: r for m, r in kept.items() if m in peers})
        peers = peers - set(kept)
    methods = [(f"rsrank:{r}", lambda f, r=r: fit_rsrank(f, RECIPES[r], seed))
               for r in recipes if r not in PATHS]
    if "xgboost" in peers:
        methods.append(("xgboost", lambda f: fit_xgboost(f, seed)))
    if "lightgbm" in peers:
        methods.append(("lightgbm", lambda f: fit_lightgbm(f, seed)))
    if "lightgbm-stumps" in peers:
        methods.append(("lightgbm-stumps", lambda f: fit_lightgbm(f, seed, num_leaves=2)))
    for method, fit in methods:
        start = time.perf_counter()
        parts = [fit(fold) for fold in folds]
        results[method] = {"values": np.concatenate([p[0] for p in parts]).tolist(),
                           "info": [p[1] for p in parts],
                           "seconds": time.perf_counter() - start}
    wanted = [r for r in recipes if r in PATHS]
    if wanted:
        start = time.perf_counter()
        parts = [fit_paths(fold, seed) for fold in folds]
        for r in wanted:
            results[f"rsrank:{r}"] = {
                "values": np.concatenate([p[r][0] for p in parts]).tolist(),
                "info": [p[r][1] for p in parts],
                "seconds": (time.perf_counter() - start) / len(wanted)}
    for bins in BINNED:
        if f"cli-binned{bins}" in peers:
            start = time.perf_counter()
            values, info = run_cli(staircase(folds, bins), seed)
            results[f"cli-binned{bins}"] = {"values": values.tolist(), "info": [info],
                                            "seconds": time.perf_counter() - start}
    for peer in sorted(p for p in peers if p in CLI_VARIANTS):
        start = time.perf_counter()
        values, info = run_cli(folds, seed, CLI_VARIANTS[peer])
        results[peer] = {"values": values.tolist(), "info": [info],
                         "seconds": time.perf_counter() - start}
    if cached is not None:
        kept = json.loads(cached.read_text()) if cached.exists() else {}
        kept.update({m: r for m, r in results.items() if m in TREE_AND_LINEAR_PEERS})
        cached.write_text(json.dumps(kept))
    n_features = folds[0]["train"][0].shape[1]
    return name, seed, n_features, results


# -- report -------------------------------------------------------------------------------------


def summarize(runs, baseline="xgboost"):
    """Per dataset and method: mean test NDCG@10 over the queries of every
    seed, paired t against ``baseline``, kept features, best-epoch positions."""
    table = {}
    for name, seed, n_features, results in runs:
        entry = table.setdefault(name, {"n_features": n_features, "seeds": [], "methods": {}})
        entry["seeds"].append(seed)
        for method, result in results.items():
            slot = entry["methods"].setdefault(method, {"values": [], "info": [], "seconds": 0.0,
                                                        "seed_means": [], "seed_nonzero": []})
            slot["seed_means"].append(float(np.mean(result["values"])))
            nonzero = [i["nonzero"] for i in result["info"] if "nonzero" in i]
            slot["seed_nonzero"].append(float(np.mean(nonzero)) if nonzero else None)
            slot["values"].extend(result["values"])
            slot["info"].extend(result["info"])
            slot["seconds"] += result["seconds"]
    for name, entry in table.items():
        reference = _by_query(name, entry, entry["methods"].get(baseline, {}).get("values", []))
        for method, slot in entry["methods"].items():
            values = _by_query(name, entry, slot["values"])
            slot["per_query"] = values.tolist()  # for paired tests against other runs
            slot["mean"] = float(values.mean())
            slot["n_queries"] = len(values)
            if len(reference) == len(values) and method != baseline:
                slot["p_vs_baseline"] = float(stats.ttest_rel(values, reference).pvalue)
                slot["ratio_to_baseline"] = float(values.mean() / reference.mean())
            nonzero = [i["nonzero"] for i in slot["info"] if "nonzero" in i]
            slot["mean_nonzero"] = float(np.mean(nonzero)) if nonzero else None
            epochs = [(i["best_epoch"], i["epochs"]) for i in slot["info"] if "best_epoch" in i]
            if epochs:
                slot["best_first"] = float(np.mean([b == 1 for b, _ in epochs]))
                slot["best_last"] = float(np.mean([b == e for b, e in epochs]))
    return table


def _by_query(name, entry, values):
    """``values`` (every seed's, in seed order) as the paired tests take
    them: for :data:`FIXED_TEST` sets, each test query once, averaged over
    the seeds."""
    values = np.asarray(values, dtype=float)
    if name in FIXED_TEST and len(values):
        return values.reshape(len(entry["seeds"]), -1).mean(axis=0)
    return values


def per_seed_markdown(table):
    """Per dataset and seed: each method's mean test NDCG@10 over that
    seed's test queries, and the features it kept (mean over the folds)."""
    lines = []
    for name, entry in table.items():
        methods = list(entry["methods"])
        lines += ["", f"Per seed, {name}: test NDCG@10, then the features kept", "",
                  "| seed | " + " | ".join(methods) + " |", "|---" * (len(methods) + 1) + "|"]
        for k, seed in enumerate(entry["seeds"]):
            cells = []
            for method in methods:
                slot = entry["methods"][method]
                cell = f"{slot['seed_means'][k]:.4f}"
                if slot["seed_nonzero"][k] is not None:
                    cell += f", {slot['seed_nonzero'][k]:.1f}"
                cells.append(cell)
            lines.append(f"| {seed} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def describe(params):
    if isinstance(params, str):
        return params
    if isinstance(params, list):
        return "[" + ", ".join(describe(p) for p in params) + "]"
    return f"RSRank({', '.join(f'{k}={v!r}' for k, v in params.items())})"


BASELINE_TEXT = {"xgboost": "XGBoost gblinear tuned on vali",
                 "cli": "`rsrank train DIR` (linear, no flags)"}


def add_before(table, path):
    """Each method of the report at ``path`` (this study's JSON, from an
    older checkout) as ``before:METHOD`` beside the same datasets of
    ``table``, with its per-query values. A report made with ``--before``
    itself holds its own baseline's methods as ``before:METHOD``: those are
    not that checkout's runs, and are left out."""
    before = json.loads(Path(path).read_text())
    for name, entry in table.items():
        old = before["table"].get(name)
        if old is None or old["seeds"] != entry["seeds"]:
            continue
        for method, slot in old["methods"].items():
            if method.startswith("before:"):
                continue
            entry["methods"][f"before:{method}"] = {
                "per_query": slot["per_query"], "mean": slot["mean"],
                "n_queries": slot["n_queries"], "mean_nonzero": slot["mean_nonzero"]}


def against_before(table):
    """Lines of a table: each method against its ``before:`` run, the
    difference of the means and the paired t-test over the same queries."""
    pairs = sorted({m for e in table.values() for m in e["methods"]
                    if f"before:{m}" in e["methods"]})
    if not pairs:
        return []
    lines = ["", "Against the same method before (the `--before` report): difference of "
             "the means (paired t-test p over the same test queries), then the kept "
             "features before and now.", "",
             "| data | " + " | ".join(pairs) + " |", "|---" * (len(pairs) + 1) + "|"]
    for name, entry in table.items():
        cells = []
        for method in pairs:
            now, old = entry["methods"].get(method), entry["methods"].get(f"before:{method}")
            if now is None or old is None or len(now["per_query"]) != len(old["per_query"]):
                cells.append("")
                continue
            a, b = np.asarray(now["per_query"]), np.asarray(old["per_query"])
            p = stats.ttest_rel(a, b).pvalue if np.any(a != b) else 1.0
            kept = (f"{old['mean_nonzero']:.1f} / {now['mean_nonzero']:.1f}"
                    if now["mean_nonzero"] is not None and old["mean_nonzero"] is not None
                    else "")
            cells.append(f"{a.mean() - b.mean():+.4f} (p={p:.2g}), {kept}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def markdown(table, recipes, baseline="xgboost"):
    clis = [m for m in [*CLI_VARIANTS, *(f"cli-binned{b}" for b in BINNED)]
            if any(m in e["methods"] for e in table.values())]
    methods = [f"rsrank:{r}" for r in recipes] + clis + list(TREE_AND_LINEAR_PEERS)
    present = [m for m in methods if any(m in e["methods"] for e in table.values())]
    lines = ["Test NDCG@10 (LETOR convention), mean over the test queries of every fold and "
             "seed; in brackets the paired t-test p against "
             f"{BASELINE_TEXT.get(baseline, baseline)} (+ above, - below), over the distinct "
             "test queries (on " + ", ".join(sorted(FIXED_TEST)) + ", whose test queries every "
             "seed shares, each query once with its values averaged over the seeds), then the "
             "mean number of kept features. The queries column counts the distinct test "
             "queries.", "",
             "| data (queries, features) | " + " | ".join(present) + " |",
             "|---" * (len(present) + 1) + "|"]
    means = {m: [] for m in present}
    kept = {m: [] for m in present}  # the features each dataset's fits keep, on average
    for name, entry in table.items():
        cells = []
        for method in present:
            slot = entry["methods"].get(method)
            if slot is None:
                cells.append("")
                continue
            means[method].append(slot["mean"])
            cell = f"{slot['mean']:.4f}"
            if "p_vs_baseline" in slot:
                sign = "+" if slot["ratio_to_baseline"] >= 1 else "-"
                cell += f" ({sign}p={slot['p_vs_baseline']:.2g})"
            if slot["mean_nonzero"] is not None:
                cell += f", {slot['mean_nonzero']:.1f}"
                kept[method].append(slot["mean_nonzero"])
            cells.append(cell)
        n_queries = next(iter(entry["methods"].values()))["n_queries"]
        lines.append(f"| {name} ({n_queries}, {entry['n_features']}) | " + " | ".join(cells) + " |")
    lines.append("| mean over datasets | " + " | ".join(
        (f"{np.mean(means[m]):.4f}" if len(means[m]) == len(table) else "")
        + (f", {np.mean(kept[m]):.1f}" if len(kept[m]) == len(table) else "")
        for m in present) + " |")
    lines += ["", "Share of fits whose best vali epoch was the first / the last:", "",
              "| recipe | " + " | ".join(table) + " |", "|---" * (len(table) + 1) + "|"]
    for method in present:
        if not method.startswith("rsrank:"):
            continue
        cells = []
        for entry in table.values():
            slot = entry["methods"].get(method, {})
            cells.append(f"{slot['best_first']:.2f} / {slot['best_last']:.2f}"
                         if "best_first" in slot else "")
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    lines += ["", "Recipes (a list: each fitted, the best vali NDCG@10 kept): "
              + "; ".join(f"`{r}` = `{describe(RECIPES[r] if r in RECIPES else PATH_TEXT[r])}`" for r in recipes)]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--data", default=str(SHARED_DATA))
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--recipes", default=",".join(RECIPES))
    parser.add_argument("--peers", default="xgboost,lightgbm,cli",
                        help="comma-separated: xgboost, lightgbm, lightgbm-stumps, and rsrank "
                        "train DIR as cli, cli-1se, cli-before, cli-full, cli-tol1e-3, "
                        "cli-additive (see CLI_VARIANTS), and cli-binned32, cli-binned128, "
                        "cli-binned255: rsrank train on the staircase of that many bins")
    parser.add_argument("--baseline", default="xgboost",
                        help="the method the paired t-tests compare with (default xgboost)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--name", default="recipes")
    parser.add_argument("--peer-cache", help="directory keeping the peers' results between runs")
    parser.add_argument("--before", help="this study's JSON from an older checkout: each of "
                        "its methods is tested against the same method now")
    parser.add_argument("--per-seed", action="store_true",
                        help="add a table per dataset of each seed's test NDCG@10 and kept features")
    args = parser.parse_args(argv)
    names = args.datasets.split(",")
    recipes = [r for r in args.recipes.split(",") if r]
    peers = set(args.peers.split(",")) - {""}
    if not (Path(args.data) / "OHSUMED").is_dir():
        names = [n for n in names if n not in ("ohsumed", "lightgbm")]
    if args.peer_cache:  # made before any work: a run's results are written as it ends
        Path(args.peer_cache).mkdir(parents=True, exist_ok=True)
    tasks = [(name, seed) for name in names for seed in range(args.seeds)]
    runs = Parallel(n_jobs=args.jobs, verbose=0)(
        delayed(run_one)(name, seed, args.data, recipes, peers, args.peer_cache) for name, seed in tasks)
    table = summarize(runs, args.baseline)
    text = markdown(table, recipes, args.baseline)
    if args.before:
        add_before(table, args.before)
        text += "\n".join(against_before(table)) + "\n"
    if args.per_seed:
        text += per_seed_markdown(table)
    print(text)
    report = {"command": command_line(), "recipes": {r: RECIPES[r] if r in RECIPES else PATH_TEXT[r] for r in recipes},
              "table": {name: {"n_features": e["n_features"], "seeds": e["seeds"],
                               "methods": {m: {k: v for k, v in s.items() if k != "values"}
                                           for m, s in e["methods"].items()}}
                        for name, e in table.items()}}
    write_report(Path(args.out), args.name, report, text)


if __name__ == "__main__":
    main()
