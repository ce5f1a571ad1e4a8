"""Full-batch steps with and without Nesterov's momentum on additive models:
the training loss after a number of epochs. Its code is lab/bench_momentum.py;
``--help`` lists its options."""

from _lab import run

run(__file__)
