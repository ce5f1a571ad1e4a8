"""A fault and bad-input probe of everything that writes, fetches or reads CSV:
each case run through the command line (or the public API) in this process,
judged by what happened to the user's files and what was said. Its code is
lab/fault_probe.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
