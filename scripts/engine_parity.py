"""Every export against predict, scored by each engine's rules. Its code is
lab/engine_parity.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
