"""The ``rsrank`` command line: argument parsing and printing only."""

import argparse
import sys

from . import __version__
from .datasets import LetorFormatError, bundled_data_path, letor_summary


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


def build_parser():
    parser = argparse.ArgumentParser(prog="rsrank", description=(
        "Sparse linear rankers that target NDCG (RSRank: |dNDCG|-weighted pairwise "
        "modified-Huber loss with truncated-gradient L1)."))
    parser.add_argument("--version", action="version", version=f"rsrank {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    info = commands.add_parser("info", help="summarise a LETOR file or a directory of folds")
    info.add_argument("path", nargs="?", help="LETOR file or fold root (default: bundled data)")
    info.set_defaults(run=_cmd_info)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (FileNotFoundError, LetorFormatError, ValueError) as error:
        print(f"rsrank {args.command}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
