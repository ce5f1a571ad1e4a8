"""Train on a LETOR file larger than the memory the process may use. Its code
is lab/bench_stream.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
