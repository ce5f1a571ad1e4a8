"""Dense RSRank against XGBoost gblinear (and LightGBM) on LightGBM's
lambdarank example, over seeds, with paired tests over the test queries.

The example ships rank.train (201 queries) and rank.test (50 queries) and no
validation file: vali is a seeded 20% of the training queries (split seed 0,
the same split for every method and seed, as ``rsrank train
../shared/data/LightGBM-lambdarank-example`` makes it). Every method gets 8
grid points, chosen on vali by NDCG@10 (LETOR rules), and runs with each of
the seeds; RSRank's online variant is stochastic, its full-batch default is
not. Also reported: the mean of the online seeds' weight vectors as one model.

    python scripts/lightgbm_example.py            # writes results/lightgbm_example.{md,json}
"""

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

import _paper as R
from rsrank.evaluation import stats
from rsrank.evaluation.experiments import per_query_from_results
from rsrank.reading.layouts import resolve_training_data

from _bench import SHARED_DATA, command_line, write_report

REPO = Path(__file__).resolve().parent.parent

# the library's scaling in both; eight grid points each
DEFAULTS = R.grid(normalize=["zscore"], batch_size=[None], learning_rate=[1e-3, 3e-3, 1e-2, 3e-2],
                  ndcg_k=[None, 10])
ONLINE = R.grid(normalize=["zscore"], batch_size=[1], learning_rate=[1e-4, 3e-4, 1e-3, 3e-3],
                ndcg_k=[None, 10])


def methods():
    peers = R.peer_grids(quick=False)
    return {
        "RSRank, defaults (full batch)": (R.fit_rsrank, DEFAULTS),
        "RSRank, online (batch_size=1)": (R.fit_rsrank, ONLINE),
        "RSRank, defaults, averaged iterates (average=True)": (
            R.fit_rsrank, [{**c, "average": True} for c in DEFAULTS]),
        "RSRank, online, averaged iterates (average=True)": (
            R.fit_rsrank, [{**c, "average": True} for c in ONLINE]),
        "XGBoost gblinear rank:ndcg": peers["XGBoost gblinear rank:ndcg"],
        "LightGBM lambdarank trees": peers["LightGBM lambdarank trees"],
    }


def averaged_weights(data, per_seed):
    """The mean of the seeds' selected linear functions (raw features)."""
    w = np.mean([np.asarray(f["weights"]) for f in per_seed], axis=0)
    return R.per_query_values(data, data.test[0] @ w)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(SHARED_DATA / "LightGBM-lambdarank-example"))
    parser.add_argument("--out", default=str(REPO / "results"))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    folds, _, _ = resolve_training_data(args.root, vali_fraction=0.2, random_state=0)
    data = folds[0]
    seeds = list(range(args.seeds))
    raw = {}
    for name, (fit, configs) in methods().items():
        print(f"{name}: {len(configs)} grid points x {len(seeds)} seeds", flush=True)
        raw[name] = Parallel(n_jobs=args.jobs)(delayed(R.select_on_vali)(fit, data, configs, s)
                                               for s in seeds)
    table = [R.method_table(name, per_seed) for name, per_seed in raw.items()]
    runs = {name: R.seed_averaged(per_seed) for name, per_seed in raw.items()}
    averaged = "RSRank, online, weights averaged over seeds"
    runs[averaged] = per_query_from_results(
        {"folds": [{"fold": data.fold,
                    "per_query": averaged_weights(data, raw["RSRank, online (batch_size=1)"])}]})
    baseline = "XGBoost gblinear rank:ndcg"
    tests = stats.compare(runs, ["NDCG@10", "NDCG@1", "MAP"], baseline=baseline,
                          n_resamples=100_000)
    # the lift of averaging the iterates, each variant against its plain grid
    lift = []
    for plain in ("RSRank, defaults (full batch)", "RSRank, online (batch_size=1)"):
        averaged_name = plain.split(" (")[0] + ", averaged iterates (average=True)"
        lift += stats.compare({plain: runs[plain], averaged_name: runs[averaged_name]},
                              ["NDCG@10", "NDCG@1", "MAP"], baseline=plain,
                              n_resamples=100_000)
    for key in ("t_pvalue", "permutation_pvalue"):
        for row, value in zip(lift, stats.holm([t[key] for t in lift])):
            row[f"{key}_holm"] = float(value)
    means = {name: {m: float(np.mean(v[m])) for m in ("NDCG@1", "NDCG@10", "MAP")}
             for name, v in runs.items()}
    report = {"command": command_line(), "versions": R.versions(),
              "machine": f"{platform.machine()}, {os.cpu_count()} cores",
              "seeds": seeds, "vali": "seeded 20% of rank.train's queries (split seed 0)",
              "methods": table, "means_of_seed_averaged_queries": means, "tests": tests,
              "averaging_lift": lift,
              "seconds": time.perf_counter() - start,
              "runs": {name: [{k: v for k, v in f.items() if k != "test_scores"} for f in per]
                       for name, per in raw.items()}}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_report(out, "lightgbm_example", report, markdown(report))
    print(markdown(report))


