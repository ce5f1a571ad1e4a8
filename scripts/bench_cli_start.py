"""How long the ``rsrank`` command takes before it prints anything, and what it
imports. Its code is lab/bench_cli_start.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
