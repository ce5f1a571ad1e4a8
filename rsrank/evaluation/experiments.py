"""LETOR's protocol: one home for experiments.

:func:`run_letor_folds` trains every grid point of each fold on train
(keeping the best validation epoch), selects on vali by one rule
(:mod:`rsrank.learning.selection`: :func:`sparsest_within` within a kind of
model, :func:`choose_fit` across kinds) and evaluates the choice on
test, per seed. Its :class:`LetorExperiment` is written as a results
directory and read back by :mod:`rsrank.evaluation.reports`
(:func:`save_experiment`, :func:`read_results`,
:func:`per_query_from_results`; re-exported here), which ``rsrank
compare`` and :mod:`rsrank.evaluation.stats` use for paired tests over queries.
:func:`regularization_path` (from :mod:`rsrank.learning.path`) trains along the L1 strengths.
"""

import contextlib
import functools
import time
from dataclasses import dataclass, field, replace

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.model_selection import GroupKFold, ParameterGrid
from sklearn.utils import Bunch

from . import metrics
from ._conventions import parse_metric
from ..learning._workers import in_processes, worker_count
from ..reading.datasets import (check_exp2_labels, csv_feature_names, find_folds, is_csv,
                                iter_letor_folds, streamed_fold)
from ..learning.defaults import PATH_PATIENCE, PATH_RELAX_EPOCHS, PATH_SETTLE_TOL
from ..learning.feature_keys import feature_costs
from ..reading._queries import QueryGroups
from ..reading.folds import Fold, ReadAfter
from ..reading.querydata import QueryData
from ..learning.model import query_scores
from ..learning.path import (keep_codes, l1_grid, one_search, path_sample, reads_codes,
                             refit_point, regularization_path, reporting_fits, walk)
from .reports import (experiment_markdown, per_query_from_results, read_results, save_experiment,
                      write_experiment)
from ..learning.selection import (check_within, choose_fit, kind_choices, sparsest_index,
                                  sparsest_within)

__all__ = [
    "parse_metric",
    "FoldResult",
    "LetorExperiment",
    "run_letor_folds",
    "sparsest_within",
    "choose_fit",
    "kind_choices",
    "sparsest_index",
    "check_within",
    "Selection",
    "score_fits",
    "fit_and_select",
    "held_out_values",
    "l1_grid",
    "regularization_path",
    "experiment_markdown",
    "write_experiment",
    "save_experiment",
    "read_results",
    "per_query_from_results",
]


