"""Whether a path walked on a sample of the training queries chooses as well as
the path on all of them: ``rsrank train`` with ``--path-rows N`` against
``--path-rows 0`` on generated sets at MSLR-WEB30K's shape. Its code is
lab/path_rows_study.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
