"""The ``rsrank`` command line: argument parsing and printing only.

Every action calls the public API; a user mistake (missing file, bad grid
value, unknown fold) is one line on stderr and exit code 2.
"""

import argparse
import contextlib
import functools
from concurrent.futures import BrokenExecutor
import json
import os
import shlex
import signal
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone

from ._compile import deferred
from ._kernels import compiled_before
from ._version import __version__
from .datasets import (LetorFormatError, bundled_data_path, check_exp2_labels,
                       data_line_numbers, dataset_summary, find_folds, letor_summary, load_letor,
                       load_letor_fold)
from .layouts import find_splits, read_feature_costs, read_feature_names, resolve_training_data
from .runs import read_scores
from .writers import run_problem, write_run, write_scores
from ._workers import WorkerStartError
from ._files import (ResultsDirectory, atomic_write_text, check_not_input, make_parents,
                     read_bounded_text, remove_empty)
from .estimator import RSRank
from .penalty import L1_METHODS
from .export import (FORMATS, engine_features, export_model, featureset_subset, guarantee,
                     upload_hint)
from .metrics import CONVENTIONS, letor_per_query, letor_report
from .experiments import (check_within, experiment_markdown, l1_grid, parse_metric,
                          per_query_from_results, read_results, regularization_path,
                          run_letor_folds, write_experiment)
from .preprocessing import NORMALIZERS, QUERY_NORMALIZERS
from .stats import compare

DEFAULTS = RSRank().get_params()
#: The default grid of ``rsrank train``: L1 strengths as fractions of each
#: fold's l1_max, nine log-spaced points from 0.46 down to 1/1000 (1 itself
#: keeps every weight at zero), then 0: a regularization path from strong
#: to weak. With ``--within``, the sparsest point whose vali score is
#: within 1% of the best is kept.
DEFAULT_L1_RATIO = [float(f"{r:.3g}") for r in np.geomspace(1.0, 1e-3, 10)[1:]] + [0.0]
DEFAULT_WITHIN = 0.01
#: ``rsrank train``'s default recipe (``--learning-rate curvature``): every
#: point of the path at 2 over the trace of the loss's Hessian at w = 0,
#: warm-started from the stronger point, kept at its last of this many
#: epochs (the penalized optimum), for both pair weightings; the selection
#: sees all of them (``results/paths.md``)
PATH_EPOCHS = 300
#: ... and stopped earlier once an epoch moves no weight by more than this
#: times the largest (``RSRank(weight_tol=...)``; ``results/paths_tol.md``: 1e-3
#: loses on OHSUMED, 1e-4 keeps every dataset where all 300 epochs put it)
PATH_WEIGHT_TOL = 1e-4
#: ... and this many epochs at most for --additive: the trace of its Hessian
#: overstates the curvature more (many nested steps per feature), so its steps
#: are shorter, and at 300 epochs the sparse points of the path are still
#: moving (their vali NDCG rises with the epochs on make_nonlinear)
PATH_EPOCHS_ADDITIVE = 1000
PATH_PAIR_WEIGHTS = ["unit", "delta_ndcg"]


class UsageError(ValueError):
    """A mistake in the command line itself."""


