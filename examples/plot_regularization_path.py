"""
The regularization path and the sparse selection
=================================================

:class:`rsrank.RSRankCV` walks ``rsrank train``'s path on the bundled data's
first fold: L1 strengths as fractions of ``l1_max`` (the strength that keeps
every weight at zero), strong to weak, for both pair weightings, each point
judged on vali. The selection keeps the sparsest point within 1% of the best
vali NDCG@10 (``within=0.01``); ``within=0.03`` takes the sparse recipe.
"""

import matplotlib.pyplot as plt

from rsrank import RSRankCV, load_letor_fold
from rsrank.reading.datasets import bundled_data_path

fold = load_letor_fold(bundled_data_path(), 1)
train, vali = fold.train, fold.vali
model = RSRankCV(max_iter=100).fit(train[0], train[1], qid=train[2], eval_set=vali)

figure, axes = plt.subplots(figsize=(6, 3.5))
for weighting, marker in (("unit", "o"), ("delta_ndcg", "s")):
    points = [p for p in model.path_ if p["params"]["pair_weight"] == weighting]
    axes.plot([p["n_nonzero"] for p in points], [p["vali_score"] for p in points],
              marker=marker, label=f"pair_weight={weighting}")
chosen = model.path_[model.best_index_]
axes.scatter([chosen["n_nonzero"]], [chosen["vali_score"]], s=160, facecolors="none",
             edgecolors="black", label="kept (sparsest within 1%)")
axes.set_xlabel("features with a non-zero weight")
axes.set_ylabel("vali NDCG@10")
axes.legend(loc="lower right")
figure.tight_layout()

print(f"kept {len(model.selected_features())} of {train[0].shape[1]} features at "
      f"l1_ratio={model.l1_ratio_}; test NDCG@10 "
      f"{model.score(fold.test[0], fold.test[1], qid=fold.test[2]):.4f}")
