"""The ``rsrank`` command line: argument parsing and printing only.

Every action calls the public API; a user mistake (missing file, bad grid
value, unknown fold) is one line on stderr and exit code 2.
"""

import argparse
import json
import shlex
import sys
from pathlib import Path

from . import __version__
from .datasets import (LetorFormatError, bundled_data_path, letor_summary, load_letor,
                       load_letor_fold, read_scores, write_scores)
from .estimator import RSRank
from .metrics import letor_report
from .model_selection import (experiment_markdown, parse_metric, regularization_path,
                              run_letor_folds, save_experiment)


class UsageError(ValueError):
    """A mistake in the command line itself."""


def _number_list(kind):
    def parse(text):
        values = []
        for token in text.split(","):
            token = token.strip()
            try:
                values.append(kind(token))
            except ValueError:
                name = "an integer" if kind is int else "a number"
                raise argparse.ArgumentTypeError(f"{token!r} is not {name}") from None
        if not values:
            raise argparse.ArgumentTypeError("empty list")
        return values

    return parse


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
    _print_summary(letor_summary(args.path or bundled_data_path()), sys.stdout)
    return 0


# -- train -----------------------------------------------------------------------------


def _estimator(args):
    # epoch bars only when folds run one at a time: parallel bars would interleave
    verbose = int(not args.quiet and args.jobs == 1)
    stopping = {}
    if args.patience is not None:
        stopping = dict(early_stopping=True, n_iter_no_change=args.patience, tol=0.0)
    return RSRank(max_iter=args.max_iter, random_state=args.seed, eval_convention=args.convention,
                  eval_train=False, verbose=verbose, **stopping)


def _grid(args):
    grid = {"learning_rate": args.learning_rate, "l1": args.l1}
    for name in ("ndcg_k", "discount"):
        if getattr(args, name) is not None:
            grid[name] = getattr(args, name)
    if args.batch_size is not None:
        grid["batch_size"] = args.batch_size
    if args.truncation_period is not None:
        grid["truncation_period"] = args.truncation_period
    return grid


def _cmd_train(args):
    root = Path(args.path) if args.path else bundled_data_path()
    if args.out and Path(args.out).exists() and not args.force:
        raise UsageError(f"{args.out} exists; choose another --out or pass --force")
    options = dict(folds=args.folds, select=args.select, convention=args.convention,
                   n_jobs=args.jobs, progress=not args.quiet, n_features=args.n_features,
                   stream_queries=args.stream)
    if args.scheduler:
        experiment = _on_cluster(args.scheduler, root, _estimator(args), _grid(args), options)
    else:
        experiment = run_letor_folds(root, _estimator(args), _grid(args), **options)
    command = _command_line(args.argv)
    print(experiment_markdown(experiment, title=f"RSRank on {root}", command=command))
    if args.out:
        save_experiment(experiment, args.out, command=command, overwrite=args.force,
                        extra={"data": str(root), "rsrank_version": __version__})
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
        return run_letor_folds(root, estimator, grid, **options)


# -- evaluate / predict --------------------------------------------------------------------


def _print_report(report, out):
    print(report, file=out)


def _cmd_evaluate(args):
    if args.scores and args.model:
        raise UsageError("give either MODEL or --scores, not both")
    if not args.scores and not args.model:
        raise UsageError("give a MODEL file or --scores SCORES")
    X, y, qid = load_letor(args.file, n_features=None)
    if args.scores:
        scores = read_scores(args.scores, n_rows=len(y))
    else:
        model = RSRank.load(args.model)
        X = _fit_width(X, model, args.file)
        scores = model.predict(X)
    report = letor_report(y, scores, qid, convention=args.convention)
    _print_report(report, sys.stdout)
    return 0


def _fit_width(X, model, path):
    """Pad X to the model's feature count (a file need not mention the last
    columns); more columns than the model knows is an error."""
    import scipy.sparse as sp

    width = model.n_features_in_
    if X.shape[1] > width:
        raise UsageError(f"{path} has feature indices up to {X.shape[1]} but the model has "
                         f"{width} features")
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], width))


def _cmd_predict(args):
    model = RSRank.load(args.model)
    X, _, _ = load_letor(args.file)
    scores = model.predict(_fit_width(X, model, args.file))
    if args.out:
        write_scores(args.out, scores)
    else:
        sys.stdout.writelines(f"{value:.10g}\n" for value in scores)
    return 0


# -- path ------------------------------------------------------------------------------------


