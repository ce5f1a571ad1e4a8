"""``python -m rsrank`` and the ``rsrank`` command: the command line of
:mod:`rsrank.cli`, with a Ctrl-C while it is still importing ending as one
at any later point does ("interrupted", exit 130)."""

import sys


def main():
    try:
        from .cli import main as run
    except KeyboardInterrupt:
        print("rsrank: interrupted", file=sys.stderr)
        return 130
    return run()


if __name__ == "__main__":
    sys.exit(main())
