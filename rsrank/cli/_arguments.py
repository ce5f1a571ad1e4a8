"""The command line's arguments as argparse reads them: each value's type
(a one-line message for a bad one) and the data and training options that
``train`` and ``path`` share, defined once. Nothing here loads a numerical
library: ``rsrank train --help`` shows the defaults from
:mod:`rsrank.learning.defaults`, and the two values checked by the
library's own rules import them when a command line is read."""

import argparse

from ..evaluation._conventions import parse_metric
from ..learning.defaults import (DEFAULT_INTERACTION_BINS, DEFAULT_L1_METHOD, DEFAULT_MAX_BINS,
                                 DEFAULT_MAX_ITER, DEFAULT_NORMALIZE, L1_METHODS, NORMALIZERS,
                                 PATH_EPOCHS, PATH_PATIENCE, PATH_ROWS, PATH_SETTLE_TOL,
                                 PATH_WEIGHT_TOL, LEVEL_ROWS, ROWS_BINS, check_within)


def within(text):
    value = text.strip().lower()
    try:
        value = value if value == "1se" else float(value)
        check_within(value)  # checked as the estimator checks it
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
    try:  # read as the selection reads it
        parse_metric(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text.lower()


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
            f"at w = 0, or for --additive a step on each bin's level by its own curvature; "
            f"each point of the path kept at its last epoch, once its weights "
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
    parser.add_argument("--normalize", choices=NORMALIZERS, default=DEFAULT_NORMALIZE,
                        help="feature scaling fitted on train and stored in the model "
                        "(default zscore; query-* scale within each query and cannot be "
                        "exported to a search engine)")
    parser.add_argument("--max-iter", type=positive(int), default=None,
                        help=f"epochs (default {DEFAULT_MAX_ITER}; {PATH_EPOCHS} with "
                        "--learning-rate curvature, for every kind)")
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
            "not with --vali-cv or --stream, whose paths use every training query); such a "
            f"path stops a pair weighting after {PATH_PATIENCE} strengths in a row that do not "
            "raise its best vali score, and its penalized fits once their weights settle to "
            f"{PATH_SETTLE_TOL:g} (or --weight-tol, where larger): on the sample they only "
            "rank the points")
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
                        help=f"bins per feature of --additive (2 to 256; thresholds at "
                        f"training quantiles; default {ROWS_BINS[0]} on {LEVEL_ROWS:,} training "
                        f"rows or more in memory, else {DEFAULT_MAX_BINS}, as with --stream)")
    parser.add_argument("--interactions", type=non_negative_int, default=0, metavar="K",
                        help="with --additive, also let the model use at most K pairs of "
                        "features, each a table over a grid of both (trees of two features); "
                        "the pairs are those the ranking's gradients find at an additive "
                        "model's ranking, and the path takes pairs in or out as features "
                        "(default 0)")
    parser.add_argument("--interaction-bins", type=positive(int), default=None,
                        help="bins per feature of a pair's grid (2 to 16; default "
                        f"{ROWS_BINS[1]} on {LEVEL_ROWS:,} training rows or more in memory, "
                        f"else {DEFAULT_INTERACTION_BINS})")
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
    parser.add_argument("--l1-method", choices=L1_METHODS, default=DEFAULT_L1_METHOD,
                        help="how L1 is applied: truncated gradient (default) or Tsuruoka's "
                        "cumulative penalty")
    parser.add_argument("--average", action="store_true",
                        help="make the model the mean of the epochs' weights (Polyak-Ruppert "
                        "averaging); validation and the kept epoch use the mean")
    parser.add_argument("--convention", choices=["letor", "standard", "lightgbm", "sklearn"],
                        default="letor", help="metric convention (default letor)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
