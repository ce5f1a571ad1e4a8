"""The datasets of the studies across data (``recipe_study.py``,
``kind_rule.py``): LETOR's five folds of each, train / vali / test.

The real folds are OHSUMED, the bundled data and LightGBM's example (a
seeded 20% of its training queries as vali); the generated sets
(:func:`make_set`) differ the way real data does: raw feature scales, long
lists with few relevant documents, many grades, heavy tails with redundant
copies and per-query scales, few queries; the ``nonlinear`` ones
(:func:`rsrank.reading.synthetic.make_nonlinear`) are for additive models. Real
data gives the same folds for every seed; a generated set is drawn again
for every seed.
"""

from pathlib import Path

import numpy as np

from rsrank.reading.datasets import bundled_data_path, find_folds, load_letor, load_letor_fold
from rsrank.reading.synthetic import make_nonlinear, make_raw_features


def make_set(seed, *, n_queries=100, docs=(20, 120), n_features=40, n_informative=8,
             grades=3, relevant=(0.1, 0.3), heavy=0.0, redundant=0, query_scale=False,
             raw_scales=False, noise=1.0, query_minmax=False, grade_decay=None):
    """Queries whose labels follow a sparse score of transformed features.

    Columns are Gaussian; a share ``heavy`` of them is log-normal (the score
    sees their log), ``redundant`` are noisy copies of informative ones.
    ``query_scale`` multiplies every column by a per-query factor (as BM25
    moves with query length); ``raw_scales`` multiplies each column by a
    constant between 1e-6 and 1e4 (as raw engine features). Within a query,
    the top share ``relevant`` (drawn per query) of the latent score is
    relevant, split evenly into ``grades - 1`` grades above 0, or with
    ``grade_decay`` each grade above 1 holding that fraction of the one
    below it (few documents at the top grades). ``query_minmax`` scales
    every column to [0, 1] within each query (LETOR's QueryLevelNorm, as
    web-track sets ship).
    """
    rng = np.random.default_rng(seed)
    sizes = np.floor(np.exp(rng.uniform(np.log(docs[0]), np.log(docs[1] + 1),
                                        size=n_queries))).astype(int)
    n = int(sizes.sum())
    qid = np.repeat(np.arange(1, n_queries + 1), sizes)
    Z = rng.standard_normal((n, n_features))
    query_shift = rng.normal(scale=0.7, size=(n_queries, n_features))
    Z += query_shift[qid - 1]
    columns = rng.permutation(n_features)
    support = columns[:n_informative]
    coef = np.zeros(n_features)
    coef[support] = rng.uniform(0.5, 2.0, n_informative) * rng.choice([-1, 1], n_informative,
                                                                       p=[0.25, 0.75])
    latent = Z @ coef + noise * rng.standard_normal(n)
    copies = columns[n_informative:n_informative + redundant]
    for column in copies:
        Z[:, column] = Z[:, rng.choice(support)] + 0.5 * rng.standard_normal(n)
    X = Z.copy()
    is_heavy = rng.uniform(size=n_features) < heavy
    X[:, is_heavy] = np.exp(1.5 * Z[:, is_heavy])
    if query_scale:
        X *= np.exp(rng.normal(scale=0.5, size=(n_queries, n_features)))[qid - 1]
    if raw_scales:
        X *= 10.0 ** rng.uniform(-6, 4, size=n_features)
    y = np.zeros(n, dtype=np.int64)
    start = 0
    for size in sizes:
        block = latent[start:start + size]
        share = rng.uniform(*relevant)
        n_rel = max(1, int(round(share * size)))
        order = np.argsort(-block, kind="stable")
        top = order[:n_rel]
        if grade_decay is None:
            y[start + top] = 1 + (grades - 1) * np.arange(n_rel)[::-1] // max(n_rel, 1)
        else:  # shares 1, d, d^2, ... from grade 1 up, the top grades at the top
            shares = grade_decay ** np.arange(grades - 1)
            cuts = np.cumsum(shares[::-1] / shares.sum())  # from the top grade down
            place = (np.arange(n_rel) + 0.5) / n_rel
            y[start + top] = grades - 1 - np.searchsorted(cuts, place)
        start += size
    if query_minmax:
        for lo, hi in zip(np.r_[0, np.cumsum(sizes)[:-1]], np.cumsum(sizes)):
            block = X[lo:hi]
            span = np.ptp(block, axis=0)
            X[lo:hi] = (block - block.min(axis=0)) / np.where(span > 0, span, 1.0)
    return X, y, qid


