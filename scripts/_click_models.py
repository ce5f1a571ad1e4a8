"""The click logs of the studies of learning from clicks (``click_study.py``,
``click_forms.py``): the logs by name (``LOGS``, drawn by
:func:`rsrank.synthetic.simulate_clicks`, and ``OTHER_LOGS``), the
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

Both show the production ranker's top 10 of each query (ties by row
order) to every session, as RSRank's simulator does, and return its Bunch
(``session, qid, docid, position, click, examination``; ``examination``
relative to the top, None for the DCM).
"""

import numpy as np
from sklearn.utils import Bunch

from _datasets import FIXED_TEST

from rsrank.synthetic import simulate_clicks

#: Hu et al.'s examination of positions 1 to 10 and click chance of grades 0 to 4
HU2019_EXAMINATION = np.array([0.68, 0.61, 0.48, 0.34, 0.28, 0.20, 0.11, 0.10, 0.08, 0.06])
HU2019_CLICK = np.array([0.1, 0.16, 0.28, 0.52, 1.0])


def grade_click_chance(y, max_grade):
    """Hu et al.'s click chance of each grade, read at ``4 y / max_grade``
    (rounded) so that a set's top grade always draws its click."""
    index = np.rint(4.0 * np.clip(y, 0, max_grade) / max(max_grade, 1)).astype(int)
    return HU2019_CLICK[index]


def other_clicks(y, qid, scores, *, model, n_sessions=100, eta=1.0, persistence=0.5,
                 max_grade=None, top_k=10, random_state=0):
    """A click log of ``model`` (``"hu2019"`` or ``"dcm"``) over the top
    ``top_k`` of ``scores`` in every query of ``qid``."""
    y, qid, scores = np.asarray(y), np.asarray(qid), np.asarray(scores, dtype=np.float64)
    max_grade = int(y.max()) if max_grade is None else max_grade
    rng = np.random.default_rng(random_state)
    seen = HU2019_EXAMINATION[:top_k] ** eta
    out = {name: [] for name in ("session", "qid", "docid", "position", "click")}
    first = 0
    for query in np.unique(qid):
        rows = np.flatnonzero(qid == query)
        shown = rows[np.lexsort((rows, -scores[rows]))][:top_k]
        k = len(shown)
        chance = grade_click_chance(y[shown], max_grade)
        attracted = rng.uniform(size=(n_sessions, k)) < chance
        if model == "hu2019":
            clicks = attracted & (rng.uniform(size=(n_sessions, k)) < seen[:k])
        elif model == "dcm":
            clicks = np.zeros_like(attracted)
            reading = np.ones(n_sessions, dtype=bool)
            stays = rng.uniform(size=(n_sessions, k)) < persistence
            for p in range(k):
                clicks[:, p] = reading & attracted[:, p]
                reading &= ~clicks[:, p] | stays[:, p]
        else:
            raise ValueError(f"unknown click model {model!r}")
        out["session"].append(np.repeat(np.arange(first, first + n_sessions), k))
        out["qid"].append(np.full(n_sessions * k, query))
        out["docid"].append(np.tile(shown, n_sessions))
        out["position"].append(np.tile(np.arange(1, k + 1), n_sessions))
        out["click"].append(clicks.astype(np.int64).ravel())
        first += n_sessions
    log = Bunch(**{name: np.concatenate(parts) for name, parts in out.items()})
    log.examination = seen / seen[0] if model == "hu2019" else None
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


def make_logs(fold, config, seed):
    ranker = (lambdamart_ranker if config.get("ranker") == "lambdamart"
              else production_ranker)(fold["train"], seed)
    max_grade = int(fold["train"][1].max())
    logs = {}
    for offset, split in enumerate(("train", "vali")):
        X, y, qid = fold[split][:3]
        if config["model"] in OTHER_MODELS:
            logs[split] = other_clicks(y, qid, ranker(X), model=config["model"],
                                       n_sessions=config["sessions"],
                                       eta=config.get("eta", 1.0), max_grade=max_grade,
                                       random_state=seed * 7 + offset)
            continue
        logs[split] = simulate_clicks(y, qid, ranker(X), n_sessions=config["sessions"],
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
OTHER_MODELS = ("hu2019", "dcm")
OTHER_LOGS = {
    "hu2019": {"model": "hu2019", "eta": 1.0, "sessions": 100, "ranker": "lambdamart"},
    "dcm": {"model": "dcm", "sessions": 100},
    "pbm-1-noisy": {"model": "position", "eta": 1.0, "sessions": 100, "noise": 0.3},
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
