"""Pairwise interactions on relevance made of pairwise effects: how far
one-feature shapes get, and what a budget of pairs adds.

    python scripts/interactions_study.py [--seeds 3] [--queries 300] [--out results]

Data: :func:`rsrank.reading.synthetic.make_interactions` with several kinds of
pairwise effect (each set below, plus two one-feature effects and twelve
noise features), a fresh draw per seed; its queries are split 60/20/20
into train, vali and test by a seeded shuffle. Methods, on the same splits:

* ``rsrank train`` (linear), ``rsrank train --additive`` and ``rsrank train
  --additive --interactions 10``: the library's recipe
  (:func:`rsrank.learning.recipe.train_recipe` through
  :func:`rsrank.evaluation.experiments.run_letor_folds`), selection on vali;
* LightGBM's lambdarank with 31 leaves and with 2 (stumps: one feature a
  tree, an additive model), 0.05 learning rate, early stopped on vali
  NDCG@10 (50 rounds of patience, at most 2000 trees);
* the oracle: the noise-free relevance itself, the ceiling of any ranker.

Test NDCG@10 with LETOR's convention: the mean over seeds ± their standard
deviation, and a paired t-test over the test queries of every seed, each
method against ``--additive``. The features an additive model keeps, and
whether it keeps both features of each true pair, are listed too.
"""

import argparse
import time
import warnings

import numpy as np

from _bench import command_line, write_report
from _synthetic import fit_lightgbm, fit_recipe, per_query_ndcg, splits

SETS = {"and + product": ("and", "product"), "xor": ("xor",),
        "switch + product": ("switch", "product")}
