"""Learning from clicks: naive, debiased and skyline rankers on simulated
click logs, with LightGBM's and XGBoost's debiasing in the same run.

Each log: a weak production ranker (least squares on the labels of a few
training queries) shows the top 10 of every training and vali query; users
click as :func:`rsrank.reading.synthetic.simulate_clicks` draws (position-based
with eta, or cascade). Test keeps its expert labels. Per log, test
NDCG@10 (LETOR's) of

* ``naive``: ``rsrank train --clicks --debias off``: each session a query,
  its clicks the labels (:func:`rsrank.clicks.plain_clicks`);
* ``auto``: ``rsrank train --clicks``'s default (``--debias auto``): of
  ``naive`` and ``debiased``, the one that ranks the vali log's documents
  graded by their click chance better, plain on a tie
  (:func:`rsrank.clicks.choice.debias_choice`);
* ``debiased``: ``rsrank train --clicks --debias on``'s path (the examination estimated
  from the training log; a position-based log trains on its session lists,
  each click over what its session left unclicked, weighted by the inverse
  of its position's examination; a cascade log on its documents graded by
  clicks over the sessions that reached them; vali read likewise, with the
  training log's curve);
* ``skyline-shown``/``skyline``: ``rsrank train`` on the expert labels of
  the shown documents / of every training document;
* ``lightgbm``: LGBMRanker-equivalent lambdarank with ``position=`` on the
  sessions, early stopped on the vali log's clicks;
* ``xgboost``: ``lambdarank_unbiased=True`` on the sessions, likewise.

``--logs hu2019 dcm pbm-1-noisy`` draws logs from other simulators (Hu et
al.'s position-based model under a LightGBM production ranker, the
dependent click model) and with more click noise (``OTHER_LOGS``).

    python scripts/click_study.py [--datasets ...] [--seeds 3] [--out results] [--name clicks]
    python scripts/click_study.py --summarize NEW.json [--baseline OLD.json] [--out DIR --name N]
"""

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _bench import SHARED_DATA, command_line, write_report  # noqa: E402
import _click_models  # noqa: E402
from _click_models import (LOGS, OTHER_LOGS, debiased_splits, dense_folds,  # noqa: E402
                           make_logs, plain_splits, pooled, shown)
from sklearn.utils import Bunch  # noqa: E402

from rsrank.clicks import grading  # noqa: E402
from rsrank.clicks.choice import debias_choice  # noqa: E402
from rsrank.reading.querydata import QueryData  # noqa: E402
from rsrank.evaluation.experiments import run_letor_folds  # noqa: E402
from rsrank.evaluation.metrics import ndcg_per_query  # noqa: E402
from rsrank.learning.recipe import DEFAULT_WITHIN, train_recipe, vali_folds  # noqa: E402
from rsrank.evaluation.stats import paired_t_test  # noqa: E402


def rsrank_test(train, vali, test, seed, additive=False, query_options=None,
                vali_shown=None):
    """``rsrank train``'s recipe: per-query test NDCG@10 and the features kept
    (and the selected model, second);
    with ``vali_shown`` (vali's shown documents with their expert labels),
    also the selected model's vali score (the clicks' estimate it was
    chosen on) and its NDCG@10 on those documents by their labels."""
    estimator, grid = train_recipe(seed=seed, n_jobs="auto", additive=additive)
    experiment = run_letor_folds([Bunch(train=train, vali=vali, test=test, fold=1,
                                        query_options=query_options)], estimator,
                                 grid, within=DEFAULT_WITHIN, vali_cv=vali_folds(DEFAULT_WITHIN))
    fold = experiment.folds[0]
    X, y, qid = test[:3]
    out = {"test": ndcg_per_query(y, fold.model.predict(X), qid, 10, convention="letor").tolist(),
           "n_nonzero": int(fold.n_nonzero)}
    if vali_shown is not None:
        Xv, labels, qv = vali_shown
        out["vali_by_clicks"] = float(fold.vali_score)
        out["vali_by_labels"] = float(np.nanmean(ndcg_per_query(
            labels, fold.model.predict(Xv), qv, 10, convention="letor")))
    return out, fold.model


