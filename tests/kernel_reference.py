"""What the kernels' unit tests build their inputs and references from: a
discount table cut at ``k`` and a query's ``1 / ideal DCG``."""

import numpy as np

from rsrank import _kernels as K
from rsrank.evaluation import metrics as M


def discount_table(n, discount, k):
    """The discount of positions 0 to ``n - 1`` (0 from the cut-off ``k``
    on), and the number of positions that carry weight."""
    table = np.zeros(n)
    cut = n if k is None else min(k, n)
    table[:cut] = M.discount_values(np.arange(1, cut + 1), discount)
    return table, cut


def inv_ideal_of(gains, table):
    """One query's ``1 / ideal DCG`` (0 without a relevant document)."""
    ideal = K.ideal_dcg(gains, np.array([0, len(gains)]), table)[0]
    return 1.0 / ideal if ideal > 0 else 0.0
