"""The package's module map and where it decides the kind of model. Its code is
lab/module_map.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