def _metric_per_query(name, y, scores, qid, convention, short_list=None):
    """The metric ``name`` per query (NaN for a query the convention skips);
    ``short_list`` overrides the convention's rule for NDCG."""
    kind, k = parse_metric(name)
    if kind == "ndcg":
        return metrics.ndcg_per_query(y, scores, qid, k, convention=convention,
                                      short_list=short_list)
    if kind == "p":
        return metrics.precision_per_query(y, scores, qid, k,
                                           short_list=metrics.precision_short_list(convention))
    return metrics.average_precision_per_query(y, scores, qid)


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
    # the evaluated split's rows in file order, for TREC runs and qrels: qid, label, docid,
    # and their query groups
    evaluated_rows: tuple = None

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
    within: object = 0.0  # a fraction, or "1se"
    vali_cv: object = None  # folds of the training queries judged on beside vali
    path_rows: object = None  # training rows above which a path walks a sample

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

    def pooled_ndcg(self, k=10):
        """``{convention: mean}`` of NDCG@``k`` over every evaluated query
        (each fold's queries, each query's value averaged over the seeds),
        under LETOR's convention and trec_eval's (``ndcg_cut_k``: linear
        gain, ties by document id), with ``"queries"``: what trec_eval and
        pytrec_eval give for ``trec/test.run`` when the folds' queries are
        disjoint. None when the folds' rows are not known."""
        if any(f.evaluated_rows is None for f in self.folds):
            return None
        known = vars(self).setdefault("_pooled", {})  # the table and results.json both ask
        if k not in known:
            known[k] = self._pooled_ndcg(k)
        return known[k]

    def _pooled_ndcg(self, k):
        values = {}
        for fold in self.folds:
            _, labels, docids, groups = fold.evaluated_rows  # grouped once, for the fold
            for convention in ("letor", "trec_eval"):
                per_query = metrics.ndcg_per_query(labels, fold.test_scores, groups, k,
                                                   convention=convention, docids=docids)
                for query, value in zip(groups.qids, per_query):
                    values.setdefault((convention, fold.fold, query), []).append(value)
        out = {convention: float(np.mean([np.mean(v) for key, v in values.items()
                                          if key[0] == convention]))
               for convention in ("letor", "trec_eval")}
        out["queries"] = len(values) // 2
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
            "vali_cv": self.vali_cv,
            "path_rows": self.path_rows,
            "convention": self.convention,
            "seeds": self.seeds(),
            "folds": [
                {"fold": f.fold, "seed": f.seed, "params": f.params,
                 "vali_score": f.vali_score, "evaluated_on": f.evaluated_on,
                 "test": f.test, "n_nonzero": f.n_nonzero, "fit_seconds": f.fit_seconds,
                 "selected_features": [[name, weight]
                                       for name, weight in f.model.selected_features()],
                 "selected_interactions": [[list(names), spread] for names, spread
                                           in f.model.selected_interactions()],
                 "feature_cost": f.model.feature_cost(),
                 "grid": f.grid, "best_iteration": getattr(f.model, "best_iteration_", None),
                 "per_query": _json_per_query(f.per_query)}
                for f in self.folds
            ],
            "mean": {name: mean for name, (mean, _) in self.summary().items()},
            "std": {name: std for name, (_, std) in self.summary().items()},
        }
        pooled = self.pooled_ndcg()
        if pooled is not None:
            document["pooled_ndcg@10"] = pooled
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


def _fit_fold_seeds(estimator, grid, data, select, convention, within, features, seeds,
                    path=False, vali_cv=None, on_fit=None, path_rows=None):
    """:func:`_fit_one_fold` once per seed, on the fold's splits built once
    as :class:`~rsrank.reading.querydata.QueryData` (validated and grouped once, and
    reused by every grid point and seed). A run's own training rows are
    kept as bin codes where its path allows (:func:`~rsrank.learning.path.keep_codes`),
    before a vali read after them (``reread_vali``) comes."""
    width = data.n_features if data.vali[0] is None else data.vali[0].shape[1]
    if callable(features):
        features = features(width)
    train_file = data.paths.get("train")
    if features is None and train_file is not None and is_csv(train_file):
        features = csv_feature_names(train_file)  # the header's names
        features += [f"f{j}" for j in range(len(features) + 1, width + 1)]
    _check_exp2_labels(data, [gain for part in (grid if isinstance(grid, list) else [grid])
                              for gain in part.get("gain", [estimator.gain])], convention)
    options = data.query_options
    test = None
    if data.test is not None:
        test = ReadAfter(data, features) if data.reread_test is not None else QueryData(
            *data.test[:3], feature_names=features)
    train = None if data.train is None else QueryData(
        *data.train[:3], feature_names=features, **options.get("train", {}))
    if train is not None and not data.keep_train and path and vali_cv is None:
        keep_codes(estimator, grid, train, path_rows, data.let_train_go)
    vali = (ReadAfter(data, features, "vali", **options.get("vali", {}))()
            if data.vali[0] is None else QueryData(*data.vali[:3], feature_names=features,
                                                   **options.get("vali", {})))
    splits = Bunch(fold=data.fold, train_chunks=data.train_chunks,
                   let_train_go=None if data.keep_train else data.let_train_go,
                   train=train, vali=vali, test=test)
    results = []
    try:
        for seed in seeds:
            report = (contextlib.nullcontext() if on_fit is None else
                      reporting_fits(functools.partial(on_fit, data.fold, seed)))
            with report:
                results.append(_fit_one_fold(
                    estimator if seed is None else clone(estimator).set_params(random_state=seed),
                    grid, splits, select, convention, within, seed, path, vali_cv, path_rows,
                    last=seed == seeds[-1]))
    except Exception as error:
        if isinstance(splits.test, ReadAfter):  # a run that failed leaves the fold as given
            splits.test.restore(error)
        raise
    # the evaluated rows' queries in file order, as grouped once for the whole fold; a
    # vali of click lists (weighted queries) is not its file's rows: no runs or qrels
    evaluated = splits.test if results[0].evaluated_on == "test" else splits.vali
    rows = None
    if evaluated.query_weights is None:
        groups = QueryGroups(evaluated.order, evaluated.offsets, evaluated.qids)
        rows = data.file_rows(results[0].evaluated_on) + (groups,)
    for result in results:
        result.evaluated_rows = rows
    return results


