"""A LETOR L1 path with a step size from the data and the converged models. Its
code is lab/stable_path.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
