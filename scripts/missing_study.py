"""Missing values: what 20% NaN in an informative feature costs an additive
model, against the same model on the complete data. Its code is
lab/missing_study.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
