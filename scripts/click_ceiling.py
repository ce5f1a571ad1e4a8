"""How much of the gap from naive click training to the better skyline the
labels of the shown documents themselves close, beside the debiased path, read
from the click studies' committed results (``click_study.py``'s JSON files;
nothing is trained). Its code is lab/click_ceiling.py; ``--help`` lists its
options."""

from _lab import run

run(__file__)
