"""Results directories: an experiment written as ``results.json``,
``results.md``, models, score files and TREC runs, all at once
(:func:`save_experiment`), and read back (:func:`read_results`,
:func:`per_query_from_results`) for ``rsrank compare`` and
:mod:`rsrank.evaluation.stats`."""

import json
from pathlib import Path

import numpy as np

from ..reading._files import ResultsDirectory, atomic_write_text, read_bounded_text
from .stats import average_over_seeds
from .writers import qrels_text, run_problem, run_text, write_scores

__all__ = ["REPORT_COLUMNS", "experiment_markdown", "write_experiment", "save_experiment",
           "read_results", "per_query_from_results"]

#: the largest results.json read back (1 GiB)
RESULTS_LIMIT = 2**30

REPORT_COLUMNS = ("NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10", "P@1", "P@3", "P@5", "P@10", "MAP")


def experiment_markdown(experiment, title="RSRank on LETOR folds", command=None):
    """Per-fold table plus mean +- std over folds, as Markdown."""
    head = "| fold | " + " | ".join(REPORT_COLUMNS) + " | features | selected |"
    rule = "|---" * (len(REPORT_COLUMNS) + 3) + "|"
    lines = [f"# {title}", ""]
    if command:
        lines += [f"Command: `{command}`", ""]
    rule_text = f"by {experiment.select}"
    if experiment.within == "1se":
        rule_text = (f"the sparsest model whose vali {experiment.select} is within one "
                     "standard error of the best (paired over the vali queries)")
    elif experiment.within:
        rule_text = (f"the sparsest model whose vali {experiment.select} is within "
                     f"{experiment.within:.0%} of the best")
    lines += [f"Selection on vali: {rule_text}. Metrics with the {experiment.convention!r} "
              "convention (see rsrank.metrics).", ""]
    sampled = [f.fold for f in experiment.folds if f.grid and f.grid[-1].get("refit")]
    if sampled:
        folds = sorted(set(sampled))
        lines += [f"Fold{'s' if len(folds) > 1 else ''} {', '.join(map(str, folds))}: the path "
                  f"walked a seeded sample of about {experiment.path_rows:,} of the training "
                  "rows (`--path-rows`), and the chosen point was fitted again on all of them; "
                  "its row is that refit.", ""]
    if any(f.evaluated_on == "vali" for f in experiment.folds):
        lines += ["**No test split: the table reports the validation data used for "
                  "selection.**", ""]
    seeded = len(experiment.seeds()) > 1
    if seeded:
        head = head.replace("| fold |", "| fold | seed |")
        rule += "---|"
    lines += [head, rule]
    for fold in experiment.folds:
        values = " | ".join(f"{fold.test[name]:.4f}" for name in REPORT_COLUMNS)
        chosen = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                           for k, v in fold.params.items()) or "defaults"
        seed = f" {fold.seed} |" if seeded else ""
        lines.append(f"| {fold.fold} |{seed} {values} | {fold.n_nonzero} | {chosen} |")
    rows = [("mean ± std", experiment.summary())]
    if seeded:
        rows = [("mean ± std over folds and seeds", rows[0][1]),
                (f"mean over folds ± std over {len(experiment.seeds())} seeds",
                 experiment.seed_summary())]
    if len(experiment.folds) == 1:
        rows = []  # one fold, one seed: no spread to report (it would read ± 0.0000)
    for label, summary in rows:
        values = " | ".join(f"{summary[name][0]:.4f} ± {summary[name][1]:.4f}"
                            for name in REPORT_COLUMNS)
        nnz = summary["n_nonzero"]
        blank = " |" if seeded else ""
        lines.append(f"| {label} |{blank} {values} | {nnz[0]:.1f} ± {nnz[1]:.1f} | |")
    pooled = experiment.pooled_ndcg()
    if pooled is not None and experiment.convention == "letor":
        lines += ["", f"Over the {pooled['queries']} evaluated queries pooled, NDCG@10 is "
                  f"{pooled['letor']:.4f} by LETOR's convention (gain 2^label - 1, ranks 1 and 2 "
                  f"undiscounted) and {pooled['trec_eval']:.4f} by trec_eval's ndcg_cut_10 "
                  "(gain = label, ties by document id): the number trec_eval, pytrec_eval "
                  f"and ranx-style tools compute on trec/{experiment.folds[0].evaluated_on}"
                  f"{'.seed<s>' if seeded else ''}.run."]
    kinds = {fold.model.model_.kind: fold.model.model_.kept_words for fold in experiment.folds}
    if len(kinds) == 1:
        lines += ["", f"Kept features ({next(iter(kinds.values()))}):", ""]
    elif kinds:  # the selection chose between kinds (--with-linear)
        lines += ["", "Kept features, each fold's by the kind of model chosen ("
                  + "; ".join(f"{kind}: {words}" for kind, words in kinds.items()) + "):", ""]
    for fold in experiment.folds:
        kept = fold.model.selected_features()
        form = fold.model.model_.kept_format
        pairs = ", ".join(f"{a} x {b} {form.format(spread)}"
                          for (a, b), spread in fold.model.selected_interactions())
        listed = ", ".join(f"{name} {form.format(weight)}" for name, weight in kept) or (
            "no feature on its own" if pairs else "none")
        name = fold.name + (f" ({fold.model.model_.kind})" if len(kinds) > 1 else "")
        lines.append(f"- {name}: {listed}" + (f"; pairs: {pairs}" if pairs else ""))
    if any(fold.model.feature_costs is not None for fold in experiment.folds):
        costs = [fold.model.feature_cost() for fold in experiment.folds]
        lines += ["", "Total cost of the kept features (--feature-costs): "
                  + ", ".join(f"{fold.name} {cost:.4g}" for fold, cost in
                              zip(experiment.folds, costs))
                  + f"; mean {np.mean(costs):.4g}"]
    return "\n".join(lines) + "\n"