def session_rows(split, sim):
    """The sessions as queries, each in position order: features, clicks,
    query sizes, positions (0 is the top)."""
    order = np.lexsort((sim.position, sim.session))
    X = np.asarray(split[0][sim.docid[order]], dtype=np.float32)
    sizes = np.bincount(np.unique(sim.session[order], return_inverse=True)[1].ravel())
    return X, sim.click[order], sizes, sim.position[order] - 1, sim.session[order]


def lightgbm_test(fold, logs, seed):
    """LightGBM's lambdarank with its position-bias term (``position=``),
    early stopped on the vali log's click NDCG@10."""
    import lightgbm as lgb

    X, click, sizes, position, _ = session_rows(fold["train"], logs["train"])
    Xv, clickv, sizesv, _, _ = session_rows(fold["vali"], logs["vali"])
    train = lgb.Dataset(X, click, group=sizes, position=position)
    vali = lgb.Dataset(Xv, clickv, group=sizesv, reference=train)
    params = {"objective": "lambdarank", "metric": "ndcg", "eval_at": [10],
              "learning_rate": 0.05, "num_leaves": 31, "min_data_in_leaf": 20,
              "verbose": -1, "seed": seed, "num_threads": 2, "deterministic": True}
    booster = lgb.train(params, train, num_boost_round=500, valid_sets=[vali],
                        callbacks=[lgb.early_stopping(30, verbose=False)])
    Xt, y, qid = fold["test"][:3]
    return (ndcg_per_query(y, booster.predict(np.asarray(Xt, dtype=np.float32),
                                              num_iteration=booster.best_iteration),
                           qid, 10, convention="letor"),
            int(np.count_nonzero(booster.feature_importance("split"))))


def xgboost_test(fold, logs, seed):
    """XGBoost's Unbiased LambdaMART (``lambdarank_unbiased=True``, rows in
    position order), early stopped on the vali log's click NDCG@10."""
    import xgboost as xgb

    X, click, _, _, session = session_rows(fold["train"], logs["train"])
    Xv, clickv, _, _, sessionv = session_rows(fold["vali"], logs["vali"])
    ranker = xgb.XGBRanker(n_estimators=500, learning_rate=0.05, tree_method="hist",
                           objective="rank:ndcg", lambdarank_unbiased=True,
                           lambdarank_pair_method="topk", lambdarank_num_pair_per_sample=10,
                           eval_metric="ndcg@10", early_stopping_rounds=30,
                           random_state=seed, n_jobs=2)
    ranker.fit(X, click, qid=session, eval_set=[(Xv, clickv)], eval_qid=[sessionv],
               verbose=False)
    Xt, y, qid = fold["test"][:3]
    scores = ranker.predict(np.asarray(Xt, dtype=np.float32), iteration_range=(
        0, ranker.best_iteration + 1))
    used = ranker.get_booster().get_score(importance_type="weight")
    return ndcg_per_query(y, scores, qid, 10, convention="letor"), len(used)


