"""More RSRank variants on OHSUMED's sparse frontier, against the runs of
``scripts/reproduce_paper.py``.

    python scripts/frontier_variants.py [--root OHSUMED] [--results results/ohsumed.json]
                                        [--seeds 5] [--jobs 2] [--out results]

Each variant starts from the dense settings that each fold and seed chose in
the committed run's unit-pair-weight frontier (``--results``), picks its step
size among its own rates on the dense model's vali NDCG@10, then walks its
L1 grid (cumulative penalty, zero start per g). At each feature budget the
model with the best vali NDCG@10 among those that sparse is kept, as in
``reproduce_paper.py``; the table gives the test NDCG@10 (mean over folds,
mean ± std over seeds) next to the committed SGDClassifier (L1, pairwise)
and unit-pair-weight rows, with paired tests over the 106 test queries
(each query averaged over seeds; Holm over every budget and pair).

Variants, all with the step lr/t^power_t and the cumulative L1 penalty:

- averaged iterates (``average=True``), unit pair weights;
- the final iterate after 100 epochs (no early stopping on vali), unit pair
  weights, alone and averaged;
- a 1/t step (``power_t=1``, the decay of scikit-learn's ``"optimal"``
  schedule), unit pair weights;
- averaged iterates with |dNDCG| pair weights.

And a reference: the exact minimiser of RSRank's unit-weight objective,
the point every optimizer of that objective approaches (on the training
objective nothing beats it; on test it is one model among others). With unit pair weights and the
modified Huber loss, RSRank minimises the mean over queries of each query's
sum of pair losses plus ``g |w|_1``, which is the objective of the L1
``SGDClassifier`` on the pair differences (mean pair loss plus
``alpha |w|_1``) with ``g = alpha * pairs / queries``. It is minimised here
by accelerated proximal gradient (FISTA, 600 steps of size 1/L per alpha,
each alpha warm-started from the last) on the same pairs and the same
alpha grid as the committed SGD row; it is deterministic, so it has one
"seed". Each point records how far it is from optimal (the Karush-Kuhn-Tucker
conditions of the L1 problem, relative to alpha): the largest |gradient| of
a zero weight, which must be at most alpha, and the largest
|gradient + alpha sign(w)| of a non-zero weight, which must be 0.

Writes ``frontier_variants.md`` and ``frontier_variants.json`` into ``--out``.
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

import _paper as R
from _bench import SHARED_DATA, command_line, internal, pairwise_differences, write_report
from rsrank import load_letor_fold
from rsrank.reading.datasets import find_folds

REPO = Path(__file__).resolve().parents[1]
UNIT_L1 = [R.UNIT_L1_SCALE * g for g in R.FRONTIER_L1_CUMULATIVE]
VARIANTS = {
    "unit pair weights, averaged iterates": {
        "rates": R.UNIT_RATES, "l1": UNIT_L1, "extra": {"average": True}},
    "unit pair weights, final iterate (no early stopping)": {
        "rates": R.UNIT_RATES, "l1": UNIT_L1, "extra": {"early_stopping": False}},
    "unit pair weights, final averaged iterate (no early stopping)": {
        "rates": R.UNIT_RATES, "l1": UNIT_L1,
        "extra": {"early_stopping": False, "average": True}},
    "unit pair weights, step lr/t (power_t=1)": {
        "rates": [0.0003, 0.001, 0.003, 0.01],
        "l1": [0, 30, 60, 100, 200, 300, 500, 700, 1000, 1500, 2000], "extra": {"power_t": 1.0}},
    "|dNDCG| pair weights, averaged iterates": {
        "rates": R.DECAYING_RATES, "l1": R.FRONTIER_L1_CUMULATIVE,
        "extra": {"pair_weight": "delta_ndcg", "average": True}},
}
SGD = "SGDClassifier L1 pairs"
EXACT = "RSRank, unit pair weights, exact minimiser (FISTA)"


def modified_huber_slope(z):
    """Derivative of the modified Huber loss at the margins z (NumPy over
    arrays; checked against the library's kernel by ``check_slope``)."""
    return np.where(z >= 1, 0.0, np.where(z >= -1, -2.0 * (1.0 - z), -4.0))


def check_slope():
    """The vectorised slope is the estimator's: rsrank's own derivative on
    margins that cover every piece and both boundaries."""
    derivative = internal("_kernels", "pair_loss_derivative")
    z = np.r_[np.linspace(-3.0, 3.0, 601), -1.0, 1.0]
    kernel = [derivative(v, internal("_kernels", "MODIFIED_HUBER")) for v in z]
    if not np.allclose(modified_huber_slope(z), kernel, rtol=0, atol=1e-12):
        raise AssertionError("modified_huber_slope differs from rsrank's pair_loss_derivative")


def optimality_gaps(D, alpha, w):
    """(largest |gradient| of a zero weight, largest |gradient + alpha sign w|
    of a non-zero one), both over alpha: at the minimiser the first is at
    most 1 and the second 0."""
    gradient = D.T @ modified_huber_slope(D @ w) / len(D)
    zero = w == 0
    off = np.abs(gradient[zero]).max() / alpha if zero.any() else 0.0
    on = (np.abs(gradient[~zero] + alpha * np.sign(w[~zero])).max() / alpha
          if (~zero).any() else 0.0)
    return float(off), float(on)


def l1_pairs_minimiser(D, alpha, w, steps=600):
    """argmin_w mean(modified_huber(D @ w)) + alpha |w|_1 by FISTA from w;
    the rows of D are pair differences signed so the preferred side is +."""
    lipschitz = 2.0 * np.linalg.norm(D, 2) ** 2 / len(D)
    v, t = w.copy(), 1.0
    for _ in range(steps):
        u = v - D.T @ modified_huber_slope(D @ v) / len(D) / lipschitz
        new = np.sign(u) * np.maximum(np.abs(u) - alpha / lipschitz, 0.0)
        t_new = (1.0 + np.sqrt(1.0 + 4.0 * t * t)) / 2.0
        v = new + (t - 1.0) / t_new * (new - w)
        w, t = new, t_new
    return w


def exact_path(data, alphas):
    """The exact minimiser at every alpha of the SGD row's grid."""
    D, target = pairwise_differences(*data.train[:3])
    D *= np.where(target == 1, 1.0, -1.0)[:, None]
    w, points = np.zeros(D.shape[1]), []
    for alpha in alphas:
        w = l1_pairs_minimiser(D, alpha, w)
        off, on = optimality_gaps(D, alpha, w)
        points.append(R.frontier_point(data, data.vali[0] @ w, data.test[0] @ w,
                               np.count_nonzero(w), alpha=alpha,
                               kkt_zero_weights=off, kkt_nonzero_weights=on))
    return points


def variant_fold(data, seed, base, spec):
    """The variant's step size chosen on the dense vali NDCG@10, then its path."""
    candidates = [{**base, **spec["extra"], "learning_rate": rate} for rate in spec["rates"]]
    scores = [R.ndcg10(data.vali[1], R.fit_rsrank(data, c, seed)[1], data.vali[2])
              for c in candidates]
    chosen = candidates[int(np.argmax(scores))]
    points, _ = R.rsrank_frontier_fold(data, chosen, seed, spec["l1"], "cumulative",
                                       relax=False)
    for point in points:
        point.pop("weights", None)
    return chosen, points


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(SHARED_DATA / "OHSUMED"))
    parser.add_argument("--results", default=str(REPO / "results" / "ohsumed.json"))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", default=str(REPO / "results"))
    args = parser.parse_args(argv)
    committed = json.loads(Path(args.results).read_text())["frontier"]["runs"]
    unit = committed[R.UNIT]
    base = {(e["fold"], e["seed"]): {k: v for k, v in e["params"].items()
                                     if k != "learning_rate"} for e in unit}
    folds = [load_letor_fold(args.root, k) for k in find_folds(args.root)]
    seeds = list(range(args.seeds))
    todo = [(data, seed) for data in folds for seed in seeds]
    frontier, seconds = {}, {}
    for name, spec in VARIANTS.items():
        print(f"  {name}", flush=True)
        start = time.perf_counter()
        paths = Parallel(n_jobs=args.jobs)(delayed(variant_fold)(
            data, seed, base[(data.fold, seed)], spec) for data, seed in todo)
        seconds[name] = time.perf_counter() - start
        frontier[f"RSRank, {name}"] = [
            {"fold": data.fold, "seed": seed, "points": points, "params": chosen}
            for (data, seed), (chosen, points) in zip(todo, paths)]
    print(f"  {EXACT}", flush=True)
    check_slope()
    start = time.perf_counter()
    alphas = [p["alpha"] for p in committed[SGD][0]["points"]]
    paths = Parallel(n_jobs=args.jobs)(delayed(exact_path)(data, alphas) for data in folds)
    seconds[EXACT] = time.perf_counter() - start
    frontier[EXACT] = [{"fold": data.fold, "seed": 0, "points": points}
                       for data, points in zip(folds, paths)]
    # the exact path has no dense (g = 0) point to measure the 3% against
    within = {name: R.sparsest_within_dense(frontier, name, folds[0].train[0].shape[1])
              for name in frontier if name != EXACT}
    frontier[R.UNIT] = unit
    frontier[SGD] = committed[SGD]
    summary = R.summarize_frontier(frontier, len(folds), reference="RSRank, ")
    # only each new variant against the two committed rows
    summary["tests"] = [t for t in summary["tests"] if t["system"] in (R.UNIT, SGD)
                        and t["baseline"] != R.UNIT]
    from rsrank.evaluation import stats

    for key in ("t_pvalue", "permutation_pvalue"):
        for row, value in zip(summary["tests"], stats.holm([t[key] for t in summary["tests"]])):
            row[f"{key}_holm"] = float(value)
    points = [p for entry in frontier[EXACT] for p in entry["points"]]
    kkt = {"zero_weights_max": max(p["kkt_zero_weights"] for p in points),
           "nonzero_weights_max": max(p["kkt_nonzero_weights"] for p in points)}
    report = {"command": command_line(),
              "exact_kkt": kkt,
              "seeds": seeds, "variants": VARIANTS, "summary": summary, "within3": within,
              "seconds": seconds}
    out = Path(args.out)
    write_report(out, "frontier_variants", report, markdown(report, list(frontier)),
                 compact=True)
    print((out / "frontier_variants.md").read_text())


