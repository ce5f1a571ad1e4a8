"""The walks of the training data through the code: stops, rooms and climbs.
Its code is lab/walk_of_x.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
