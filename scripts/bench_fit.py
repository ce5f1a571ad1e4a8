"""Fit-time benchmark on one OHSUMED fold: RSRank against peers in one run. Its
code is lab/bench_fit.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
