"""Model selection over queries: scorers, scikit-learn search glue, LETOR's
train/vali/test protocol and the regularization path.

Grid search over queries needs three things from scikit-learn's metadata
routing: the splitter must split by query (``groups`` aliased to ``qid``),
``fit`` must receive the training rows' ``qid`` and the scorer the held-out
rows' ``qid``. :class:`~rsrank.RSRank` requests ``qid`` for ``fit`` and
``score`` by default; :func:`fit_search` and :func:`cross_val_score_by_query`
switch routing on for the call and alias the splitter, so that::

    search = GridSearchCV(RSRank(), {"l1": [0, 0.1, 1]}, cv=GroupKFold(5))
    fit_search(search, X, y, qid)

just works. With routing off, scikit-learn would score each held-out fold as
one big query; ``RSRank.score`` refuses that with an error that says how to
fix it.
"""

import re
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.base import clone
from sklearn.metrics import make_scorer
from sklearn.model_selection import GroupKFold, ParameterGrid, PredefinedSplit, cross_val_score
from sklearn.utils import Bunch

from . import metrics
from .datasets import find_folds, iter_letor_folds, streamed_fold
from .estimator import RSRank
from .querydata import QueryData

__all__ = [
    "make_ndcg_scorer",
    "make_map_scorer",
    "fit_search",
    "cross_val_score_by_query",
    "letor_fold_split",
    "parse_metric",
    "FoldResult",
    "LetorExperiment",
    "run_letor_folds",
    "regularization_path",
    "sparsest_within",
    "experiment_markdown",
    "save_experiment",
    "write_experiment",
]


def _require_qid(qid):
    if qid is None:
        raise ValueError(
            "this ranking scorer needs the held-out rows' qid; enable metadata routing "
            "(sklearn.set_config(enable_metadata_routing=True)) and pass qid=... to the "
            "search's fit, or use rsrank.model_selection.fit_search")
    return qid


def _ndcg_for_scorer(y_true, y_pred, qid=None, *, k=10, **conventions):
    return metrics.mean_ndcg(y_true, y_pred, _require_qid(qid), k, **conventions)


def _map_for_scorer(y_true, y_pred, qid=None, **options):
    return metrics.mean_average_precision(y_true, y_pred, _require_qid(qid), **options)


def make_ndcg_scorer(k=10, *, convention="standard", **conventions):
    """A scikit-learn scorer of mean NDCG@k over the held-out queries.

    It requests ``qid`` through metadata routing. Keywords are those of
    :func:`rsrank.metrics.ndcg_per_query`.

    Examples
    --------
    >>> scoring = {"ndcg@1": make_ndcg_scorer(1), "ndcg@10": make_ndcg_scorer(10)}
    """
    scorer = make_scorer(_ndcg_for_scorer, k=k, convention=convention, **conventions)
    return _requesting_qid(scorer)


def _requesting_qid(scorer):
    # set_score_request is only callable while routing is on; the request it
    # records stays with the scorer.
    with sklearn.config_context(enable_metadata_routing=True):
        return scorer.set_score_request(qid=True)


def make_map_scorer(**options):
    """A scikit-learn scorer of MAP over the held-out queries (requests ``qid``)."""
    return _requesting_qid(make_scorer(_map_for_scorer, **options))


def _query_splitter(cv):
    """A splitter that keeps queries whole, with its groups taken from qid."""
    if cv is None or isinstance(cv, (int, np.integer)):
        cv = GroupKFold(5 if cv is None else int(cv))
    if hasattr(cv, "set_split_request"):
        request = cv.get_metadata_routing().consumes("split", ["groups"])
        if "groups" in request:
            cv = cv.set_split_request(groups="qid")
    return cv


def fit_search(search, X, y, qid, **fit_params):
    """Fit a ``GridSearchCV``/``RandomizedSearchCV`` whose folds split by query.

    Metadata routing is enabled for the call. An integer or missing ``cv``
    becomes ``GroupKFold``; a group splitter gets its ``groups`` from ``qid``;
    ``fit`` receives each training split's qid and the scorers the held-out
    qid. Returns the fitted search.
    """
    with sklearn.config_context(enable_metadata_routing=True):
        search.set_params(cv=_query_splitter(search.cv))
        return search.fit(X, y, qid=qid, **fit_params)