def _within(text):
    value = text.strip().lower()
    try:
        value = value if value == "1se" else float(value)
        check_within(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: a fraction in [0, 1) or '1se'") from None
    return value


def _number_list(kind):
    def parse(text):
        values = []
        for token in text.split(","):
            token = token.strip()
            try:
                value = kind(token)
            except ValueError:
                name = "an integer" if kind is int else "a number"
                raise argparse.ArgumentTypeError(f"{token!r} is not {name}") from None
            if value != value or value in (float("inf"), float("-inf")) or value < 0:
                raise argparse.ArgumentTypeError(f"{token!r} must be a finite number >= 0")
            values.append(value)
        if not values:
            raise argparse.ArgumentTypeError("empty list")
        return values

    return parse


def _single(parse_list):
    """One value of a list parser."""
    def parse(text):
        values = parse_list(text)
        if len(values) != 1:
            raise argparse.ArgumentTypeError(f"{text!r} must be one number")
        return values[0]

    return parse


def _positive(kind):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be positive")
        return value

    return parse


def _rates(grid):
    """``--learning-rate``: ``auto``, ``curvature`` or positive numbers
    (comma-separated for a grid)."""
    def parse(text):
        if text.strip().lower() in ("auto", "curvature"):
            word = text.strip().lower()
            return [word] if grid else word
        if grid:
            values = _number_list(float)(text)
            if not all(v > 0 for v in values):
                raise argparse.ArgumentTypeError(f"{text!r}: every rate must be positive")
            return values
        return _positive(float)(text)
    return parse


def _pair_weights(text):
    values = [v.strip() for v in text.split(",") if v.strip()]
    if not values or any(v not in ("unit", "delta_ndcg") for v in values):
        raise argparse.ArgumentTypeError(f"{text!r}: comma-separated unit and delta_ndcg")
    return values


def _curvature_recipe(args):
    return getattr(args, "learning_rate", None) == ["curvature"]


def _jobs(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value == 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a number of processes, or -1 for one per "
                                         "core")
    return value


def _non_negative_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number >= 0")
    return value


def _fraction(text):
    value = _positive(float)(text)
    if not value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 1")
    return value


def _cutoffs(text):
    """``all`` (the whole list) or a positive integer, comma-separated."""
    values = []
    for token in text.split(","):
        token = token.strip().lower()
        if token in ("all", "none"):
            values.append(None)
        elif token.isdigit() and int(token) > 0:
            values.append(int(token))
        else:
            raise argparse.ArgumentTypeError(f"{token!r} is not a positive integer or 'all'")
    return values


def _discounts(text):
    values = []
    for token in text.split(","):
        token = token.strip()
        if token in ("log2", "letor", "zipf"):
            values.append(token)
        else:
            try:
                values.append(float(token))
            except ValueError:
                raise argparse.ArgumentTypeError(
                    f"{token!r} is not log2, letor, zipf or a power beta") from None
    return values


def _metric(text):
    try:
        parse_metric(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text.lower()


def _command_line(argv):
    return "rsrank " + " ".join(shlex.quote(a) for a in argv)


# -- info ----------------------------------------------------------------------------


def _print_summary(summaries, out):
    width = max(len("data"), *(len(name) for name in summaries))
    print(f"{'data':<{width}} {'queries':>7} {'docs':>8} {'feats':>5} "
          f"{'docs/query min/med/max':>22} {'no rel':>6}  labels", file=out)
    for name, s in summaries.items():
        low, median, high = s.docs_per_query
        labels = " ".join(f"{label}:{count}" for label, count in s.labels.items())
        print(f"{name:<{width}} {s.n_queries:>7} {s.n_documents:>8} {s.n_features:>5} "
              f"{f'{low}/{median:g}/{high}':>22} {s.queries_without_relevant:>6}  {labels}",
              file=out)


def _cmd_info(args):
    path = Path(args.path) if args.path else bundled_data_path()
    if path.is_dir() and not find_folds(path):
        summaries = {str(file): dataset_summary(*load_letor(file))
                     for file in find_splits(path).values() if file is not None}
    else:
        summaries = letor_summary(path)
    _print_summary(summaries, sys.stdout)
    return 0


# -- train -----------------------------------------------------------------------------


def _on_terminal():
    return sys.stderr.isatty()


def _estimator(args):
    # epoch bars only on a terminal, and only when folds run one at a time:
    # parallel bars would interleave
    verbose = int(not args.quiet and args.jobs == 1 and _on_terminal())
    stopping = {}
    if args.patience is not None:
        stopping = dict(early_stopping=True, n_iter_no_change=args.patience, tol=0.0)
    # every core for one fold at a time; folds in parallel processes (or on a
    # cluster) share the cores out instead of oversubscribing them
    jobs = getattr(args, "jobs", 1)
    if getattr(args, "scheduler", None) or jobs < 1:
        threads = 1
    elif jobs == 1:
        threads = "auto"  # by the work and the cores other processes leave free
    else:
        threads = max(1, (os.cpu_count() or 1) // jobs)
    recipe = {}
    if _curvature_recipe(args):
        recipe = dict(restore_best=False, weight_tol=PATH_WEIGHT_TOL)
    if getattr(args, "weight_tol", None) is not None:
        recipe["weight_tol"] = args.weight_tol or None
    path_epochs = PATH_EPOCHS_ADDITIVE if args.additive else PATH_EPOCHS
    max_iter = args.max_iter or (path_epochs if _curvature_recipe(args) else DEFAULTS["max_iter"])
    model = _kind_options(args)
    model["relax"] = _relax(args)
    if args.feature_costs is not None:
        model["feature_costs"] = read_feature_costs(args.feature_costs)
    return RSRank(max_iter=max_iter, normalize=args.normalize, random_state=args.seed,
                  eval_convention=args.convention, eval_train=False, verbose=verbose,
                  n_jobs=threads, l1_method=args.l1_method, average=args.average, **stopping,
                  **recipe, **model)


def _kind_options(args):
    """The model kind's parameters, refusing flags the kind would ignore."""
    if not args.additive:
        if args.max_bins is not None:
            raise UsageError("--max-bins applies to --additive models; a linear model has no "
                             "bins")
        return {}
    if args.normalize in QUERY_NORMALIZERS:
        raise UsageError(f"--normalize {args.normalize} scales features within each query, "
                         "which the thresholds of --additive models cannot follow (an engine "
                         "compares a document's raw value with them); use --normalize zscore "
                         "or none")
    return {"additive": True,
            "max_bins": DEFAULTS["max_bins"] if args.max_bins is None else args.max_bins}


def _relax(args):
    """``--relax``, by default on for additive models: their group penalty
    shrinks the shapes it keeps, so the sparse points of the path rank
    worse than the features they chose can (``results/additive.md``)."""
    return bool(args.additive) if args.relax is None else args.relax


def _grid(args):
    grid = {"learning_rate": args.learning_rate}
    if args.l1 is not None:
        grid["l1"] = args.l1
    elif args.l1_ratio is not None:
        grid["l1_ratio"] = args.l1_ratio
    elif args.additive:  # whole features in or out along the path
        grid["l1_group_ratio"] = DEFAULT_L1_RATIO
    else:
        grid["l1_ratio"] = DEFAULT_L1_RATIO
    for name in ("ndcg_k", "discount"):
        if getattr(args, name) is not None:
            grid[name] = getattr(args, name)
    if args.power_t is not None:
        grid["power_t"] = args.power_t
    if args.batch_size is not None:
        grid["batch_size"] = args.batch_size
    if args.truncation_period is not None:
        grid["truncation_period"] = args.truncation_period
    if args.pair_weight is not None:
        grid["pair_weight"] = args.pair_weight
    elif _curvature_recipe(args):
        grid["pair_weight"] = PATH_PAIR_WEIGHTS
    return grid


def _training_data(args):
    return resolve_training_data(args.path, train=args.train, vali=args.vali, test=args.test,
                                 vali_fraction=args.vali_fraction, random_state=args.seed,
                                 n_features=args.n_features, cache=args.cache,
                                 stream_queries=getattr(args, "stream", None), **_loading(args))


def _loading(args):
    """How ``rsrank train`` keeps the splits: a file whose every line holds
    every feature as one dense array, in ``--dtype``."""
    return {"dtype": np.dtype(args.dtype).type, "dense": "auto"}


#: Directories created for this command's output files (``--out a/b/f``):
#: those still empty when it ends are removed
_MADE_DIRECTORIES = []


def _check_file_output(out, inputs, flag="--out"):
    """Refuse, before any work, an output file that is an input, a
    directory, or in a directory that cannot be written."""
    if out is None:
        return
    if not str(out).strip():
        raise UsageError(f"{flag} is empty")
    check_not_input(out, inputs)
    if Path(out).is_dir():
        raise UsageError(f"{flag} {out}: is a directory; give a file name")
    _MADE_DIRECTORIES.extend(make_parents(out))  # removed at the end if still empty
    parent = Path(out).resolve().parent
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise UsageError(f"{flag} {out}: cannot write in {parent}")


def _fold_line(result):
    """One line per finished fold, on a terminal only."""
    name = "test" if result.evaluated_on == "test" else "vali (no test split)"
    seed = "" if result.seed is None else f" seed {result.seed}"
    print(f"fold {result.fold}{seed}: {name} NDCG@10 {result.test['NDCG@10']:.4f}, "
          f"{result.n_nonzero} non-zero weights, {result.fit_seconds:.1f} s", file=sys.stderr)


def _seeds(args):
    """The seeds to run. Full-batch steps (every grid point's
    ``--batch-size`` left at all queries) visit no random order and the
    vali split is given, so every seed gives the same model to rounding:
    those run once, and say so."""
    if args.seeds is None:
        return None
    if args.seeds > 1 and args.batch_size is None:
        print(f"rsrank train: --seeds {args.seeds}: full-batch steps use no random query "
              "order, so every seed gives the same model; running seed "
              f"{args.seed} once (give --batch-size to train on random batches)",
              file=sys.stderr)
        return [args.seed]
    return list(range(args.seed, args.seed + args.seeds))


def _first_run(args):
    """On a first run (numba's cache lacks the kernels): one line on a
    terminal, and the parallel kernels compiled aside while the serial ones
    run (:func:`rsrank._compile.deferred`)."""
    if compiled_before():
        return contextlib.nullcontext()
    if not getattr(args, "quiet", False) and _on_terminal():
        print("rsrank: compiling kernels, first run only (up to half a minute)",
              file=sys.stderr, flush=True)
    return deferred()


def _cmd_train(args):
    with _first_run(args):
        return _train(args)


def _train(args):
    _kind_options(args)  # a flag the kind would ignore is refused before any work
    data, name, inputs = _training_data(args)
    if isinstance(data, list) and args.folds is not None:
        raise UsageError(f"--folds needs a directory of Fold<k>; {name} is one fold: leave "
                         "--folds out")
    # claim --out before training: a taken, existing or unwritable output fails now
    claim = (ResultsDirectory(args.out, overwrite=args.force, inputs=inputs)
             if args.out is not None else contextlib.nullcontext())
    with claim as results:
        features = None
        if args.feature_names:
            width = args.n_features or (data[0].n_features if isinstance(data, list) else None)
            features = read_feature_names(args.feature_names, width)  # its errors: at once
            if width is None:  # each fold's names are fitted to its width once it is read
                features = functools.partial(read_feature_names, args.feature_names)
        options = dict(**_loading(args), folds=args.folds, select=args.select,
                       convention=args.convention,
                       n_jobs=args.jobs, n_features=args.n_features,
                       stream_queries=None if isinstance(data, list) else args.stream,
                       within=args.within, feature_names=features, cache=args.cache,
                       seeds=_seeds(args), path=_curvature_recipe(args),
                       progress=_fold_line if not args.quiet and _on_terminal() else None)
        if args.scheduler:
            options["progress"] = None
            experiment = _on_cluster(args.scheduler, data, _estimator(args), _grid(args),
                                     options)
        else:
            experiment = run_letor_folds(data, _estimator(args), _grid(args), **options)
        command = _command_line(args.argv)
        print(experiment_markdown(experiment, title=f"RSRank on {name}", command=command))
        if results is not None:
            write_experiment(experiment, results.staging, command=command,
                             extra={"data": name, "rsrank_version": __version__})
            results.publish()
            print(f"wrote {args.out}")
    return 0


def _on_cluster(address, root, estimator, grid, options):
    """Run the folds as tasks on a Dask cluster through joblib's dask backend."""
    try:
        from distributed import Client
        from joblib import parallel_config
    except ImportError:
        raise UsageError("--scheduler needs the dask extra: pip install 'rsrank[dask]'") from None
    with Client(address, timeout="10s"), parallel_config(backend="dask"):
        options["n_jobs"] = -1
        return run_letor_folds(root, estimator, grid, backend="joblib", **options)


# -- evaluate / predict --------------------------------------------------------------------


def _print_report(report, out):
    print(report, file=out)


def _cmd_evaluate(args):
    if args.scores and args.model:
        raise UsageError("give either MODEL or --scores, not both")
    if not args.scores and not args.model:
        raise UsageError("give a MODEL file or --scores SCORES")
    X, y, qid, docids = load_letor(args.file, n_features=None, return_docids=True)
    if CONVENTIONS[args.convention]["gain"] == "exp2":
        check_exp2_labels(args.file, y, "map these to grades of at most 255, or evaluate with "
                          "--convention sklearn (gain = label)")
    if args.scores:
        scores = read_scores(args.scores, n_rows=len(y), qid=qid, docids=docids, data=args.file)
    else:
        model = RSRank.load(args.model)
        X = _fit_width(X, model, args.file)
        scores = model.predict(X, qid=qid)
    if args.per_query:
        values = letor_per_query(y, scores, qid, convention=args.convention)
        names = [name for name in values if name != "qid"]
        print("\t".join(["qid"] + names))
        for i, query in enumerate(values["qid"]):
            print("\t".join([str(query)] + [f"{values[name][i]:.6f}" for name in names]))
        return 0
    report = letor_report(y, scores, qid, convention=args.convention)
    print(f"{args.file}: metrics with the {args.convention!r} convention "
          f"({len(set(qid.tolist()))} queries)")
    _print_report(report, sys.stdout)
    return 0


# -- compare -------------------------------------------------------------------------------


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


def _cmd_compare(args):
    if len(args.runs) < 2:
        raise UsageError("compare needs at least two runs")
    if len(set(args.runs)) != len(args.runs):
        raise UsageError("a run is named twice")
    if args.resamples < 1:
        raise UsageError(f"--resamples must be at least 1, got {args.resamples}")
    for path in args.runs:
        if not Path(path).exists():
            raise UsageError(f"{path}: no such file or directory")
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
        if args.data is None:
            raise UsageError(f"{score_files[0]}: a score file needs --data FILE (the LETOR "
                             "file it scores)")
        _, y, qid, docids = load_letor(args.data, return_docids=True)
        for path in score_files:  # evaluated under the directories' convention
            scores = read_scores(path, n_rows=len(y), qid=qid, docids=docids, data=args.data)
            runs[path] = letor_per_query(y, scores, qid, convention=wanted)
            seeds[path] = 1
        for path in filter(_is_results, args.runs):
            runs[path] = _on_file_queries(runs[path], path, args.data, qid)
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
    left_out = [f"{row['metric']} of {row['system']}: {row['left_out']}" for row in rows
                if row["left_out"]]
    if left_out:
        print()
        print("Queries without a value in a run (no relevant document under the convention) "
              "are left out of that test: " + "; ".join(left_out) + ".")
    return 0


def _on_file_queries(values, path, data, file_qids):
    """A results directory's per-query values (keyed ``fold:qid``) on the
    queries of the one data file its score files are compared on: keyed by
    qid, from the only fold whose test queries are exactly the file's."""
    keys = np.asarray(values["qid"]).astype(str)
    folds = np.array([key.rpartition(":")[0] for key in keys])
    qids = np.array([key.rpartition(":")[2] for key in keys])
    wanted = set(np.unique(np.asarray(file_qids).astype(str)))
    matching = [fold for fold in dict.fromkeys(folds)
                if set(qids[folds == fold]) == wanted]
    if len(matching) != 1:
        raise UsageError(f"{path}: {'no' if not matching else 'more than one'} fold of the "
                         f"run holds exactly the queries of {data} (folds: "
                         f"{', '.join(dict.fromkeys(folds))}); compare score files with the "
                         "run of the fold whose test file they score")
    keep = folds == matching[0]
    if not keep.all():
        print(f"{path}: its {matching[0]} test queries, the ones in {data}", file=sys.stderr)
    return {metric: (qids[keep] if metric == "qid" else np.asarray(v)[keep])
            for metric, v in values.items()}


def _fit_width(X, model, path):
    """Pad X to the model's feature count (a file need not mention the last
    columns); more columns than the model knows is an error."""
    import scipy.sparse as sp

    width = model.n_features_in_
    if X.shape[1] > width:
        raise UsageError(f"{path} has feature indices up to {X.shape[1]} but the model has "
                         f"{width} features")
    names, used = model.feature_names(), model.model_.selected_indices()
    beyond = [names[j] for j in used if j >= X.shape[1]]
    if beyond:
        alike = ("every document gets the same score" if len(beyond) == len(used)
                 else "every document gets 0 there")
        warnings.warn(f"{path} mentions features up to {X.shape[1]}, but the model uses "
                      f"{len(beyond)} of its {len(used)} features beyond them "
                      f"({', '.join(beyond[:3])}{', ...' if len(beyond) > 3 else ''}); "
                      f"{alike}: is it the file the model was trained for?", UserWarning,
                      stacklevel=2)
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], width))


