"""The engine's setup and memory against its epoch and its arrays. Its code is
lab/bench_engine.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