def _check_exp2_labels(data, gains, convention):
    """A label the 2^label - 1 gain cannot take (one of the pair weights'
    ``gains`` or the metrics'), named by its file and line, before any
    training."""
    if "exp2" not in [*gains, metrics.CONVENTIONS[convention]["gain"]]:
        return
    for split, path in data.paths.items():
        if path is not None and data[split] is not None:
            check_exp2_labels(path, data[split][1])


def _metric_on(name, data, fit, convention, shared=True):
    """``name`` of a :class:`~rsrank.learning.path.PathFit`'s scores on a
    :class:`QueryData`, per query; with query weights, scaled by
    :func:`rsrank.evaluation.metrics.weighted_values` (their mean is the weighted
    mean), short lists scored by the data's
    :attr:`~rsrank.reading.querydata.QueryData.short_list`; ``shared`` as
    for :func:`~rsrank.learning.model.query_scores`."""
    scores = query_scores(fit.model, data, fit.params["n_jobs"], shared=shared)
    return metrics.weighted_values(
        _metric_per_query(name, data.y, scores, data.groups, convention,
                          short_list=data.short_list), data.query_weights)


def n_features_used(estimator):
    """The features a fitted estimator's model uses (a non-zero weight, or
    for an additive model a non-zero step): those an engine computes."""
    return int(len(estimator.model_.selected_indices()))


def _cost(fit):
    """The total ``feature_costs`` of the features a
    :class:`~rsrank.learning.path.PathFit` uses."""
    used = fit.model.selected_indices()
    return float(feature_costs(fit.params, fit.model)[used].sum())


@dataclass
class Selection:
    """The fits of a grid on one training set, their values per validation
    query, and the choice of :func:`sparsest_within` among them."""

    tried: list  #: per fit: ``params``, ``vali_score``, ``n_nonzero`` (and ``cost``)
    per_query: list  #: per fit: its validation values per query
    fits: list  #: per fit: a :class:`~rsrank.learning.path.PathFit`
    chosen: int  #: the position of the choice
    seconds: float  #: the time the fits and their scores took

    @property
    def model(self):
        """The chosen fit's estimator."""
        return self.fits[self.chosen].face

    @property
    def models(self):
        """Every fit's estimator (each made when first asked for)."""
        return [fit.face for fit in self.fits]

    @property
    def params(self):
        return self.tried[self.chosen]["params"]

    @property
    def vali_score(self):
        return self.tried[self.chosen]["vali_score"]


def score_fits(points, validation, select, convention, scored=None, shared=True):
    """Every fit of :func:`rsrank.learning.path.walk`'s ``points`` (a point's
    penalized fit, and its relaxed refit) scored by ``select`` on each
    query of ``validation``: ``(tried, per_query, fits)`` as in
    :class:`Selection`. ``scored``: the values of fits scored already, by
    ``id`` of the fit; ``shared`` as for :func:`_metric_on`."""
    tried, fits = _describe_fits(points)
    scored = {} if scored is None else scored
    per_query = [scored[id(fit)] if id(fit) in scored
                 else _metric_on(select, validation, fit, convention, shared) for fit in fits]
    for entry, values in zip(tried, per_query):
        entry["vali_score"] = metrics.nanmean(values)
    return tried, per_query, fits


