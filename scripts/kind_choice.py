"""Which kind ``rsrank train --additive --with-linear`` keeps on each fold,
what vali saw and what test says. Its code is lab/kind_choice.py; ``--help``
lists its options."""

from _lab import run

run(__file__)
