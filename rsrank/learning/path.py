"""The regularization path: one implementation for the library, the command
line, the experiments runner and the scripts.

A path fits one setting of the parameters at a sequence of penalty
strengths, strongest first, each fit starting from the weights of the
previous one (glmnet's order: a strong penalty never starts from dense
weights). Its pieces:

- the **edge** of the path, the smallest strength that keeps every weight
  at zero, scaled to the training data (:func:`rsrank.learning.edges.edge`; the
  kind says which penalty a path walks, :attr:`rsrank.learning.kinds.Kind.strength`);
- the **grid**, :func:`l1_grid`, and strengths given as fractions of the
  edge (``l1_ratio``, ``l1_group_ratio``);
- the **step size**, settled once per path: ``"auto"`` is chosen on the
  validation queries by the fit without a penalty (which is also the path's
  point at strength 0);
- **warm starts** from the previous point's penalized weights;
- with ``relax``, the **relaxed refit** of each point on the features it
  kept, made once per set of kept features;
- the **report** of a path as a table (:func:`path_markdown`).
"""

import contextlib
import contextvars
import copy
from dataclasses import dataclass

import numpy as np
from sklearn.base import clone
from sklearn.utils import Bunch

from . import edges, fitting
from ..estimator import RSRank, face_on, fit_of
from ..evaluation.metrics import DEFAULT_CONVENTION, mean_ndcg
from .model import query_scores
from ._threads import coding_threads
from ..clicks.arrays import click_splits
from ..reading.querydata import QueryData, sample_queries

__all__ = ["l1_grid", "STRENGTHS", "RATIOS", "PathFit", "PathPoint", "walk", "carried_weights",
           "reads_codes", "keep_codes", "path_sample", "one_search", "refit_point", "path_rows",
           "path_markdown", "reporting_fits", "regularization_path"]

#: the penalty strengths of a path point, and their fractions of the edge
STRENGTHS = ("l1", "l1_ratio", "l1_group", "l1_group_ratio")
#: each fraction of an edge, and the strength it stands for
RATIOS = (("l1_ratio", "l1"), ("l1_group_ratio", "l1_group"))


_ON_FIT = contextvars.ContextVar("rsrank_on_fit", default=None)


@contextlib.contextmanager
def reporting_fits(report):
    """Within it, every point :func:`walk` fits in this process (and
    thread) is reported: ``report(params)`` once the fit is done (``rsrank
    train``'s progress bar)."""
    token = _ON_FIT.set(report)
    try:
        yield
    finally:
        _ON_FIT.reset(token)


def l1_grid(l1_max, n_points=10, ratio=1e-3):
    """A log grid of L1 strengths from ``l1_max`` (every weight zero) down
    to ``ratio * l1_max``, strongest first, as glmnet and scikit-learn's
    ``lasso_path`` lay out theirs."""
    if not (np.isfinite(l1_max) and l1_max >= 0):
        raise ValueError(f"l1_max must be a finite number >= 0, got {l1_max}")
    if not 0 < ratio < 1 or int(n_points) != n_points or n_points < 2:
        raise ValueError(f"need 0 < ratio < 1 and at least 2 points, got {ratio}, {n_points}")
    return list(l1_max * np.geomspace(1.0, ratio, int(n_points)))


class PathFit:
    """One fit of a path as a value: ``fitted`` (a
    :class:`~rsrank.learning.fitting.Fitted`: the model value and the parameters it
    was fitted with) and ``face``, the estimator that holds it, made on first
    use: a path of many points makes a face only for the fits it hands on."""

    def __init__(self, template, fitted, face=None):
        self.fitted, self._template, self._face = fitted, template, face

    @classmethod
    def holding(cls, estimator):
        """The fit of a fitted ``estimator`` (its own face)."""
        return cls(estimator, fit_of(estimator), estimator)

    @property
    def model(self):
        """The fitted model value (:mod:`rsrank.learning.model`)."""
        return self.fitted.model

    @property
    def params(self):
        return self.fitted.params

    @property
    def face(self):
        if self._face is None:
            self._face = face_on(self._template, self.fitted)
        return self._face


