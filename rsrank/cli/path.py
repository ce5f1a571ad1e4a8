"""``rsrank path``: the regularization path of one fold, as a table."""

import contextlib
import json

from ..reading._files import ResultsDirectory, atomic_write_text
from ..reading.datasets import load_letor_fold
from ..learning.edges import edge
from ..reading.layouts import read_feature_costs
from ..learning.path import l1_grid, path_markdown, walk
from ..deployment.plotting import plot_path
from ..reading.querydata import QueryData
from ..learning.recipe import path_estimator
from ._options import (UsageError, check_picture_output, command_line, first_run, loading,
                       named_inputs, training_data)


def run(args):
    with first_run(args):
        return _path(args)


def _path(args):
    estimator = _estimator(args)  # a flag the kind would ignore is refused before any work
    if args.out is not None:  # and a taken --out, before the data are read
        ResultsDirectory(args.out, overwrite=args.force, inputs=named_inputs(args)).check()
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
