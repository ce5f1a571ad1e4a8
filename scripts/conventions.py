"""Which tool gives which NDCG@10 for the same rankings, and the convention of
rsrank.evaluation.metrics that reproduces each. Its code is lab/conventions.py;
``--help`` lists its options."""

from _lab import run

run(__file__)