@dataclass
class PathPoint:
    """One point of a path: the ``params`` it was fitted with (strengths
    given as fractions of the edge also as the strength they stand for,
    and the step size settled for the path), the penalized ``fit`` and, with
    ``relax``, its ``relaxed`` refit on the features it kept (shared with
    the points that keep the same features), each a :class:`PathFit`."""

    params: dict
    fit: PathFit
    relaxed: PathFit = None

    @property
    def fits(self):
        """``[(params, PathFit)]``: the penalized fit, and with ``relax`` the
        refit, each with the ``relax`` it stands for."""
        if self.relaxed is None:
            return [(self.params, self.fit)]
        return [({**self.params, "relax": False}, self.fit),
                ({**self.params, "relax": True}, self.relaxed)]

    @property
    def model(self):
        """The penalized fit's estimator."""
        return self.fit.face

    @property
    def refit(self):
        """The relaxed refit's estimator, or None."""
        return None if self.relaxed is None else self.relaxed.face

    @property
    def best(self):
        """The estimator of the fit the point stands for: the refit with ``relax``."""
        return (self.fit if self.relaxed is None else self.relaxed).face


def _setting(params):
    return repr(sorted((k, v) for k, v in params.items() if k not in STRENGTHS))


def _base(estimator, params):
    """``estimator`` with ``params`` but the penalty strengths."""
    return clone(estimator).set_params(**{k: v for k, v in params.items()
                                          if k not in STRENGTHS})


class _Walk:
    """What one walk shares: the :class:`~rsrank.learning.fitting.Setup` of each
    setting of the parameters other than the penalty strengths (built once,
    which checks them), each setting's edges and its step size, each
    settled once."""

    def __init__(self, estimator, train, chunks, validation):
        self.estimator, self.train, self.chunks = estimator, train, chunks
        self.validation, self.plans, self.tops, self.dense = validation, {}, {}, {}

    def plan(self, point):
        """The Setup of ``point``'s setting, at the estimator's strengths
        (its parameters copied as ``clone`` copies them, without an
        estimator for each)."""
        key = _setting(point)
        if key not in self.plans:
            params = self.estimator.get_params(deep=False)
            unknown = sorted(set(point) - set(params) - set(STRENGTHS))
            if unknown:
                raise ValueError(f"Invalid parameter {unknown[0]!r} for estimator "
                                 f"{type(self.estimator).__name__}: a grid point sets "
                                 f"{', '.join(map(repr, unknown))}")
            given = {k: v for k, v in point.items() if k not in STRENGTHS}
            self.plans[key] = fitting.setup(copy.deepcopy({**params, **given}))
        return self.plans[key]

    def resolve(self, point, params):
        """``params`` (``point`` settled) with each fraction of an edge as the
        strength it stands for."""
        params = dict(params)
        for ratio_name, name in RATIOS:
            ratio = params.pop(ratio_name, None)
            if ratio is None:
                continue
            if name in params:
                raise ValueError(f"a grid point has both {name} and {ratio_name}; give one of "
                                 "them")
            if not (isinstance(ratio, (int, float, np.number)) and 0 <= ratio):
                raise ValueError(f"{ratio_name} must be a number >= 0, got {ratio!r}")
            key = (name, _setting(point))
            if key not in self.tops:
                self.tops[key] = self.edge(point, name)
            params[name] = float(ratio) * self.tops[key]
        return params

    def reported(self, settled, params):
        """``params`` (:meth:`resolve`'s) as a point reports them: each
        fraction of an edge of ``settled`` beside the strength it stands for."""
        for ratio_name, name in RATIOS:
            if ratio_name in settled:
                params = {**settled, **params, name: params[name]}
        return params

    def edge(self, point, name):
        if self.train is not None:
            return edges.edge(self.plan(point), self.train, name)
        if name == "l1_group":
            raise ValueError("l1_group_ratio needs the training data in memory (not --stream)")
        return _base(self.estimator, point).l1_max_chunks(self.chunks)

    def rate(self, point):
        """``point`` with ``learning_rate="auto"`` settled once per setting:
        the fit without a penalty chooses it on the validation queries, and
        is returned (a :class:`PathFit`) for a point without a penalty.
        Streamed training keeps ``"auto"``, which ``fit_chunks`` settles
        as the curvature step of all the blocks."""
        plan = self.plan(point)
        if plan.run.learning_rate != "auto" or self.train is None:
            return point, None
        key = _setting(point)
        if key not in self.dense:
            fitted = fitting.fit(plan.but(l1=0.0, l1_group=0.0), self.train, self.validation)
            self.dense[key] = PathFit(self.estimator, fitted)
        dense = self.dense[key]
        without = all(point.get(name, 0.0) == 0 for name in STRENGTHS)
        return ({**point, "learning_rate": dense.fitted.learning_rate},
                dense if without else None)


