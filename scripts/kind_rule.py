"""How ``rsrank train --additive --with-linear`` chooses between the linear
model and the shapes: the best vali score across both kinds, or the one-
standard-error rule between kinds
(:func:`rsrank.evaluation.experiments.choose_fit`). Its code is
lab/kind_rule.py; ``--help`` lists its options."""

from _lab import run

run(__file__)