def _cmd_predict(args):
    _check_file_output(args.out, [args.model, args.file])
    model = RSRank.load(args.model)
    X, _, qid, docids = load_letor(args.file, return_docids=True)
    scores = model.predict(_fit_width(X, model, args.file), qid=qid)
    if args.format == "scores":
        if args.out:
            write_scores(args.out, scores)
        else:
            sys.stdout.writelines(f"{value:.10g}\n" for value in scores)
        return 0
    problem = run_problem(qid, docids, args.tag if args.format == "trec" else "x")
    if problem:
        row, why = problem
        if row is None:
            raise UsageError(f"--tag: {why}")
        raise LetorFormatError(args.file, data_line_numbers(args.file)[row], why)
    if args.out:
        import io

        buffer = io.StringIO()
        write_run(buffer, qid, docids, scores, tag=args.tag, form=args.format)
        atomic_write_text(args.out, buffer.getvalue())
    else:
        write_run(sys.stdout, qid, docids, scores, tag=args.tag, form=args.format)
    return 0


def _cmd_export(args):
    subset = args.subset_featureset
    _check_file_output(args.out, [args.model] + (list(subset) if subset else [])
                       + ([args.check] if args.check else []))
    if subset:
        if args.format not in ("elasticsearch", "opensearch"):
            raise UsageError("--subset-featureset is for --format elasticsearch or opensearch")
        _check_file_output(subset[1], [args.model, subset[0]] + ([args.out] if args.out else []),
                           "--subset-featureset OUT")
    model = RSRank.load(args.model)
    checked = None
    if args.check:  # read before anything is written: a bad file leaves no export
        X, _, qid = load_letor(args.check)
        checked = (X, qid)
    text = export_model(model, args.format, name=args.name, store=args.store)
    body = None
    if subset:
        try:
            full = json.loads(read_bounded_text(subset[0], 1 << 26, "featureset"))
            body = featureset_subset(full, model)
        except (ValueError, AttributeError) as error:
            raise UsageError(f"{subset[0]}: {error}") from None
    used = engine_features(model)
    listed = ", ".join(name for _, name in used)
    hint = upload_hint(args.format, featureset=args.featureset, store=args.store)
    if args.format in ("elasticsearch", "opensearch") and not subset:
        hint += (f"; the plugin computes every feature of {args.featureset}, so keep only these "
                 "in it (--subset-featureset FULL.json OUT.json writes that featureset)")
    print(f"rsrank export: the engine computes {len(used)} of {model.n_features_in_} "
          f"features: {listed}; {hint}", file=sys.stderr)
    print(f"rsrank export: {args.format}: {guarantee(args.format, model)}", file=sys.stderr)
    if body is not None:
        atomic_write_text(subset[1], json.dumps(body, indent=2) + "\n")
    if args.out:
        atomic_write_text(args.out, text)
    else:
        sys.stdout.write(text)
    return _check_export(args, model, *checked) if args.check else 0


