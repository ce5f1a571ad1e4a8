"""What the binary cache's checks cost against parsing the text again. Its code
is lab/bench_cache.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