def run_log(fold, config, seed, peers=True, additive=False):
    """Every method on one log of one fold: per-query test values, the
    features kept, the curve and the seconds each RSRank run took."""
    logs = make_logs(fold, config, seed)
    out, seconds = {}, {}
    fit = lambda *splits, **extra: rsrank_test(*splits, fold["test"], seed,  # noqa: E731
                                                additive=additive, **extra)
    t = time.perf_counter()
    plain, plain_options = plain_splits(fold, logs)
    out["naive"], naive_model = fit(plain["train"], plain["vali"], query_options=plain_options)
    seconds["naive"] = time.perf_counter() - t
    t = time.perf_counter()
    graded, options, vali_shown, examination = debiased_splits(fold, logs)
    out["debiased"], debiased_model = fit(graded["train"], graded["vali"],
                                          query_options=options, vali_shown=vali_shown)
    seconds["debiased"] = time.perf_counter() - t
    choice = debias_choice(debiased_model, naive_model, QueryData(*options["judge"]))
    Xv, yv, qv = fold["vali"][:3]  # the expert labels of every vali document: an oracle
    oracle = {name: float(np.nanmean(ndcg_per_query(yv, model.predict(Xv), qv, 10,
                                                    convention="letor")))
              for name, model in (("debiased", debiased_model), ("naive", naive_model))}
    out["auto"] = {**out["debiased" if choice.debiased else "naive"],
                   "choice": {**choice.to_dict(), "oracle": oracle}}
    t = time.perf_counter()
    out["skyline-shown"] = fit(shown(fold["train"], logs["train"]),
                               shown(fold["vali"], logs["vali"]))[0]
    seconds["skyline-shown"] = time.perf_counter() - t
    if "skyline" not in fold:  # the same for every log of the fold
        fold["skyline"] = fit(fold["train"], fold["vali"])[0]
    out["skyline"] = fold["skyline"]
    if peers:
        for name, peer in (("lightgbm", lightgbm_test), ("xgboost", xgboost_test)):
            values, used = peer(fold, logs, seed)
            out[name] = {"test": values.tolist(), "n_nonzero": used}
    truth = logs["train"].examination
    curve = {"estimated": [float(v) for v in examination.curve[:10]],
             "true": None if truth is None else [float(v) for v in truth[:10]]}
    return out, curve, seconds


#: sets whose truth is not linear: the kind a user picks there is additive
ADDITIVE = {"nonlinear"}

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["ohsumed"])
    parser.add_argument("--logs", nargs="+", default=list(LOGS),
                        choices=[*LOGS, *OTHER_LOGS])
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--folds", type=int, default=1, help="folds per dataset and seed")
    parser.add_argument("--out", default=None)
    parser.add_argument("--name", default="clicks", help="the report's file name (NAME.md, "
                        "NAME.json)")
    parser.add_argument("--no-peers", action="store_true", help="RSRank's rankers alone")
    parser.add_argument("--max-click-weight", type=float, default=None,
                        help="the largest inverse-propensity weight of a click (default: "
                        "rsrank.clicks.MAX_CLICK_WEIGHT)")
    parser.add_argument("--unshown", type=float, default=0.0,
                        help="put the training features' documents the log never showed "
                        "below each click of the debiased reading, weighing this share of "
                        "a session list's unclicked documents (rsrank.clicks.splits."
                        "read_clicks' unshown; default 0: left out)")
    parser.add_argument("--summarize", metavar="JSON", help="print the summary of a run's "
                        "clicks.json and stop")
    parser.add_argument("--baseline", metavar="JSON", help="with --summarize: each method "
                        "against the same logs in this earlier run's JSON (other code)")
    args = parser.parse_args(argv)
    if args.summarize:
        runs = json.loads(Path(args.summarize).read_text())["runs"]
        text = summarize(runs)
        if args.baseline:
            text += against(runs, json.loads(Path(args.baseline).read_text())["runs"])
        print(text)
        if args.out:
            write_report(args.out, args.name, {"command": command_line(argv),
                                               "summary": text}, text)
        return
    if args.max_click_weight is not None:  # read by every session_lists call
        grading.MAX_CLICK_WEIGHT = args.max_click_weight
    _click_models.UNSHOWN = args.unshown  # read by every reading of the logs
    report = {"command": command_line(argv), "max_click_weight": grading.MAX_CLICK_WEIGHT,
              "unshown": args.unshown, "runs": []}
    for dataset in args.datasets:
        for seed in range(args.seeds):
            for index, fold in enumerate(dense_folds(dataset, seed, SHARED_DATA, args.folds)):
                for name in args.logs:
                    runs, curve, seconds = run_log(fold, {**LOGS, **OTHER_LOGS}[name], seed,
                                                   not args.no_peers,
                                                   dataset in ADDITIVE)
                    report["runs"].append({"dataset": dataset, "seed": seed, "fold": index + 1,
                                           "log": name, "methods": runs, "curve": curve,
                                           "seconds": seconds})
                    means = {m: round(float(np.nanmean(r["test"])), 4) for m, r in runs.items()}
                    print(dataset, seed, index + 1, name, means,
                          np.round(curve["estimated"][:5], 3), curve["true"] and
                          np.round(curve["true"][:5], 3), flush=True)
                    if args.out:  # after every log: a run cut short keeps what it did
                        write_report(args.out, args.name, report, summarize(report["runs"])
                                     + settings(args))
    print(summarize(report["runs"]) + settings(args))


