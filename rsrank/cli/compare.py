"""``rsrank compare``: paired significance tests between runs on the same queries."""

import json
import sys
from pathlib import Path

from ..clicks.estimate import compare_on_clicks
from ..reading.datasets import load_letor
from ..estimator import RSRank
from .evaluate import click_reading, click_values_of, in_columns
from ..evaluation.reports import per_query_from_results, read_results
from ..evaluation.metrics import letor_per_query
from ..evaluation.runs import on_file_queries, read_qrels, read_scores
from ..evaluation.stats import compare
from ..deployment.plotting import plot_comparison
from ._parsers import DEFAULT_METRICS
from ._options import UsageError, check_picture_output




def _is_results(path):
    path = Path(path)
    return path.is_dir() or path.name == "results.json"


def _results_values(path):
    """Per-query values of a results directory (or its results.json) written
    by ``rsrank train``: ``(values, convention, number of seeds)``."""
    try:
        document = read_results(path)
    except FileNotFoundError as error:
        raise UsageError(f"{error}, or a score file with --data") from None
    values = per_query_from_results(document, source=str(path))
    return values, document.get("convention"), len(document.get("seeds") or [None])


def _pooled_line(paths):
    """trec_eval's NDCG@10 of each results directory beside LETOR's, pooled
    over its queries, when every one recorded both (rsrank train does)."""
    pooled = {}
    for path in paths:
        document = read_results(path)
        if "pooled_ndcg@10" not in document:
            return None
        pooled[path] = document["pooled_ndcg@10"]
    return ("NDCG@10 pooled over each run's queries, LETOR's / trec_eval's ndcg_cut_10 (gain = "
            "label, ties by document id; what trec_eval gives on trec/test.run): "
            + "; ".join(f"{path} {value['letor']:.4f} / {value['trec_eval']:.4f}"
                        for path, value in pooled.items()) + ".")


def _on_clicks(args):
    """``rsrank compare MODEL MODEL ... --data FILE --clicks LOG``."""
    if args.data is None:
        raise UsageError("--clicks needs --data FILE: the features of the documents the log "
                         "shows, each row with its docid")
    if args.plot or args.baseline or args.json or args.convention is not None:
        raise UsageError("--clicks compares each model with the first: not with --plot, "
                         "--baseline, --json or --convention")
    if args.metrics != DEFAULT_METRICS:
        raise UsageError("--clicks estimates NDCG@10 (LETOR's convention): leave --metrics "
                         "out")
    values = click_values_of(args.data, args.clicks)
    models = [RSRank.load(path) for path in args.runs]
    views = [in_columns(values, model, args.data) for model in models]
    estimates, differences = compare_on_clicks(views, models)
    print(f"On {args.clicks} ({click_reading(values)}): NDCG@10 estimated from the clicks, paired "
          f"over {estimates[0].n_queries} queries; each model against the first "
          f"({args.runs[0]}).")
    print()
    print("| model | NDCG@10 [95% interval] | difference [95% interval] | p |")
    print("|---|---|---|---|")
    for index, (path, found) in enumerate(zip(args.runs, estimates)):
        cells = ["", "", ""] if index == 0 else [
            f"{differences[index - 1].value:+.4f}",
            f"[{differences[index - 1].low:+.4f}, {differences[index - 1].high:+.4f}]",
            f"{differences[index - 1].pvalue:.3g}"]
        print(f"| {path} | {found.value:.4f} [{found.low:.4f}, {found.high:.4f}] | "
              f"{cells[0]} {cells[1]} | {cells[2]} |")
    return 0


