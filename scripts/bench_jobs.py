"""Folds in worker processes (``rsrank train --jobs N``) against one process.
Its code is lab/bench_jobs.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