#: the versions of each engine's rules that ``rsrank export --check`` tries
_CHECKED_ENGINES = {"solr": ("solr", "solr-nan"),
                    "elasticsearch": ("elasticsearch-1.5.8", "elasticsearch"),
                    "opensearch": ("opensearch-3.7", "opensearch"),
                    "vespa": ("vespa-float", "vespa-double")}


def _check_export(args, model, X, qid):
    """``--check DATA`` (its rows ``X`` and queries ``qid``): one line per
    version of the engine's rules."""
    from .engines import parity

    engines = [e for e in _CHECKED_ENGINES[args.format] if e != "solr-nan" or model.additive]
    results = parity(model, _fit_width(X, model, args.check), qid, engines, name=args.name,
                     store=args.store)
    failed = False
    for engine, result in results.items():
        if not result["accepted"]:
            failed = True
            print(f"rsrank export: check {engine}: refused: {result['error']}", file=sys.stderr)
            continue
        failed |= bool(result["reordered"] or result["reordered_missing"])
        largest = max(result["max_abs_difference"], result["max_abs_difference_missing"])
        print(f"rsrank export: check {engine} on {args.check}: {result['reordered']} of "
              f"{result['queries']} queries ordered differently from predict with every value "
              f"given, {result['reordered_missing']} with every 0 sent as missing (largest "
              f"difference {largest:.2g})", file=sys.stderr)
    return 1 if failed else 0


