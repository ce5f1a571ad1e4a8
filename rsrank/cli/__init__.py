"""The ``rsrank`` command line: one module per command, each with its parser
(``add_parser``) and its action (``run``) over the public API; the options
several commands share are defined once (:mod:`rsrank.cli._options`), and
every error ends at one edge (:mod:`rsrank.cli._edge`).

Every action calls the public API; a user mistake (missing file, bad grid
value, wrong data) is one line on stderr and exit status 2, not a
traceback (``--debug`` shows it). :func:`main` imports only the command it
runs: ``rsrank --help`` lists the commands from their table
(:data:`rsrank.cli._commands.COMMANDS`) and ``rsrank --version`` prints
the version, neither importing scikit-learn, SciPy or numba.
"""

import argparse
import importlib
import sys

from .._version import __version__
from ._commands import COMMANDS

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


def build_parser(only=None):
    """The parser of every command, or with ``only`` (a command's name) of
    that one, the others listed by name and help without their options."""
    parser = argparse.ArgumentParser(prog="rsrank", description=(
        "Sparse linear rankers that target NDCG (RSRank: |dNDCG|-weighted pairwise "
        "modified-Huber loss with truncated-gradient L1)."))
    parser.add_argument("--version", action="version", version=f"rsrank {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="show the traceback of an error instead of one line")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, summary in COMMANDS.items():
        if only is None or name == only:
            _command_module(name).add_parser(commands)
        else:
            commands.add_parser(name, help=summary)
    return parser


def _chosen(argv):
    """The command ``argv`` names (its first word that is not an option of
    ``rsrank`` itself), or None."""
    for word in argv:
        if word in ("--", "-h", "--help", "--version"):
            return None
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    chosen = _chosen(argv)
    try:  # a command's module imports the numerical libraries: a second or more
        parser = build_parser(only=chosen or "")
        if chosen is None:  # help, the version or a usage error: each exits here
            parser.parse_args(argv)
        edge = importlib.import_module("rsrank.cli._edge")
    except KeyboardInterrupt:
        print("rsrank: interrupted", file=sys.stderr)
        return 130
    args = parser.parse_args(argv)
    args.argv = argv
    return edge.run(args)


if __name__ == "__main__":
    sys.exit(main())
