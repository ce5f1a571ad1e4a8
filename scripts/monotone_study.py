"""Monotone constraints on data whose true effects are monotone: what they cost
in NDCG, and what the unconstrained models violate. Its code is
lab/monotone_study.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