def cross_val_score_by_query(estimator, X, y, qid, *, cv=5, scoring=None, **options):
    """``cross_val_score`` with folds of whole queries and qid routed to fit
    and scoring (mean NDCG@eval_k of :meth:`RSRank.score` by default)."""
    with sklearn.config_context(enable_metadata_routing=True):
        return cross_val_score(estimator, X, y, cv=_query_splitter(cv), scoring=scoring,
                               params={"qid": qid}, **options)


def _stack(blocks):
    if any(sp.issparse(block) for block in blocks):
        return sp.vstack([sp.csr_matrix(block) for block in blocks], format="csr")
    return np.vstack(blocks)


def letor_fold_split(train, vali):
    """Stack LETOR's train and vali splits for scikit-learn's searches.

    Parameters
    ----------
    train, vali : tuple (X, y, qid)

    Returns
    -------
    X, y, qid, cv
        The stacked data and a ``PredefinedSplit`` whose single split trains
        on the train rows and scores on the vali rows. Use it with
        ``refit=False`` to keep LETOR's protocol (the selected model is
        trained on train only).
    """
    shared = np.intersect1d(np.unique(train[2]), np.unique(vali[2]))
    if len(shared):
        raise ValueError(f"train and vali share {len(shared)} qid values (for example "
                         f"{shared[0]}); a query must be in one split only")
    if train[0].shape[1] != vali[0].shape[1]:
        raise ValueError(f"train has {train[0].shape[1]} features but vali has "
                         f"{vali[0].shape[1]}")
    X = _stack([train[0], vali[0]])
    y = np.concatenate([train[1], vali[1]])
    qid = np.concatenate([train[2], vali[2]])
    test_fold = np.r_[np.full(len(train[1]), -1), np.zeros(len(vali[1]), dtype=int)]
    return X, y, qid, PredefinedSplit(test_fold)


_METRIC = re.compile(r"^(ndcg|p|precision)@(\d+)$|^(map)$")


def parse_metric(name):
    """``"ndcg@10"``, ``"p@5"`` or ``"map"`` -> ``(kind, k)``."""
    match = _METRIC.match(name.strip().lower())
    if match is None:
        raise ValueError(f"unknown metric {name!r}; expected ndcg@K, p@K or map")
    if match.group(3):
        return "map", None
    kind = "ndcg" if match.group(1) == "ndcg" else "p"
    return kind, int(match.group(2))


def _metric_value(name, y, scores, qid, convention):
    kind, k = parse_metric(name)
    if kind == "ndcg":
        return metrics.mean_ndcg(y, scores, qid, k, convention=convention)
    if kind == "p":
        return metrics.mean_precision(y, scores, qid, k,
                                      short_list=metrics.precision_short_list(convention))
    return metrics.mean_average_precision(y, scores, qid)


# -- LETOR's protocol ----------------------------------------------------------


@dataclass
class FoldResult:
    """One fold: the model selected on vali and its test evaluation."""

    fold: int
    params: dict
    vali_score: float
    test: dict
    n_nonzero: int
    model: object
    test_scores: np.ndarray
    grid: list = field(default_factory=list)
    fit_seconds: float = 0.0
    evaluated_on: str = "test"
    seed: int = None  # the estimator's random_state when run_letor_folds set it
    per_query: dict = None  # metrics.letor_per_query of the evaluated split

    @property
    def name(self):
        """``Fold3``, or ``Fold3.seed1`` for one seed of several."""
        return f"Fold{self.fold}" + ("" if self.seed is None else f".seed{self.seed}")


