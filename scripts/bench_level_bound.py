"""How long the bound of an additive fit's level steps takes, one gradient
an iteration against two. Its code is lab/bench_level_bound.py; ``--help``
lists its options."""

from _lab import run

run(__file__)
