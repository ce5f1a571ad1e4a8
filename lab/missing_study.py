"""Missing values: what 20% NaN in an informative feature costs an additive
model, against the same model on the complete data.

    python scripts/missing_study.py [--seeds 3] [--queries 300] [--share 0.2] [--out results]

Data, a fresh draw per seed, queries split 60/20/20 into train, vali and
test by a seeded shuffle; in every split a seeded ``--share`` of the rows
lose the value of one informative feature (NaN), the same feature in train,
vali and test:

* ``make_nonlinear``: ``saturating`` (a count whose first few matter) and
  ``step`` (freshness within a window), one at a time;
* ``make_interactions("and", "product")``: ``and_a`` (half of an AND);
* the bundled data's generator (``make_letor_like``): its informative
  feature of largest true weight (a different one in each seed's draw).

Methods: ``truth`` (on the AND data): the noise-free relevance the data
were drawn from, a missing feature's effect averaged over its uniform
values, which is the best any ranker can do with that value missing;
``rsrank train --additive``  (and ``--interactions 10`` on the AND
data) by the library's recipe on the complete data and on the data with
missing values; LightGBM's lambdarank (which has missing values of its own)
on both, as a reference for what the missing values take away. Test
NDCG@10 (LETOR convention), mean over seeds; p: paired t-test over the test
queries of every seed, missing against complete. Predictions on test rows
with a missing value are checked to be finite.
"""

import argparse
import warnings

import numpy as np

from _bench import command_line, write_report
from _synthetic import fit_lightgbm, fit_recipe, per_query_ndcg, splits


def datasets(n_queries, seed):
    """``[(name, data, feature, role, kinds)]`` of one seed (``role``
    names the feature in the report: the same role over seeds)."""
    from rsrank.reading.synthetic import make_interactions, make_letor_like, make_nonlinear

    nonlinear = make_nonlinear(n_queries=n_queries, random_state=seed)
    conjunction = make_interactions(("and", "product"), n_queries=n_queries, random_state=seed)
    letor = make_letor_like(n_queries=n_queries, docs_per_query=(20, 60), random_state=seed)
    letor.feature_names = [f"f{j + 1}" for j in range(letor.X.shape[1])]
    top = letor.feature_names[int(np.argmax(np.abs(letor.coef)))]
    return [("make_nonlinear", nonlinear, "saturating", "saturating", ("additive",)),
            ("make_nonlinear", nonlinear, "step", "step", ("additive",)),
            ("and + product", conjunction, "and_a", "and_a",
             ("truth", "additive", "interactions 10")),
            ("linear truth (make_letor_like)", letor, top, "largest true weight",
             ("additive",))]


def truth_scores(X, effects=("and", "product"), n_main=2):
    """The noise-free relevance of ``make_interactions(effects)``'s rows
    ``X``: each pair's effect, where one of its features is NaN the mean of
    the effect over that feature's uniform values on [-1, 1] (its
    expectation given the other), and the main effects (0 when missing)."""
    from rsrank.reading.synthetic import INTERACTIONS

    grid = np.linspace(-1.0, 1.0, 2001)
    total = np.zeros(len(X))
    for k, name in enumerate(effects):
        effect = INTERACTIONS[name]
        a, b = X[:, 2 * k], X[:, 2 * k + 1]
        value = effect(np.nan_to_num(a), np.nan_to_num(b)).astype(float)
        lost = np.isnan(a) & ~np.isnan(b)
        value[lost] = effect(grid[None, :], b[lost][:, None]).mean(axis=1)
        lost = np.isnan(b) & ~np.isnan(a)
        value[lost] = effect(a[lost][:, None], grid[None, :]).mean(axis=1)
        lost = np.isnan(a) & np.isnan(b)
        value[lost] = effect(grid[:, None], grid[None, :]).mean()
        total += value
    mains = X[:, 2 * len(effects):2 * len(effects) + n_main]
    return total + 0.5 * np.nan_to_num(mains).sum(axis=1)


KINDS = {"additive": {"additive": True},
         "interactions 10": {"additive": True, "interactions": 10}}


def with_missing(split, column, share, seed):
    X, y, qid = split
    X = X.copy()
    X[np.random.default_rng(seed).uniform(size=len(X)) < share, column] = np.nan
    return X, y, qid


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--share", type=float, default=0.2)
    parser.add_argument("--out", default="results")
    parser.add_argument("--name", default="missing")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    from rsrank.evaluation.stats import paired_t_test

    runs = {}
    for seed in range(args.seeds):
        for name, data, feature, role, kinds in datasets(args.queries, seed):
            column = data.feature_names.index(feature)
            complete = splits(data, seed)
            missing = [with_missing(split, column, args.share, seed * 10 + k)
                       for k, split in enumerate(complete)]
            for method in (*kinds, "lightgbm"):
                entry = runs.setdefault(f"{name} | {role} | {method}", {
                    "complete": [], "missing": [], "finite": True})
                for label, parts in (("complete", complete), ("missing", missing)):
                    if method == "truth":
                        values = per_query_ndcg(parts[2], truth_scores(parts[2][0]))
                    elif method == "lightgbm":
                        values = fit_lightgbm(*parts, seed, 31)
                    else:
                        values, model = fit_recipe(*parts, data.feature_names, seed,
                                                   **KINDS[method])
                        if label == "missing":
                            entry["finite"] &= bool(np.all(np.isfinite(
                                model.predict(parts[2][0]))))
                    entry[label].append(values)
                print(seed, name, feature, method,
                      {label: round(float(np.nanmean(entry[label][-1])), 4)
                       for label in ("complete", "missing")}, flush=True)
    lines = ["# Missing values", "",
             f"`{command_line()}`: {args.seeds} seeds of {args.queries} queries (60/20/20 "
             f"train/vali/test), {args.share:.0%} of the rows of every split missing (NaN) one "
             "informative feature; test NDCG@10 (LETOR convention), the mean over seeds; p: "
             "paired t-test over the test queries of every seed, missing against complete.", "",
             "| data | feature missing | method | complete | missing | difference (p) | "
             "predictions finite |", "|---|---|---|---|---|---|---|"]
    for key, entry in runs.items():
        name, feature, method = key.split(" | ")
        complete, missing = (np.concatenate(entry[label]) for label in ("complete", "missing"))
        both = np.isfinite(complete) & np.isfinite(missing)
        test = paired_t_test(complete[both], missing[both])
        entry.update(mean_complete=float(np.mean([np.nanmean(v) for v in entry["complete"]])),
                     mean_missing=float(np.mean([np.nanmean(v) for v in entry["missing"]])),
                     difference=test.difference, p=test.pvalue)
        finite = "yes" if entry["finite"] else "no"
        lines.append(f"| {name} | {feature} | {method} | {entry['mean_complete']:.4f} | "
                     f"{entry['mean_missing']:.4f} | {test.difference:+.4f} (p={test.pvalue:.2g})"
                     f" | {finite if method in KINDS else ''} |")
    report = {key: {k: v for k, v in entry.items() if k not in ("complete", "missing")}
              for key, entry in runs.items()}
    write_report(args.out, args.name, {"command": command_line(), "runs": report},
                 "\n".join(lines))


if __name__ == "__main__":
    main()
