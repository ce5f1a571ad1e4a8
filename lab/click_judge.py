"""Judging rankers by clicks: how well does an estimate from a vali click
log order models as the expert labels of the same queries do?

On each simulated log (``_click_models``), ``rsrank train``'s path is
walked on the debiased and on the plain reading of the training log, and
every model the two paths visit is scored on the vali log by

* ``lists``: the weighted NDCG@10 of the vali log's session lists (each
  click above what its session left unclicked, weighted by the inverse of
  its examination; graded documents on a cascade's log): what selection,
  ``--debias auto`` and ``rsrank compare --clicks`` use;
* ``graded``: NDCG@10 of the vali log's shown documents graded by their
  click chance once the position's bias is taken out (the training log's
  curve and click classes);
* ``plain``: NDCG@10 of the vali sessions as queries, their clicks the
  labels (no debiasing);

and by two truths never used to select: ``shown``, NDCG@10 of the same
shown documents by their expert labels, and ``whole``, NDCG@10 of the vali
log's queries over all their documents by their expert labels (what a
test of the model on those queries measures; on long lists most of a
model's top ten was never shown). Per log and truth: Spearman's
correlation of each estimate with the truth over the models, and, over the
pairs of models whose truth differs by more than 0.01, how often the
estimate's difference has the truth's sign.

    python scripts/click_judge.py [--datasets bundled ohsumed] [--logs pbm-1 ...] \\
        [--folds 1] [--seeds 1] [--out results] [--name click_judge]
"""

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr
from sklearn.model_selection import ParameterGrid

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import SHARED_DATA, command_line, write_report  # noqa: E402
from _click_models import (LOGS, OTHER_LOGS, debiased_splits, dense_folds,  # noqa: E402
                           make_logs, plain_splits)

from rsrank.evaluation.experiments import fit_and_select  # noqa: E402
from rsrank.evaluation.metrics import letor_per_query, nanmean  # noqa: E402
from rsrank.learning.model import query_scores  # noqa: E402
from rsrank.reading.querydata import QueryData  # noqa: E402
from rsrank.learning.recipe import DEFAULT_WITHIN, train_recipe  # noqa: E402

JUDGES = ("lists", "graded", "plain")
#: the truths, by what their expert labels cover
TRUTHS = {"shown": "the shown documents", "whole": "the whole lists"}


def ndcg10(model, data):
    """Mean NDCG@10 of a model value on a QueryData, weighted by its query
    weights, short lists scored as the data says."""
    scores = query_scores(model, data, 1)
    values = letor_per_query(data.y, scores, data.groups, convention="letor",
                             short_list=data.short_list)["NDCG@10"]
    return nanmean(values, data.query_weights)


def judge_log(fold, config, seed):
    logs = make_logs(fold, config, seed)
    graded, options, shown, _ = debiased_splits(fold, logs)
    plain, plain_options = plain_splits(fold, logs)
    data = {"lists": QueryData(*graded["vali"], **options["vali"]),
            "graded": QueryData(*options["judge"]),
            "plain": QueryData(*plain["vali"], **plain_options["vali"]),
            "shown": QueryData(*shown), "whole": QueryData(*logged_queries(fold["vali"],
                                                                          logs["vali"]))}
    estimator, grid = train_recipe(seed=seed, n_jobs="auto")
    grid = list(ParameterGrid(grid))
    models = []
    for train, train_options, vali in (
            (graded["train"], options["train"], data["lists"]),
            (plain["train"], plain_options["train"], data["plain"])):
        selection = fit_and_select(estimator, grid, QueryData(*train, **train_options), vali,
                                   path=True, within=DEFAULT_WITHIN)
        models.extend(fit.model for fit in selection.fits)
    return {name: [float(ndcg10(model, part)) for model in models]
            for name, part in data.items()}