def markdown(report, names):
    def cell(name):
        return name.replace("|", "\\|")

    by = {(r["budget"], r["method"]): r for r in report["summary"]["rows"]}
    lines = ["# More RSRank variants on OHSUMED's sparse frontier", "",
             f"Command: `{report['command'].strip()}`", "",
             "Test NDCG@10 of the vali-selected model with at most that many non-zero "
             "features: mean over the 5 folds, mean ± std over "
             f"{len(report['seeds'])} seeds (mean non-zeros in brackets; n/a: some fold and "
             "seed had no model that sparse). The last two columns are the committed rows of "
             "`results/ohsumed.md`. The exact minimiser is the optimum of the objective "
             "that the unit-weight rows and the SGD row both approach (FISTA on the pair "
             "differences, the SGD row's alpha grid; deterministic, one seed); over its "
             "5 folds and 11 alphas the largest |gradient| of a zero weight is "
             f"{report['exact_kkt']['zero_weights_max']:.4f} alpha (at most 1 at the optimum) "
             "and the largest |gradient + alpha sign(w)| of a non-zero weight "
             f"{report['exact_kkt']['nonzero_weights_max']:.2g} alpha (0 at the optimum).", "",
             "| features ≤ | " + " | ".join(cell(n) for n in names) + " |",
             "|---|" + "---|" * len(names)]
    for budget in R.BUDGETS:
        cells = []
        for name in names:
            row = by[(budget, name)]
            cells.append(f"{row['mean']:.4f} ± {row['std']:.4f} ({row['n_nonzero']:.1f})"
                         if "mean" in row else f"n/a ({row['runs']}/{row['of']})")
        lines.append(f"| {budget} | " + " | ".join(cells) + " |")
    lines += ["", "Paired over the 106 test queries (each query averaged over seeds); "
              "p-values (t / randomization), Holm-corrected over every row of this table.", "",
              "| features ≤ | variant | against | difference (variant - other) [95% CI] | p | "
              "p, Holm |", "|---|---|---|---|---|---|"]
    for t in report["summary"]["tests"]:
        lines.append(f"| {t['budget']} | {cell(t['baseline'])} | {t['system']} | "
                     f"{-t['difference']:+.4f} [{-t['ci_high']:+.4f}, {-t['ci_low']:+.4f}] | "
                     f"{t['t_pvalue']:.2g} / {t['permutation_pvalue']:.2g} | "
                     f"{t['t_pvalue_holm']:.2g} / {t['permutation_pvalue_holm']:.2g} |")
    lines += ["", "The sparsest model whose vali NDCG@10 is within 3% of the dense one's, "
              "per fold and seed (mean fraction of the 45 features; its test NDCG@10 against "
              "the dense model's):", "", "| variant | fraction kept | test NDCG@10 | dense |",
              "|---|---|---|---|"]
    for name, w in report["within3"].items():
        lines.append(f"| {cell(name)} | {w['fraction']:.3f} | {w['test_ndcg10']:.4f} | "
                     f"{w['dense_test_ndcg10']:.4f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