METHODS = ("linear", "additive", "interactions 10", "lightgbm", "lightgbm stumps", "oracle")
#: the most pairs of rsrank train --additive --interactions
PAIR_BUDGET = 10


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--out", default="results")
    parser.add_argument("--name", default="interactions_baseline")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    from rsrank.evaluation.stats import paired_t_test
    from rsrank.reading.synthetic import INTERACTIONS, make_interactions

    runs = {}
    for name, effects in SETS.items():
        per_method = {method: [] for method in METHODS}
        kept, seconds = [], {method: 0.0 for method in METHODS}
        for seed in range(args.seeds):
            data = make_interactions(effects, n_queries=args.queries, random_state=seed)
            train, vali, test = splits(data, seed)
            start = time.perf_counter()
            per_method["linear"].append(fit_recipe(train, vali, test, data.feature_names,
                                                   seed)[0])
            seconds["linear"] += time.perf_counter() - start
            start = time.perf_counter()
            values, model = fit_recipe(train, vali, test, data.feature_names, seed,
                                       additive=True)
            seconds["additive"] += time.perf_counter() - start
            per_method["additive"].append(values)
            start = time.perf_counter()
            values, paired = fit_recipe(train, vali, test, data.feature_names, seed,
                                        additive=True, interactions=PAIR_BUDGET)
            seconds["interactions 10"] += time.perf_counter() - start
            per_method["interactions 10"].append(values)
            used = set(model.model_.selected_indices().tolist())
            true = [(data.feature_names[a], data.feature_names[b]) for a, b in data.pairs]
            kept_pairs = [tuple(names) for names, _ in paired.selected_interactions()]
            kept.append({"seed": seed, "features": [n for n, _ in model.selected_features()],
                         "pairs_kept_whole": [all(j in used for j in pair)
                                              for pair in data.pairs],
                         "interactions_features": [n for n, _ in paired.selected_features()],
                         "interactions_pairs": [list(p) for p in kept_pairs],
                         "true_pairs_kept": [pair in kept_pairs for pair in true],
                         "n_features_used": len(paired.model_.selected_indices())})
            for method, leaves in (("lightgbm", 31), ("lightgbm stumps", 2)):
                start = time.perf_counter()
                per_method[method].append(fit_lightgbm(train, vali, test, seed, leaves))
                seconds[method] += time.perf_counter() - start
            rows = np.isin(data.qid, test[2])
            truth = sum(INTERACTIONS[e](data.X[rows, a], data.X[rows, b])
                        for e, (a, b) in zip(effects, data.pairs))
            truth = truth + 0.5 * data.X[rows][:, 2 * len(effects)] \
                + 0.5 * data.X[rows][:, 2 * len(effects) + 1]
            per_method["oracle"].append(per_query_ndcg(test, truth))
        summary = {}
        pooled_additive = np.concatenate(per_method["additive"])
        for method, values in per_method.items():
            means = [float(np.nanmean(v)) for v in values]
            pooled = np.concatenate(values)
            both = np.isfinite(pooled) & np.isfinite(pooled_additive)
            test_result = (None if method == "additive"  # difference: method - additive
                           else paired_t_test(pooled_additive[both], pooled[both]))
            summary[method] = {"mean": float(np.mean(means)), "std": float(np.std(means)),
                               "per_seed": means, "seconds": seconds[method],
                               "p_vs_additive": None if test_result is None
                               else test_result.pvalue,
                               "difference_vs_additive": None if test_result is None
                               else test_result.difference}
        # the budget of pairs against LightGBM's trees, query by query
        paired, trees = (np.concatenate(per_method[m]) for m in (f"interactions {PAIR_BUDGET}",
                                                                   "lightgbm"))
        both = np.isfinite(paired) & np.isfinite(trees)
        against = paired_t_test(trees[both], paired[both])
        runs[name] = {"effects": list(effects), "methods": summary, "additive_kept": kept,
                      "interactions_vs_lightgbm": {"difference": against.difference,
                                                   "p": against.pvalue}}
        print(name, {m: round(s["mean"], 4) for m, s in summary.items()}, flush=True)
    lines = ["# Pairwise effects: one-feature shapes, a budget of pairs and trees", "",
             f"`{command_line()}`: {args.seeds} seeds of {args.queries} queries per data set "
             "(60/20/20 train/vali/test); test NDCG@10 (LETOR convention), mean over seeds ± "
             "std; in brackets the paired t-test over the test queries of every seed against "
             "`rsrank train --additive` (difference, p).", "",
             "| data | " + " | ".join(METHODS) + " |", "|---" * (len(METHODS) + 1) + "|"]
    for name, run in runs.items():
        cells = []
        for method in METHODS:
            s = run["methods"][method]
            cell = f"{s['mean']:.4f} ± {s['std']:.4f}"
            if s["p_vs_additive"] is not None:
                cell += f" ({s['difference_vs_additive']:+.4f}, p={s['p_vs_additive']:.2g})"
            cells.append(cell)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", f"`interactions {PAIR_BUDGET}` against LightGBM's trees (paired t-test over "
              "the same test queries): " + "; ".join(
                  f"{name} {run['interactions_vs_lightgbm']['difference']:+.4f} "
                  f"(p={run['interactions_vs_lightgbm']['p']:.2g})" for name, run in runs.items()),
              "", "Seconds per method over all seeds (one thread each):", "",
              "| data | " + " | ".join(METHODS[:-1]) + " |", "|---" * len(METHODS) + "|"]
    for name, run in runs.items():
        lines.append(f"| {name} | " + " | ".join(
            f"{run['methods'][m]['seconds']:.1f}" for m in METHODS[:-1]) + " |")
    lines += ["", f"`interactions {PAIR_BUDGET}` is `rsrank train --additive --interactions "
              f"{PAIR_BUDGET}`. The pairs it kept, and whether they hold every true pair:", ""]
    for name, run in runs.items():
        for entry in run["additive_kept"]:
            pairs = ", ".join(f"{a} x {b}" for a, b in entry["interactions_pairs"]) or "none"
            lines.append(f"- {name}, seed {entry['seed']}: {pairs} (true pairs kept: "
                         f"{'all' if all(entry['true_pairs_kept']) else entry['true_pairs_kept']}"
                         f"; {entry['n_features_used']} features in use, shapes of "
                         f"{len(entry['interactions_features'])})")
    lines += ["", "Features `--additive` kept, and whether it kept both features of each "
              "true pair:", ""]
    for name, run in runs.items():
        for entry in run["additive_kept"]:
            lines.append(f"- {name}, seed {entry['seed']}: {', '.join(entry['features'])}; "
                         f"pairs kept whole: {entry['pairs_kept_whole']}")
    write_report(args.out, args.name, {"command": command_line(), "runs": runs},
                 "\n".join(lines))


if __name__ == "__main__":
    main()
