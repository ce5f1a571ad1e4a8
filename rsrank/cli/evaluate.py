"""``rsrank evaluate``: the LETOR table (or per-query values) of a model or a score file."""

import sys

from ..datasets import check_exp2_labels, load_letor
from ..estimator import RSRank
from ..metrics import CONVENTIONS, letor_per_query, letor_report
from ..runs import read_scores
from ._commands import COMMANDS
from ._options import UsageError, fit_width


def add_parser(commands):
    evaluate = commands.add_parser("evaluate", help=COMMANDS["evaluate"])
    evaluate.add_argument("model", nargs="?", help="model file written by train / save()")
    evaluate.add_argument("file", help="LETOR file with labels and qid")
    evaluate.add_argument("--scores", help="scores instead of a model: one per line in the "
                          "file's row order, or a TSV or TREC run from rsrank predict (matched "
                          "to the file by qid and docid)")
    evaluate.add_argument("--convention", choices=list(CONVENTIONS), default="letor",
                          help="letor (default): LETOR's Eval-Score-3.0; trec_eval: trec_eval's "
                          "ndcg_cut, P and map (ties by the file's docids); sklearn: "
                          "scikit-learn's ndcg_score; see rsrank.metrics")
    evaluate.add_argument("--per-query", action="store_true",
                          help="one TSV line per query (qid, NDCG@1..10, P@1..10, AP) instead "
                          "of the means")
    evaluate.set_defaults(run=run)


def _print_report(report, out):
    print(report, file=out)


def run(args):
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
