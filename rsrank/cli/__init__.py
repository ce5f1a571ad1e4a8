"""The ``rsrank`` command line: every command's arguments in one table
(:mod:`rsrank.cli._parsers`, the shared ones defined once in
:mod:`rsrank.cli._arguments`), its action (``run``) in a module of its own
over the public API, and every error ending at one edge
(:mod:`rsrank.cli._edge`).

Every action calls the public API; a user mistake (missing file, bad grid
value, wrong data) is one line on stderr and exit status 2, not a
traceback (``--debug`` shows it). Every command's arguments are defined
apart from its action (:mod:`rsrank.cli._parsers`), and :func:`main`
imports only the action it runs: ``rsrank --help``, ``rsrank CMD --help``,
``rsrank --version`` and a usage error import no numerical library.
"""

import argparse
import importlib
import sys

from .._version import __version__
from ._parsers import PARSERS

__all__ = ["main", "build_parser", "UsageError", "DEFAULT_L1_RATIO", "DEFAULT_WITHIN",
           "PATH_EPOCHS", "PATH_EPOCHS_ADDITIVE", "PATH_PAIR_WEIGHTS", "PATH_WEIGHT_TOL"]

#: names this package re-exports, from the module each comes from, imported on first use
_LAZY = {"UsageError": "rsrank.cli._edge",
         **{name: "rsrank.learning.recipe" for name in (
             "DEFAULT_L1_RATIO", "DEFAULT_WITHIN", "PATH_EPOCHS", "PATH_EPOCHS_ADDITIVE",
             "PATH_PAIR_WEIGHTS", "PATH_WEIGHT_TOL")}}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'rsrank.cli' has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name]), name)


def _command_module(name):
    return importlib.import_module(f"rsrank.cli.{name}")


def build_parser():
    """The parser of every command (:data:`rsrank.cli._parsers.PARSERS`:
    their arguments alone, without a numerical library)."""
    parser = argparse.ArgumentParser(prog="rsrank", description=(
        "Sparse linear rankers that target NDCG (RSRank: |dNDCG|-weighted pairwise "
        "modified-Huber loss with truncated-gradient L1)."))
    parser.add_argument("--version", action="version", version=f"rsrank {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an error instead of one line")
    commands = parser.add_subparsers(dest="command", required=True)
    for add_parser in PARSERS.values():
        add_parser(commands)
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)  # help, the version and usage errors exit here
    edge = None
    try:  # the command's action imports the numerical libraries: a second or more
        edge = importlib.import_module("rsrank.cli._edge")  # imports none of them
        args.run = _command_module(args.command).run
    except KeyboardInterrupt:
        print("rsrank: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # an interrupt that a library being imported wrapped (a
        if edge is None or edge.interruption(error) is None:  # class's __set_name__
            raise  # raises RuntimeError from it)
        print("rsrank: interrupted", file=sys.stderr)
        return 130
    args.argv = argv
    return edge.run(args)


if __name__ == "__main__":
    sys.exit(main())