def fit_and_select(estimator, grid, train, validation, *, select="ndcg@10",
                   convention="letor", within=0.0, path=False, chunks=None, cv=None,
                   path_rows=None, last_use=None):
    """``rsrank train``'s work on one fold, short of the test: every point
    of ``grid`` (a list of parameter dicts) fitted on ``train`` (a
    :class:`~rsrank.reading.querydata.QueryData`; ``chunks`` instead streams it),
    as a regularization path with ``path``, each fit scored on the
    ``validation`` queries, and the sparsest fit within ``within`` of the
    best kept (:func:`sparsest_within`). Returns a :class:`Selection`.
    :class:`rsrank.cv.RSRankCV` fits with the same function.

    ``cv`` (an int or a splitter of queries, :func:`held_out_values`): each
    fit is also scored on the queries that folds of ``train`` held out, and
    the selection sees those values beside vali's (more queries to judge
    on, where vali has few); ``validation`` None: on those alone.

    ``path_rows`` (with ``path``, ``validation`` and no ``cv``): a
    training set of more rows walks the path on a seeded sample of its
    queries of about that many rows (:func:`~rsrank.learning.path.path_sample`), and
    the chosen point is fitted again on all of them (:func:`refit_on_all`: a
    penalized choice from the sample's weights where they lead to the same
    fit, a relaxed one on the terms the sample's fit kept): the path's work
    stops growing with the data. A kind with pairs searches its pairs once,
    on all the rows, for the path and the refit, and its path walks the
    pair weighting they were searched with
    (:func:`~rsrank.learning.path.one_search`). Such a path also stops a
    setting after :data:`PATH_PATIENCE` points in a row that do not raise
    its best vali score, gives each point's relaxed refit at most
    :data:`PATH_RELAX_EPOCHS` epochs, and stops each point's penalized fit
    once its weights settle to :data:`PATH_SETTLE_TOL`.

    ``last_use`` (a callable; a run's own training rows, fitted for the
    last time): the refit on all rows lets ``train``'s values go as soon
    as it has coded them into bins (an additive kind), and calls
    ``last_use()`` to drop the caller's reference: the refit then holds
    the rows' bin codes alone (:meth:`~rsrank.reading.querydata.QueryData.let_values_go_once_coded`)."""
    if validation is None and cv is None:
        raise ValueError("fit_and_select judges on validation queries, on folds of the "
                         "training queries (cv), or both: give one")
    start = time.perf_counter()
    sampled = (path and path_rows and chunks is None and cv is None and validation is not None
               and train.n_rows > path_rows)
    walked = path_sample(train, path_rows, estimator.random_state) if sampled else train
    scored = {}  # the fits the walk judged, by id: the selection reads the same values

    def judge(fit):  # a point's fits on vali, as the selection judges them
        scored[id(fit)] = _metric_on(select, validation, fit, convention)
        return metrics.nanmean(scored[id(fit)])
    # a kind with pairs searches once, on all the rows, for the path and the refit
    with (one_search(estimator, grid, train, walked) if sampled
          else contextlib.nullcontext(grid)) as walked_grid:
        points = walk(estimator, walked_grid, walked, validation=validation, chunks=chunks,
                      warm=path, judge=judge, patience=PATH_PATIENCE if sampled else None,
                      relax_epochs=PATH_RELAX_EPOCHS if sampled else None,
                      settle_tol=PATH_SETTLE_TOL if sampled else None)
        if validation is None:
            tried, fits = _describe_fits(points)
            per_query = [np.zeros(0)] * len(tried)
        else:
            tried, per_query, fits = score_fits(points, validation, select, convention, scored)
        if cv is not None:
            held = held_out_values(estimator, grid, train, cv, select, convention, warm=path)
            if len(held) != len(tried):
                raise RuntimeError("the folds' paths and the full path differ in their fits")
            per_query = [np.concatenate([values, extra])
                         for values, extra in zip(per_query, held)]
            for entry, values in zip(tried, per_query):
                entry["vali_score"] = metrics.nanmean(values)
        chosen = choose_fit([{**t, "per_query": v} for t, v in zip(tried, per_query)], within)
        if sampled:
            del walked  # the sample's rows and bin codes go before the refit makes its own
            if last_use is not None:
                train.let_values_go_once_coded(last_use)
            tried, per_query, fits, chosen = refit_on_all(
                estimator, train, validation, select, convention, tried, per_query, fits, chosen)
    return Selection(tried, per_query, fits, chosen, time.perf_counter() - start)