def write_experiment(experiment, directory, *, command=None, extra=None):
    """Write ``results.json``, ``results.md``, ``models/Fold{k}.json`` and
    ``predictions/Fold{k}.test.txt`` (one score per line, LETOR's Eval-Score
    input; ``Fold{k}.seed{s}`` for each of several seeds) into the existing,
    empty ``directory``. ``results.json`` holds every fold's per-query test
    values (``per_query``), which ``rsrank compare`` tests."""
    directory = Path(directory)
    (directory / "models").mkdir()
    (directory / "predictions").mkdir()
    for fold in experiment.folds:
        fold.model.save(directory / "models" / f"{fold.name}.json")
        write_scores(directory / "predictions" / f"{fold.name}.test.txt", fold.test_scores)
    _write_trec(experiment, directory)
    document = experiment.to_dict()
    document["command"] = command
    document.update(extra or {})
    atomic_write_text(directory / "results.json", json.dumps(document, indent=2) + "\n")
    atomic_write_text(directory / "results.md", experiment_markdown(experiment, command=command))


def _write_trec(experiment, directory):
    """``trec/``: each fold's run of the evaluated split (``Fold<k>.test.run``,
    per seed as the predictions) and its qrels (``Fold<k>.test.qrels``),
    and, when the folds' queries do not overlap (LETOR's folds), the whole
    collection (``test.run``, per seed ``test.seed<s>.run``, and
    ``test.qrels``): trec_eval's, pytrec_eval's and ranx's inputs, and
    ``rsrank compare --qrels``'s. Nothing when a fold's documents cannot
    make a run (a docid twice in a query, or with a space)."""
    folds = [f for f in experiment.folds if f.evaluated_rows is not None]
    if not folds or any(run_problem(f.evaluated_rows[0], f.evaluated_rows[2]) for f in folds):
        return
    trec = directory / "trec"
    trec.mkdir()
    split = folds[0].evaluated_on
    first, runs = {}, {}
    for fold in folds:
        qid, labels, docids, groups = fold.evaluated_rows
        runs[id(fold)] = run_text(qid, docids, fold.test_scores, groups=groups)
        _text(trec / f"{fold.name}.{split}.run", runs[id(fold)])
        if first.setdefault(fold.fold, fold) is fold:
            _text(trec / f"Fold{fold.fold}.{split}.qrels", qrels_text(qid, docids, labels))
    queries = [np.unique(f.evaluated_rows[0]) for f in first.values()]
    if len(np.unique(np.concatenate(queries))) != sum(len(q) for q in queries):
        return  # the folds share queries: no whole collection
    several = len(experiment.seeds()) > 1
    for seed in experiment.seeds():
        name = f"{split}.seed{seed}.run" if several else f"{split}.run"
        _text(trec / name, "".join(runs[id(f)] for f in folds if f.seed == seed))
    _text(trec / f"{split}.qrels", "".join(
        qrels_text(*(fold.evaluated_rows[i] for i in (0, 2, 1))) for fold in first.values()))


def _text(path, text):
    with open(path, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)


def save_experiment(experiment, out_dir, *, command=None, overwrite=False, extra=None,
                    inputs=()):
    """Write the experiment (see :func:`write_experiment`) as the directory
    ``out_dir``, all at once.

    Everything is written into a hidden staging directory that is renamed
    into place at the end (:class:`rsrank.reading._files.ResultsDirectory`): an
    interrupted run leaves no half-written results, two runs never both
    write the same ``out_dir``, and ``overwrite`` swaps old and new results
    in one step. An existing ``out_dir`` is an error unless ``overwrite``;
    ``out_dir`` may not be, hold or sit inside one of ``inputs``.
    """
    with ResultsDirectory(out_dir, overwrite=overwrite, inputs=inputs) as results:
        write_experiment(experiment, results.staging, command=command, extra=extra)
        results.publish()
    return out_dir


# -- reading results back ---------------------------------------------------------


def read_results(path):
    """The document of a results directory written by ``rsrank train`` (or
    of its ``results.json``), checked to be one."""
    path = Path(path)
    document_path = path / "results.json" if path.is_dir() else path
    if not document_path.is_file():
        raise FileNotFoundError(f"{path}: no results.json (give a directory written by "
                                "rsrank train)")
    try:
        document = json.loads(read_bounded_text(document_path, RESULTS_LIMIT, "results.json"))
    except json.JSONDecodeError as error:
        raise ValueError(f"{document_path}: not valid JSON ({error})") from None
    if not isinstance(document, dict) or not isinstance(document.get("folds"), list):
        raise ValueError(f"{document_path}: not a results.json written by rsrank train")
    return document


def per_query_from_results(document, *, source="results.json"):
    """The per-query test values of a ``results.json`` document: queries
    keyed ``"fold:qid"``, each value averaged over the run's seeds."""
    by_fold = {}
    for entry in document.get("folds", []):
        if "per_query" not in entry:
            raise ValueError(f"{source}: fold {entry.get('fold')} has no per-query values "
                             "(written by an older rsrank); train again to compare it")
        by_fold.setdefault(entry["fold"], []).append(entry["per_query"])
    if not by_fold:
        raise ValueError(f"{source}: no folds")
    merged = {}
    for fold, entries in sorted(by_fold.items()):
        averaged = average_over_seeds(entries)
        averaged["qid"] = np.array([f"{fold}:{q}" for q in averaged["qid"]])
        for metric, values in averaged.items():
            merged.setdefault(metric, []).append(values)
    return {metric: np.concatenate(parts) for metric, parts in merged.items()}
