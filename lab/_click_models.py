"""The click logs of the studies of learning from clicks (``click_study.py``,
``click_forms.py``): the logs by name (``LOGS``, drawn by
:func:`rsrank.reading.synthetic.simulate_clicks`, and ``OTHER_LOGS``), the
production rankers that show them, and simulators that RSRank's own is
not: a method tuned on one simulator must hold under others.

* ``"hu2019"``: the position-based model of Hu et al. (Unbiased
  LambdaMART, WWW 2019), which XGBoost's click simulation also follows:
  examination of positions 1 to 10 from their measured table, raised to
  ``eta`` (the top examined 68% of the time, not always), and a click
  chance per grade from their table (0.1, 0.16, 0.28, 0.52, 1.0 for grades
  0 to 4; a set with fewer grades reads the table at the same share of its
  top grade).
* ``"dcm"``: the dependent click model (Guo, Liu and Wang, WSDM 2009):
  users read from the top, click a read document with its grade's chance,
  and after a click go on reading with chance ``persistence`` (without a
  click they always go on). Several clicks per session, and a click's
  chance depends on the clicks above it, which no position-based model
  allows.

* ``"baidu"``: a position-based model whose examination of positions 1 to
  10 is the curve measured on a real engine's logs: Baidu-ULTR's, as Hager
  et al. (SIGIR 2024) estimate it by global all-pairs intervention
  harvesting (published with their reproducibility code), and Hu et al.'s
  click chance per grade.
* ``"trust"``: trust bias (Agarwal et al., WWW 2019): an examined relevant
  document is clicked with the chance ``1 - (k + 1) / 100`` at position
  ``k``, an examined non-relevant one with ``0.65 / k`` (the affine click
  model of Vardasbi et al., SIGIR 2020, with their parameters), examination
  ``1 / k``; a document is relevant with its grade's chance of Hu et al.'s
  table.
* ``sessions="long-tail"`` (any model): sessions per query drawn from a
  Zipf law of exponent 1.6, at most 200, so that most queries have 1 to 5
  sessions and a few have many, as real logs do.

All show the production ranker's top 10 of each query (ties by row
order) to every session, as RSRank's simulator does, and return its Bunch
(``session, qid, docid, position, click, examination``; ``examination``
relative to the top, None for the DCM).
"""

import numpy as np
from sklearn.utils import Bunch

from _datasets import FIXED_TEST, dataset_folds

from rsrank.clicks import ClickLog
from rsrank.clicks.splits import LogPart, read_clicks
from rsrank.reading.synthetic import simulate_clicks

#: Hu et al.'s examination of positions 1 to 10 and click chance of grades 0 to 4
HU2019_EXAMINATION = np.array([0.68, 0.61, 0.48, 0.34, 0.28, 0.20, 0.11, 0.10, 0.08, 0.06])
HU2019_CLICK = np.array([0.1, 0.16, 0.28, 0.52, 1.0])
#: Baidu-ULTR's examination of positions 1 to 10 relative to the top (Hager et al.,
#: SIGIR 2024, global all-pairs estimate)
BAIDU_EXAMINATION = np.array([1.0, 0.6738, 0.4145, 0.2932, 0.2079, 0.1714, 0.1363, 0.1166,
                              0.0838, 0.0579])


def trust_click_chance(relevant, top_k):
    """Trust bias's click chance of an examined document at positions 1 to
    ``top_k``: ``1 - (k + 1) / 100`` if relevant, ``0.65 / k`` if not."""
    k = np.arange(1, top_k + 1)
    return np.where(relevant, 1 - (k + 1) / 100, 0.65 / k)


def session_counts(n_queries, sessions, rng):
    """Sessions per query: a number, or ``"long-tail"`` (Zipf 1.6, at most 200)."""
    if sessions == "long-tail":
        return np.minimum(rng.zipf(1.6, size=n_queries), 200)
    return np.full(n_queries, int(sessions))


def grade_click_chance(y, max_grade):
    """Hu et al.'s click chance of each grade, read at ``4 y / max_grade``
    (rounded) so that a set's top grade always draws its click."""
    index = np.rint(4.0 * np.clip(y, 0, max_grade) / max(max_grade, 1)).astype(int)
    return HU2019_CLICK[index]


