"""How sparse ``rsrank train``'s selection gets on OHSUMED, by selection
variant, at ``--within 0.01`` (the default) and ``0.03`` (the sparse
recipe: the finer path and ``--vali-cv 3``).

    python scripts/sparsity_study.py [--data ../shared/data/OHSUMED] [--out results]
        [--only-defaults] [--before JSON]

Each variant is ``rsrank train DATA`` with its flags, at both ``--within``
values: the two grids and the two selections spelled out, so that each
run means the same at either ``--within``; the dense model is
``--l1-ratio 0`` (both pair weightings, no penalty). Reported per run: the
features kept (mean over the five folds, and as a share of the 45), test
NDCG@10 (LETOR convention, mean over the test queries of all folds), its
ratio to the dense model's, and a paired t-test over the test queries
against the variant that is the default at that ``--within``. Selection
never sees test data.

The JSON keeps every run's per-query values. ``--before`` takes such a
JSON from another version of RSRank (run with that version on the
``PYTHONPATH``) and adds, per variant in both, its features and NDCG@10
there and a paired t-test over the test queries of this run less that one.
``--only-defaults`` runs the dense model and the two default variants.
"""

import argparse
import json
from pathlib import Path

import numpy as np

from _bench import SHARED_DATA, command_line, fold_per_query, train_folds, write_report
from rsrank.learning.recipe import DEFAULT_L1_RATIO, SPARSE_L1_RATIO

GRIDS = {"default path": ",".join(f"{r:g}" for r in DEFAULT_L1_RATIO),
         "sparse path": ",".join(f"{r:g}" for r in SPARSE_L1_RATIO)}
VARIANTS = {f"{grid}, {selection}": ["--l1-ratio", ratios, "--vali-cv", folds]
            for grid, ratios in GRIDS.items()
            for selection, folds in (("vali alone", "0"), ("--vali-cv 3", "3"))}
#: the default flags at each --within, the reference of the paired tests
DEFAULT = {"0.01": "default path, vali alone", "0.03": "sparse path, --vali-cv 3"}


def run(data, flags):
    """``rsrank train DATA FLAGS``: per test query NDCG@10 (keyed by fold
    and qid) and the mean features kept."""
    folds = train_folds(data, flags)
    per_query = {(f["fold"], q): v for f in folds for q, v in fold_per_query(f).items()}
    return per_query, float(np.mean([f["n_nonzero"] for f in folds]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(SHARED_DATA / "OHSUMED"))
    parser.add_argument("--out", default="results")
    parser.add_argument("--name", default="sparsity")
    parser.add_argument("--only-defaults", action="store_true")
    parser.add_argument("--before", default=None)
    args = parser.parse_args(argv)
    before = {} if args.before is None else {
        (run["variant"].replace(" (the default)", ""), run["within"]): run
        for run in json.loads(Path(args.before).read_text())["runs"]}
    from rsrank.evaluation.stats import paired_t_test

    dense, dense_features = run(args.data, ["--l1-ratio", "0"])
    dense_mean = float(np.nanmean(list(dense.values())))
    rows, report = [], {"command": command_line(), "dense": {
        "test_ndcg10": dense_mean, "features": dense_features}, "runs": []}
    n_features = 45
    for within in ("0.01", "0.03"):
        runs = {name: run(args.data, [*flags, "--within", within])
                for name, flags in VARIANTS.items()
                if not args.only_defaults or name == DEFAULT[within]}
        if not args.only_defaults:
            runs["default flags, --relax"] = run(args.data, ["--relax", "--within", within])
        reference = runs[DEFAULT[within]][0]
        for name, (values, features) in runs.items():
            mean = float(np.nanmean(list(values.values())))
            if name == DEFAULT[within]:
                name, compared = f"{name} (the default)", ""
            else:
                a = np.array([values[k] for k in reference])
                b = np.array(list(reference.values()))
                both = np.isfinite(a) & np.isfinite(b)
                test = paired_t_test(b[both], a[both])  # the variant less the default
                compared = f"{test.difference:+.4f} (p = {test.pvalue:.2g})"
            earlier = before.get((name.replace(" (the default)", ""), float(within)))
            then = ""
            if earlier is not None:
                old = {tuple(k.split("/")): v for k, v in earlier["per_query"].items()}
                a = np.array([values[k] for k in values])
                b = np.array([old.get((str(k[0]), str(k[1])), np.nan) for k in values])
                both = np.isfinite(a) & np.isfinite(b)
                test = paired_t_test(b[both], a[both])  # this run less the earlier one
                then = (f" | {earlier['features']:.1f}, {earlier['test_ndcg10']:.4f}: "
                        f"{test.difference:+.4f} (p = {test.pvalue:.2g})")
            report["runs"].append({"variant": name, "within": float(within), "features": features,
                                   "test_ndcg10": mean, "to_dense": mean / dense_mean,
                                   "per_query": {f"{k[0]}/{k[1]}": v for k, v in values.items()}})
            rows.append(f"| {within} | {name} | {features:.1f} ({features / n_features:.1%}) | "
                        f"{mean:.4f} | {mean / dense_mean:.3f} | {compared}{then} |")
            print(rows[-1], flush=True)
    markdown = "\n".join([
        "# Sparsity of rsrank train's selection on OHSUMED", "",
        f"`{command_line()}`: `rsrank train` on OHSUMED's five folds with each variant's "
        "flags; features kept (mean over folds, share of the 45), test NDCG@10 (LETOR "
        "convention, mean over all test queries), its ratio to the dense model "
        f"(`--l1-ratio 0`: {dense_mean:.4f}, {dense_features:.1f} features), and the paired "
        "t-test over the test queries against the default flags at the same `--within` "
        "(at 0.01 the default path on vali alone, at 0.03 the sparse path with `--vali-cv 3`).",
        "",
        *([] if not before else [
            "", f"The last column is the same variant in `{args.before}` (features, test "
            "NDCG@10) and the paired t-test of this run less that one over the same test "
            "queries."]),
        "",
        "| --within | variant | features | test NDCG@10 | to dense | against default |"
        + (" before: features, NDCG@10, this less before |" if before else ""),
        "|---|---|---|---|---|---|" + ("---|" if before else ""), *rows])
    write_report(args.out, args.name, report, markdown)
    print(markdown)


if __name__ == "__main__":
    main()
