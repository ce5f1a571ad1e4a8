"""The main job's tables and every kind's weights, now and at an earlier
commit, compared to the last digit. Its code is lab/main_job.py; ``--help``
lists its options."""

from _lab import run

run(__file__)
