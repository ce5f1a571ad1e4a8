"""More data on one truth: a recipe on a share of a generated training
file's queries against all of them, same vali and test. Its code is
lab/more_data.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
