"""Steps on levels against steps on the weights for the interactions kind at
MSLR-WEB30K's shape. Its code is lab/level_steps.py; ``--help`` lists its
options."""

from _lab import run

run(__file__)
