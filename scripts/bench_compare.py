"""How long the paired randomization test of ``rsrank compare`` takes, beside
scipy's. Its code is lab/bench_compare.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