@dataclass
class LetorExperiment:
    """Per-fold results and their mean and standard deviation over folds."""

    folds: list
    select: str
    convention: str
    within: float = 0.0

    def metric_names(self):
        return list(self.folds[0].test)

    def seeds(self):
        """The seeds run, in order (``[None]`` for the estimator's own)."""
        return list(dict.fromkeys(f.seed for f in self.folds))

    def _value(self, result, name):
        return result.n_nonzero if name == "n_nonzero" else result.test[name]

    def summary(self):
        """``{metric: (mean, std)}`` over every fold and seed, plus
        ``n_nonzero``."""
        out = {}
        for name in self.metric_names() + ["n_nonzero"]:
            values = np.array([self._value(f, name) for f in self.folds], dtype=float)
            out[name] = (float(values.mean()), float(values.std()))
        return out

    def seed_summary(self):
        """``{metric: (mean, std)}`` of each seed's mean over folds: how far
        the headline number moves with the seed."""
        out = {}
        for name in self.metric_names() + ["n_nonzero"]:
            means = np.array([np.mean([self._value(f, name) for f in self.folds
                                       if f.seed == seed]) for seed in self.seeds()])
            out[name] = (float(means.mean()), float(means.std()))
        return out

    def to_dict(self):
        document = {
            "select": self.select,
            "within": self.within,
            "convention": self.convention,
            "seeds": self.seeds(),
            "folds": [
                {"fold": f.fold, "seed": f.seed, "params": f.params,
                 "vali_score": f.vali_score, "evaluated_on": f.evaluated_on,
                 "test": f.test, "n_nonzero": f.n_nonzero, "fit_seconds": f.fit_seconds,
                 "selected_features": [[name, weight]
                                       for name, weight in f.model.selected_features()],
                 "grid": f.grid, "best_iteration": getattr(f.model, "best_iteration_", None),
                 "per_query": _json_per_query(f.per_query)}
                for f in self.folds
            ],
            "mean": {name: mean for name, (mean, _) in self.summary().items()},
            "std": {name: std for name, (_, std) in self.summary().items()},
        }
        if len(self.seeds()) > 1:
            document["seed_std"] = {name: std for name, (_, std)
                                    in self.seed_summary().items()}
        return document


def _json_per_query(values):
    """Per-query arrays as JSON lists (NaN, a query a convention skips, as null)."""
    if values is None:
        return None
    out = {}
    for name, array in values.items():
        array = np.asarray(array)
        if array.dtype.kind == "f":
            out[name] = [None if np.isnan(v) else float(v) for v in array]
        else:
            out[name] = array.tolist()
    return out


def select_sparsest(tried, within=0.0):
    """The grid point to keep: the fewest non-zero weights among those whose
    vali score is at least ``(1 - within)`` times the best (ties: the higher
    vali score, then the earlier point). ``within=0`` keeps the best vali
    score. Only validation scores are used."""
    best = max(point["vali_score"] for point in tried)
    keep = [i for i, point in enumerate(tried) if point["vali_score"] >= (1 - within) * best]
    return min(keep, key=lambda i: (tried[i]["n_nonzero"], -tried[i]["vali_score"], i))


def _fit_fold_seeds(estimator, grid, data, select, convention, within, features, seeds):
    """:func:`_fit_one_fold` once per seed, on the fold's splits built once
    as :class:`~rsrank.querydata.QueryData` (validated and grouped once, and
    reused by every grid point and seed)."""
    splits = Bunch(fold=data.fold, train_chunks=data.get("train_chunks"),
                   train=None if data.train is None else QueryData(*data.train[:3],
                                                                   feature_names=features),
                   vali=QueryData(*data.vali[:3], feature_names=features),
                   test=None if data.get("test") is None else QueryData(
                       *data.test[:3], feature_names=features))
    return [_fit_one_fold(estimator if seed is None else
                          clone(estimator).set_params(random_state=seed),
                          grid, splits, select, convention, within, seed)
            for seed in seeds]


def _metric_on(name, data, model, convention):
    """``name`` of ``model``'s scores on a :class:`QueryData` (the scores in
    its input order and the per-query values come back too)."""
    scores = model.predict(data)
    return _metric_value(name, data.y, scores[data.order], data.groups, convention), scores


