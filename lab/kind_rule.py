"""How ``rsrank train --additive --with-linear`` chooses between the linear
model and the shapes: the best vali score across both kinds, or the
one-standard-error rule between kinds (:func:`rsrank.evaluation.experiments.choose_fit`).

    python scripts/kind_rule.py [--datasets ...] [--seeds 3] [--interactions 0]

Per fold of each dataset and seed (the sets of ``lab/_datasets.py``),
both kinds' paths are walked once, as ``rsrank train`` walks them, and every
rule is applied to the same fits:

* ``linear`` and ``additive``: each kind's own choice (the sparsest point
  within 1% of its best vali NDCG@10), as ``rsrank train`` and ``rsrank
  train --additive`` make it;
* ``best vali``: the sparsest point within 1% of the best over both kinds
  (the rule before the one-standard-error rule);
* ``1se``: the additive choice only when its vali NDCG@10 is above the
  linear choice's by more than one standard error of the paired difference
  over the vali queries (``choose_fit``, the rule of ``--with-linear``).

The table gives test NDCG@10 (LETOR convention) over every test query of
every fold and seed, the paired t-test against the linear and the additive
choices, the folds where the shapes were kept and the mean features.
"""

import argparse
import time

import numpy as np
from sklearn.model_selection import ParameterGrid

from _bench import SHARED_DATA, command_line, write_report
from _datasets import FIXED_TEST, dataset_folds
from rsrank.evaluation.experiments import choose_fit, kind_choices, score_fits, sparsest_index
from rsrank.evaluation.metrics import ndcg_per_query
from rsrank.learning.path import walk
from rsrank.reading.querydata import QueryData
from rsrank.learning.recipe import train_recipe
from rsrank.evaluation.stats import paired_t_test

RULES = ("linear", "additive", "best vali", "1se")
DATASETS = ["ohsumed", "bundled", "lightgbm", "few-queries", "many-grades", "raw", "web-track",
            "heavy-redundant", "nonlinear", "nonlinear-noisy"]
#: real folds: the same for every seed, so one seed only
FIXED = {"ohsumed", "bundled"}


def fold_choices(fold, seed, interactions):
    """Each rule's choice on one fold: its kind, features and test values."""
    estimator, grid = train_recipe(additive=True, interactions=interactions, with_linear=True,
                                   seed=seed, n_jobs="auto")
    train, vali = (QueryData(*fold[split][:3]) for split in ("train", "vali"))
    points = walk(estimator, list(ParameterGrid(grid)), train, validation=vali, warm=True)
    tried, per_query, models = score_fits(points, vali, "ndcg@10", "letor")
    fits = [{**t, "per_query": v} for t, v in zip(tried, per_query)]
    (_, linear), (_, richer) = kind_choices(fits, 0.01).items()  # additive or interactions
    chosen = {"linear": linear, "additive": richer, "best vali": sparsest_index(fits, 0.01)}
    chosen["1se"] = choose_fit(fits, 0.01)
    X, y, qid = fold["test"][:3]
    out = {}
    for rule, index in chosen.items():
        out[rule] = {"kind": tried[index]["kind"], "n_nonzero": tried[index]["n_nonzero"],
                     "test": ndcg_per_query(y, models[index].face.predict(X), qid, 10,
                                            convention="letor").tolist()}
    return out


def summarize(runs, seeds=1):
    """Each rule's mean, kinds kept, features and paired tests; ``seeds``
    that share their test queries (:data:`FIXED_TEST`) give each query
    once, averaged over them."""
    pooled = {rule: np.concatenate([f[rule]["test"] for f in runs]).reshape(seeds, -1).mean(0)
              for rule in RULES}
    row = {}
    for rule in RULES:
        values = pooled[rule]
        entry = {"mean": float(np.nanmean(values)),
                 "shapes_kept": sum(f[rule]["kind"] != "linear" for f in runs),
                 "folds": len(runs),
                 "n_nonzero": float(np.mean([f[rule]["n_nonzero"] for f in runs]))}
        for against in ("linear", "additive"):
            both = np.isfinite(values) & np.isfinite(pooled[against])
            same = np.array_equal(values[both], pooled[against][both])
            result = None if same else paired_t_test(pooled[against][both], values[both])
            entry[f"p_vs_{against}"] = None if result is None else result.pvalue
            entry[f"diff_vs_{against}"] = 0.0 if result is None else result.difference
        row[rule] = entry
    return row


def cell(entry, rule):
    notes = []
    for against in ("linear", "additive"):
        p = entry[f"p_vs_{against}"]
        if rule != against and p is not None and p < 0.05:
            sign = "above" if entry[f"diff_vs_{against}"] > 0 else "below"
            notes.append(f"{sign} {against} p={p:.2g}")
    kept = f"{entry['shapes_kept']}/{entry['folds']}"
    return (f"{entry['mean']:.4f} ({kept}, {entry['n_nonzero']:.1f})"
            + (f" {'; '.join(notes)}" if notes else ""))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--interactions", type=int, default=0)
    parser.add_argument("--data", default=str(SHARED_DATA))
    parser.add_argument("--out", default="results")
    parser.add_argument("--name", default="kind_rule")
    args = parser.parse_args(argv)
    table, start = {}, time.perf_counter()
    for name in args.datasets.split(","):
        runs, seeds = [], 1 if name in FIXED else args.seeds
        for seed in range(seeds):
            for fold in dataset_folds(name, seed, args.data):
                runs.append(fold_choices(fold, seed, args.interactions))
        table[name] = summarize(runs, seeds if name in FIXED_TEST else 1)
        print(name, {rule: round(v["mean"], 4) for rule, v in table[name].items()}, flush=True)
    richer = f"interactions {args.interactions}" if args.interactions else "additive"
    lines = [f"# Choosing between the linear model and the shapes ({richer})", "",
             f"`{command_line()}`: per fold, both kinds' paths walked once (`rsrank train "
             f"--additive{' --interactions ' + str(args.interactions) if args.interactions else ''}"
             " --with-linear`), every rule applied to the same fits. Test NDCG@10 (LETOR "
             "convention) over every test query of every fold and seed (OHSUMED and the "
             f"bundled data: one seed, their folds are fixed; the others {args.seeds}); in "
             "brackets the folds where the shapes were kept and the mean features; then any "
             "paired t-test over the test queries with p < 0.05 against the linear or the "
             "shapes' own choice (LightGBM's example: its 50 test queries, each averaged "
             "over the seeds' vali splits).", "",
             "`best vali`: the sparsest point within 1% of the best vali NDCG@10 over both "
             "kinds. `1se`: the shapes only when their vali NDCG@10 is above the linear "
             "model's by more than one standard error of the paired difference over the vali "
             "queries (`rsrank.evaluation.experiments.choose_fit`, the rule of `--with-linear`). The JSON "
             "names the richer kind's own choice `additive`.", "",
             "| data | " + " | ".join(richer if r == "additive" else r for r in RULES) + " |",
             "|---" * (len(RULES) + 1) + "|"]
    for name, row in table.items():
        lines.append(f"| {name} | " + " | ".join(cell(row[r], r) for r in RULES) + " |")
    means = {rule: np.mean([row[rule]["mean"] for row in table.values()]) for rule in RULES}
    lines.append("| mean over datasets | " + " | ".join(f"{means[r]:.4f}" for r in RULES) + " |")
    lines += ["", f"{time.perf_counter() - start:.0f} s in all."]
    write_report(args.out, args.name, {"command": command_line(), "table": table},
                 "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
