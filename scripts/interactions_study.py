"""Pairwise interactions on relevance made of pairwise effects: how far one-
feature shapes get, and what a budget of pairs adds. Its code is
lab/interactions_study.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