def _fit_one_fold(estimator, grid, data, select, convention, within=0.0, seed=None):
    tried, models = [], []
    start = time.perf_counter()
    for params in grid:
        model = clone(estimator).set_params(**params)
        if data.train is None:  # streamed from disk, one block of queries at a time
            model.fit_chunks(data.train_chunks, eval_set=data.vali)
            if data.vali.feature_names is not None:
                model.set_feature_names(data.vali.feature_names)
        else:
            model.fit(data.train, eval_set=data.vali)
        vali = _metric_on(select, data.vali, model, convention)[0]
        tried.append({"params": params, "vali_score": vali,
                      "n_nonzero": int(np.count_nonzero(model.coef_))})
        models.append(model)
    seconds = time.perf_counter() - start
    chosen = select_sparsest(tried, within)
    model, params, vali = models[chosen], tried[chosen]["params"], tried[chosen]["vali_score"]
    evaluated_on = "test" if data.test is not None else "vali"
    evaluation = data.test if evaluated_on == "test" else data.vali
    scores = model.predict(evaluation)
    per_query = metrics.letor_per_query(evaluation.y, scores[evaluation.order],
                                        evaluation.groups, convention=convention)
    report = {name: metrics.nanmean(values) for name, values in per_query.items()
              if name != "qid"}
    return FoldResult(data.fold, params, vali, report, int(np.count_nonzero(model.coef_)),
                      model, scores, tried, seconds, evaluated_on, seed, per_query)


def run_letor_folds(root, estimator, param_grid, *, folds=None, select="ndcg@10",
                    convention="letor", n_jobs=1, progress=False, n_features=None,
                    stream_queries=None, within=0.0, feature_names=None, cache=None,
                    seeds=None):
    """LETOR's protocol: per fold, train every grid point on train (keeping the
    best validation epoch), select on vali, evaluate the selection on test.

    Parameters
    ----------
    root : path-like or list of Bunch
        Directory with ``Fold1``, ``Fold2``, ..., or folds already loaded
        (:func:`rsrank.datasets.load_splits` gives one from explicit files;
        a fold without ``test`` is evaluated on vali, and says so).
    estimator : RSRank
        Base parameters; each grid point is set on a clone.
    param_grid : dict or list of dicts
        As for ``sklearn.model_selection.ParameterGrid``.
    folds : list of int, optional
        Default: every fold found.
    select : str
        ``"ndcg@K"``, ``"p@K"`` or ``"map"`` on vali.
    convention : str
        Metric convention for selection and the test report ("letor" gives
        the numbers of LETOR's Eval-Score script).
    within : float
        Keep the sparsest grid point whose vali score is within this
        relative distance of the best (0: the best vali score); see
        :func:`select_sparsest`.
    feature_names : list of str, optional
        Names given to the selected models' features.
    cache : True or path-like, optional
        Read the folds through the binary cache (see
        :func:`rsrank.load_letor`); streamed training splits are sliced
        from it when it holds them.
    n_jobs : int
        Folds run in parallel through joblib.
    n_features : int, optional
        Columns of every split (default: the largest index found).
    progress : callable, optional
        Called with each :class:`FoldResult` as its fold finishes.
    stream_queries : int, optional
        Read each training split from disk in blocks of this many queries
        every epoch (:meth:`RSRank.fit_chunks`) instead of loading it; vali
        and test are loaded. ``n_features`` then defaults to the largest
        index in vali and test.
    seeds : int or list of int, optional
        Run every fold once per seed (``random_state`` of the estimator: the
        query order of the epochs and any held-out split), selection and
        test included: an int ``n`` means seeds ``0 .. n-1``. Each run's
        per-query test values are kept (``FoldResult.per_query``) for paired
        tests over queries (:mod:`rsrank.stats`). Default: one run with the
        estimator's own ``random_state``. Full-batch steps
        (``batch_size=None``, the default) visit no query order, so their
        seeds give one and the same model.

    Returns
    -------
    LetorExperiment
    """
    from joblib import Parallel, delayed

    parse_metric(select)
    if not 0 <= within < 1:
        raise ValueError(f"within must be in [0, 1), got {within}")
    grid = list(ParameterGrid(param_grid))
    seeds = _seed_list(seeds)
    folds = None if folds is None else list(folds)
    if folds is not None and len(set(folds)) != len(folds):
        raise ValueError(f"fold numbers repeat in {folds}: each fold counts once")
    if not isinstance(root, (str, bytes)) and not hasattr(root, "__fspath__"):
        if stream_queries is not None or folds is not None:
            raise ValueError("stream_queries and folds apply to a directory of Fold<k>, not to "
                             "folds already loaded")
        fold_data = list(root)  # folds already loaded
    elif stream_queries is None:
        fold_data = iter_letor_folds(root, folds, n_features=n_features, cache=cache)
    else:
        folds = find_folds(root) if folds is None else folds
        missing = sorted(set(folds) - set(find_folds(root)))
        if missing:
            raise FileNotFoundError(f"{root}: fold {missing[0]} does not exist")
        fold_data = (streamed_fold(root, k, n_features, stream_queries, cache) for k in folds)
    jobs = (delayed(_fit_fold_seeds)(estimator, grid, data, select, convention, within,
                                     feature_names, seeds)
            for data in fold_data)
    runner = Parallel(n_jobs=n_jobs, return_as="generator")
    results = []
    for fold_results in runner(jobs):
        for result in fold_results:
            results.append(result)
            if progress:
                progress(result)
    order = {seed: i for i, seed in enumerate(seeds)}
    return LetorExperiment(sorted(results, key=lambda r: (r.fold, order[r.seed])), select,
                           convention, within)


