"""Evaluation: LETOR-exact metrics (:mod:`~rsrank.evaluation.metrics`),
significance tests (:mod:`~rsrank.evaluation.stats`), the LETOR protocol
over folds (:mod:`~rsrank.evaluation.experiments`), searches over
parameters (:mod:`~rsrank.evaluation.model_selection`), and the tables,
run directories and TREC files a run writes."""