def refit_on_all(estimator, train, validation, select, convention, tried, per_query, fits,
                 chosen):
    """The choice of a path walked on a sample, fitted again on all of
    ``train`` (:func:`~rsrank.learning.path.refit_point`) and scored on
    ``validation``. Returns ``(tried, per_query, fits, chosen)`` with the
    refit last and chosen, marked ``"refit": "all training queries"``."""
    relax = tried[chosen]["params"].get("relax")
    validation.forget()  # the walk's bin codes of the vali rows: the refit makes its own
    point = refit_point(estimator, tried[chosen]["params"], fits[chosen], train, validation)
    new_tried, new_values, new_fits = score_fits([point], validation, select, convention,
                                                 shared=False)
    index = [i for i, entry in enumerate(new_tried)
             if entry["params"].get("relax") == relax][0]
    entry = {**new_tried[index], "refit": "all training queries"}
    return ([*tried, entry], [*per_query, new_values[index]], [*fits, new_fits[index]],
            len(tried))


def _describe_fits(points):
    """``(tried, fits)`` of :func:`score_fits` without scores."""
    tried, fits = [], []
    for point in points:
        for params, fit in point.fits:
            tried.append({"params": params, "kind": fit.model.kind,
                          "n_nonzero": int(len(fit.model.selected_indices()))})
            if fit.params["feature_costs"] is not None:
                tried[-1]["cost"] = _cost(fit)
            fits.append(fit)
    return tried, fits


def held_out_values(estimator, grid, train, cv, select, convention, *, warm=True):
    """Each fit of ``grid``'s path on ``train``, as :func:`score_fits`
    lists them, by its counterparts fitted on folds of ``train``'s queries:
    per fit, the values of ``select`` on every query, each from the fold
    that held it out (in the folds' order). ``cv``: the number of folds
    (``GroupKFold``), or a splitter whose ``split(X, y, groups)`` is given
    one row per query."""
    if isinstance(cv, (int, np.integer)):
        if not 2 <= cv <= train.n_queries:
            need = ("at least 2 folds" if cv < 2 else f"{cv} folds of the training queries, "
                    f"and there are {train.n_queries}")
            raise ValueError(f"cv={cv} (rsrank train --vali-cv {cv}): judging on folds of the "
                             f"training queries needs {need}; give between 2 and "
                             f"{max(train.n_queries, 2)}, or 0 to judge on vali alone")
    splitter = GroupKFold(cv) if isinstance(cv, (int, np.integer)) else cv
    queries = np.arange(train.n_queries)
    held = None
    for kept, out in splitter.split(np.zeros((len(queries), 1)), None, groups=queries):
        part, rest = train.subset(queries[kept]), train.subset(queries[out])
        _, values, _ = score_fits(walk(estimator, grid, part, validation=rest, warm=warm), rest,
                                  select, convention)
        held = [[v] for v in values] if held is None else [
            seen + [v] for seen, v in zip(held, values)]
    if held is None:
        raise ValueError(f"cv={cv!r} gave no folds")
    return [np.concatenate(values) for values in held]