def against(runs, baseline):
    """Each RSRank method of ``runs`` against the same logs' in
    ``baseline`` (an earlier run, on other code): the mean test NDCG@10 of
    each, over the logs both ran, the paired difference over all their
    queries pooled with its p-value, and the logs where it is
    significantly above or below."""
    def groups(found):
        out = {}
        for run in found:
            out.setdefault((run["dataset"], run["log"]), []).append(run)
        return out

    now, before = groups(runs), groups(baseline)
    shared = [key for key in now if key in before]
    lines = ["", f"Against the baseline run, over the {len(shared)} logs both ran:", ""]
    for method in ("naive", "auto", "debiased"):
        pairs = [(pooled(before[key], method), pooled(now[key], method)) for key in shared]
        if any(a is None or b is None or len(a) != len(b) for a, b in pairs):
            continue
        up = [" ".join(key) for key, (a, b) in zip(shared, pairs) if compare(a, b)[2] == "+"]
        down = [" ".join(key) for key, (a, b) in zip(shared, pairs) if compare(a, b)[2] == "-"]
        a, b = np.concatenate([a for a, _ in pairs]), np.concatenate([b for _, b in pairs])
        diff, p, _ = compare(a, b)
        lines.append(f"- {method}: mean {a.mean():.4f} before, {b.mean():.4f} now; "
                     f"{diff:+.4f} over {len(a)} test queries pooled (p = {p:.3f}); "
                     f"significantly above on {', '.join(up) or 'none'}; below on "
                     f"{', '.join(down) or 'none'}.")
    return "\n".join(lines) + "\n"


def compare(a, b):
    """``b - a`` over the queries, its p-value, and a mark: + or - where
    p < 0.05."""
    test = paired_t_test(a, b)
    mark = "" if test.pvalue >= 0.05 else ("+" if test.difference > 0 else "-")
    return test.difference, test.pvalue, mark


def curve_error(runs):
    """The largest relative error of the estimated curve at positions 1
    to 5, averaged over a group's runs (None for the cascade)."""
    errors = [np.max(np.abs(np.array(r["curve"]["estimated"][:5]) - np.array(r["curve"]["true"][:5]))
                     / np.array(r["curve"]["true"][:5])) for r in runs if r["curve"]["true"]]
    return float(np.mean(errors)) if errors else None


