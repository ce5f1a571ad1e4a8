"""Wall time of ``rsrank train`` for each model kind on the same folds, in one
process, the kinds taking turns. Its code is lab/bench_kinds.py; ``--help``
lists its options."""

from _lab import run

run(__file__)