def _fit_one_fold(estimator, grid, data, select, convention, within=0.0, seed=None,
                  path=False, vali_cv=None, path_rows=None, last=True):
    """One seed's fit, selection and evaluation on a fold's splits; the
    ``last`` seed drops what the splits keep for fitting (the training and
    vali rows' bin codes; the vali rows keep theirs when they are the rows
    evaluated) before the evaluated rows are scored: at a
    quarter of MSLR-WEB30K's shape the peak of ``--additive --interactions
    10``, reached as it scored the test rows, fell from 1,180 to 1,156 MiB,
    now reached in the refit on all rows."""
    selection = fit_and_select(estimator, grid, data.train, data.vali, select=select,
                               convention=convention, within=within, path=path,
                               chunks=data.train_chunks, cv=vali_cv, path_rows=path_rows,
                               last_use=data.get("let_train_go") if last else None)
    evaluated_on = "test" if data.test is not None else "vali"
    if last:
        for split in (data.train, data.vali if evaluated_on == "test" else None):
            if split is not None:
                split.forget()
        if data.get("let_train_go") is not None:
            # the run's own fold: its training rows' values go before the test rows come
            data.train = None
            data.let_train_go()
    model = selection.model
    if isinstance(data.test, ReadAfter):  # read now, and kept for the fold's other seeds
        data.test = data.test()
    evaluation = data.test if evaluated_on == "test" else data.vali
    scores = model.predict(evaluation)
    # a vali of click lists (weighted queries) is reported as it was judged
    per_query = metrics.letor_per_query(evaluation.y, scores[evaluation.order],
                                        evaluation.groups, convention=convention,
                                        short_list=evaluation.short_list)
    report = {name: metrics.nanmean(values, evaluation.query_weights)
              for name, values in per_query.items() if name != "qid"}
    return FoldResult(data.fold, selection.params, selection.vali_score, report,
                      n_features_used(model), model, scores, selection.tried, selection.seconds,
                      evaluated_on, seed, per_query)


