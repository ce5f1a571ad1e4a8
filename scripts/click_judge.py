"""Judging rankers by clicks: how well does an estimate from a vali click log
order models as the expert labels of the same queries do?. Its code is
lab/click_judge.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
