"""An additive epoch with pairs by the stride of its tables: the odd stride
against a power of two. Its code is lab/bench_stride.py;
``--help`` lists its options."""

from _lab import run

run(__file__)
