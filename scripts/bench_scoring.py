"""Scoring rows with a sparse additive model: the columns it reads alone, against
every column coded. Its code is lab/bench_scoring.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
