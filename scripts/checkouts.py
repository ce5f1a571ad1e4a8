"""One rsrank train command with the code of two commits, one after the other on each set:
time, CPU, memory, paired NDCG@10, same predictions. Its code is lab/checkouts.py;
``--help`` lists its options."""

from _lab import run

run(__file__)
