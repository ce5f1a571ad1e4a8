"""Training recipes across datasets: which default holds on any data. Its code
is lab/recipe_study.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
