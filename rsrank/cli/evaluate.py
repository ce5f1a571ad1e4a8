"""``rsrank evaluate``: the LETOR table (or per-query values) of a model or a score file."""

import sys
from dataclasses import replace

from ..reading._text import LetorFormatError
from ..clicks import read_click_log
from ..clicks.estimate import click_values, estimate
from ..reading.datasets import check_exp2_labels, load_letor
from ..estimator import RSRank
from ..evaluation.metrics import CONVENTIONS, letor_per_query, letor_report
from ..evaluation.runs import read_scores
from ._options import UsageError, fit_width


def on_clicks(model_path, features, log_path):
    """The line ``rsrank evaluate MODEL FILE --clicks LOG`` prints."""
    values = click_values_of(features, log_path)
    model = RSRank.load(model_path)
    found = estimate(in_columns(values, model, features), model)
    return (f"{model_path} on {log_path}: NDCG@10 estimated from the clicks "
            f"{found.value:.4f}, 95% interval [{found.low:.4f}, {found.high:.4f}] over "
            f"{found.n_queries} queries ({click_reading(values)})")


def click_values_of(features, log_path):
    """:func:`~rsrank.clicks.estimate.click_values` of a log on a LETOR or
    CSV file's features, a problem one line that names the log."""
    X, _, qid, docids = load_letor(features, return_docids=True)
    try:
        return click_values(read_click_log(log_path), X, qid, docids)
    except ValueError as error:
        if isinstance(error, LetorFormatError):
            raise
        raise LetorFormatError(log_path, None, f"{error} (features: {features})") from None


def in_columns(values, model, features):
    """``values`` with their rows in ``model``'s columns (:func:`fit_width`)."""
    return replace(values, X=fit_width(values.X, model, features))


def click_reading(values):
    return ("the shown documents graded by their click chance without the position's bias, "
            "summed over the sessions that showed them")


def _print_report(report, out):
    print(report, file=out)


def run(args):
    if args.scores and args.model:
        raise UsageError("give either MODEL or --scores, not both")
    if not args.scores and not args.model:
        raise UsageError("give a MODEL file or --scores SCORES")
    if args.clicks is not None:
        if args.scores or args.per_query:
            raise UsageError("--clicks estimates a MODEL's NDCG@10 from a click log: not with "
                             "--scores or --per-query")
        print(on_clicks(args.model, args.file, args.clicks))
        return 0
    X, y, qid, docids = load_letor(args.file, n_features=None, return_docids=True)
    if CONVENTIONS[args.convention]["gain"] == "exp2":
        check_exp2_labels(args.file, y, "map these to grades of at most 255, or evaluate with "
                          "--convention sklearn (gain = label)")
    if args.scores:
        scores = read_scores(args.scores, n_rows=len(y), qid=qid, docids=docids, data=args.file)
    else:
        model = RSRank.load(args.model)
        X = fit_width(X, model, args.file)
        scores = model.predict(X, qid=qid)
    if args.per_query:
        values = letor_per_query(y, scores, qid, convention=args.convention, docids=docids)
        names = [name for name in values if name != "qid"]
        print("\t".join(["qid"] + names))
        for i, query in enumerate(values["qid"]):
            print("\t".join([str(query)] + [f"{values[name][i]:.6f}" for name in names]))
        return 0
    report = letor_report(y, scores, qid, convention=args.convention, docids=docids)
    print(f"{args.file}: metrics with the {args.convention!r} convention "
          f"({len(set(qid.tolist()))} queries)")
    _print_report(report, sys.stdout)
    return 0
