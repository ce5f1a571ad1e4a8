"""How long the test command takes, whole and without the slow tests. Its code
is lab/suite_time.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
