"""Which kind ``rsrank train --additive --with-linear`` keeps on each fold,
what vali saw and what test says.

    python scripts/kind_choice.py [--data ../shared/data/OHSUMED] [--flags ...]

Runs ``rsrank train DATA`` linear, ``--additive``, and ``--additive
--with-linear`` (plus ``--flags``, given to all three), and reports per
fold: the best vali NDCG@10 of each kind's path (from the with-linear run's
grid), the kind kept, and the test NDCG@10 of the linear and the additive
runs' choices (what the kept kind scores, as each kind's selection is the
one its own run makes).
"""

import argparse
import shlex

import numpy as np

from _bench import SHARED_DATA, command_line, portable, train_folds, write_report


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(SHARED_DATA / "OHSUMED"))
    parser.add_argument("--flags", default="", help="more rsrank train flags, one string")
    parser.add_argument("--out", default="results")
    parser.add_argument("--name", default="kind_choice")
    args = parser.parse_args(argv)
    extra = shlex.split(args.flags)
    linear = train_folds(args.data, extra)
    additive = train_folds(args.data, ["--additive", *extra])
    both = train_folds(args.data, ["--additive", "--with-linear", *extra])
    rows, report = [], []
    for lin, add, mixed in zip(linear, additive, both):
        best = {kind: max(p["vali_score"] for p in mixed["grid"]
                          if ("l1_group_ratio" in p["params"]) == (kind == "additive"))
                for kind in ("linear", "additive")}
        kept = "additive" if "l1_group_ratio" in mixed["params"] else "linear"
        test = {"linear": lin["test"]["NDCG@10"], "additive": add["test"]["NDCG@10"]}
        report.append({"fold": mixed["fold"], "best_vali": best, "kept": kept, "test": test,
                       "test_kept": mixed["test"]["NDCG@10"]})
        rows.append(f"| {mixed['fold']} | {best['linear']:.4f} | {best['additive']:.4f} | "
                    f"{kept} | {test['linear']:.4f} | {test['additive']:.4f} | "
                    f"{mixed['test']['NDCG@10']:.4f} |")
    means = [np.mean([r["test"][k] for r in report]) for k in ("linear", "additive")]
    markdown = "\n".join([
        "# The kind rsrank train --additive --with-linear keeps, per fold", "",
        f"`{command_line()}` on {portable(args.data)}: the best vali NDCG@10 along each "
        "kind's path, "
        "the kind kept, and the test NDCG@10 (LETOR convention, mean over the fold's test "
        "queries) of the linear and the additive runs and of the kept model.", "",
        "| fold | best vali, linear | best vali, additive | kept | test, linear | "
        "test, additive | test, kept |", "|---|---|---|---|---|---|---|", *rows, "",
        f"Mean test NDCG@10 over the folds: linear {means[0]:.4f}, additive {means[1]:.4f}, "
        f"kept {np.mean([r['test_kept'] for r in report]):.4f}."])
    write_report(args.out, args.name, {"command": command_line(), "folds": report}, markdown)
    print(markdown)


if __name__ == "__main__":
    main()