def walk(estimator, points, train, *, validation=None, chunks=None, warm=True, coef_init=None,
         judge=None, patience=None, relax_epochs=None, settle_tol=None, working=None):
    """Fit ``estimator`` at each of ``points`` (dicts of parameters, in the
    order given; a path lists its strengths from strong to weak) on
    ``train`` (a :class:`~rsrank.reading.querydata.QueryData`), each point starting
    from the penalized weights of the previous point of the same setting
    of the other parameters (``warm``). ``validation`` is passed to the fits
    that keep their best epoch or stop early. ``chunks`` (with ``train``
    None) streams the training data (:meth:`RSRank.fit_chunks`, no warm
    starts). With ``warm``, ``coef_init`` is the weights the first point of
    each setting starts from (default: zero). With ``patience``, a setting
    stops once that many of its points in a row have not raised the best
    ``judge(fit)`` of its fits so far (the points it leaves are not
    walked). ``relax_epochs``: the most epochs of each point's relaxed
    refit (None: the estimator's ``max_iter``). ``settle_tol``: each
    point's penalized fit stops once an epoch moves no weight by more than
    this times the largest, or by the estimator's ``weight_tol`` where that
    is larger (None: the estimator's alone). ``working``: the terms
    (indices of the model's groups of weights) the first point of each
    setting expects to keep; its penalized fit steps on them first, and a
    warm point's on the previous point's (:func:`~rsrank.learning.fitting.screened`).
    Returns a :class:`PathPoint` per point walked.

    The fits run on the fit pipeline (:mod:`rsrank.learning.fitting`) from one
    :class:`~rsrank.learning.fitting.Setup` per setting, as values; an estimator is
    made only for a fit that is asked for its own (:attr:`PathFit.face`)."""
    path = _Walk(estimator, train, chunks, validation)
    last = {} if coef_init is None else {_setting(point): coef_init for point in points}
    refits, out, best, stale = {}, [], {}, {}
    for point in points:
        setting = _setting(point)
        if patience is not None and stale.get(setting, 0) >= patience:
            continue
        settled, dense = path.rate(point)
        params = path.resolve(point, settled)
        relaxed = None
        if dense is not None:  # the fit that chose the rate
            fit = dense
        elif train is None:  # streamed from disk, one block of queries at a time
            model = clone(estimator).set_params(**params)
            model.fit_chunks(chunks, eval_set=validation)
            if validation.feature_names is not None:
                model.set_feature_names(validation.feature_names)
            fit = PathFit.holding(model)
        else:
            changes = {name: params[name] for name in ("l1", "l1_group") if name in params}
            plan = path.plan(point).but(**changes)
            relax = plan.relaxed
            plan = plan.but(relax=False, learning_rate=settled.get(
                "learning_rate", plan.run.learning_rate))
            penalized = plan if settle_tol is None else plan.but(
                weight_tol=max(plan.solver.weight_tol or 0.0, settle_tol))
            watched = plan.solver.restore_best or plan.solver.early_stopping
            eval_set = validation if watched else None
            start = last.get(setting) if warm else None
            first = working if setting not in last else None
            fit = PathFit(estimator, fitting.fit(
                penalized, train, eval_set, coef_init=start,
                working=first if start is None else np.zeros(0, dtype=np.int64)))
            if relax:  # its refit on the features it kept, which points keeping them share
                kept = (setting, tuple(fit.model.selected_indices()))
                if kept not in refits:
                    refits[kept] = PathFit(estimator, fitting.refit_kept(
                        plan if relax_epochs is None else plan.but(
                            max_iter=min(relax_epochs, plan.solver.max_iter)),
                        fit.fitted, train, eval_set))
                relaxed = refits[kept]
        last[setting] = fit.model.coef
        out.append(PathPoint(path.reported(settled, params), fit, relaxed))
        if patience is not None:
            score = max(judge(f) for f in (fit, relaxed) if f is not None)
            stale[setting] = 0 if score > best.get(setting, -np.inf) else stale.get(setting, 0) + 1
            best[setting] = max(score, best.get(setting, -np.inf))
        if _ON_FIT.get() is not None:
            _ON_FIT.get()(settled)
    return out