def _cmd_path(args):
    root = Path(args.path) if args.path else bundled_data_path()
    data = load_letor_fold(root, args.fold)
    estimator = RSRank(learning_rate=args.learning_rate, max_iter=args.max_iter,
                       batch_size=args.batch_size, ndcg_k=args.ndcg_k, random_state=args.seed)
    path = regularization_path(*data.train[:3], args.l1, estimator=estimator,
                               eval_set=data.vali[:3], test_set=data.test[:3], k=10,
                               convention=args.convention)
    lines = [f"# Regularization path, {root} fold {args.fold}", "",
             f"Command: `{_command_line(args.argv)}`", "",
             "| l1 | non-zeros | train NDCG@10 | vali NDCG@10 | test NDCG@10 |",
             "|---|---|---|---|---|"]
    for p in path:
        lines.append(f"| {p.l1:g} | {p.n_nonzero} | {p.train_ndcg:.4f} | {p.val_ndcg:.4f} | "
                     f"{p.test_ndcg:.4f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        out = Path(args.out)
        if out.exists() and not args.force:
            raise UsageError(f"{out} exists; choose another --out or pass --force")
        from .persistence import atomic_write_text as _atomic_write_text

        out.mkdir(parents=True, exist_ok=True)
        _atomic_write_text(out / "path.md", text)
        points = [{k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in p.items()}
                  for p in path]
        _atomic_write_text(out / "path.json", json.dumps(
            {"command": _command_line(args.argv), "data": str(root), "fold": args.fold,
             "path": points}, indent=2) + "\n")
        print(f"wrote {out}")
    return 0


# -- parser -------------------------------------------------------------------------------------


def _add_training_options(parser, grid):
    many = _number_list(float) if grid else float
    parser.add_argument("--learning-rate", type=many, default=[1e-2] if grid else 1e-2,
                        help="step size eta" + (" (comma-separated grid)" if grid else ""))
    parser.add_argument("--max-iter", type=int, default=100, help="epochs (default 100)")
    parser.add_argument("--batch-size", type=_number_list(int) if grid else int, default=None,
                        help="queries per step (default 1, the paper's online update)")
    if grid:
        parser.add_argument("--ndcg-k", type=_cutoffs, default=None,
                            help="NDCG cut-offs in the pair weights, e.g. all,10 "
                            "(default: all, the whole list)")
        parser.add_argument("--discount", type=_discounts, default=None,
                            help="discounts in the pair weights: log2, letor, zipf or a power "
                            "beta, comma-separated (default log2)")
        parser.add_argument("--patience", type=int, default=None,
                            help="stop after this many epochs without a better vali score "
                            "(default: run every epoch; the best epoch is kept either way)")
    else:
        parser.add_argument("--ndcg-k", type=int, default=None,
                            help="NDCG cut-off in the pair weights (default: whole list)")
    parser.add_argument("--convention", choices=["letor", "standard", "lightgbm", "sklearn"],
                        default="letor", help="metric convention (default letor)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


def build_parser():
    parser = argparse.ArgumentParser(prog="rsrank", description=(
        "Sparse linear rankers that target NDCG (RSRank: |dNDCG|-weighted pairwise "
        "modified-Huber loss with truncated-gradient L1)."))
    parser.add_argument("--version", action="version", version=f"rsrank {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    info = commands.add_parser("info", help="summarise a LETOR file or a directory of folds")
    info.add_argument("path", nargs="?", help="LETOR file or fold root (default: bundled data)")
    info.set_defaults(run=_cmd_info)

    train = commands.add_parser("train", help="grid search per fold on vali, report test",
                                description="For each fold: train every grid point on train, "
                                "select on vali, evaluate on test; print the LETOR table.")
    train.add_argument("path", nargs="?", help="fold root (default: bundled data)")
    train.add_argument("--folds", type=_number_list(int), default=None,
                       help="comma-separated fold numbers (default: all found)")
    train.add_argument("--l1", type=_number_list(float), default=[0.0],
                       help="comma-separated L1 strengths g (default 0)")
    train.add_argument("--truncation-period", type=_number_list(int), default=None,
                       help="K of truncated gradient (comma-separated grid; default 1)")
    _add_training_options(train, grid=True)
    train.add_argument("--select", type=_metric, default="ndcg@10",
                       help="validation metric: ndcg@K, p@K or map (default ndcg@10)")
    train.add_argument("--jobs", type=int, default=1, help="folds in parallel (default 1)")
    train.add_argument("--stream", type=int, nargs="?", const=1000, default=None,
                       metavar="QUERIES", help="read training files from disk in blocks of "
                       "QUERIES queries (default 1000) every epoch instead of loading them")
    train.add_argument("--n-features", type=int, default=None,
                       help="number of features (default: largest index in the files)")
    train.add_argument("--scheduler", metavar="ADDRESS",
                       help="run the folds on a Dask cluster (tcp://host:8786)")
    train.add_argument("--out", help="directory for results.json/.md, models, predictions")
    train.add_argument("--force", action="store_true", help="replace an existing --out")
    train.add_argument("--quiet", action="store_true", help="no progress bars")
    train.set_defaults(run=_cmd_train)

    evaluate = commands.add_parser("evaluate", help="LETOR table of a model or a score file")
    evaluate.add_argument("model", nargs="?", help="model file written by train / save()")
    evaluate.add_argument("file", help="LETOR file with labels and qid")
    evaluate.add_argument("--scores", help="one score per line instead of a model")
    evaluate.add_argument("--convention", choices=["letor", "standard", "lightgbm", "sklearn"],
                          default="letor")
    evaluate.set_defaults(run=_cmd_evaluate)

    predict = commands.add_parser("predict", help="one score per line for a LETOR file")
    predict.add_argument("model")
    predict.add_argument("file")
    predict.add_argument("--out", help="output file (default: stdout)")
    predict.set_defaults(run=_cmd_predict)

    path = commands.add_parser("path", help="regularization path on one fold")
    path.add_argument("path", nargs="?", help="fold root (default: bundled data)")
    path.add_argument("--fold", type=int, default=1)
    path.add_argument("--l1", type=_number_list(float),
                      default=[0.0, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0])
    _add_training_options(path, grid=False)
    path.add_argument("--out", help="directory for path.json and path.md")
    path.add_argument("--force", action="store_true", help="replace files in an existing --out")
    path.set_defaults(run=_cmd_path)
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = argv
    try:
        return args.run(args)
    except (FileNotFoundError, FileExistsError, LetorFormatError, ValueError) as error:
        print(f"rsrank {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"rsrank {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
