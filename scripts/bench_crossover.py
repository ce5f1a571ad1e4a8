"""Where a query's lambdas cost less by prefix sums than by the pair loop. Its
code is lab/bench_crossover.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
