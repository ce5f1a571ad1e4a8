"""Learning from clicks: naive, debiased and skyline rankers on simulated
click logs, with LightGBM's and XGBoost's debiasing in the same run.

Each log: a weak production ranker (least squares on the labels of a few
training queries) shows the top 10 of every training and vali query; users
click as :func:`rsrank.synthetic.simulate_clicks` draws (position-based
with eta, or cascade). Test keeps its expert labels. Per log, test
NDCG@10 (LETOR's) of

* ``naive``: ``rsrank train`` with each session a query, the click its label;
* ``debiased``: ``rsrank train --clicks``'s path (the examination estimated
  from the training log, vali graded by its clicks with that curve);
* ``skyline-shown``/``skyline``: ``rsrank train`` on the expert labels of
  the shown documents / of every training document;
* ``lightgbm``: LGBMRanker-equivalent lambdarank with ``position=`` on the
  sessions, early stopped on the vali log's clicks;
* ``xgboost``: ``lambdarank_unbiased=True`` on the sessions, likewise.

    python scripts/click_study.py [--datasets ...] [--seeds 3] [--out results/clicks]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import SHARED_DATA, command_line, write_report  # noqa: E402
from _datasets import dataset_folds  # noqa: E402
from sklearn.utils import Bunch  # noqa: E402

from rsrank.clicks import ClickLog, grade_clicks  # noqa: E402
from rsrank.experiments import run_letor_folds  # noqa: E402
from rsrank.metrics import ndcg_per_query  # noqa: E402
from rsrank.recipe import DEFAULT_WITHIN, train_recipe, vali_folds  # noqa: E402
from rsrank.stats import paired_t_test  # noqa: E402
from rsrank.synthetic import simulate_clicks  # noqa: E402


def production_ranker(train, seed, n_queries=3):
    """Least squares on the labels of ``n_queries`` random training queries."""
    X, y, qid = train[:3]
    rng = np.random.default_rng(seed)
    chosen = np.isin(qid, rng.choice(np.unique(qid), n_queries, replace=False))
    A = np.c_[np.nan_to_num(np.asarray(X[chosen], dtype=np.float64)), np.ones(chosen.sum())]
    w = np.linalg.lstsq(A, y[chosen].astype(np.float64), rcond=None)[0]
    return lambda Z: np.nan_to_num(np.asarray(Z, dtype=np.float64)) @ w[:-1]


def make_logs(fold, config, seed):
    ranker = production_ranker(fold["train"], seed)
    logs = {}
    for offset, split in enumerate(("train", "vali")):
        X, y, qid = fold[split][:3]
        logs[split] = simulate_clicks(y, qid, ranker(X), n_sessions=config["sessions"],
                                      click_model=config["model"], eta=config.get("eta", 1.0),
                                      noise=config.get("noise", 0.1),
                                      random_state=seed * 7 + offset)
    return logs


def sessions_as_queries(split, sim):
    X = split[0][sim.docid]
    return X, sim.click.astype(np.int64), sim.session


def debiased_splits(fold, logs):
    graded = {}
    examination = None
    for split in ("train", "vali"):
        sim = logs[split]
        log = ClickLog.from_sessions(sim.session, sim.qid, sim.docid, sim.position, sim.click)
        X, _, qid = fold[split][:3]
        rows = log.docid.astype(np.int64)
        g = grade_clicks(log, rows, X, examination=examination)
        examination = g.examination
        graded[split] = (X[g.rows], g.y, qid[g.rows])
    return graded, examination


def rsrank_test(train, vali, test, seed):
    estimator, grid = train_recipe(seed=seed, n_jobs="auto")
    experiment = run_letor_folds([Bunch(train=train, vali=vali, test=test, fold=1)], estimator,
                                 grid, within=DEFAULT_WITHIN, vali_cv=vali_folds(DEFAULT_WITHIN))
    fold = experiment.folds[0]
    X, y, qid = test[:3]
    return (ndcg_per_query(y, fold.model.predict(X), qid, 10, convention="letor"),
            fold.n_nonzero)


def shown(split, sim):
    rows = np.unique(sim.docid)
    X, y, qid = split[:3]
    return X[rows], y[rows], qid[rows]


def run_log(fold, config, seed):
    logs = make_logs(fold, config, seed)
    out, seconds = {}, {}
    t = time.perf_counter()
    naive = [sessions_as_queries(fold[s], logs[s]) for s in ("train", "vali")]
    out["naive"] = rsrank_test(*naive, fold["test"], seed)
    seconds["naive"] = time.perf_counter() - t
    t = time.perf_counter()
    graded, examination = debiased_splits(fold, logs)
    out["debiased"] = rsrank_test(graded["train"], graded["vali"], fold["test"], seed)
    seconds["debiased"] = time.perf_counter() - t
    t = time.perf_counter()
    out["skyline-shown"] = rsrank_test(shown(fold["train"], logs["train"]),
                                       shown(fold["vali"], logs["vali"]), fold["test"], seed)
    seconds["skyline-shown"] = time.perf_counter() - t
    out["skyline"] = rsrank_test(fold["train"], fold["vali"], fold["test"], seed)
    truth = logs["train"].examination
    curve = {"estimated": [float(v) for v in examination.curve[:10]],
             "true": None if truth is None else [float(v) for v in truth[:10]]}
    return ({name: {"test": v[0].tolist(), "n_nonzero": int(v[1])} for name, v in out.items()},
            curve, seconds)


LOGS = {
    "pbm-0.5": {"model": "position", "eta": 0.5, "sessions": 100},
    "pbm-1": {"model": "position", "eta": 1.0, "sessions": 100},
    "pbm-2": {"model": "position", "eta": 2.0, "sessions": 100},
    "cascade": {"model": "cascade", "sessions": 100},
    "pbm-1-few": {"model": "position", "eta": 1.0, "sessions": 10},
    "pbm-1-many": {"model": "position", "eta": 1.0, "sessions": 200},
}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["ohsumed"])
    parser.add_argument("--logs", nargs="+", default=list(LOGS))
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--folds", type=int, default=1, help="folds per dataset and seed")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    report = {"command": command_line(argv), "runs": []}
    for dataset in args.datasets:
        for seed in range(args.seeds):
            for index, fold in enumerate(dataset_folds(dataset, seed, SHARED_DATA)[:args.folds]):
                for name in args.logs:
                    runs, curve, seconds = run_log(fold, LOGS[name], seed)
                    report["runs"].append({"dataset": dataset, "seed": seed, "fold": index + 1,
                                           "log": name, "methods": runs, "curve": curve,
                                           "seconds": seconds})
                    means = {m: round(float(np.nanmean(r["test"])), 4) for m, r in runs.items()}
                    print(dataset, seed, index + 1, name, means,
                          np.round(curve["estimated"][:5], 3), curve["true"] and
                          np.round(curve["true"][:5], 3), flush=True)
    summary = summarize(report["runs"])
    print(summary)
    if args.out:
        write_report(args.out, "clicks", report, summary)


def summarize(runs):
    lines = ["| dataset | log | " + " | ".join(METHODS) + " |", "|---" * (len(METHODS) + 2) + "|"]
    for run in runs:
        cells = []
        for method in METHODS:
            entry = run["methods"].get(method)
            cells.append("" if entry is None else f"{np.nanmean(entry['test']):.4f}")
        lines.append(f"| {run['dataset']} s{run['seed']} f{run['fold']} | {run['log']} | "
                     + " | ".join(cells) + " |")
    for run in runs:
        m = run["methods"]
        r = paired_t_test(np.nan_to_num(m["naive"]["test"]), np.nan_to_num(m["debiased"]["test"]))
        lines.append(f"debiased - naive {run['dataset']} {run['log']}: "
                     f"{r.difference:+.4f} p={r.pvalue:.3f}")
    return "\n".join(lines) + "\n"


METHODS = ["naive", "debiased", "skyline-shown", "skyline"]

if __name__ == "__main__":
    main()
