"""Threads against the work and against busy cores. Its code is
lab/bench_threads.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
