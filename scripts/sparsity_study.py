"""How sparse ``rsrank train``'s selection gets on OHSUMED, by selection
variant, at ``--within 0.01`` (the default) and ``0.03`` (the sparse recipe:
the finer path and ``--vali-cv 3``). Its code is lab/sparsity_study.py;
``--help`` lists its options."""

from _lab import run

run(__file__)
