"""A LETOR L1 path with a step size from the data and the converged models.

    python scripts/stable_path.py [--root ../shared/data/OHSUMED] [--out results]
                                  [--epochs 300] [--multipliers 1,2]
                                  [--pair-weight delta_ndcg|unit]

``rsrank train``'s path fits every point at the step size chosen without L1
(1e-3, 1e-2 or 1e-1) and keeps each point's best vali epoch. On OHSUMED that
step is many times the inverse curvature of the pair loss at w = 0, so the
full-batch iterates cycle (vali NDCG@10 swings between about 0.13 and 0.5
from epoch to epoch), and the best epoch of a point is often one of the
first, dense ones.

This script fits the same path (ten points from 0.464 ``l1_max`` down to 0,
warm-started from strong to weak L1: the library's :func:`rsrank.learning.path.walk`)
at ``eta = multiplier / L``, with ``L`` the trace of the modified Huber
loss's Hessian at w = 0 on the z-scored features (an upper bound of its
largest eigenvalue; :func:`rsrank.learning.fitting.curvature_rate`), and keeps each
point's last iterate: the penalized optimum. It reports per fold the non-zeros,
vali and test NDCG@10 of every point, and the choice of the selection rules
(sparsest within 1%, 2%, 3% of the best vali, and the paired one-standard-
error rule). Test NDCG@10 uses LETOR's convention; selection uses vali only.
``--pair-weight unit`` weighs every pair 1 (``RSRank(pair_weight="unit")``)
and writes ``stable_path_unit``. ``--root`` takes any root of Fold1..Fold5
(other than OHSUMED, its name ends the output's name).
"""

import argparse
import warnings
from pathlib import Path

import numpy as np

from _bench import SHARED_DATA, command_line, write_report
from rsrank import RSRank, QueryData
from rsrank.evaluation import metrics as M
from rsrank.reading.datasets import load_letor
from rsrank.evaluation.experiments import sparsest_within
from rsrank.learning.fitting import curvature_rate
from rsrank.learning.path import walk

RATIOS = [0.464, 0.215, 0.1, 0.0464, 0.0215, 0.01, 0.00464, 0.00215, 0.001, 0.0]
RULES = [0.01, 0.02, 0.03, "1se"]


def fold_path(root, fold, epochs, multiplier, pair_weight="delta_ndcg"):
    """The library's path (:func:`rsrank.learning.path.walk`) of one fold at ``multiplier``
    over the trace of the Hessian at w = 0 (:func:`rsrank.learning.fitting.curvature_rate`)."""
    load = lambda name: load_letor(Path(root) / f"Fold{fold}" / f"{name}.txt.gz")  # noqa: E731
    train, vali, test = load("train"), load("vali"), load("test")
    data = QueryData(*train[:3])
    base = RSRank(pair_weight=pair_weight, max_iter=epochs, restore_best=False)
    rate = curvature_rate(base.setup(), data, step=multiplier)
    estimator = base.set_params(learning_rate=rate)
    path = walk(estimator, [{"l1_ratio": ratio} for ratio in RATIOS], data,
                validation=QueryData(*vali[:3]))
    points = []
    for ratio, point in zip(RATIOS, path):
        model = point.model
        per_query = M.ndcg_per_query(vali[1], model.predict(vali[0]), vali[2], k=10,
                                     convention="letor")
        points.append({"l1_ratio": ratio, "n_nonzero": int(np.count_nonzero(model.coef_)),
                       "vali_score": float(np.nanmean(per_query)),
                       "test": float(M.mean_ndcg(test[1], model.predict(test[0]), test[2],
                                                 k=10, convention="letor")),
                       "per_query": per_query.tolist()})
    return {"fold": fold, "learning_rate": rate, "l1_max": path[0].params["l1"] / RATIOS[0],
            "points": points}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(SHARED_DATA / "OHSUMED"))
    parser.add_argument("--out", default="results")
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--multipliers", default="1,2")
    parser.add_argument("--pair-weight", default="delta_ndcg", choices=["delta_ndcg", "unit"])
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    report, lines = {"command": command_line(), "runs": {}}, []
    lines += ["# A LETOR L1 path at a step size from the data", "",
              f"Command: `{command_line()}`", "",
              "Each point: non-zeros / vali / test NDCG@10 (LETOR convention) of the last of "
              f"{args.epochs} full-batch epochs, warm-started from the stronger point. "
              "l1 as a fraction of the fold's l1_max.", ""]
    for multiplier in map(float, args.multipliers.split(",")):
        folds = [fold_path(args.root, f, args.epochs, multiplier, args.pair_weight)
                 for f in range(1, 6)]
        report["runs"][str(multiplier)] = folds
        lines += [f"## eta = {multiplier:g} / trace of the Hessian at w = 0, "
                  f"pair weights {args.pair_weight}", "",
                  "| fold | eta | " + " | ".join(f"{r:g}" for r in RATIOS) + " |",
                  "|---" * (len(RATIOS) + 2) + "|"]
        for fold in folds:
            cells = [f"{p['n_nonzero']} / {p['vali_score']:.3f} / {p['test']:.3f}"
                     for p in fold["points"]]
            lines.append(f"| {fold['fold']} | {fold['learning_rate']:.2g} | "
                         + " | ".join(cells) + " |")
        lines += ["", "| rule (on vali) | mean non-zeros of 45 | mean test NDCG@10 |",
                  "|---|---|---|"]
        for rule in RULES:
            chosen = [sparsest_within(fold["points"], rule) for fold in folds]
            name = rule if rule == "1se" else f"sparsest within {rule:.0%}"
            lines.append(f"| {name} | {np.mean([c['n_nonzero'] for c in chosen]):.1f} | "
                         f"{np.mean([c['test'] for c in chosen]):.4f} |")
        for ratio_index, ratio in enumerate(RATIOS):
            pts = [fold["points"][ratio_index] for fold in folds]
            lines.append(f"| no rule: every fold at {ratio:g} l1_max (not a selection) | "
                         f"{np.mean([p['n_nonzero'] for p in pts]):.1f} | "
                         f"{np.mean([p['test'] for p in pts]):.4f} |")
        lines.append("")
    text = "\n".join(lines)
    print(text)
    name = "stable_path" if args.pair_weight == "delta_ndcg" else "stable_path_unit"
    if Path(args.root).name != "OHSUMED":
        name += f"_{Path(args.root).name}"
    write_report(Path(args.out), name, report, text + "\n")


if __name__ == "__main__":
    main()