GENERATED = {
    "raw": None,  # rsrank.reading.synthetic.make_raw_features
    "long-sparse": dict(n_queries=60, docs=(300, 1000), n_features=42, relevant=(0.005, 0.03),
                        heavy=0.3, redundant=6),
    "long-noisy": dict(n_queries=60, docs=(300, 1000), n_features=42, relevant=(0.005, 0.03),
                       heavy=0.3, redundant=6, noise=4.0),
    "many-grades": dict(n_queries=120, grades=5, relevant=(0.2, 0.5)),
    "heavy-redundant": dict(n_queries=120, heavy=0.5, redundant=10, query_scale=True,
                            raw_scales=True),
    "few-queries": dict(n_queries=30, docs=(20, 80)),
    # few queries with long lists: 61 queries (36 train, 12-13 vali and test per
    # fold) of about 450 documents, 42 features scaled to [0, 1] within each
    # query, five grades with about 82% of the documents at 0 and under 2% at
    # each of the top two (a TREC web-track shape)
    "web-track": dict(n_queries=61, docs=(300, 700), n_features=42, grades=5,
                      relevant=(0.1, 0.26), grade_decay=0.35, heavy=0.3, redundant=6,
                      noise=3.0, query_minmax=True),
    # rsrank.reading.synthetic.make_nonlinear: four non-linear effects and noise features
    "nonlinear": dict(n_queries=150),
    "nonlinear-noisy": dict(n_queries=150, n_noise=36, noise=1.5),
}


def five_folds(X, y, qid):
    """LETOR's rotation over five parts of the queries: fold k tests part k,
    validates on part k+1 and trains on the other three."""
    queries = np.unique(qid)
    parts = np.array_split(queries, 5)
    folds = []
    for k in range(5):
        role = {}
        for split, offset in (("test", 0), ("vali", 1)):
            role[split] = np.isin(qid, parts[(k + offset) % 5])
        role["train"] = ~(role["test"] | role["vali"])
        folds.append({split: (X[mask], y[mask], qid[mask]) for split, mask in role.items()})
    return folds


def real_folds(root):
    folds = []
    for k in find_folds(root):
        fold = load_letor_fold(root, k, dtype=np.float32, dense="auto")
        folds.append({split: fold[split] for split in ("train", "vali", "test")})
    return folds


def lightgbm_folds(root, seed):
    train = load_letor(Path(root) / "rank.train.gz", n_features=300)
    test = load_letor(Path(root) / "rank.test.gz", n_features=300)
    X, y, qid = train
    queries = np.unique(qid)
    held = np.random.default_rng(seed).permutation(queries)[:int(round(0.2 * len(queries)))]
    vali = np.isin(qid, held)
    return [{"train": (X[~vali], y[~vali], qid[~vali]), "vali": (X[vali], y[vali], qid[vali]),
             "test": test}]


def by_query(split):
    """Rows sorted by qid, as XGBoost and LightGBM need (stable: each
    query keeps its file order, which LETOR's ties follow)."""
    X, y, qid = split[:3]
    order = np.argsort(qid, kind="stable")
    return X[order], y[order], qid[order]


def dataset_folds(name, seed, data_root):
    return [{split: by_query(part) for split, part in fold.items()}
            for fold in _dataset_folds(name, seed, data_root)]


def _dataset_folds(name, seed, data_root):
    if name == "ohsumed":
        return real_folds(Path(data_root) / "OHSUMED")
    if name == "bundled":
        return real_folds(bundled_data_path())
    if name == "lightgbm":
        return lightgbm_folds(Path(data_root) / "LightGBM-lambdarank-example", seed)
    if name == "raw":
        data = make_raw_features(n_queries=150, random_state=seed)
        return five_folds(data.X, data.y, data.qid)
    if name.startswith("nonlinear"):
        data = make_nonlinear(**GENERATED[name], random_state=seed)
        return five_folds(data.X, data.y, data.qid)
    return five_folds(*make_set(1000 + seed, **GENERATED[name]))


#: the sets of the defaults' study (``--datasets`` default); the non-linear
#: ones are for additive models
DATASETS = ["ohsumed", "bundled", "lightgbm",
            *[name for name in GENERATED if not name.startswith("nonlinear")]]


#: the sets whose test queries are the same for every seed (their folds, or
#: their test file, are fixed): a paired test over them takes each query
#: once, its values averaged over the seeds; counting a query once per seed
#: would treat copies of one value as independent (OHSUMED's folds give the
#: same result for every seed, and three copies shrink p by far)
FIXED_TEST = {"ohsumed", "bundled", "lightgbm"}
