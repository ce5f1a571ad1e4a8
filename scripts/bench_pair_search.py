"""The pair search's histograms on MSLR-WEB30K-shaped rows, a block of rows at a time,
against a row at a time. Its code is lab/bench_pair_search.py;
``--help`` lists its options."""

from _lab import run

run(__file__)