def summarize(runs):
    groups = {}
    for run in runs:
        groups.setdefault((run["dataset"], run["log"]), []).append(run)
    closures, below, peer_rows, judges = {"debiased": [], "auto": []}, {"debiased": [],
                                                                        "auto": []}, [], []
    kept = []
    header = ("| data | log | queries | naive | auto | debiased | shown labels | all labels | "
              "LightGBM | XGBoost | auto - naive (p) | debiased - naive (p) | gap closed "
              "(auto / debiased) | debiased kept | curve error 1-5 | features (auto / shown "
              "labels) | time (debiased / shown labels) |")
    lines = [header, "|---" * (header.count("|") - 1) + "|"]
    for (dataset, log), group in groups.items():
        values = {m: pooled(group, m) for m in METHODS}
        means = {m: (None if v is None else float(v.mean())) for m, v in values.items()}
        if values["auto"] is None:  # a run from before --debias auto
            values["auto"], means["auto"] = values["debiased"], means["debiased"]
        cells, closed = {}, {}
        best = max(means["skyline"], means["skyline-shown"])
        for method in ("auto", "debiased"):
            diff, p, mark = compare(values["naive"], values[method])
            cells[method] = f"{diff:+.4f} ({p:.3f}){mark}"
            if mark == "-":
                below[method].append(f"{dataset} {log}")
            if best > means["naive"] + 0.005:
                closed[method] = (means[method] - means["naive"]) / (best - means["naive"])
                closures[method].append(closed[method])
        for peer in ("lightgbm", "xgboost"):
            if values[peer] is not None:
                d, pp, _ = compare(values[peer], values["auto"])
                peer_rows.append((dataset, log, peer, d, pp))
        choices = [r["methods"]["auto"]["choice"]["kept"] == "debiased" for r in group
                   if "auto" in r["methods"]]
        kept.extend(choices)
        features = (np.mean([r["methods"].get("auto", r["methods"]["debiased"])["n_nonzero"]
                             for r in group]),
                    np.mean([r["methods"]["skyline-shown"]["n_nonzero"] for r in group]))
        time = np.mean([r["seconds"]["debiased"] / r["seconds"]["skyline-shown"] for r in group])
        error = curve_error(group)
        judges.extend((r["methods"]["debiased"]["vali_by_clicks"],
                       r["methods"]["debiased"]["vali_by_labels"]) for r in group)
        cell = lambda m: "" if means[m] is None else f"{means[m]:.4f}"  # noqa: E731
        gap = " / ".join("" if m not in closed else f"{closed[m]:.2f}"
                         for m in ("auto", "debiased"))
        lines.append(
            f"| {dataset} | {log} | {len(values['naive'])} | {cell('naive')} | {cell('auto')} | "
            f"{cell('debiased')} | {cell('skyline-shown')} | {cell('skyline')} | "
            f"{cell('lightgbm')} | {cell('xgboost')} | {cells['auto']} | {cells['debiased']} | "
            f"{gap} | {sum(choices)} of {len(choices)} | "
            f"{'' if error is None else f'{error:.3f}'} | {features[0]:.1f} / {features[1]:.1f} | "
            f"{time:.2f} |")
    lines.append("")
    lines.append("auto: `rsrank train --clicks`'s default, of the plain model (naive) and "
                 "the debiased one the one that ranks the vali log's documents graded by "
                 "their clicks better (plain on a tie); debiased kept: in how many runs. "
                 "Time: in this process, grading the "
                 "log and walking the path against walking it on the shown documents' labels "
                 "(rsrank train's own ratio is in clicks_time.md). Curve error: the largest "
                 "relative error at positions 1-5, mean over folds.")
    lines.append("")
    for method in ("auto", "debiased"):
        lines.append(f"- Logs where {method} is significantly below naive (p < 0.05): "
                     f"{', '.join(below[method]) or 'none'}.")
        if closures[method]:
            lines.append(f"- Gap from naive to the better skyline closed by {method}, averaged "
                         f"over the {len(closures[method])} logs where a skyline is above naive "
                         f"by more than 0.005: {np.mean(closures[method]):.2f}.")
    if kept:
        lines.append(f"- auto kept the debiased model in {sum(kept)} of {len(kept)} runs.")
    for peer in ("lightgbm", "xgboost"):
        mine = [r for r in peer_rows if r[2] == peer]
        if mine:
            worse = [f"{d} {lg}" for d, lg, _, diff, p in mine if diff < 0 and p < 0.05]
            lines.append(f"- auto minus {peer}: mean {np.mean([r[3] for r in mine]):+.4f} over "
                         f"{len(mine)} logs; significantly below on: {', '.join(worse) or 'none'}.")
    lines.extend(choice_rules(groups))
    if judges:
        by_clicks, by_labels = np.array(judges).T
        lines.append(f"- The vali judge (the selected model's vali estimate from the clicks: "
                     f"inverse-propensity-weighted NDCG@10 over the session lists, or NDCG@10 "
                     f"of the click grades on cascade logs / its NDCG@10 on the vali log's "
                     f"shown documents by their expert labels), over "
                     f"{len(judges)} runs: means {by_clicks.mean():.4f} / {by_labels.mean():.4f}, "
                     f"correlation {np.corrcoef(by_clicks, by_labels)[0, 1]:.2f}, mean absolute "
                     f"difference {np.mean(np.abs(by_clicks - by_labels)):.4f}.")
    return "\n".join(lines) + "\n"


