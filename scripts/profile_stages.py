"""Where the time of one ``rsrank train`` goes, stage by stage. Its code is
lab/profile_stages.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
