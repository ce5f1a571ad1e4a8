"""``rsrank train``: LETOR's protocol on the user's folds, with the library's recipe."""

import contextlib
import functools
import sys
from dataclasses import replace

from sklearn.model_selection import ParameterGrid

from ..reading._files import ResultsDirectory
from .._version import __version__
from ..reading.datasets import find_folds
from ..evaluation.experiments import run_letor_folds
from ..evaluation.reports import experiment_markdown, write_experiment
from ..reading.folds import Fold
from ..reading.layouts import read_feature_costs, read_feature_names
from ..learning.path import reads_codes
from ..learning.recipe import fold_threads, train_recipe, vali_folds
from ..clicks.choice import keep_plain_unless_debiased
from ._clicks import click_data, plain_folds, print_choices, print_examination
from ._options import (UsageError, command_line, curvature_recipe, first_run, loading,
                       named_inputs, on_terminal, path_rows, training_data)


class _Progress:
    """``rsrank train``'s progress on stderr: a line per finished fold and,
    on a terminal with the folds run here (``--jobs 1``), one bar over every
    fit of the run (folds x seeds x grid points, and the held-out folds'
    paths of ``--vali-cv``) that names the last fit made."""

    def __init__(self, total=None):
        self.bar, self.reading = None, None  # reading: which of --debias auto's runs
        if total:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="fit", file=sys.stderr, leave=False,
                            dynamic_ncols=True, desc="fits")

    def fit(self, fold, seed, params):
        shown = ", ".join(f"{name}={value:g}" if isinstance(value, float) else
                          f"{name}={value}" for name, value in sorted(params.items())
                          if name in _SHOWN)
        seed = "" if seed is None else f" seed {seed}"
        self.bar.set_description_str(f"fold {fold}{seed}", refresh=False)
        self.bar.set_postfix_str(shown, refresh=False)
        self.bar.update()

    def fold(self, result):
        name = "test" if result.evaluated_on == "test" else "vali (no test split)"
        seed = "" if result.seed is None else f" seed {result.seed}"
        seed += "" if self.reading is None else f" ({self.reading} clicks)"
        line = (f"fold {result.fold}{seed}: {name} NDCG@10 {result.test['NDCG@10']:.4f}, "
                f"{result.n_nonzero} {result.model.model_.used_words}, "
                f"{result.fit_seconds:.1f} s")
        if self.bar is not None:
            self.bar.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr, flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()


#: the grid parameters the bar names
_SHOWN = ("l1_ratio", "l1_group_ratio", "l1", "l1_group", "pair_weight", "additive")


def _fits(data, args, grid, seeds, vali_cv):
    """How many path points the run fits: its bar's length."""
    folds = len(data) if isinstance(data, list) else len(args.folds or find_folds(data))
    return (folds * len(seeds or [None]) * len(ParameterGrid(grid))
            * (1 + (vali_cv or 0)))


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


def run(args):
    with first_run(args):
        return _train(args)


def _vali_cv(args):
    """The folds of the training queries to judge on beside vali: the
    sparse recipe's unless given, none when the training files stream
    (the folds' paths need the queries in memory)."""
    if args.stream is not None and args.vali_cv is None:
        return None
    return vali_folds(args.within, args.vali_cv)


def _recipe(args):
    """``(estimator, grid)`` of the options (:func:`rsrank.learning.recipe.train_recipe`)."""
    costs = None if args.feature_costs is None else read_feature_costs(args.feature_costs)
    try:
        return train_recipe(
            learning_rate=args.learning_rate, additive=args.additive, max_bins=args.max_bins,
            interactions=args.interactions, interaction_bins=args.interaction_bins,
            monotone=args.monotone,
            normalize=args.normalize, relax=args.relax, max_iter=args.max_iter,
            weight_tol=args.weight_tol, patience=args.patience, l1=args.l1,
            l1_ratio=args.l1_ratio, pair_weight=args.pair_weight, ndcg_k=args.ndcg_k,
            discount=args.discount, power_t=args.power_t, batch_size=args.batch_size,
            truncation_period=args.truncation_period, l1_method=args.l1_method,
            average=args.average, feature_costs=costs, seed=args.seed,
            convention=args.convention, n_jobs=fold_threads(args.jobs, args.scheduler),
            within=args.within, with_linear=args.with_linear, missing=args.missing)
    except ValueError as error:  # a flag the kind would ignore
        raise UsageError(str(error)) from None