def other_clicks(y, qid, scores, *, model, n_sessions=100, eta=1.0, persistence=0.5,
                 max_grade=None, top_k=10, random_state=0):
    """A click log of ``model`` (``"hu2019"``, ``"dcm"``, ``"baidu"`` or
    ``"trust"``) over the top ``top_k`` of ``scores`` in every query of
    ``qid``; ``n_sessions`` one number or one per query (``np.unique``
    order)."""
    y, qid, scores = np.asarray(y), np.asarray(qid), np.asarray(scores, dtype=np.float64)
    max_grade = int(y.max()) if max_grade is None else max_grade
    rng = np.random.default_rng(random_state)
    seen = {"hu2019": HU2019_EXAMINATION[:top_k] ** eta, "baidu": BAIDU_EXAMINATION[:top_k],
            "trust": 1.0 / np.arange(1, top_k + 1)}.get(model)
    out = {name: [] for name in ("session", "qid", "docid", "position", "click")}
    first = 0
    queries = np.unique(qid)
    counts = np.broadcast_to(np.asarray(n_sessions, dtype=np.int64), queries.shape)
    for query, count in zip(queries, counts):
        rows = np.flatnonzero(qid == query)
        shown = rows[np.lexsort((rows, -scores[rows]))][:top_k]
        k = len(shown)
        chance = grade_click_chance(y[shown], max_grade)
        attracted = rng.uniform(size=(count, k)) < chance
        if model in ("hu2019", "baidu"):
            clicks = attracted & (rng.uniform(size=(count, k)) < seen[:k])
        elif model == "trust":  # attracted: relevant in this session's eyes
            click = trust_click_chance(attracted, k)
            clicks = ((rng.uniform(size=(count, k)) < seen[:k])
                      & (rng.uniform(size=(count, k)) < click))
        elif model == "dcm":
            clicks = np.zeros_like(attracted)
            reading = np.ones(count, dtype=bool)
            stays = rng.uniform(size=(count, k)) < persistence
            for p in range(k):
                clicks[:, p] = reading & attracted[:, p]
                reading &= ~clicks[:, p] | stays[:, p]
        else:
            raise ValueError(f"unknown click model {model!r}")
        out["session"].append(np.repeat(np.arange(first, first + count), k))
        out["qid"].append(np.full(count * k, query))
        out["docid"].append(np.tile(shown, count))
        out["position"].append(np.tile(np.arange(1, k + 1), count))
        out["click"].append(clicks.astype(np.int64).ravel())
        first += count
    log = Bunch(**{name: np.concatenate(parts) for name, parts in out.items()})
    log.examination = seen / seen[0] if seen is not None else None
    return log


def lambdamart_ranker(train, seed, share=0.1):
    """A production ranker of another kind than least squares: LightGBM's
    lambdarank on the labels of a seeded ``share`` of the training queries
    (at least three), as XGBoost's click simulation trains its own."""
    import lightgbm

    X, y, qid = train[:3]
    rng = np.random.default_rng(seed)
    queries = np.unique(qid)
    chosen = np.isin(qid, rng.choice(queries, max(3, int(share * len(queries))), replace=False))
    order = np.argsort(qid[chosen], kind="stable")
    Xc = np.asarray(X[chosen], dtype=np.float64)[order]
    yc, qc = y[chosen][order], qid[chosen][order]
    _, sizes = np.unique(qc, return_counts=True)
    model = lightgbm.LGBMRanker(n_estimators=100, random_state=seed, verbose=-1,
                                min_child_samples=5)
    model.fit(Xc, yc, group=sizes)
    return lambda Z: model.predict(np.asarray(Z, dtype=np.float64))


def production_ranker(train, seed, n_queries=3):
    """Least squares on the labels of ``n_queries`` random training queries."""
    X, y, qid = train[:3]
    rng = np.random.default_rng(seed)
    chosen = np.isin(qid, rng.choice(np.unique(qid), n_queries, replace=False))
    A = np.c_[np.nan_to_num(np.asarray(X[chosen], dtype=np.float64)), np.ones(chosen.sum())]
    w = np.linalg.lstsq(A, y[chosen].astype(np.float64), rcond=None)[0]
    return lambda Z: np.nan_to_num(np.asarray(Z, dtype=np.float64)) @ w[:-1]


def random_ranker(train, seed):
    """A production ranker that knows nothing: a seeded random direction in
    the feature space (its top is not better than the rest)."""
    w = np.random.default_rng(seed + 99).normal(size=train[0].shape[1])
    return lambda Z: np.nan_to_num(np.asarray(Z, dtype=np.float64)) @ w


RANKERS = {"lambdamart": lambdamart_ranker, "random": random_ranker}


def make_logs(fold, config, seed):
    ranker = RANKERS.get(config.get("ranker"), production_ranker)(fold["train"], seed)
    max_grade = int(fold["train"][1].max())
    logs = {}
    for offset, split in enumerate(("train", "vali")):
        X, y, qid = fold[split][:3]
        sessions = session_counts(len(np.unique(qid)), config["sessions"],
                                  np.random.default_rng(seed * 11 + offset))
        if config["model"] in OTHER_MODELS:
            logs[split] = other_clicks(y, qid, ranker(X), model=config["model"],
                                       n_sessions=sessions,
                                       eta=config.get("eta", 1.0), max_grade=max_grade,
                                       random_state=seed * 7 + offset)
            continue
        logs[split] = simulate_clicks(y, qid, ranker(X), n_sessions=sessions,
                                      click_model=config["model"], eta=config.get("eta", 1.0),
                                      noise=config.get("noise", 0.1),
                                      random_state=seed * 7 + offset)
    return logs


