"""
From a sparse model to a search engine
======================================

A model trained on raw features (BM25 in tens, PageRank near 1e-6, counts)
keeps its scaling, and :func:`rsrank.deployment.export.to_solr` writes it as a Solr LTR
``LinearModel`` whose normalizers reproduce that scaling: only the features
with a non-zero weight appear, each one a feature the engine computes.
"""

import json

import matplotlib.pyplot as plt

from rsrank import RSRank
from rsrank.deployment.export import to_solr, to_vespa
from rsrank.reading.synthetic import make_raw_features

data = make_raw_features(n_queries=120, random_state=0)
model = RSRank(l1=0.05, max_iter=80, random_state=0).fit(data.X, data.y, qid=data.qid)
model.set_feature_names(data.feature_names)
print(json.dumps(to_solr(model), indent=1)[:600], "...")
print(to_vespa(model))

names, weights = zip(*model.selected_features())
figure, axes = plt.subplots(figsize=(5, 2.5))
axes.barh(names, weights)
axes.set_xlabel("weight on the standardized feature")
figure.tight_layout()
