"""What training on a sessions log's preferences costs against training on its
session lists, and what the pair weighting of the path does there. Its code is
lab/click_forms.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
