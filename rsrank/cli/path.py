"""``rsrank path``: the regularization path of one fold, as a table."""

import contextlib
import json

from ..reading._files import ResultsDirectory, atomic_write_text
from ..reading.datasets import load_letor_fold
from ..learning.fitting import edge
from ..reading.layouts import read_feature_costs
from ..learning.path import l1_grid, path_markdown, walk
from ..deployment.plotting import plot_path
from ..reading.querydata import QueryData
from ..learning.recipe import path_estimator
from ._commands import COMMANDS
from ._options import (UsageError, add_data_options, add_training_options, check_picture_output,
                       command_line, first_run, loading, number_list, positive, training_data)


def add_parser(commands):
    path = commands.add_parser("path", help=COMMANDS["path"])
    add_data_options(path)
    path.add_argument("--fold", type=int, default=1, help="fold of a Fold<k> root (default 1)")
    path.add_argument("--l1", type=number_list(float), default=None,
                      help="L1 strengths (default: 10 on a log scale from the smallest that "
                      "keeps every weight at zero down to 1/1000 of it, and 0)")
    path.add_argument("--n-features", type=positive(int), default=None,
                      help="number of features (default: largest index in the files)")
    path.add_argument("--cache", nargs="?", const=True, default=None, metavar="DIR",
                      help="keep parsed files as memory-mappable arrays (as for train)")
    path.add_argument("--dtype", choices=["float32", "float64"], default="float32",
                      help="precision the features are kept in (as for train)")
    add_training_options(path, grid=False)
    path.add_argument("--out", help="directory for path.json and path.md")
    path.add_argument("--plot", metavar="FILE", help="also draw NDCG@10 against the "
                      "features in use, per split, into FILE (.png, .svg, .pdf)")
    path.add_argument("--force", action="store_true", help="replace an existing --out")
    path.set_defaults(run=run)


def run(args):
    with first_run(args):
        return _path(args)


def _path(args):
    estimator = _estimator(args)  # a flag the kind would ignore is refused before any work
    data, name, inputs = training_data(args)
    check_picture_output(args.plot, inputs, "--plot")
    if isinstance(data, list):
        if args.fold != 1:
            raise UsageError(f"--fold {args.fold}: {name} is one fold; leave --fold out")
        fold = data[0]
    else:
        fold = load_letor_fold(data, args.fold, n_features=args.n_features, cache=args.cache,
                               **loading(args))
    claim = (ResultsDirectory(args.out, overwrite=args.force, inputs=inputs)
             if args.out is not None else contextlib.nullcontext())
    with claim as results:
        return _run_path(args, estimator, name, fold, results)


def _estimator(args):
    try:
        return path_estimator(
            learning_rate=args.learning_rate, additive=args.additive, max_bins=args.max_bins,
            interactions=args.interactions, interaction_bins=args.interaction_bins,
            monotone=args.monotone,
            normalize=args.normalize, relax=args.relax, max_iter=args.max_iter,
            batch_size=args.batch_size, ndcg_k=args.ndcg_k, power_t=args.power_t,
            l1_method=args.l1_method, average=args.average, seed=args.seed, missing=args.missing,
            feature_costs=None if args.feature_costs is None
            else read_feature_costs(args.feature_costs))
    except ValueError as error:
        raise UsageError(str(error)) from None


def _run_path(args, estimator, name, data, results):
    strength = estimator.setup().kind.strength
    train, vali = QueryData(*data.train[:3]), QueryData(*data.vali[:3])
    test = None if data.test is None else QueryData(*data.test[:3])
    l1_values, top = args.l1, None
    if l1_values is None:
        top = edge(estimator.setup(), train)
        l1_values = [0.0] + l1_grid(top, 10, 1e-3)
    points = walk(estimator, [{strength: float(g)} for g in sorted(l1_values, reverse=True)],
                  train, validation=vali)
    text, rows = path_markdown(points, strength, title=f"Regularization path, {name} fold "
                               f"{data.fold}", command=command_line(args.argv),
                               convention=args.convention, train=train, validation=vali,
                               test=test, top=top, relax=estimator.relax)
    print(text)
    if args.plot:
        plot_path(rows, args.plot, title=f"{name} fold {data.fold}")
    if results is not None:
        atomic_write_text(results.staging / "path.md", text)
        atomic_write_text(results.staging / "path.json", json.dumps(
            {"command": command_line(args.argv), "data": name, "fold": data.fold,
             "l1_max": top, "path": rows}, indent=2) + "\n")
        results.publish()
        print(f"wrote {args.out}")
    return 0