def _train(args):
    estimator, grid = _recipe(args)  # a flag the kind would ignore is refused before any work
    path_rows(args)  # and a --path-rows that no path would take
    if args.out is not None:  # and a taken --out, before the data are read
        ResultsDirectory(args.out, overwrite=args.force, inputs=named_inputs(args)).check()
    found = click_data(args)
    if found is not None:
        data, name, inputs, examinations = found
    else:
        # the folds are this run's: their test values are read once the model is ready, and
        # their vali values once the training rows are coded, where a path on a sample
        # keeps them as bin codes
        codes = bool(path_rows(args)) and reads_codes(estimator, list(ParameterGrid(grid)))
        (data, name, inputs), examinations = training_data(
            args, test_values=False, vali_values=not codes), None
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
        seeds = _seeds(args)
        # click data selects on the vali log's estimate alone (the training log's lists
        # are not queries to judge on) unless --vali-cv says otherwise
        vali_cv = None if examinations is not None and args.vali_cv is None else _vali_cv(args)
        bar = not args.quiet and on_terminal() and not args.scheduler and args.jobs == 1
        readings = 2 if examinations is not None and args.debias == "auto" else 1
        if isinstance(data, list) and readings == 1:  # folds for this run alone
            data = [replace(Fold.of(fold), keep_train=False) for fold in data]
        progress = _Progress(readings * _fits(data, args, grid, seeds, vali_cv) if bar else None)
        options = dict(**loading(args), select=args.select,
                       folds=None if isinstance(data, list) else args.folds,
                       convention=args.convention,
                       n_jobs=args.jobs, n_features=args.n_features,
                       stream_queries=None if isinstance(data, list) else args.stream,
                       within=args.within, feature_names=features, cache=args.cache,
                       seeds=seeds, path=curvature_recipe(args), vali_cv=vali_cv,
                       path_rows=path_rows(args, vali_cv),
                       progress=None if args.quiet else progress.fold,
                       on_fit=progress.fit if bar else None)
        try:
            if args.scheduler:
                options["progress"] = None

            def run_folds(folds, reading=None):
                progress.reading = reading
                if args.scheduler:
                    return _on_cluster(args.scheduler, folds, estimator, grid, dict(options))
                return run_letor_folds(folds, estimator, grid, **options)

            if examinations is not None and args.debias == "auto":
                experiment = keep_plain_unless_debiased(
                    run_folds(data, "debiased"), run_folds(plain_folds(data), "plain"), data)
            else:
                experiment = run_folds(data)
        finally:
            progress.close()
        command = command_line(args.argv)
        print(experiment_markdown(experiment, title=f"RSRank on {name}", command=command))
        print_examination(examinations)
        print_choices(experiment)
        if results is not None:
            extra = {"data": name, "rsrank_version": __version__}
            if examinations:
                extra["examination"] = examinations
            if getattr(experiment, "choices", None):
                extra["debias"] = {f"Fold{fold.fold}": choice.to_dict() for fold, choice
                                   in zip(experiment.folds, experiment.choices)}
            write_experiment(experiment, results.staging, command=command, extra=extra)
            results.publish()
            print(f"wrote {args.out}")
    return 0


#: How long ``--scheduler`` waits to reach the scheduler before it gives up.
SCHEDULER_TIMEOUT = "10s"


def _on_cluster(address, root, estimator, grid, options):
    """Run the folds as tasks on a Dask cluster through joblib's dask backend."""
    try:
        from distributed import Client
        from joblib import parallel_config
    except ImportError:
        raise UsageError("--scheduler needs the dask extra: pip install 'rsrank[dask]'") from None
    with Client(address, timeout=SCHEDULER_TIMEOUT), parallel_config(backend="dask"):
        options["n_jobs"] = -1
        return run_letor_folds(root, estimator, grid, backend="joblib", **options)
