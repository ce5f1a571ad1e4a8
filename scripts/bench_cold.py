"""The first run after an install against the next ones. Its code is
lab/bench_cold.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
