"""The cost frontier on OHSUMED's fold 1, linear and additive. Its code is
lab/cost_frontier.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