def logged_queries(split, sim):
    """Every document of the queries a simulated log holds, with its expert
    label."""
    X, y, qid = split[:3]
    rows = np.flatnonzero(np.isin(qid, qid[np.unique(sim.docid)]))
    return X[rows], y[rows], qid[rows]


def agreement(estimate, truth, margin=0.01):
    """Over the pairs of models whose truth differs by more than ``margin``,
    the share whose estimated difference has the truth's sign, and their
    number."""
    estimate, truth = np.asarray(estimate), np.asarray(truth)
    i, j = np.triu_indices(len(truth), 1)
    apart = np.abs(truth[i] - truth[j]) > margin
    if not apart.any():
        return None, 0
    same = np.sign(estimate[i] - estimate[j])[apart] == np.sign(truth[i] - truth[j])[apart]
    return float(same.mean()), int(apart.sum())


def summarize(runs):
    header = ("| data | log | fold | models | " + " | ".join(
        f"{judge}: Spearman / sign agreement ({truth})" for judge in JUDGES for truth in TRUTHS)
        + " | pairs (shown / whole) |")
    lines = [header, "|---" * (header.count("|") - 1) + "|"]
    totals = {(judge, truth): [] for judge in JUDGES for truth in TRUTHS}
    correlations = {(judge, truth): [] for judge in JUDGES for truth in TRUTHS}
    for run in runs:
        values = run["values"]
        if "truth" in values:  # a run from before the whole lists were judged
            values = {**values, "shown": values["truth"]}
        cells, pairs = [], {}
        for judge in JUDGES:
            for truth in TRUTHS:
                if truth not in values:
                    cells.append("")
                    continue
                rho = spearmanr(values[judge], values[truth]).statistic
                share, pairs[truth] = agreement(values[judge], values[truth])
                correlations[judge, truth].append(rho)
                if share is not None:
                    totals[judge, truth].append((share, pairs[truth]))
                cells.append(f"{rho:.2f} / {'' if share is None else f'{share:.2f}'}")
        lines.append(f"| {run['dataset']} | {run['log']} | {run['fold']} | "
                     f"{len(values['shown'])} | " + " | ".join(cells) + " | "
                     + " / ".join(str(pairs.get(truth, "")) for truth in TRUTHS) + " |")
    lines.append("")
    for (judge, truth), shares in totals.items():
        if not correlations[judge, truth]:
            continue
        pooled = (sum(s * n for s, n in shares) / max(sum(n for _, n in shares), 1)
                  if shares else float("nan"))
        lines.append(f"- {judge} against the expert labels of {TRUTHS[truth]}: mean Spearman "
                     f"{np.nanmean(correlations[judge, truth]):.2f} over "
                     f"{len(correlations[judge, truth])} logs; the sign of the truth in "
                     f"{pooled:.2f} of the pairs of models whose truth differs by more than "
                     "0.01 (pooled).")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["bundled"])
    parser.add_argument("--logs", nargs="+", default=["pbm-1", "cascade", "pbm-1-few"],
                        choices=[*LOGS, *OTHER_LOGS])
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--folds", type=int, default=1)
    parser.add_argument("--out", default=None)
    parser.add_argument("--name", default="click_judge")
    args = parser.parse_args(argv)
    report = {"command": command_line(argv), "runs": []}
    for dataset in args.datasets:
        for seed in range(args.seeds):
            for index, fold in enumerate(dense_folds(dataset, seed, SHARED_DATA, args.folds)):
                for name in args.logs:
                    values = judge_log(fold, {**LOGS, **OTHER_LOGS}[name], seed)
                    report["runs"].append({"dataset": dataset, "seed": seed, "fold": index + 1,
                                           "log": name, "values": values})
                    print(summarize(report["runs"][-1:]).splitlines()[2], flush=True)
                    if args.out:
                        write_report(args.out, args.name, report, summarize(report["runs"]))
    print(summarize(report["runs"]))


if __name__ == "__main__":
    main()