def markdown(report):
    v = report["versions"]
    lines = ["# Dense RSRank against XGBoost gblinear on LightGBM's lambdarank example", "",
             f"Command: `{report['command']}`", "",
             f"rsrank {v['rsrank']}, XGBoost {v['xgboost']}, LightGBM {v['lightgbm']}; "
             f"{report['machine']}. Train: rank.train's queries less the vali queries; vali: "
             f"{report['vali']}; test: rank.test (50 queries). Each method's 8 grid points "
             "are chosen on vali by NDCG@10 (LETOR rules), for each of the "
             f"{len(report['seeds'])} seeds; cells are the mean over seeds ± the std over "
             "seeds.", "",
             "| method | NDCG@1 | NDCG@3 | NDCG@10 | MAP | non-zeros (of 300) |",
             "|---|---|---|---|---|---|"]
    for row in report["methods"]:
        m, s = row["mean"], row["std"]
        nnz = "" if row["n_nonzero_mean"] is None else f"{row['n_nonzero_mean']:.1f}"
        lines.append(f"| {row['method']} | " + " | ".join(
            R.fmt(m[k], s[k]) for k in ("NDCG@1", "NDCG@3", "NDCG@10", "MAP")) + f" | {nnz} |")
    lines += ["", "Against XGBoost gblinear, paired over the 50 test queries (each query's value "
              "averaged over the seeds; the averaged-weights model is one model), Holm over "
              "the table:", "",
              "| method | metric | its mean | XGBoost gblinear | difference [95% CI] | "
              "p (t / randomization, Holm) |", "|---|---|---|---|---|---|"]
    for t in report["tests"]:
        lines.append(f"| {t['system']} | {t['metric']} | {t['mean_b']:.4f} | "
                     f"{t['mean_a']:.4f} | {t['difference']:+.4f} "
                     f"[{t['ci_low']:+.4f}, {t['ci_high']:+.4f}] | "
                     f"{t['t_pvalue_holm']:.2g} / {t['permutation_pvalue_holm']:.2g} |")
    lines += ["", "Averaging the iterates against the same grid without it, paired over the 50 "
              "test queries, Holm over this table:", "",
              "| averaged variant | metric | its mean | without averaging | difference [95% CI] "
              "| p (t / randomization, Holm) |", "|---|---|---|---|---|---|"]
    for t in report["averaging_lift"]:
        lines.append(f"| {t['system']} | {t['metric']} | {t['mean_b']:.4f} | "
                     f"{t['mean_a']:.4f} | {t['difference']:+.4f} "
                     f"[{t['ci_low']:+.4f}, {t['ci_high']:+.4f}] | "
                     f"{t['t_pvalue_holm']:.2g} / {t['permutation_pvalue_holm']:.2g} |")
    lines += ["", f"Run time {report['seconds']:.0f} s.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