def run(args):
    if len(args.runs) < 2:
        raise UsageError("compare needs at least two runs")
    if len(set(args.runs)) != len(args.runs):
        raise UsageError("a run is named twice")
    if args.resamples < 1:
        raise UsageError(f"--resamples must be at least 1, got {args.resamples}")
    for path in args.runs:
        if not Path(path).exists():
            raise UsageError(f"{path}: no such file or directory")
    check_picture_output(args.plot, [*args.runs, *filter(None, [args.data, args.qrels])],
                      "--plot")
    if args.clicks is not None:
        return _on_clicks(args)
    runs, seeds, conventions = {}, {}, {}
    for path in filter(_is_results, args.runs):
        runs[path], conventions[path], seeds[path] = _results_values(path)
    wanted = args.convention or next(iter(conventions.values()), "letor")
    for path, convention in conventions.items():
        if convention != wanted:
            raise UsageError(f"{path} was evaluated with the {convention!r} convention, not "
                             f"{wanted!r}: compare runs under one convention")
    score_files = [path for path in args.runs if not _is_results(path)]
    if score_files:
        if args.data is None and args.qrels is None:
            raise UsageError(f"{score_files[0]}: a score file needs --data FILE (the LETOR "
                             "file it scores), a TREC run --qrels FILE")
        source = args.data or args.qrels
        if args.data is not None:
            _, y, qid, docids = load_letor(args.data, return_docids=True)
        else:
            y, qid, docids = read_qrels(args.qrels)
        for path in score_files:  # evaluated under the directories' convention
            scores = read_scores(path, n_rows=len(y), qid=qid, docids=docids, data=source)
            runs[path] = letor_per_query(y, scores, qid, convention=wanted, docids=docids)
            seeds[path] = 1
        for path in filter(_is_results, args.runs):
            runs[path], fold = on_file_queries(runs[path], qid, run=path, data=source)
            if fold is not None:
                print(f"{path}: its {fold} test queries, the ones in {source}",
                      file=sys.stderr)
    runs = {path: runs[path] for path in args.runs}  # in the order given
    metrics = [name.strip() for name in args.metrics.split(",") if name.strip()]
    known = set.intersection(*(set(values) - {"qid"} for values in runs.values()))
    for name in metrics:
        if name not in known:
            raise UsageError(f"unknown metric {name!r}; the runs have {', '.join(sorted(known))}")
    baseline = args.runs[0] if args.baseline is None else args.baseline
    if baseline not in runs:
        raise UsageError(f"--baseline {baseline} is not one of the runs")
    rows = compare(runs, metrics, baseline=baseline, n_resamples=args.resamples,
                   random_state=args.seed)
    if args.plot:
        # the headline metric when it is compared, else the first
        plot_comparison(runs, "NDCG@10" if "NDCG@10" in metrics else metrics[0], baseline,
                        args.plot)
    if args.json:
        print(json.dumps({"convention": wanted, "baseline": baseline, "seeds": seeds,
                          "n_resamples": args.resamples, "tests": rows}, indent=2))
        return 0
    n_queries = rows[0]["n_queries"] if rows else 0
    averaged = [path for path, n in seeds.items() if n > 1]
    note = (f"; per-query values averaged over the seeds of {', '.join(averaged)}"
            if averaged else "")
    print(f"Paired over {n_queries} queries ({wanted!r} convention){note}. p-values of the "
          f"paired t-test and the paired randomization test ({args.resamples:,} resamples, "
          f"exact when 2^queries is fewer), Holm-corrected over the {len(rows)} tests; "
          "* marks Holm-corrected p < 0.05 in both.")
    print()
    print("| metric | system | baseline mean | system mean | difference [95% CI] | t-test p "
          "| Holm | randomization p | Holm | |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        mark = "*" if max(row["t_pvalue_holm"], row["permutation_pvalue_holm"]) < 0.05 else ""
        print(f"| {row['metric']} | {row['system']} | {row['mean_a']:.4f} | "
              f"{row['mean_b']:.4f} | {row['difference']:+.4f} [{row['ci_low']:+.4f}, "
              f"{row['ci_high']:+.4f}] | {row['t_pvalue']:.3g} | {row['t_pvalue_holm']:.3g} | "
              f"{row['permutation_pvalue']:.3g} | {row['permutation_pvalue_holm']:.3g} | "
              f"{mark} |")
    pooled = _pooled_line([path for path in args.runs if _is_results(path)]) \
        if wanted == "letor" and all(_is_results(path) for path in args.runs) else None
    if pooled:
        print()
        print(pooled)
    left_out = [f"{row['metric']} of {row['system']}: {row['left_out']}" for row in rows
                if row["left_out"]]
    if left_out:
        print()
        print("Queries without a value in a run (no relevant document under the convention) "
              "are left out of that test: " + "; ".join(left_out) + ".")
    return 0
