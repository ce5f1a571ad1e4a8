"""``rsrank train``: LETOR's protocol on the user's folds, with the library's recipe."""

import contextlib
import functools
import sys

from sklearn.model_selection import ParameterGrid

from ..reading._files import ResultsDirectory
from .._version import __version__
from ..reading.datasets import find_folds
from ..evaluation.experiments import run_letor_folds
from ..evaluation.reports import experiment_markdown, write_experiment
from ..reading.layouts import read_feature_costs, read_feature_names
from ..learning.recipe import (DEFAULT_L1_RATIO, DEFAULT_WITHIN, SPARSE_L1_RATIO, SPARSE_VALI_CV,
                               SPARSE_WITHIN, fold_threads, train_recipe, vali_folds)
from ._commands import COMMANDS
from ..clicks.choice import keep_plain_unless_debiased
from ._clicks import click_data, plain_folds, print_choices, print_examination
from ._options import (UsageError, add_data_options, add_training_options, command_line,
                       curvature_recipe, first_run, jobs, loading, metric, non_negative_int,
                       number_list, on_terminal, pair_weights, path_rows, positive, training_data,
                       within)


def add_parser(commands):
    train = commands.add_parser("train", help=COMMANDS["train"],
                                description="For each fold: train every grid point on train, "
                                "select on vali, evaluate on test; print the LETOR table.")
    add_data_options(train)
    clicks = train.add_argument_group("click logs", "train on what users clicked instead of "
                                      "the labels (docs/guide/clicks.md)")
    clicks.add_argument("--clicks", metavar="LOG", help="click log of the training queries "
                        "(CSV: session,qid,docid,position,click or qid,docid,position,"
                        "impressions,clicks), joined to --train's rows on qid and docid; a "
                        "Fold<k> root trains on clicks when its folds hold train.clicks.csv")
    clicks.add_argument("--vali-clicks", metavar="LOG", help="click log of --vali's queries: "
                        "selection and early stopping judge NDCG@10 on its clicks, with "
                        "the position's bias taken out")
    clicks.add_argument("--propensity", type=number_list(float), default=None,
                        metavar="P1,P2,...", help="the chance of examining each position, "
                        "from the top (for example from a randomised experiment), instead "
                        "of estimating it from the training log")
    clicks.add_argument("--debias", choices=("auto", "on", "off"), default="auto",
                        help="auto (default): fit both of the others and keep the one that "
                        "ranks the vali log's documents better, graded by their clicks "
                        "without the position's bias (plain on a tie); on: take the "
                        "position's bias out of the clicks; "
                        "off: plain click training, each session a query and its clicks "
                        "the labels (the baseline to compare with)")
    train.add_argument("--feature-names", help="file of feature names: one per line, or "
                       "'index name' lines (RankLib, Elasticsearch LTR feature lists)")
    train.add_argument("--folds", type=number_list(int), default=None,
                       help="comma-separated fold numbers (default: all found)")
    strengths = train.add_mutually_exclusive_group()
    strengths.add_argument("--l1-ratio", type=number_list(float), default=None,
                           help="comma-separated L1 strengths as fractions of each fold's "
                           "l1_max, the smallest l1 that keeps every weight at zero (default "
                           f"{','.join(f'{v:g}' for v in DEFAULT_L1_RATIO)}; with --within "
                           f"{SPARSE_WITHIN:g} or more "
                           f"{','.join(f'{v:g}' for v in SPARSE_L1_RATIO)})")
    strengths.add_argument("--l1", type=number_list(float), default=None,
                           help="comma-separated L1 strengths g, in the units of the scaled "
                           "features (instead of --l1-ratio)")
    train.add_argument("--vali-cv", type=non_negative_int, default=None, metavar="K",
                       help="also judge every grid point on K folds of the training queries "
                       "(each held-out query scored by the path fitted on the others), beside "
                       "vali: more queries to select on where vali has few (0: vali alone; "
                       f"default: vali alone, and {SPARSE_VALI_CV} with --within "
                       f"{SPARSE_WITHIN:g} or more unless --stream)")
    train.add_argument("--with-linear", action="store_true",
                       help="with --additive, also walk the linear model's path: the "
                       "selection keeps the linear model unless the shapes beat it on vali by "
                       "more than one standard error over the vali queries (about one more "
                       "linear run of time; results/kind_rule.md)")
    train.add_argument("--within", type=within, default=DEFAULT_WITHIN,
                       help="keep the sparsest grid point whose vali score is within this "
                       "fraction of the best (0 keeps the best), or '1se': within one "
                       "standard error of the best over the vali queries (default "
                       f"{DEFAULT_WITHIN}; {SPARSE_WITHIN:g} or more also takes the sparse "
                       "path and --vali-cv, results/sparse3.md)")
    train.add_argument("--truncation-period", type=number_list(int), default=None,
                       help="K of truncated gradient (comma-separated grid; default 1)")
    train.add_argument("--pair-weight", type=pair_weights, default=None,
                       help="pair weights: delta_ndcg (|Delta NDCG| of the swap, RSRank's), "
                       "unit (every pair 1, as RankSVM), comma-separated (default with "
                       "--learning-rate curvature: both, else delta_ndcg)")
    add_training_options(train, grid=True)
    train.add_argument("--select", type=metric, default="ndcg@10",
                       help="validation metric: ndcg@K, p@K or map (default ndcg@10)")
    train.add_argument("--jobs", type=jobs, default=1,
                       help="folds in parallel (default 1; -1: one per core)")
    train.add_argument("--stream", type=positive(int), nargs="?", const=1000, default=None,
                       metavar="QUERIES", help="read training files from disk in blocks of "
                       "QUERIES queries (default 1000) every epoch instead of loading them")
    train.add_argument("--cache", nargs="?", const=True, default=None, metavar="DIR",
                       help="keep parsed files as memory-mappable arrays and reuse them "
                       "while the files are unchanged (default place: .rsrank-cache beside "
                       "the data, or ~/.cache/rsrank when that is read-only)")
    train.add_argument("--n-features", type=positive(int), default=None,
                       help="number of features (default: largest index in the files)")
    train.add_argument("--dtype", choices=["float32", "float64"], default="float32",
                       help="precision the features are kept in (default float32: half the "
                       "memory; float64 trains on the values exactly as written)")
    train.add_argument("--scheduler", metavar="ADDRESS",
                       help="run the folds on a Dask cluster (tcp://host:8786)")
    train.add_argument("--out", help="directory for results.json/.md, models, predictions")
    train.add_argument("--force", action="store_true", help="replace an existing --out")
    train.add_argument("--seeds", type=positive(int), default=None, metavar="N",
                       help="run every fold with N seeds (--seed, --seed + 1, ...): mean ± "
                       "std over folds and seeds, per-seed per-query values in results.json")
    train.add_argument("--quiet", action="store_true", help="no progress: without it, a line "
                       "per finished fold on stderr and, on a terminal, one bar over every fit "
                       "of the run")
    train.set_defaults(run=run)


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
    found = click_data(args)
    if found is not None:
        data, name, inputs, examinations = found
    else:
        (data, name, inputs), examinations = training_data(args), None
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
