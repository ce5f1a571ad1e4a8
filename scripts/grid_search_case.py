"""A grid search as a newcomer writes it, against ``rsrank train`` on the same
fold. Its code is lab/grid_search_case.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
