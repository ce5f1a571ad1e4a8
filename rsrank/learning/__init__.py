"""Learning: the ranking objective (NDCG's swap-weighted pairs under the
modified Huber loss, :mod:`~rsrank.learning.objective`), the L1 penalty
by truncated gradient (:mod:`~rsrank.learning.penalty`), the solver and
the fit assembled from them (:mod:`~rsrank.learning.solver`,
:mod:`~rsrank.learning.fitting`), the model kinds (linear, additive,
pairs: :mod:`~rsrank.learning.kinds`, :mod:`~rsrank.learning.model`,
:mod:`~rsrank.learning.binning`, :mod:`~rsrank.learning.interactions`),
the regularization path and its selection, and ``rsrank train``'s recipe
(:mod:`~rsrank.learning.recipe`)."""