def path_sample(train, rows, seed):
    """The queries of ``train`` that a path walks when it holds more than
    ``rows`` rows: a seeded random order of its queries (``seed`` an int,
    else 0: the same sample every run), cut where the rows first reach
    ``rows``, kept in their own order."""
    seed = int(seed) if isinstance(seed, (int, np.integer)) else 0
    return train.subset(sample_queries(train, rows, seed))


def reads_codes(estimator, grid):
    """Whether every point of ``grid`` (a list of parameter dicts) is of an
    additive kind, whose fits read the training rows as bin codes alone."""
    return _reads_codes(_Walk(estimator, None, None, None), grid)


def _reads_codes(path, grid):
    return bool(grid) and all(path.plan(point).kind.additive for point in grid)


def keep_codes(estimator, grid, train, path_rows, then=None):
    """Keep a run's own training rows (``train``, which it never reads
    again; ``then()`` drops the caller's values) as bin codes alone
    (:meth:`~rsrank.reading.querydata.QueryData.keep_codes_alone`) when
    its path walks a sample of them (more than ``path_rows`` rows) and
    :func:`reads_codes`, at the ``max_bins`` every point settles to on them
    (:func:`~rsrank.learning.fitting.model_spec`; kept as values when they
    differ): the search, the sample and the refit then read codes, a
    quarter of the memory of float32 values, as LightGBM's trees read its
    bins. Returns whether it did."""
    path = _Walk(estimator, train, None, None)  # each point's setup built once
    if not (path_rows and train.n_rows > path_rows and _reads_codes(path, grid)):
        return False
    bins = {fitting.model_spec(path.plan(point), train).max_bins for point in grid}
    if len(bins) != 1:
        return False
    with coding_threads(estimator.n_jobs, train.n_rows * train.n_features):
        return train.keep_codes_alone(bins.pop(), then)


@contextlib.contextmanager
def one_search(estimator, grid, train, sample):
    """Within it, the path of ``grid`` walked on ``sample`` (a sample of
    ``train``'s queries, :func:`path_sample`) and the refit of its choice
    on ``train`` (:func:`refit_point`) take the pairs and grids of one pair
    search (:func:`~rsrank.learning.fitting.pair_search`), on ``train``
    with the objective of the grid's first setting of a kind with pairs:
    every fit of the path is judged with the pairs the chosen model keeps.
    A search on the sample itself, one per pair weighting, was a sixth of
    such a run's time at a tenth of MSLR-WEB30K's shape, and on
    ``make_web_like`` it missed a true pair (the agreement of two
    features) that the search on all the rows finds
    (``results/end_to_end_web_quarter_tried.md``). A grid without a kind
    with pairs searches nothing.

    Yields the points to walk: ``grid`` without the points of a kind with
    pairs at another pair weighting than the search's. Such a path walks
    the weighting its pairs were found with; at a tenth and a quarter of
    MSLR-WEB30K's shape the other one had never been chosen, and walking
    it took 14-32% of the run (``results/one_weighting_*.md``)."""
    path = _Walk(estimator, train, None, None)
    plans = [(point, path.plan(point)) for point in grid]
    searched = [plan for _, plan in plans if plan.kind.pairs]
    with contextlib.ExitStack() as held:
        if searched:
            weighting = searched[0].solver.objective.pair_weight
            grid = [point for point, plan in plans
                    if not plan.kind.pairs or plan.solver.objective.pair_weight == weighting]
            searched = [plan for plan in searched
                        if plan.solver.objective.pair_weight == weighting]
            found = fitting.pair_search(searched[0], train)
            for key in {fitting.search_key(plan, sample) for plan in searched}:
                sample.memo(key, lambda: found)  # the sample is the path's alone
            for key in {fitting.search_key(plan, train) for plan in searched}:
                held.enter_context(train.holding(key, found))
        del sample  # the caller may drop it before the refit
        yield grid


