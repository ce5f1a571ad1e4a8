"""Monotone constraints on data whose true effects are monotone: what they
cost in NDCG, and what the unconstrained models violate.

    python scripts/monotone_study.py [--seeds 3] [--queries 300] [--out results]

Data, a fresh draw per seed, queries split 60/20/20 into train, vali and
test by a seeded shuffle:

* ``make_nonlinear``: ``step``, ``saturating`` and ``heavy_tailed`` grow
  with the relevance (``peaked`` does not, and stays free);
* ``make_interactions("and")``: ``and_a`` and ``and_b`` (an AND of two
  thresholds, increasing in both) and ``main_1``, ``main_2``;
* the bundled data's generator (``make_letor_like``): the linear truth's
  informative features, each in the direction of its true weight.

Each kind of model (``rsrank train``, ``--additive``, and on the AND data
``--additive --interactions 10``) is fitted by the library's recipe with
and without ``--monotone`` in those directions. Test NDCG@10 (LETOR
convention): the mean over seeds, and a paired t-test over the test
queries of every seed (constrained against free). Violations: on a grid of
121 values of each constrained feature past both ends of its training
values (and its training quantiles), the others held at 40 test rows', the
steps of the score against the constraint.
"""

import argparse
import warnings

import numpy as np

from _bench import command_line, write_report
from _synthetic import fit_recipe, splits

KINDS = {"linear": {}, "additive": {"additive": True},
         "interactions 10": {"additive": True, "interactions": 10}}


def datasets(n_queries, seed):
    """``{name: (data, directions, kinds)}`` of one seed."""
    from rsrank.reading.synthetic import make_interactions, make_letor_like, make_nonlinear

    nonlinear = make_nonlinear(n_queries=n_queries, random_state=seed)
    conjunction = make_interactions(("and",), n_queries=n_queries, random_state=seed)
    letor = make_letor_like(n_queries=n_queries, docs_per_query=(20, 60), random_state=seed)
    letor.feature_names = [f"f{j + 1}" for j in range(letor.X.shape[1])]
    signs = {letor.feature_names[j]: int(np.sign(letor.coef[j]))
             for j in np.flatnonzero(letor.coef)}
    return {
        "make_nonlinear": (nonlinear, {"step": 1, "saturating": 1, "heavy_tailed": 1},
                           ("additive",)),
        "AND + main effects": (conjunction, {"and_a": 1, "and_b": 1, "main_1": 1, "main_2": 1},
                               ("additive", "interactions 10")),
        "linear truth (make_letor_like)": (letor, signs, ("linear", "additive")),
    }


def violations(model, X_test, names, directions, seed):
    rng = np.random.default_rng(seed)
    base = X_test[rng.choice(len(X_test), 40, replace=False)]
    total = 0
    for name, direction in directions.items():
        j = names.index(name)
        values = X_test[:, j]
        span = values.max() - values.min()
        grid = np.unique(np.r_[np.linspace(values.min() - 0.1 * span,
                                           values.max() + 0.1 * span, 121),
                               np.quantile(values, np.linspace(0, 1, 33))])
        X = np.repeat(base, len(grid), axis=0)
        X[:, j] = np.tile(grid, len(base))
        steps = np.diff(model.predict(X).reshape(len(base), -1), axis=1)
        total += int(np.sum(direction * steps < 0))
    return total


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--out", default="results")
    parser.add_argument("--name", default="monotone")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    from rsrank.evaluation.stats import paired_t_test

    runs = {}
    for seed in range(args.seeds):
        for name, (data, directions, kinds) in datasets(args.queries, seed).items():
            train, vali, test = splits(data, seed)
            for kind in kinds:
                entry = runs.setdefault(f"{name} | {kind}", {
                    "directions": directions, "free": [], "monotone": [],
                    "violations_free": 0, "violations_monotone": 0})
                for label, extra in (("free", {}), ("monotone", {"monotone": directions})):
                    values, model = fit_recipe(train, vali, test, data.feature_names, seed,
                                               **KINDS[kind], **extra)
                    entry[label].append(values)
                    entry[f"violations_{label}"] += violations(
                        model, test[0], data.feature_names, directions, seed)
                print(seed, name, kind, {label: round(float(np.nanmean(entry[label][-1])), 4)
                                         for label in ("free", "monotone")}, flush=True)
    lines = ["# Monotone constraints on monotone truths", "",
             f"`{command_line()}`: {args.seeds} seeds of {args.queries} queries (60/20/20 "
             "train/vali/test); test NDCG@10 (LETOR convention), the mean over seeds; p: paired "
             "t-test over the test queries of every seed, constrained against free. "
             "Violations: steps of the score against a constraint on a dense grid of each "
             "constrained feature, summed over seeds.", "",
             "| data | model | constraints | free | `--monotone` | difference (p) | "
             "violations free | violations `--monotone` |", "|---|---|---|---|---|---|---|---|"]
    for key, entry in runs.items():
        name, kind = key.split(" | ")
        free, constrained = np.concatenate(entry["free"]), np.concatenate(entry["monotone"])
        both = np.isfinite(free) & np.isfinite(constrained)
        test = paired_t_test(free[both], constrained[both])
        entry.update(mean_free=float(np.mean([np.nanmean(v) for v in entry["free"]])),
                     mean_monotone=float(np.mean([np.nanmean(v) for v in entry["monotone"]])),
                     difference=test.difference, p=test.pvalue)
        shown = ", ".join(f"{f} {d:+d}" for f, d in entry["directions"].items())
        lines.append(f"| {name} | {kind} | {shown} | {entry['mean_free']:.4f} | "
                     f"{entry['mean_monotone']:.4f} | {test.difference:+.4f} "
                     f"(p={test.pvalue:.2g}) | {entry['violations_free']} | "
                     f"{entry['violations_monotone']} |")
    report = {key: {k: v for k, v in entry.items() if k not in ("free", "monotone")}
              for key, entry in runs.items()}
    write_report(args.out, args.name, {"command": command_line(), "runs": report},
                 "\n".join(lines))


if __name__ == "__main__":
    main()
