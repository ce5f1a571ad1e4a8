"""Reading a click log: wall time and peak memory of
:func:`rsrank.clicks.read_click_log` on generated sessions logs of growing
size, each read in a fresh process (its peak resident memory, less that of a
process that only imports the package, is the read's). Its code is
lab/bench_click_log.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