def refit_point(estimator, params, fit, train, validation):
    """The :class:`PathPoint` of ``params`` (a point as a path on a sample
    of ``train`` reported it, ``fit`` its :class:`PathFit`) fitted on all of
    ``train``: its strength as the same fraction of the whole data's edge,
    starting from the sample's penalized weights where they lead to the
    same fit (:func:`carried_weights`), else from zero. The choice's
    ``relax`` stays with it: a penalized choice is fitted without the
    relaxed refit it would not use, and a relaxed one is the relaxed fit
    of the terms (features, pairs) the sample's fit kept
    (:func:`~rsrank.learning.fitting.refit_terms`), without a penalized fit
    on all rows that would only choose them again. A kind with pairs
    takes the pairs the path was walked with (:func:`one_search`)."""
    params = dict(params)
    for ratio_name, name in RATIOS:
        if ratio_name in params:
            params.pop(name, None)
    model = (fit.fitted.penalized or fit.fitted).model
    path = _Walk(estimator, train, None, validation)
    plan = path.plan(params)
    if plan.run.relax:  # relaxed where its strength is above 0, as the walk decides
        settled = path.rate(params)[0]
        resolved = path.resolve(params, settled)
        plan = plan.but(**{name: resolved[name] for name in ("l1", "l1_group")
                           if name in resolved})
    if not plan.relaxed:
        return walk(estimator, [params], train, validation=validation, warm=True,
                    coef_init=carried_weights(estimator, params, model, train),
                    working=model.selected_terms())[0]
    plan = plan.but(relax=False, learning_rate=settled.get("learning_rate",
                                                           plan.run.learning_rate))
    watched = plan.solver.restore_best or plan.solver.early_stopping
    refit = fitting.refit_terms(plan, train, model.selected_terms(),
                                validation if watched else None)
    return PathPoint(path.reported(settled, resolved), PathFit(estimator, refit))


def carried_weights(estimator, point, model, train):
    """The weights of ``model`` (fitted on a sample of ``train`` at grid
    ``point``) for a fit of the point on all of ``train`` to start from, or
    None where that fit starts from zero.

    A linear model's weights read features scaled by the data they were
    fitted on, so each is carried over to the whole data's scaling. Only
    with the unit pair weight, though: its loss is convex in the weights,
    so any start ends at the one penalized optimum, and the sample's weights
    are close to it. Swap weights follow the ranking, so that loss is not
    convex and a fit ends where its start leads: from the sample's weights
    it settled where the sample's model ranked, significantly below the
    path on all rows on three of eight generated sets; from zero, as a
    path's first point starts, on none (``results/path_rows.md``). A kind
    whose weights read the bins of its data starts from zero too."""
    plan = fitting.setup({**estimator.get_params(deep=False),
                          **{k: v for k, v in point.items() if k not in STRENGTHS}})
    if plan.kind.additive or plan.solver.objective.pair_weight != "unit":
        return None
    whole = fitting.start(plan, train)
    if model.scale is None or whole.scale is None:
        return model.coef.copy()
    return model.coef * whole.scale / model.scale


def ndcg_on(model, data, k=10, convention=DEFAULT_CONVENTION):
    """Mean NDCG@k of a fitted estimator on a :class:`QueryData`."""
    return mean_ndcg(data.y, query_scores(model.model_, data, model.n_jobs, shared=True),
                     data.groups, k, convention=convention)


def path_rows(points, strength, splits, *, k=10, convention=DEFAULT_CONVENTION):
    """One row per point of a path, from the weakest penalty (as
    ``lasso_path`` lists them), of the fit the point stands for: ``l1`` (the
    value of ``strength``), ``n_nonzero`` (features in use), ``cost`` (their
    total ``feature_costs``), ``coef``, and NDCG@k on each of ``splits``
    (``{key: QueryData or None}``; None gives None); a model with pairs
    adds its ``pairs``."""
    rows = []
    for point in reversed(points):
        model = point.best
        row = {"l1": point.params[strength], "n_nonzero": len(model.model_.selected_indices()),
               "cost": model.feature_cost(), "coef": model.coef_.copy()}
        for key, data in splits.items():
            row[key] = None if data is None else ndcg_on(model, data, k, convention)
        if model.interactions > 0:
            row["pairs"] = [list(names) for names, _ in model.selected_interactions()]
        rows.append(row)
    return rows