# -- plot ------------------------------------------------------------------------------------


def _cmd_plot(args):
    _check_file_output(args.out, [args.model])
    model = RSRank.load(args.model)
    if not model.additive:
        raise UsageError(f"{args.model}: rsrank plot draws the shape functions of additive "
                         "models (rsrank train --additive); a linear model's features are its "
                         "weights (rsrank export prints them)")
    from .plotting import plot_shapes

    try:
        plot_shapes(model, args.out, columns=args.columns)
    except ImportError as error:
        raise UsageError(str(error)) from None
    names = ", ".join(name for name, _ in model.selected_features())
    print(f"wrote {args.out}: the shapes of {names}")
    return 0


# -- path ------------------------------------------------------------------------------------


def _cmd_path(args):
    with _first_run(args):
        return _path(args)


def _path(args):
    _kind_options(args)  # a flag the kind would ignore is refused before any work
    data, name, inputs = _training_data(args)
    if isinstance(data, list):
        if args.fold != 1:
            raise UsageError(f"--fold {args.fold}: {name} is one fold; leave --fold out")
        fold = data[0]
    else:
        fold = load_letor_fold(data, args.fold, n_features=args.n_features, cache=args.cache,
                               **_loading(args))
    claim = (ResultsDirectory(args.out, overwrite=args.force, inputs=inputs)
             if args.out is not None else contextlib.nullcontext())
    with claim as results:
        return _run_path(args, name, fold, results)


