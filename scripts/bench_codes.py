"""An additive model's setup on MSLR-WEB30K-shaped rows: the bin codes and the
step curvature, against NumPy doing the codes. Its code is lab/bench_codes.py;
``--help`` lists its options."""

from _lab import run

run(__file__)
