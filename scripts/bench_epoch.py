"""An epoch against the roofline, where its time goes, the setup of a fit and
the cost of short queries. Its code is lab/bench_epoch.py; ``--help`` lists its
options."""

from _lab import run

run(__file__)