def _run_path(args, name, data, results):
    recipe = {}
    if args.learning_rate == "curvature":  # train's recipe: each point at its settled end
        recipe = dict(restore_best=False, weight_tol=PATH_WEIGHT_TOL)
        if args.max_iter is None:
            args.max_iter = PATH_EPOCHS_ADDITIVE if args.additive else PATH_EPOCHS
    estimator = RSRank(learning_rate=args.learning_rate,
                       max_iter=args.max_iter or DEFAULTS["max_iter"],
                       normalize=args.normalize, batch_size=args.batch_size, **recipe,
                       ndcg_k=args.ndcg_k, random_state=args.seed,
                       l1_method=args.l1_method, power_t=args.power_t or 0.0,
                       average=args.average, **_kind_options(args),
                       relax=_relax(args), feature_costs=None if args.feature_costs is None
                       else read_feature_costs(args.feature_costs))
    strength = "l1_group" if args.additive else "l1"
    if estimator.learning_rate == "auto":  # chosen once, without L1, on vali
        chosen = clone(estimator).fit(*data.train[:2], qid=data.train[2],
                                      eval_set=data.vali[:3]).learning_rate_
        estimator.set_params(learning_rate=chosen)
    l1_values, top = args.l1, None
    if l1_values is None:
        edge = estimator.l1_group_max if args.additive else estimator.l1_max
        top = edge(*data.train[:2], qid=data.train[2])
        l1_values = [0.0] + l1_grid(top, 10, 1e-3)
    test = data.get("test")
    path = regularization_path(*data.train[:3], l1_values, estimator=estimator,
                               eval_set=data.vali[:3],
                               test_set=None if test is None else test[:3], k=10,
                               convention=args.convention, strength=strength)
    grid = ("" if top is None else f" The grid runs from {top:.4g}, the smallest {strength} "
            "that keeps every weight at zero, down to 1/1000 of it, and 0.")
    if estimator.relax:
        grid += (" Each point is refit on the features its penalized fit kept, without the "
                 "penalty (--relax; --no-relax shows the penalized fits).")
    used = "features in use" if args.additive else "non-zeros"
    costed = estimator.feature_costs is not None
    lines = [f"# Regularization path, {name} fold {data.fold}", "",
             f"Command: `{_command_line(args.argv)}`", "",
             f"NDCG@10 with the {args.convention!r} convention.{grid}", "",
             f"| {strength} | {used} |" + (" total cost |" if costed else "")
             + " train NDCG@10 | vali NDCG@10 | test NDCG@10 |",
             "|---|---|---|---|---|" + ("---|" if costed else "")]
    for p in path:
        tested = "" if test is None else f"{p.test_ndcg:.4f}"
        cost = f" {p.cost:.4g} |" if costed else ""
        lines.append(f"| {p.l1:.4g} | {p.n_nonzero} |{cost} {p.train_ndcg:.4f} | "
                     f"{p.val_ndcg:.4f} | {tested} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if results is not None:
        atomic_write_text(results.staging / "path.md", text)
        points = [{k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in p.items()}
                  for p in path]
        atomic_write_text(results.staging / "path.json", json.dumps(
            {"command": _command_line(args.argv), "data": name, "fold": data.fold,
             "l1_max": top, "path": points}, indent=2) + "\n")
        results.publish()
        print(f"wrote {args.out}")
    return 0


# -- parser -------------------------------------------------------------------------------------


def _add_data_options(parser):
    """Where the data is, in every layout ``train`` and ``path`` read."""
    parser.add_argument("path", nargs="?", help="fold root (Fold1, Fold2, ...), a directory "
                        "with rank.train/rank.test or train.txt/vali.txt/test.txt (.query or "
                        ".group files beside data without qid), or one training file "
                        "(default: the bundled data)")
    parser.add_argument("--train", help="training file (instead of PATH)")
    parser.add_argument("--vali", help="validation file (default: --vali-fraction of the "
                        "training queries)")
    parser.add_argument("--test", help="test file (default: none; the table then reports vali)")
    parser.add_argument("--vali-fraction", type=_fraction, default=None,
                        help="share of training queries held out for validation when there "
                        "is no vali file (default 0.2, seeded by --seed)")


def _add_training_options(parser, grid):
    many_or_zero = _number_list(float) if grid else _single(_number_list(float))
    rate = DEFAULTS["learning_rate"]
    if grid:  # rsrank train
        parser.add_argument(
            "--learning-rate", type=_rates(grid), default=["curvature"],
            help="step size eta: curvature (default: 2 over the trace of the loss's Hessian "
            f"at w = 0; each point of the path kept at its last epoch, once its weights "
            f"settle (--weight-tol) or after {PATH_EPOCHS} epochs, "
            "warm-started from strong to weak L1, for both --pair-weight values), auto "
            "(1e-3, 1e-2 or 1e-1, whichever gives the best vali NDCG without L1, chosen once "
            "per fold; each point keeps its best vali epoch) or a comma-separated grid")
    else:
        parser.add_argument("--learning-rate", type=_rates(grid), default=rate,
                            help="step size eta (default auto: 1e-3, 1e-2 or 1e-1, whichever "
                            "gives the best vali NDCG without L1, chosen once per fold; "
                            "curvature: rsrank train's recipe, each point at its last "
                            "epoch once its weights settle)")
    parser.add_argument("--power-t", type=many_or_zero, default=None,
                        help="decay of the step size: gradient step t takes learning_rate / "
                        "t^power_t (default 0, a constant step; 0.5 is 1/sqrt(t))"
                        + (", comma-separated grid" if grid else ""))
    parser.add_argument("--normalize", choices=NORMALIZERS, default=DEFAULTS["normalize"],
                        help="feature scaling fitted on train and stored in the model "
                        "(default zscore; query-* scale within each query and cannot be "
                        "exported to a search engine)")
    parser.add_argument("--max-iter", type=_positive(int), default=None,
                        help=f"epochs (default {DEFAULTS['max_iter']}; {PATH_EPOCHS} with "
                        f"--learning-rate curvature, {PATH_EPOCHS_ADDITIVE} with --additive "
                        "too)")
    if grid:
        parser.add_argument(
            "--weight-tol", type=_non_negative_float, default=None,
            help="stop a fit after the first epoch in which no weight moved by more than this "
            "times the largest weight (default "
            f"{PATH_WEIGHT_TOL:g} with --learning-rate curvature, else off; 0: every epoch)")
    parser.add_argument("--batch-size", type=_number_list(int) if grid else _positive(int),
                        default=None, help="queries per step (default: all, one step per "
                        "epoch; 1 is the paper's online update)")
    if grid:
        parser.add_argument("--ndcg-k", type=_cutoffs, default=None,
                            help="NDCG cut-offs in the pair weights, e.g. all,10 "
                            "(default: all, the whole list)")
        parser.add_argument("--discount", type=_discounts, default=None,
                            help="discounts in the pair weights: log2, letor, zipf or a power "
                            "beta, comma-separated (default log2)")
        parser.add_argument("--patience", type=_positive(int), default=None,
                            help="stop after this many epochs without a better vali score "
                            "(default: run every epoch; the best epoch is kept either way)")
    else:
        parser.add_argument("--ndcg-k", type=int, default=None,
                            help="NDCG cut-off in the pair weights (default: whole list)")
    parser.add_argument("--additive", action="store_true",
                        help="learn one step function per feature (sums of depth-1 trees; "
                        "every engine runs it) instead of one weight; the default path then "
                        "takes whole features in or out (--l1-ratio: steps within them)")
    parser.add_argument("--max-bins", type=_positive(int), default=None,
                        help=f"bins per feature of --additive (2 to 256, default "
                        f"{DEFAULTS['max_bins']}; thresholds at training quantiles)")
    parser.add_argument("--relax", action=argparse.BooleanOptionalAction, default=None,
                        help="also refit each point of the path on the features it kept, "
                        "without the penalty (the relaxed lasso); the selection sees both fits "
                        "(default: on with --additive, off without)")
    parser.add_argument("--feature-costs", metavar="FILE",
                        help="a cost per feature, 'FEATURE COST' lines (a name, or LETOR's "
                        "1-based index; unlisted features cost 1): a dear feature must earn "
                        "more to be kept, and the selection keeps the cheapest model within "
                        "reach")
    parser.add_argument("--l1-method", choices=L1_METHODS, default=DEFAULTS["l1_method"],
                        help="how L1 is applied: truncated gradient (default) or Tsuruoka's "
                        "cumulative penalty")
    parser.add_argument("--average", action="store_true",
                        help="make the model the mean of the epochs' weights (Polyak-Ruppert "
                        "averaging); validation and the kept epoch use the mean")
    parser.add_argument("--convention", choices=["letor", "standard", "lightgbm", "sklearn"],
                        default="letor", help="metric convention (default letor)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


def build_parser():
    parser = argparse.ArgumentParser(prog="rsrank", description=(
        "Sparse linear rankers that target NDCG (RSRank: |dNDCG|-weighted pairwise "
        "modified-Huber loss with truncated-gradient L1)."))
    parser.add_argument("--version", action="version", version=f"rsrank {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an error instead of one line")
    commands = parser.add_subparsers(dest="command", required=True)

    info = commands.add_parser("info", help="summarise a LETOR file or a directory of folds")
    info.add_argument("path", nargs="?", help="LETOR file, fold root or a directory with "
                      "rank.train/rank.test or train.txt/test.txt (default: bundled data)")
    info.set_defaults(run=_cmd_info)

    train = commands.add_parser("train", help="grid search per fold on vali, report test",
                                description="For each fold: train every grid point on train, "
                                "select on vali, evaluate on test; print the LETOR table.")
    _add_data_options(train)
    train.add_argument("--feature-names", help="file of feature names: one per line, or "
                       "'index name' lines (RankLib, Elasticsearch LTR feature lists)")
    train.add_argument("--folds", type=_number_list(int), default=None,
                       help="comma-separated fold numbers (default: all found)")
    strengths = train.add_mutually_exclusive_group()
    strengths.add_argument("--l1-ratio", type=_number_list(float), default=None,
                           help="comma-separated L1 strengths as fractions of each fold's "
                           "l1_max, the smallest l1 that keeps every weight at zero (default "
                           f"{','.join(f'{v:g}' for v in DEFAULT_L1_RATIO)})")
    strengths.add_argument("--l1", type=_number_list(float), default=None,
                           help="comma-separated L1 strengths g, in the units of the scaled "
                           "features (instead of --l1-ratio)")
    train.add_argument("--within", type=_within, default=DEFAULT_WITHIN,
                       help="keep the sparsest grid point whose vali score is within this "
                       "fraction of the best (0 keeps the best), or '1se': within one "
                       "standard error of the best over the vali queries (default "
                       f"{DEFAULT_WITHIN})")
    train.add_argument("--truncation-period", type=_number_list(int), default=None,
                       help="K of truncated gradient (comma-separated grid; default 1)")
    train.add_argument("--pair-weight", type=_pair_weights, default=None,
                       help="pair weights: delta_ndcg (|Delta NDCG| of the swap, RSRank's), "
                       "unit (every pair 1, as RankSVM), comma-separated (default with "
                       "--learning-rate curvature: both, else delta_ndcg)")
    _add_training_options(train, grid=True)
    train.add_argument("--select", type=_metric, default="ndcg@10",
                       help="validation metric: ndcg@K, p@K or map (default ndcg@10)")
    train.add_argument("--jobs", type=_jobs, default=1,
                       help="folds in parallel (default 1; -1: one per core)")
    train.add_argument("--stream", type=_positive(int), nargs="?", const=1000, default=None,
                       metavar="QUERIES", help="read training files from disk in blocks of "
                       "QUERIES queries (default 1000) every epoch instead of loading them")
    train.add_argument("--cache", nargs="?", const=True, default=None, metavar="DIR",
                       help="keep parsed files as memory-mappable arrays and reuse them "
                       "while the files are unchanged (default place: .rsrank-cache beside "
                       "the data, or ~/.cache/rsrank when that is read-only)")
    train.add_argument("--n-features", type=_positive(int), default=None,
                       help="number of features (default: largest index in the files)")
    train.add_argument("--dtype", choices=["float32", "float64"], default="float32",
                       help="precision the features are kept in (default float32: half the "
                       "memory; float64 trains on the values exactly as written)")
    train.add_argument("--scheduler", metavar="ADDRESS",
                       help="run the folds on a Dask cluster (tcp://host:8786)")
    train.add_argument("--out", help="directory for results.json/.md, models, predictions")
    train.add_argument("--force", action="store_true", help="replace an existing --out")
    train.add_argument("--seeds", type=_positive(int), default=None, metavar="N",
                       help="run every fold with N seeds (--seed, --seed + 1, ...): mean ± "
                       "std over folds and seeds, per-seed per-query values in results.json")
    train.add_argument("--quiet", action="store_true", help="no progress bars")
    train.set_defaults(run=_cmd_train)

    evaluate = commands.add_parser("evaluate", help="LETOR table of a model or a score file")
    evaluate.add_argument("model", nargs="?", help="model file written by train / save()")
    evaluate.add_argument("file", help="LETOR file with labels and qid")
    evaluate.add_argument("--scores", help="scores instead of a model: one per line in the "
                          "file's row order, or a TSV or TREC run from rsrank predict (matched "
                          "to the file by qid and docid)")
    evaluate.add_argument("--convention", choices=["letor", "standard", "lightgbm", "sklearn"],
                          default="letor")
    evaluate.add_argument("--per-query", action="store_true",
                          help="one TSV line per query (qid, NDCG@1..10, P@1..10, AP) instead "
                          "of the means")
    evaluate.set_defaults(run=_cmd_evaluate)

    compare_ = commands.add_parser(
        "compare", help="paired significance tests between runs on the same queries",
        description="Each run against the first (or --baseline), per metric: the paired "
        "t-test and the paired randomization test over queries, Holm-corrected across "
        "metrics and runs. A run is a directory written by rsrank train (its per-query test "
        "values, averaged over its seeds) or a score file (one score per line) with --data.")
    compare_.add_argument("runs", nargs="+", metavar="RUN")
    compare_.add_argument("--data", help="LETOR file that the score files score")
    compare_.add_argument("--metrics", default="NDCG@1,NDCG@3,NDCG@5,NDCG@10,MAP",
                          help="comma-separated (default NDCG@1,NDCG@3,NDCG@5,NDCG@10,MAP)")
    compare_.add_argument("--convention", choices=["letor", "standard", "lightgbm", "sklearn"],
                          default=None, help="for score files (default: the directories', "
                          "else letor); directories must have been evaluated with it")
    compare_.add_argument("--baseline", help="the run the others are compared with "
                          "(default: the first)")
    compare_.add_argument("--resamples", type=int, default=100_000,
                          help="randomization-test resamples (default 100000)")
    compare_.add_argument("--seed", type=int, default=0,
                          help="seed of the randomization test (default 0)")
    compare_.add_argument("--json", action="store_true", help="print the tests as JSON")
    compare_.set_defaults(run=_cmd_compare)

    predict = commands.add_parser("predict", help="scores of a LETOR file: one per line, a "
                                  "TSV or a TREC run")
    predict.add_argument("model")
    predict.add_argument("file")
    predict.add_argument("--format", choices=["scores", "tsv", "trec"], default="scores",
                         help="scores: one per line (LETOR's Eval-Score input); tsv: qid, "
                         "docid, score; trec: 'qid Q0 docid rank score tag' (trec_eval, ranx)")
    predict.add_argument("--tag", default="rsrank", help="run tag of a TREC run")
    predict.add_argument("--out", help="output file (default: stdout)")
    predict.set_defaults(run=_cmd_predict)

    export = commands.add_parser("export", help="a model for Solr, Elasticsearch, OpenSearch "
                                 "or Vespa")
    export.add_argument("model")
    export.add_argument("--format", choices=FORMATS, required=True)
    export.add_argument("--name", default="rsrank", help="model or rank-profile name")
    export.add_argument("--featureset", default="rsrank_features",
                        help="Elasticsearch/OpenSearch feature set of the upload URL")
    export.add_argument("--store", default="_DEFAULT_", help="Solr feature store")
    export.add_argument("--subset-featureset", nargs=2, metavar=("FULL", "OUT"),
                        help="Elasticsearch/OpenSearch: write to OUT the featureset FULL (a "
                        "_ltr/_featureset body) with only the model's features, the ones the "
                        "plugin then computes")
    export.add_argument("--out", help="output file (default: stdout)")
    export.add_argument("--check", metavar="DATA",
                        help="score DATA (a LETOR file) with the export by each version of the "
                        "engine's rules (rsrank.engines), with every value given and with every "
                        "0 sent as a missing feature, and say how many queries any orders "
                        "differently from predict (exit 1 if one does)")
    export.set_defaults(run=_cmd_export)

    plot = commands.add_parser("plot", help="an additive model's shape functions as a picture")
    plot.add_argument("model")
    plot.add_argument("--out", required=True, help="picture file (.png, .svg, .pdf)")
    plot.add_argument("--columns", type=_positive(int), default=3,
                      help="pictures per row (default 3)")
    plot.set_defaults(run=_cmd_plot)

    path = commands.add_parser("path", help="regularization path on one fold")
    _add_data_options(path)
    path.add_argument("--fold", type=int, default=1, help="fold of a Fold<k> root (default 1)")
    path.add_argument("--l1", type=_number_list(float), default=None,
                      help="L1 strengths (default: 10 on a log scale from the smallest that "
                      "keeps every weight at zero down to 1/1000 of it, and 0)")
    path.add_argument("--n-features", type=_positive(int), default=None,
                      help="number of features (default: largest index in the files)")
    path.add_argument("--cache", nargs="?", const=True, default=None, metavar="DIR",
                      help="keep parsed files as memory-mappable arrays (as for train)")
    path.add_argument("--dtype", choices=["float32", "float64"], default="float32",
                      help="precision the features are kept in (as for train)")
    _add_training_options(path, grid=False)
    path.add_argument("--out", help="directory for path.json and path.md")
    path.add_argument("--force", action="store_true", help="replace an existing --out")
    path.set_defaults(run=_cmd_path)
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP: unwinds like a Ctrl-C (workers stopped, partial
    results and locks removed), then ends with ``128 + signal``."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _terminate(signum, _frame):
    raise Terminated(signum)


@contextlib.contextmanager
def _termination_unwinds():
    """While the command runs, SIGTERM and SIGHUP (a batch scheduler, a
    closed terminal, ``timeout``) raise :class:`Terminated` instead of
    ending the process where it stands."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # a signal the caller ignores stays ignored: nohup ignores SIGHUP so that
    # the run outlives the terminal
    previous = {signum: signal.signal(signum, _terminate)
                for signum in (signal.SIGTERM, signal.SIGHUP)
                if signal.getsignal(signum) is not signal.SIG_IGN}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _interruption(error):
    """The KeyboardInterrupt (or :class:`Terminated`) that ``error`` is or
    chains from, or None."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, KeyboardInterrupt):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def _interrupted_exit(command, interruption):
    if isinstance(interruption, Terminated):
        name = signal.Signals(interruption.signum).name
        print(f"rsrank {command}: terminated ({name})", file=sys.stderr)
        return 128 + interruption.signum
    print(f"rsrank {command}: interrupted", file=sys.stderr)
    return 130


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = argv
    caught = []

    def one_line(message, category, *_args, **_kwargs):
        caught.append((category.__name__, str(message)))

    try:
        with warnings.catch_warnings(), _termination_unwinds():
            warnings.simplefilter("default")
            warnings.showwarning = one_line
            return args.run(args)
    except BrokenPipeError:
        # the reader closed the pipe (| head): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except (OSError, LetorFormatError, ValueError, EOFError) as error:
        if args.debug:
            raise
        text = str(error) if not isinstance(error, EOFError) else (
            f"input ended early ({error}); is a .gz file truncated?")
        print(f"rsrank {args.command}: error: {text}", file=sys.stderr)
        return 2
    except WorkerStartError as error:
        if args.debug:
            raise
        print(f"rsrank {args.command}: error: {error}; run without --jobs to see it in "
              "this process", file=sys.stderr)
        return 2
    except BrokenExecutor as error:
        if args.debug:
            raise
        print(f"rsrank {args.command}: error: a worker process died (killed, or out of "
              f"memory?): {error}; run again, with fewer --jobs", file=sys.stderr)
        return 2
    except MemoryError:
        if args.debug:
            raise
        print(f"rsrank {args.command}: error: out of memory; use --stream for training files "
              "larger than memory, or a machine with more", file=sys.stderr)
        return 2
    except KeyboardInterrupt as error:
        return _interrupted_exit(args.command, error)
    except SystemError as error:
        # Ctrl-C (or a signal) while a compiled kernel runs: the kernel
        # returns with the interrupt pending, which CPython reports as a
        # SystemError whose cause is the KeyboardInterrupt
        interruption = _interruption(error)
        if interruption is None:
            raise
        return _interrupted_exit(args.command, interruption)
    finally:
        remove_empty(_MADE_DIRECTORIES)
        _MADE_DIRECTORIES.clear()
        # one line per kind of warning: the first of its kind, and how many
        # fits (folds, grid points) gave one like it
        firsts = {}
        for category, message in caught:
            firsts.setdefault(category, message)
        for category, first in firsts.items():
            repeats = sum(kind == category for kind, _ in caught)
            more = f" (and {repeats - 1} more like it)" if repeats > 1 else ""
            print(f"rsrank {args.command}: warning: {category}: {first}{more}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