def _seed_list(seeds):
    if seeds is None:
        return [None]
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        if seeds < 1:
            raise ValueError(f"seeds must be at least 1, got {seeds}")
        return list(range(int(seeds)))
    listed = [int(s) for s in seeds]
    if not listed or len(set(listed)) != len(listed):
        raise ValueError(f"seeds must be distinct and at least one, got {listed}")
    return listed


# -- regularization path ------------------------------------------------------------


def regularization_path(X, y, qid, l1_values, *, estimator=None, eval_set=None, test_set=None,
                        k=10, convention="standard", warm_start=True):
    """Train along increasing L1 strengths, each fit starting from the last.

    Parameters
    ----------
    X, y, qid : training data.
    l1_values : sequence of float
        Values of g, visited in increasing order.
    estimator : RSRank, optional
        Base parameters (default ``RSRank()``).
    eval_set, test_set : tuple (X, y, qid), optional
        Validation data (also passed to ``fit``, so each point keeps its best
        validation epoch) and test data to evaluate.
    k, convention : NDCG cut-off and convention of the reported scores.
    warm_start : bool
        Start each fit from the previous point's weights.

    Returns
    -------
    list of Bunch
        Per g: ``l1``, ``n_nonzero``, ``coef``, ``train_ndcg`` and, when given,
        ``val_ndcg`` and ``test_ndcg``.
    """
    base = RSRank() if estimator is None else estimator
    path, coef = [], None
    for g in sorted(float(v) for v in l1_values):
        model = clone(base).set_params(l1=g)
        model.fit(X, y, qid=qid, eval_set=eval_set, coef_init=coef if warm_start else None)
        coef = model.coef_.copy()
        point = Bunch(l1=g, n_nonzero=int(np.count_nonzero(coef)), coef=coef,
                      train_ndcg=metrics.mean_ndcg(y, model.predict(X), qid, k,
                                                   convention=convention))
        for name, data in (("val_ndcg", eval_set), ("test_ndcg", test_set)):
            if data is not None:
                point[name] = metrics.mean_ndcg(data[1], model.predict(data[0]), data[2], k,
                                                convention=convention)
        path.append(point)
    return path


def sparsest_within(path, tolerance=0.03, key="val_ndcg"):
    """The point with the fewest non-zero weights whose ``key`` stays within
    ``tolerance`` (relative) of the densest point's (the paper's Table 1).

    The default ``key`` is the validation NDCG, so that the choice never
    looks at test data; ``key="test_ndcg"`` reproduces a test-selected
    table and says so by its name."""
    dense = max(path, key=lambda p: p.n_nonzero)
    keep = [p for p in path if p[key] >= (1 - tolerance) * dense[key]]
    return min(keep, key=lambda p: (p.n_nonzero, -p[key]))


# -- writing results -------------------------------------------------------------

REPORT_COLUMNS = ("NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10", "P@1", "P@3", "P@5", "P@10", "MAP")


