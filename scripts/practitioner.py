"""A search engineer's path through RSRank, measured end to end with the CLI.
Its code is lab/practitioner.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
