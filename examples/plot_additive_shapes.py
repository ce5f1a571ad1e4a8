"""
Additive models: one step function per feature
==============================================

``RSRank(additive=True)`` learns a step function per feature, with whole
features in or out under the group penalty, on data whose relevance bends
with its features (:func:`rsrank.reading.synthetic.make_nonlinear`). Each shape is
a sum of depth-1 trees, so it exports exactly to every engine.
"""

from rsrank import RSRank
from rsrank.deployment.plotting import plot_shapes
from rsrank.reading.synthetic import make_nonlinear

data = make_nonlinear(n_queries=150, random_state=0)
train = data.qid < 110
model = RSRank(additive=True, l1_group=0.1, max_iter=60, random_state=0)
model.fit(data.X[train], data.y[train], qid=data.qid[train])
print("kept:", ", ".join(f"{name} (spread {spread:.2f})"
                         for name, spread in model.selected_features()))
print(f"test NDCG@10 {model.score(data.X[~train], data.y[~train], qid=data.qid[~train]):.4f}")
figure = plot_shapes(model)
