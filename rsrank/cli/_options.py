"""What the commands share: argument types, the data and training options
(defined once), the command line as text, output checks and the first-run
notice."""

import argparse
import contextlib
import os
import shlex
import sys
import warnings

import numpy as np
import scipy.sparse as sp

from ..learning._compile import deferred
from ..reading._files import check_not_input, check_output_target, make_parents, resolved
from .._kernels import compiled_before
from ..reading.datasets import align_columns, is_csv
from ..evaluation.experiments import parse_metric
from ..reading.layouts import resolve_training_data
from ..learning.penalty import L1_METHODS
from ..deployment.plotting import check_picture_path
from ..learning.preprocessing import NORMALIZERS
from ..learning.selection import check_within
from ..learning.recipe import (DEFAULTS, PATH_EPOCHS, PATH_EPOCHS_ADDITIVE, PATH_ROWS,
                               PATH_WEIGHT_TOL)
from ._edge import MADE_DIRECTORIES, UsageError


def within(text):
    value = text.strip().lower()
    try:
        value = value if value == "1se" else float(value)
        check_within(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: a fraction in [0, 1) or '1se'") from None
    return value


def number_list(kind):
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


def single(parse_list):
    """One value of a list parser."""
    def parse(text):
        values = parse_list(text)
        if len(values) != 1:
            raise argparse.ArgumentTypeError(f"{text!r} must be one number")
        return values[0]

    return parse


def positive(kind):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be positive")
        return value

    return parse


def rates(grid):
    """``--learning-rate``: ``auto``, ``curvature`` or positive numbers
    (comma-separated for a grid)."""
    def parse(text):
        if text.strip().lower() in ("auto", "curvature"):
            word = text.strip().lower()
            return [word] if grid else word
        if grid:
            values = number_list(float)(text)
            if not all(v > 0 for v in values):
                raise argparse.ArgumentTypeError(f"{text!r}: every rate must be positive")
            return values
        return positive(float)(text)
    return parse


def pair_weights(text):
    values = [v.strip() for v in text.split(",") if v.strip()]
    if not values or any(v not in ("unit", "delta_ndcg") for v in values):
        raise argparse.ArgumentTypeError(f"{text!r}: comma-separated unit and delta_ndcg")
    return values


def curvature_recipe(args):
    return getattr(args, "learning_rate", None) == ["curvature"]


def path_rows(args, vali_cv=None):
    """The training rows above which the path walks a sample
    (``--path-rows``; None: never). A sample ``--path-rows`` asks for where
    no path samples (without ``--learning-rate curvature``, with
    ``--stream`` or with the folds ``vali_cv`` of the training queries) is
    refused, not ignored."""
    rows = getattr(args, "path_rows", None)
    if rows:
        if not curvature_recipe(args):
            raise UsageError("--path-rows samples the path of --learning-rate curvature (the "
                             "default): leave it out with other rates")
        if getattr(args, "stream", None) is not None:
            raise UsageError("--path-rows samples a training set in memory; --stream reads it "
                             "in blocks every epoch: leave one out")
        if vali_cv:
            raise UsageError(f"--path-rows samples the path, and the {vali_cv} folds of the "
                             "training queries judged beside vali (--vali-cv, the sparse "
                             "recipe's default with --within 0.03 or more) walk it on every "
                             "query: give --vali-cv 0 to sample, or leave --path-rows out")
    return (PATH_ROWS if rows is None else rows or None) if curvature_recipe(args) else None


def jobs(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value == 0:
        raise argparse.ArgumentTypeError(f"{text!r}: a number of processes, or -1 for one per "
                                         "core")
    return value


def non_negative_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number >= 0")
    return value


def monotone_directions(text):
    """``--monotone``: ``name:+1,name:-1`` as a dict of directions."""
    out = {}
    for item in (part.strip() for part in text.split(",") if part.strip()):
        name, _, direction = item.rpartition(":")
        if not name or direction.strip() not in ("+1", "1", "-1", "0"):
            raise argparse.ArgumentTypeError(f"{item!r}: give NAME:+1 or NAME:-1 (comma-"
                                             "separated)")
        if name in out:
            raise argparse.ArgumentTypeError(f"{name!r} is given twice")
        out[name] = int(direction)
    if not out:
        raise argparse.ArgumentTypeError(f"{text!r}: give NAME:+1 or NAME:-1 (comma-separated)")
    return out


def non_negative_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be 0 or more")
    return value


def fraction(text):
    value = positive(float)(text)
    if not value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 1")
    return value


def cutoffs(text):
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


def discounts(text):
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


def metric(text):
    try:
        parse_metric(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text.lower()


def command_line(argv):
    return "rsrank " + " ".join(shlex.quote(a) for a in argv)


def on_terminal():
    return sys.stderr.isatty()


def training_data(args):
    return resolve_training_data(args.path, train=args.train, vali=args.vali, test=args.test,
                                 vali_fraction=args.vali_fraction, random_state=args.seed,
                                 n_features=args.n_features, cache=args.cache,
                                 stream_queries=getattr(args, "stream", None), **loading(args))


def loading(args):
    """How ``rsrank train`` keeps the splits: a file whose every line holds
    every feature as one dense array, in ``--dtype``."""
    return {"dtype": np.dtype(args.dtype).type, "dense": "auto"}


def check_file_output(out, inputs, flag="--out"):
    """Refuse, before any work, an output file that is an input, a
    directory (or anything :func:`rsrank.reading._files.check_output_target`
    refuses), or in a directory that cannot be written."""
    if out is None:
        return
    if not str(out).strip():
        raise UsageError(f"{flag} is empty")
    check_not_input(out, inputs)
    kind = check_output_target(out, flag)  # a directory, a socket, a dangling link: refused
    if kind == "through":  # a device or a FIFO: written through
        return
    MADE_DIRECTORIES.extend(make_parents(out))  # removed at the end if still empty
    parent = resolved(out).parent
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise UsageError(f"{flag} {out}: cannot write in {parent}")


def check_picture_output(out, inputs, flag="--out"):
    """:func:`check_file_output` for a picture, and before any work, that
    matplotlib is there and writes the format its suffix names."""
    if out is None:
        return
    check_file_output(out, inputs, flag)
    try:
        check_picture_path(out, flag)
    except ImportError as error:
        raise UsageError(f"{flag}: {error}") from None


def first_run(args):
    """On a first run (numba's cache lacks the kernels): one line on a
    terminal, and the parallel kernels compiled aside while the serial ones
    run (:func:`rsrank.learning._compile.deferred`)."""
    if compiled_before():
        return contextlib.nullcontext()
    if not getattr(args, "quiet", False) and on_terminal():
        print("rsrank: compiling kernels, first run only (up to half a minute)",
              file=sys.stderr, flush=True)
    return deferred()


def fit_width(X, model, path):
    """X in the model's columns: a CSV file's columns matched to the
    model's feature names (never by position), a LETOR file's padded to the
    model's feature count (a file need not mention the last columns); more
    columns than the model knows is an error."""
    width = model.n_features_in_
    if is_csv(path):
        if model.model_.feature_names is None:
            raise UsageError(f"{path}: CSV columns are matched to the model's features by "
                             "name, and this model has none (trained on LETOR text without "
                             "--feature-names): score a LETOR file, or name the features "
                             "when training")
        return sp.csr_matrix(align_columns(path, X, model.feature_names()))
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


def add_data_options(parser):
    """Where the data is, in every layout ``train`` and ``path`` read."""
    parser.add_argument("path", nargs="?", help="fold root (Fold1, Fold2, ...), a directory "
                        "with rank.train/rank.test or train.txt/vali.txt/test.txt (.query or "
                        ".group files beside data without qid), or one training file "
                        "(default: the bundled data)")
    parser.add_argument("--train", help="training file (instead of PATH)")
    parser.add_argument("--vali", help="validation file (default: --vali-fraction of the "
                        "training queries)")
    parser.add_argument("--test", help="test file (default: none; the table then reports vali)")
    parser.add_argument("--vali-fraction", type=fraction, default=None,
                        help="share of training queries held out for validation when there "
                        "is no vali file (default 0.2, seeded by --seed)")


def add_training_options(parser, grid):
    many_or_zero = number_list(float) if grid else single(number_list(float))
    if grid:  # rsrank train
        parser.add_argument(
            "--learning-rate", type=rates(grid), default=["curvature"],
            help="step size eta: curvature (default: 2 over the trace of the loss's Hessian "
            f"at w = 0; each point of the path kept at its last epoch, once its weights "
            f"settle (--weight-tol) or after {PATH_EPOCHS} epochs, "
            "warm-started from strong to weak L1, for both --pair-weight values), auto "
            "(1e-3, 1e-2 or 1e-1, whichever gives the best vali NDCG without L1, chosen once "
            "per fold; each point keeps its best vali epoch) or a comma-separated grid")
    else:
        parser.add_argument("--learning-rate", type=rates(grid), default="curvature",
                            help="step size eta (default curvature, as for rsrank train: 2 "
                            "over the trace of the loss's Hessian at w = 0, each point at its "
                            "last epoch once its weights settle; auto: 1e-3, 1e-2 or 1e-1, "
                            "whichever gives the best vali NDCG without L1, each point at its "
                            "best vali epoch)")
    parser.add_argument("--power-t", type=many_or_zero, default=None,
                        help="decay of the step size: gradient step t takes learning_rate / "
                        "t^power_t (default 0, a constant step; 0.5 is 1/sqrt(t))"
                        + (", comma-separated grid" if grid else ""))
    parser.add_argument("--normalize", choices=NORMALIZERS, default=DEFAULTS["normalize"],
                        help="feature scaling fitted on train and stored in the model "
                        "(default zscore; query-* scale within each query and cannot be "
                        "exported to a search engine)")
    parser.add_argument("--max-iter", type=positive(int), default=None,
                        help=f"epochs (default {DEFAULTS['max_iter']}; {PATH_EPOCHS} with "
                        f"--learning-rate curvature, {PATH_EPOCHS_ADDITIVE} with --additive "
                        "too)")
    if grid:
        parser.add_argument(
            "--weight-tol", type=non_negative_float, default=None,
            help="stop a fit after the first epoch in which no weight moved by more than this "
            "times the largest weight (with momentum, from its 20th epoch on; default "
            f"{PATH_WEIGHT_TOL:g} with --learning-rate curvature, else off; 0: every epoch)")
        parser.add_argument(
            "--path-rows", type=non_negative_int, default=None,
            help="with --learning-rate curvature, a training set of more rows walks the path "
            "on a seeded sample of its queries of about this many rows, and the chosen point "
            f"is fitted again on all of them (default {PATH_ROWS:,}; 0: the path on all rows; "
            "not with --vali-cv or --stream, whose paths use every training query)")
    parser.add_argument("--batch-size", type=number_list(int) if grid else positive(int),
                        default=None, help="queries per step (default: all, one step per "
                        "epoch; 1 is the paper's online update)")
    if grid:
        parser.add_argument("--ndcg-k", type=cutoffs, default=None,
                            help="NDCG cut-offs in the pair weights, e.g. all,10 "
                            "(default: all, the whole list)")
        parser.add_argument("--discount", type=discounts, default=None,
                            help="discounts in the pair weights: log2, letor, zipf or a power "
                            "beta, comma-separated (default log2)")
        parser.add_argument("--patience", type=positive(int), default=None,
                            help="stop after this many epochs without a better vali score "
                            "(default: run every epoch; the best epoch is kept either way)")
    else:
        parser.add_argument("--ndcg-k", type=int, default=None,
                            help="NDCG cut-off in the pair weights (default: whole list)")
    parser.add_argument("--additive", action="store_true",
                        help="learn one step function per feature (sums of depth-1 trees; "
                        "every engine runs it) instead of one weight; the default path then "
                        "takes whole features in or out (--l1-ratio: steps within them)")
    parser.add_argument("--max-bins", type=positive(int), default=None,
                        help=f"bins per feature of --additive (2 to 256, default "
                        f"{DEFAULTS['max_bins']}; thresholds at training quantiles)")
    parser.add_argument("--interactions", type=non_negative_int, default=0, metavar="K",
                        help="with --additive, also let the model use at most K pairs of "
                        "features, each a table over a grid of both (trees of two features); "
                        "the pairs are those the ranking's gradients find at an additive "
                        "model's ranking, and the path takes pairs in or out as features "
                        "(default 0)")
    parser.add_argument("--interaction-bins", type=positive(int), default=None,
                        help="bins per feature of a pair's grid (2 to 16, default "
                        f"{DEFAULTS['interaction_bins']})")
    parser.add_argument("--monotone", type=monotone_directions, default=None,
                        metavar="NAME:+1,...",
                        help="monotone constraints: the score never falls as a feature with "
                        "+1 grows, never rises with -1 (feature names, or LETOR's f1, f2, ...; "
                        "a linear weight keeps its sign, a shape its steps', a pair its "
                        "order along the feature)")
    parser.add_argument("--missing", choices=["refuse", "zero", "mean"], default=None,
                        help="what a missing value (an empty CSV cell, nan) stands for in a "
                        "linear model: refuse it (default), zero, or the feature's training "
                        "mean; kept in the model, used by predict and by the exports (additive "
                        "models give it a step of its own)")
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
