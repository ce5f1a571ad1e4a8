"""Reproduce the RSRank paper on LETOR 3.0 OHSUMED and measure the peers in the
same run. Its code is lab/reproduce_paper.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
