"""Per-epoch overhead of DaskRSRank against single-machine RSRank. Its code is
lab/bench_dask.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
