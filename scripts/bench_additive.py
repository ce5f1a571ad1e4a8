"""An additive model's epoch and fit against the linear model's and LightGBM's,
at MSLR-WEB30K's shape. Its code is lab/bench_additive.py; ``--help`` lists its
options."""

from _lab import run

run(__file__)
