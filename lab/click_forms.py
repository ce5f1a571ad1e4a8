"""What training on a sessions log's preferences costs against training on
its session lists, and what the pair weighting of the path does there.

For each position-based log of ``_click_models.LOGS`` (one seed) on
each dataset's first ``--folds`` folds, ``rsrank train``'s recipe trains
on the training log read three ways, each validated on the vali log's
session lists with the training log's curve:

* ``lists``: a weighted query per distinct click and session
  (:func:`rsrank.clicks.session_lists`), both pair weightings on the path;
* ``preferences``: the same pairs summed per pair of documents of a query
  (:meth:`rsrank.clicks.GradedClicks.training`), both pair weightings;
* ``preferences-unit``: the preferences with the unit pair weight alone.

Test NDCG@10 on the expert labels, paired over test queries.

    python scripts/click_forms.py [--datasets bundled ohsumed many-grades] [--folds 2]
        [--out results]
"""

import argparse
import sys
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import SHARED_DATA, command_line, write_report  # noqa: E402
from _click_models import LOGS, make_logs  # noqa: E402
from _datasets import dataset_folds  # noqa: E402
from rsrank.clicks import ClickLog, grade_clicks  # noqa: E402
from rsrank.evaluation.experiments import run_letor_folds  # noqa: E402
from rsrank.evaluation.metrics import ndcg_per_query  # noqa: E402
from rsrank.learning.recipe import DEFAULT_WITHIN, train_recipe  # noqa: E402
from rsrank.evaluation.stats import paired_t_test  # noqa: E402

FORMS = ("lists", "preferences", "preferences-unit")
POSITION_LOGS = [name for name, config in LOGS.items()
                 if config["model"] == "position"]


def read_logs(fold, logs):
    """The training and vali logs graded as ``rsrank train --clicks`` reads
    them (the training log's curve reads both)."""
    found, model = {}, None
    for split in ("train", "vali"):
        sim = logs[split]
        log = ClickLog.from_sessions(sim.session, sim.qid, sim.docid, sim.position, sim.click)
        found[split] = grade_clicks(log, log.docid.astype(np.int64), model=model)
        model = found[split].model
    return found


def run_form(form, fold, found):
    """Per-query test NDCG@10 of the recipe trained on ``form`` of the
    training log, and the pair weighting it selected."""
    X, _, qid = fold["train"]
    if form == "lists":
        *train, weight = found["train"].queries(X, qid)
        options = {"query_weight": weight}
    else:
        *train, options = found["train"].training(X, qid)
    *vali, vali_weight = found["vali"].queries(fold["vali"][0], fold["vali"][2])
    estimator, grid = train_recipe(seed=0, n_jobs="auto",
                                   pair_weight=["unit"] if form == "preferences-unit" else None)
    split = Bunch(train=tuple(train), vali=tuple(vali), test=fold["test"], fold=1,
                  query_options={"train": options, "vali": {"query_weight": vali_weight}})
    result = run_letor_folds([split], estimator, grid, within=DEFAULT_WITHIN).folds[0]
    X_test, y_test, qid_test = fold["test"]
    test = ndcg_per_query(y_test, result.model.predict(X_test), qid_test, 10,
                          convention="letor")
    return {"test": np.nan_to_num(test).tolist(), "pair_weight": result.params["pair_weight"]}


def summarize(runs):
    lines = ["| data | fold | log | " + " | ".join(FORMS) + " | selected pair weight |",
             "|---" * (len(FORMS) + 4) + "|"]
    for run in runs:
        means = " | ".join(f"{np.mean(run[form]['test']):.4f}" for form in FORMS)
        chosen = " / ".join(run[form]["pair_weight"] for form in FORMS)
        lines.append(f"| {run['dataset']} | {run['fold']} | {run['log']} | {means} | {chosen} |")
    lines.append("")
    for base, other in (("lists", "preferences"), ("preferences", "preferences-unit"),
                        ("lists", "preferences-unit")):
        diffs, better, worse = [], 0, 0
        for run in runs:
            test = paired_t_test(np.asarray(run[base]["test"]), np.asarray(run[other]["test"]))
            diffs.append(test.difference)
            if test.pvalue < 0.05:
                better += test.difference > 0
                worse += test.difference < 0
        lines.append(f"- {other} minus {base}: mean {np.mean(diffs):+.4f} over {len(runs)} logs; "
                     f"higher on {sum(d > 1e-12 for d in diffs)}, lower on "
                     f"{sum(d < -1e-12 for d in diffs)}; significantly (p < 0.05) higher on "
                     f"{better}, lower on {worse}.")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["bundled", "ohsumed", "many-grades"])
    parser.add_argument("--folds", type=int, default=2)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    report = {"command": command_line(argv), "runs": []}
    for dataset in args.datasets:
        for index, fold in enumerate(dataset_folds(dataset, 0, SHARED_DATA)[:args.folds]):
            fold = {split: (np.asarray(part[0].toarray() if hasattr(part[0], "toarray")
                                       else part[0], dtype=np.float64), *part[1:3])
                    for split, part in fold.items()}
            for name in POSITION_LOGS:
                found = read_logs(fold, make_logs(fold, LOGS[name], 0))
                run = {"dataset": dataset, "fold": index + 1, "log": name}
                run.update({form: run_form(form, fold, found) for form in FORMS})
                report["runs"].append(run)
                print(summarize([run]).splitlines()[2], flush=True)
                if args.out:
                    write_report(args.out, "click_forms", report, summarize(report["runs"]))
    print(summarize(report["runs"]))


if __name__ == "__main__":
    main()
