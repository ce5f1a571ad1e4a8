"""More RSRank variants on OHSUMED's sparse frontier, against the runs of
``scripts/reproduce_paper.py``. Its code is lab/frontier_variants.py;
``--help`` lists its options."""

from _lab import run

run(__file__)
