"""The costs of a pair's grid split: every run summed in a kernel, against whole-array
NumPy steps. Its code is lab/bench_pair_grids.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