def experiment_markdown(experiment, title="RSRank on LETOR folds", command=None):
    """Per-fold table plus mean +- std over folds, as Markdown."""
    head = "| fold | " + " | ".join(REPORT_COLUMNS) + " | non-zeros | selected |"
    rule = "|---" * (len(REPORT_COLUMNS) + 3) + "|"
    lines = [f"# {title}", ""]
    if command:
        lines += [f"Command: `{command}`", ""]
    rule_text = f"by {experiment.select}"
    if experiment.within:
        rule_text = (f"the sparsest model whose vali {experiment.select} is within "
                     f"{experiment.within:.0%} of the best")
    lines += [f"Selection on vali: {rule_text}. Metrics with the {experiment.convention!r} "
              "convention (see rsrank.metrics).", ""]
    if any(f.evaluated_on == "vali" for f in experiment.folds):
        lines += ["**No test split: the table reports the validation data used for "
                  "selection.**", ""]
    seeded = len(experiment.seeds()) > 1
    if seeded:
        head = head.replace("| fold |", "| fold | seed |")
        rule += "---|"
    lines += [head, rule]
    for fold in experiment.folds:
        values = " | ".join(f"{fold.test[name]:.4f}" for name in REPORT_COLUMNS)
        chosen = ", ".join(f"{k}={v}" for k, v in fold.params.items()) or "defaults"
        seed = f" {fold.seed} |" if seeded else ""
        lines.append(f"| {fold.fold} |{seed} {values} | {fold.n_nonzero} | {chosen} |")
    rows = [("mean ± std", experiment.summary())]
    if seeded:
        rows = [("mean ± std over folds and seeds", rows[0][1]),
                (f"mean over folds ± std over {len(experiment.seeds())} seeds",
                 experiment.seed_summary())]
    for label, summary in rows:
        values = " | ".join(f"{summary[name][0]:.4f} ± {summary[name][1]:.4f}"
                            for name in REPORT_COLUMNS)
        nnz = summary["n_nonzero"]
        blank = " |" if seeded else ""
        lines.append(f"| {label} |{blank} {values} | {nnz[0]:.1f} ± {nnz[1]:.1f} | |")
    return "\n".join(lines) + "\n"


def write_experiment(experiment, directory, *, command=None, extra=None):
    """Write ``results.json``, ``results.md``, ``models/Fold{k}.json`` and
    ``predictions/Fold{k}.test.txt`` (one score per line, LETOR's Eval-Score
    input; ``Fold{k}.seed{s}`` for each of several seeds) into the existing,
    empty ``directory``. ``results.json`` holds every fold's per-query test
    values (``per_query``), which ``rsrank compare`` tests."""
    import json
    from pathlib import Path

    from .datasets import write_scores

    directory = Path(directory)
    (directory / "models").mkdir()
    (directory / "predictions").mkdir()
    for fold in experiment.folds:
        fold.model.save(directory / "models" / f"{fold.name}.json")
        write_scores(directory / "predictions" / f"{fold.name}.test.txt", fold.test_scores)
    document = experiment.to_dict()
    document["command"] = command
    document.update(extra or {})
    (directory / "results.json").write_text(json.dumps(document, indent=2) + "\n")
    (directory / "results.md").write_text(experiment_markdown(experiment, command=command))


def save_experiment(experiment, out_dir, *, command=None, overwrite=False, extra=None,
                    inputs=()):
    """Write the experiment (see :func:`write_experiment`) as the directory
    ``out_dir``, all at once.

    Everything is written into a hidden staging directory that is renamed
    into place at the end (:class:`rsrank._files.ResultsDirectory`): an
    interrupted run leaves no half-written results, two runs never both
    write the same ``out_dir``, and ``overwrite`` swaps old and new results
    in one step. An existing ``out_dir`` is an error unless ``overwrite``;
    ``out_dir`` may not be, hold or sit inside one of ``inputs``.
    """
    from ._files import ResultsDirectory

    with ResultsDirectory(out_dir, overwrite=overwrite, inputs=inputs) as results:
        write_experiment(experiment, results.staging, command=command, extra=extra)
        results.publish()
    return out_dir