LOGS = {
    "pbm-0.5": {"model": "position", "eta": 0.5, "sessions": 100},
    "pbm-1": {"model": "position", "eta": 1.0, "sessions": 100},
    "pbm-2": {"model": "position", "eta": 2.0, "sessions": 100},
    "cascade": {"model": "cascade", "sessions": 100},
    "pbm-1-few": {"model": "position", "eta": 1.0, "sessions": 10},
    "pbm-1-many": {"model": "position", "eta": 1.0, "sessions": 200},
}

#: logs of other simulators, rankers and noise than LOGS' (the simulators above),
#: chosen by name with ``--logs``: Hu et al.'s position-based model under a LightGBM
#: production ranker, the dependent click model, and three times the click noise
OTHER_MODELS = ("hu2019", "dcm", "baidu", "trust")
OTHER_LOGS = {
    "hu2019": {"model": "hu2019", "eta": 1.0, "sessions": 100, "ranker": "lambdamart"},
    "dcm": {"model": "dcm", "sessions": 100},
    "pbm-1-noisy": {"model": "position", "eta": 1.0, "sessions": 100, "noise": 0.3},
    "baidu": {"model": "baidu", "sessions": 100},
    "trust": {"model": "trust", "sessions": 100},
    "pbm-1-long-tail": {"model": "position", "eta": 1.0, "sessions": "long-tail"},
    "baidu-long-tail": {"model": "baidu", "sessions": "long-tail"},
    "pbm-1-random-ranker": {"model": "position", "eta": 1.0, "sessions": 100,
                            "ranker": "random"},
    "dcm-random-ranker": {"model": "dcm", "sessions": 100, "ranker": "random"},
}


def pooled(runs, method):
    """Per-query test values of a method over a group's runs: folds side by
    side, and for a set whose test queries are the same for every seed
    (:data:`FIXED_TEST`) each query's mean over the seeds."""
    by_fold = {}
    for run in runs:
        entry = run["methods"].get(method)
        if entry is None:
            return None
        by_fold.setdefault(run["fold"], []).append(np.asarray(entry["test"], dtype=float))
    parts = []
    for values in by_fold.values():
        if runs[0]["dataset"] in FIXED_TEST:
            parts.append(np.mean(values, axis=0))
        else:
            parts.extend(values)
    return np.nan_to_num(np.concatenate(parts))


#: ``unshown`` of :func:`rsrank.clicks.splits.read_clicks` in every reading
#: of a study (``click_study.py --unshown``)
UNSHOWN = 0.0


def read_logs(fold, logs, debias):
    """The fold's training and vali logs read as ``rsrank train --clicks
    --debias DEBIAS`` reads them (:func:`rsrank.clicks.splits.read_clicks`:
    the training log's curve reads both; :data:`UNSHOWN`)."""
    parts = {}
    for split in ("train", "vali"):
        sim = logs[split]
        log = ClickLog.from_sessions(sim.session, sim.qid, sim.docid, sim.position, sim.click)
        X, _, qid = fold[split][:3]
        parts[split] = LogPart(log, log.docid.astype(np.int64), X, np.asarray(qid))
    return read_clicks(parts["train"], parts["vali"], debias=debias, vali_fraction=None,
                       unshown=UNSHOWN)


def _splits(read, reading):
    splits = {split: tuple(getattr(read, split)[reading][:3]) for split in ("train", "vali")}
    return splits, {split: getattr(read, split)[reading][3] for split in ("train", "vali")}


def plain_splits(fold, logs):
    """``rsrank train --debias off``'s train and vali: each session a query,
    its clicks the labels (sessions alike one query, weighted), and their
    query options."""
    return _splits(read_logs(fold, logs, "off"), "off")


def debiased_splits(fold, logs):
    """The debiased path's train and vali, their query options (and under
    ``"judge"`` the vali log's documents graded by their click chance, on
    which ``--debias auto`` compares), vali's shown documents with their
    expert labels (to judge the judge, never to select) and the curve."""
    read = read_logs(fold, logs, "on")
    splits, options = _splits(read, "on")
    return (splits, {**options, "judge": read.judge}, shown(fold["vali"], logs["vali"]),
            read.examination)


def shown(split, sim):
    rows = np.unique(sim.docid)
    X, y, qid = split[:3]
    return X[rows], y[rows], qid[rows]


def dense_folds(dataset, seed, data_root, count):
    """The first ``count`` folds of ``dataset`` (``_datasets.dataset_folds``),
    each split's features dense float64, as the click studies draw logs
    over them."""
    return [{split: (np.asarray(part[0].toarray() if hasattr(part[0], "toarray") else part[0],
                                dtype=np.float64), *part[1:3])
             for split, part in fold.items()}
            for fold in dataset_folds(dataset, seed, data_root)[:count]]