def path_markdown(points, strength, *, title, command, convention, train, validation,
                  test=None, top=None, relax=False):
    """The report of a path (its points from strong to weak, listed from
    weak to strong, :func:`path_rows`): per point the strength, the
    features in use (and their cost with ``feature_costs``), and NDCG@10 on
    train, vali and test. Returns ``(markdown, rows)``, the rows as
    JSON-ready dicts (``l1``: the value of ``strength``)."""
    grid = ("" if top is None else f" The grid runs from {top:.4g}, the smallest {strength} "
            "that keeps every weight at zero, down to 1/1000 of it, and 0.")
    if relax:
        grid += (" Each point is refit on the features its penalized fit kept, without the "
                 "penalty (--relax; --no-relax shows the penalized fits).")
    first = points[0].best
    used, costed = first.model_.used_words, first.feature_costs is not None
    paired = first.interactions > 0  # a model with pairs: how many each point keeps
    lines = [f"# {title}", "", f"Command: `{command}`", "",
             f"NDCG@10 with the {convention!r} convention.{grid}", "",
             f"| {strength} | {used} |" + (" pairs in use |" if paired else "")
             + (" total cost |" if costed else "") + " train NDCG@10 | vali NDCG@10 | test NDCG@10 |",
             "|---|---|---|---|---|" + ("---|" if paired else "") + ("---|" if costed else "")]
    splits = {"train_ndcg": train, "val_ndcg": validation}
    if test is not None:
        splits["test_ndcg"] = test
    rows = path_rows(points, strength, splits, convention=convention)
    for row in rows:
        row["coef"] = row["coef"].tolist()
        tested = "" if test is None else f"{row['test_ndcg']:.4f}"
        cost = f" {row['cost']:.4g} |" if costed else ""
        pairs = f" {len(row['pairs'])} |" if paired else ""
        lines.append(f"| {row['l1']:.4g} | {row['n_nonzero']} |{pairs}{cost} "
                     f"{row['train_ndcg']:.4f} | {row['val_ndcg']:.4f} | {tested} |")
    return "\n".join(lines) + "\n", rows


def regularization_path(X, y, qid, l1_values, *, estimator=None, eval_set=None, test_set=None,
                        k=10, convention=DEFAULT_CONVENTION, warm_start=True,
                        strength="l1", position=None, impressions=None, session=None,
                        propensity=None):
    """Train along decreasing L1 strengths, each fit starting from the last
    (:func:`rsrank.learning.path.walk`: glmnet's order, from the sparsest model to
    the densest, so a strong penalty never starts from dense weights).

    Parameters
    ----------
    X, y, qid : training data.
    l1_values : sequence of float
        Values of g, visited in decreasing order.
    estimator : RSRank, optional
        Base parameters (default ``RSRank()``); ``learning_rate="auto"`` is
        settled once for the path, by the fit without a penalty.
    eval_set, test_set : tuple (X, y, qid), optional
        Validation data (also passed to ``fit``, so each point keeps its best
        validation epoch) and test data to evaluate.
    k, convention : NDCG cut-off and convention of the reported scores.
    warm_start : bool
        Start each fit from the previous point's weights.
    strength : {"l1", "l1_group"}
        The parameter ``l1_values`` set (``"l1_group"``: whole features in
        or out, as an additive model's path runs).
    position, impressions, session, propensity : array-like, optional
        With ``position``, ``X, y, qid`` are a click log, as
        :meth:`RSRank.fit` takes one, read with the position's bias taken
        out (:func:`rsrank.clicks.arrays.click_splits`); ``eval_set`` is
        then its vali log ``(X_val, clicks_val, qid_val, position_val[,
        session_val])``, judged as ``rsrank train --clicks`` judges it.

    Returns
    -------
    list of Bunch
        Per g, in increasing order of g: ``l1`` (the value of ``strength``),
        ``n_nonzero`` (features in use), ``cost`` (their total
        ``feature_costs``), ``coef``,
        ``train_ndcg`` and, when given, ``val_ndcg`` and ``test_ndcg``.
        With ``relax``, each point is its refit on the features it kept.
    """
    base = RSRank() if estimator is None else estimator
    splits = {"test_ndcg": None if test_set is None else QueryData(*test_set[:3])}
    if position is not None:
        found = click_splits(X, y, qid, position, impressions=impressions, session=session,
                             propensity=propensity, eval_set=eval_set, debias="on",
                             vali_fraction=None, params=base.get_params(deep=False))
        train, splits["val_ndcg"] = found.train["on"], found.vali.get("on")
    else:
        train = QueryData(X, y, qid)
        splits["val_ndcg"] = None if eval_set is None else QueryData(*eval_set[:3])
    points = walk(base, [{strength: float(g)} for g in sorted(l1_values, reverse=True)], train,
                  validation=splits["val_ndcg"], warm=warm_start)
    given = {"train_ndcg": train, **{key: data for key, data in splits.items()
                                      if data is not None}}
    return [Bunch(**{key: value for key, value in row.items() if key != "pairs"})
            for row in path_rows(points, strength, given, k=k, convention=convention)]
