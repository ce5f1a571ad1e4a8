"""Deployment: a fitted model saved and loaded
(:mod:`~rsrank.deployment.persistence`), exported to Solr,
Elasticsearch/OpenSearch LTR and Vespa (:mod:`~rsrank.deployment.export`,
an additive model's shapes as trees: :mod:`~rsrank.deployment.trees`),
scored as each engine does (:mod:`~rsrank.deployment.engines`), and drawn
(:mod:`~rsrank.deployment.plotting`)."""