def _by_margin(margin):
    return lambda choice: choice["difference"] > margin * choice["standard_error"]


#: how ``--debias auto`` would fare under other rules, from each run's stored
#: choice: keeping the debiased model only where it beats plain clicks on the
#: vali judge by more than a margin of standard errors (0: the default), and
#: where the expert labels of the vali queries' documents rank it above (an
#: oracle no log gives: what the better of the two models closes)
CHOICE_RULES = {
    **{f"Debiased kept only where it beats plain clicks on the vali judge by more than "
       f"{margin:g} standard errors": _by_margin(margin) for margin in (0.0, 0.5, 1.0, 2.0)},
    "Debiased kept where the vali queries' expert labels rank it above plain clicks "
    "(an oracle)": lambda choice: choice["oracle"]["debiased"] > choice["oracle"]["naive"],
}


def choice_rules(groups):
    """Each rule of :data:`CHOICE_RULES`: the gap closed and the logs
    significantly below naive (a rule whose inputs some run lacks, made
    before they were stored, is left out)."""
    out = []
    for name, rule in CHOICE_RULES.items():
        try:
            found = _under_rule(groups, rule)
        except KeyError:
            continue
        if found:
            closed, below = found
            out.append(f"- {name}: gap closed {np.mean(closed):.2f} (median "
                       f"{np.median(closed):.2f}), significantly below naive on "
                       f"{', '.join(below) or 'no log'}.")
    return out


def _under_rule(groups, rule):
    """``(gap closed per log, logs significantly below naive)`` with the
    model ``rule(choice)`` keeps in each run, or None without choices."""
    closed, below = [], []
    for (dataset, log), group in groups.items():
        picked = [dict(r, methods={**r["methods"], "rule": r["methods"][
            "debiased" if rule(r["methods"]["auto"]["choice"]) else "naive"]})
            for r in group if "auto" in r["methods"]]
        if not picked:
            return None
        naive, kept = pooled(picked, "naive"), pooled(picked, "rule")
        best = max(pooled(picked, "skyline").mean(), pooled(picked, "skyline-shown").mean())
        if compare(naive, kept)[2] == "-":
            below.append(f"{dataset} {log}")
        if best > naive.mean() + 0.005:
            closed.append((kept.mean() - naive.mean()) / (best - naive.mean()))
    return closed, below


#: the run's bound on a click's weight, under its summary
WEIGHTS = "\nA click's inverse-propensity weight is at most {:g} in this run.\n"


def settings(args):
    """The run's settings of the debiased reading, under its summary."""
    out = WEIGHTS.format(grading.MAX_CLICK_WEIGHT)
    if args.unshown:
        out += (f"The debiased reading puts the documents the log never showed below each "
                f"click, weighing {args.unshown:g} times its session list's unclicked ones.\n")
    return out

METHODS = ["naive", "auto", "debiased", "skyline-shown", "skyline", "lightgbm", "xgboost"]

if __name__ == "__main__":
    main()