def run_letor_folds(root, estimator, param_grid, *, folds=None, select="ndcg@10",
                    convention="letor", n_jobs=1, progress=False, on_fit=None, n_features=None,
                    stream_queries=None, within=0.0, feature_names=None, cache=None,
                    seeds=None, dtype=np.float64, dense=False, path=False,
                    backend="processes", vali_cv=None, path_rows=None):
    """LETOR's protocol: per fold, train every grid point on train (keeping the
    best validation epoch), select on vali, evaluate the selection on test.

    Parameters
    ----------
    root : path-like or list of Fold
        Directory with ``Fold1``, ``Fold2``, ..., or folds already loaded
        (:func:`rsrank.reading.layouts.load_splits` gives one from explicit files;
        a fold without ``test`` is evaluated on vali, and says so): each a
        :class:`~rsrank.reading.folds.Fold`, or a mapping of its parts'
        names (``Bunch(train=..., vali=..., test=...)``).
    estimator : RSRank
        Base parameters; each grid point is set on a clone.
    param_grid : dict or list of dicts
        As for ``sklearn.model_selection.ParameterGrid``. ``"l1_ratio"``
        gives the L1 strength as a fraction of each fold's ``l1_max`` (see
        :meth:`RSRank.l1_max`, computed on the fold's training data with the
        point's other parameters): 1 is the edge of the all-zero model, 0 no
        penalty.
        A selected point then records both ``l1_ratio`` and the ``l1`` used.
    folds : list of int, optional
        Default: every fold found.
    select : str
        ``"ndcg@K"``, ``"p@K"`` or ``"map"`` on vali.
    convention : str
        Metric convention for selection and the test report ("letor" gives
        the numbers of LETOR's Eval-Score script).
    within : float or "1se"
        Keep the sparsest grid point whose vali score is within this
        relative distance of the best (0: the best vali score), or within
        one standard error of it over the vali queries (``"1se"``); see
        :func:`sparsest_within`.
    feature_names : list of str or callable, optional
        Names given to the selected models' features, or a function of the
        fold's width that gives them (the width is known once the fold is
        read).
    cache : True or path-like, optional
        Read the folds through the binary cache (see
        :func:`rsrank.load_letor`); streamed training splits are sliced
        from it when it holds them.
    dtype, dense
        How a directory's folds are loaded (see :func:`rsrank.load_letor`):
        ``np.float32`` and ``"auto"`` keep a file whose every line holds
        every feature as one dense float32 array, a quarter of the memory of
        float64 CSR.
    n_jobs : int
        Folds run in this many worker processes (None or 1: in this one;
        -1: one per core, -2 all but one, as joblib counts).
    n_features : int, optional
        Columns of every split (default: the largest index found).
    progress : callable, optional
        Called with each :class:`FoldResult` as its fold finishes.
    on_fit : callable, optional
        Called as ``on_fit(fold, seed, params)`` after each fit of a path
        point (the held-out folds' of ``vali_cv`` too), when the folds run
        in this process (``n_jobs`` 1): a progress bar's ticks.
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
        tests over queries (:mod:`rsrank.evaluation.stats`). Default: one run with the
        estimator's own ``random_state``. Full-batch steps
        (``batch_size=None``, the default) visit no query order, so their
        seeds give one and the same model.
    path : bool
        Fit the grid as regularization paths: each point starts from the
        weights of the previous point with the same parameters but the L1
        strength (in the grid's order of ``l1`` or ``l1_ratio`` values, so
        list them from strong to weak), as glmnet warm-starts its path.
    vali_cv : int, optional
        Also judge every grid point on the queries that this many folds of
        the training queries hold out, beside vali's (each fold's path
        fitted on the rest; see :func:`fit_and_select`): more queries to
        select on where vali has few. Needs the training data in memory.
    path_rows : int, optional
        With ``path``, a fold whose training data holds more rows walks its
        path on a sample of its queries of about this many rows and fits
        the chosen point again on all of them (see :func:`fit_and_select`).
    backend : {"processes", "joblib"}
        ``"processes"``: ``n_jobs`` worker processes of this package (a
        Ctrl-C stops them quietly, no helper process);
        ``"joblib"``: ``joblib.Parallel`` with the backend configured around
        the call (``parallel_config(backend="dask")`` runs the folds on a
        Dask cluster).

    Returns
    -------
    LetorExperiment
    """
    parse_metric(select)
    check_within(within)
    grid = list(ParameterGrid(param_grid))
    seeds = _seed_list(seeds)
    folds = None if folds is None else list(folds)
    if folds is not None and len(set(folds)) != len(folds):
        raise ValueError(f"fold numbers repeat in {folds}: each fold counts once")
    if not isinstance(root, (str, bytes)) and not hasattr(root, "__fspath__"):
        if stream_queries is not None or folds is not None:
            raise ValueError("stream_queries and folds apply to a directory of Fold<k>, not to "
                             "folds already loaded")
        fold_data = [Fold.of(data) for data in root]  # folds already loaded
    elif stream_queries is None:
        fold_data = (replace(fold, keep_train=False) for fold in iter_letor_folds(
            root, folds, n_features=n_features, cache=cache, dtype=dtype, dense=dense,
            test_values=False, vali_values=not (path and path_rows and reads_codes(
                estimator, grid))))
    else:
        folds = find_folds(root) if folds is None else folds
        missing = sorted(set(folds) - set(find_folds(root)))
        if missing:
            raise FileNotFoundError(f"{root}: fold {missing[0]} does not exist")
        fold_data = (streamed_fold(root, k, n_features, stream_queries, cache, dtype=dtype,
                                   dense=dense) for k in folds)
    if vali_cv is not None and stream_queries is not None:
        raise ValueError("vali_cv fits paths on folds of the training queries, which needs "
                         "them in memory: not with stream_queries")
    in_process = worker_count(n_jobs) == 0 if backend == "processes" else n_jobs in (None, 1)
    tasks = ((estimator, grid, data, select, convention, within, feature_names, seeds, path,
              vali_cv, on_fit if in_process else None, path_rows) for data in fold_data)
    if backend == "joblib":
        runner = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(_fit_fold_seeds)(*task) for task in tasks)
    elif backend != "processes":
        raise ValueError(f"backend must be 'processes' or 'joblib', got {backend!r}")
    elif worker_count(n_jobs):
        runner = in_processes(_fit_fold_seeds, tasks, worker_count(n_jobs))
    else:
        runner = (_fit_fold_seeds(*task) for task in tasks)
    results = []
    for fold_results in runner:
        for result in fold_results:
            results.append(result)
            if progress:
                progress(result)
    order = {seed: i for i, seed in enumerate(seeds)}
    return LetorExperiment(sorted(results, key=lambda r: (r.fold, order[r.seed])), select,
                           convention, within, vali_cv, path_rows)


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
