"""``rsrank predict``: scores of a LETOR file, one per line, as a TSV or a TREC run."""

import io
import sys

from ..reading._files import atomic_write_text
from ..reading.datasets import LetorFormatError, data_line_numbers, load_letor
from ..estimator import RSRank
from ..evaluation.writers import run_problem, write_run, write_scores
from ._options import UsageError, check_file_output, fit_width


def run(args):
    check_file_output(args.out, [args.model, args.file])
    model = RSRank.load(args.model)
    X, _, qid, docids = load_letor(args.file, return_docids=True)
    scores = model.predict(fit_width(X, model, args.file), qid=qid)
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
        buffer = io.StringIO()
        write_run(buffer, qid, docids, scores, tag=args.tag, form=args.format)
        atomic_write_text(args.out, buffer.getvalue())
    else:
        write_run(sys.stdout, qid, docids, scores, tag=args.tag, form=args.format)
    return 0
