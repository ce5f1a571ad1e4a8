"""The ``rsrank`` command line: one module per command, each with its parser
(``add_parser``) and its action (``run``) over the public API; the options
several commands share are defined once (:mod:`rsrank.cli._options`), and
every error ends at one edge (:mod:`rsrank.cli._edge`).

Every action calls the public API; a user mistake (missing file, bad grid
value, wrong data) is one line on stderr and exit status 2, not a
traceback (``--debug`` shows it).
"""

import argparse
import sys

from .._version import __version__
from ..recipe import (DEFAULT_L1_RATIO, DEFAULT_WITHIN, PATH_EPOCHS, PATH_EPOCHS_ADDITIVE,
                      PATH_PAIR_WEIGHTS, PATH_WEIGHT_TOL)
from . import _edge, compare, evaluate, export, fetch, info, path, plot, predict, train
from ._options import UsageError

__all__ = ["main", "build_parser", "UsageError", "DEFAULT_L1_RATIO", "DEFAULT_WITHIN",
           "PATH_EPOCHS", "PATH_EPOCHS_ADDITIVE", "PATH_PAIR_WEIGHTS", "PATH_WEIGHT_TOL"]

#: the commands, in the order ``rsrank --help`` lists them
COMMANDS = (info, fetch, train, evaluate, compare, predict, export, plot, path)


def build_parser():
    parser = argparse.ArgumentParser(prog="rsrank", description=(
        "Sparse linear rankers that target NDCG (RSRank: |dNDCG|-weighted pairwise "
        "modified-Huber loss with truncated-gradient L1)."))
    parser.add_argument("--version", action="version", version=f"rsrank {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an error instead of one line")
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(commands)
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    return _edge.run(args)


if __name__ == "__main__":
    sys.exit(main())
