"""Whole-list lambdas: the epoch over every ranked place against the
``ndcg_k=10`` epoch and the X@w + X^T lambda roofline, and the cost per
document as queries grow. Its code is lab/bench_lambdas.py; ``--help`` lists
its options."""

from _lab import run

run(__file__)
