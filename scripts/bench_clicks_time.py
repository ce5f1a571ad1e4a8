"""Wall time of ``rsrank train`` on click logs against the same command on the
expert labels of the same (shown) documents. Its code is
lab/bench_clicks_time.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
