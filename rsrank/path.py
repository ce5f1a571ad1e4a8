"""The regularization path: one implementation for the library, the command
line, the experiments runner and the scripts.

A path fits one setting of the parameters at a sequence of penalty
strengths, strongest first, each fit starting from the weights of the
previous one (glmnet's order: a strong penalty never starts from dense
weights). Its pieces:

- the **edge** of the path, the smallest strength that keeps every weight
  at zero, scaled to the training data (:func:`rsrank.fitting.edge`; the
  kind says which penalty a path walks, :attr:`rsrank.kinds.Kind.strength`);
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
from dataclasses import dataclass

import numpy as np
from sklearn.base import clone

from .metrics import DEFAULT_CONVENTION, mean_ndcg
from .model import query_scores

__all__ = ["l1_grid", "STRENGTHS", "RATIOS", "PathPoint", "walk", "path_markdown",
           "reporting_fits"]

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


@dataclass
class PathPoint:
    """One point of a path: the ``params`` it was fitted with (strengths
    given as fractions of the edge also as the strength they stand for,
    and the step size settled for the path), the penalized fit ``model``
    and, with ``relax``, its ``refit`` on the features it kept (shared with
    the points that keep the same features)."""

    params: dict
    model: object
    refit: object = None

    @property
    def fits(self):
        """``[(params, fitted estimator)]``: the penalized fit, and with
        ``relax`` the refit, each with the ``relax`` it stands for."""
        if self.refit is None:
            return [(self.params, self.model)]
        return [({**self.params, "relax": False}, self.model),
                ({**self.params, "relax": True}, self.refit)]

    @property
    def best(self):
        """The fit the point stands for: the refit with ``relax``."""
        return self.model if self.refit is None else self.refit


def _setting(params):
    return repr(sorted((k, v) for k, v in params.items() if k not in STRENGTHS))


def _base(estimator, params):
    """``estimator`` with ``params`` but the penalty strengths."""
    return clone(estimator).set_params(**{k: v for k, v in params.items()
                                          if k not in STRENGTHS})


class _Edges:
    """The edges of one training set, each computed once per setting of the
    other parameters, and each setting's step size settled once."""

    def __init__(self, estimator, train, chunks, validation):
        self.estimator, self.train, self.chunks = estimator, train, chunks
        self.validation, self.tops, self.dense = validation, {}, {}

    def resolve(self, params):
        """``params`` with each fraction of an edge as the strength it stands for."""
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
            base = _base(self.estimator, params)
            key = (name, repr(sorted((k, v) for k, v in base.get_params().items()
                                     if k not in STRENGTHS)))
            if key not in self.tops:
                self.tops[key] = self.edge(base, name)
            params[name] = float(ratio) * self.tops[key]
        return params

    def edge(self, base, name):
        if name == "l1_group":
            if self.train is None:
                raise ValueError("l1_group_ratio needs the training data in memory "
                                 "(not --stream)")
            return base.l1_group_max(self.train)
        return (base.l1_max(self.train) if self.train is not None
                else base.l1_max_chunks(self.chunks))

    def rate(self, params):
        """``params`` with ``learning_rate="auto"`` settled once per setting:
        the fit without a penalty chooses it on the validation queries, and
        is returned for a point without a penalty. Streamed training keeps
        ``"auto"`` (1e-2)."""
        dense = {k: v for k, v in params.items() if k not in STRENGTHS}
        if _base(self.estimator, dense).learning_rate != "auto" or self.train is None:
            return params, None
        key = repr(sorted(dense.items()))
        if key not in self.dense:
            self.dense[key] = _base(self.estimator, dense).set_params(l1=0.0, l1_group=0.0).fit(
                self.train, eval_set=self.validation)
        model = self.dense[key]
        without = all(params.get(name, 0.0) == 0 for name in STRENGTHS)
        return {**params, "learning_rate": model.learning_rate_}, (model if without else None)


def walk(estimator, points, train, *, validation=None, chunks=None, warm=True):
    """Fit ``estimator`` at each of ``points`` (dicts of parameters, in the
    order given; a path lists its strengths from strong to weak) on
    ``train`` (a :class:`~rsrank.querydata.QueryData`), each point starting
    from the penalized weights of the previous point of the same setting
    of the other parameters (``warm``). ``validation`` is passed to the fits
    that keep their best epoch or stop early. ``chunks`` (with ``train``
    None) streams the training data (:meth:`RSRank.fit_chunks`, no warm
    starts). Returns a :class:`PathPoint` per point."""
    edges = _Edges(estimator, train, chunks, validation)
    last, refits, out = {}, {}, []
    for point in points:
        setting = _setting(point)
        settled, fitted = edges.rate(point)
        params = edges.resolve(settled)
        model, refit = clone(estimator).set_params(**params), None
        if fitted is not None:  # the fit that chose the rate
            model = fitted
        elif train is None:  # streamed from disk, one block of queries at a time
            model.fit_chunks(chunks, eval_set=validation)
            if validation.feature_names is not None:
                model.set_feature_names(validation.feature_names)
        else:
            watched = model.restore_best or model.early_stopping
            eval_set = validation if watched else None
            relax = model.setup().relaxed
            model.set_params(relax=False).fit(train, eval_set=eval_set,
                                              coef_init=last.get(setting) if warm else None)
            if relax:  # its refit on the features it kept, which points keeping them share
                kept = (setting, tuple(model.model_.selected_indices()))
                if kept not in refits:
                    refits[kept] = model.refit_kept(train, eval_set=eval_set)
                refit = refits[kept]
        last[setting] = model.coef_
        for ratio_name, name in RATIOS:
            if ratio_name in settled:
                params = {**settled, **params, name: params[name]}
        out.append(PathPoint(params, model, refit))
        if _ON_FIT.get() is not None:
            _ON_FIT.get()(settled)
    return out


def ndcg_on(model, data, k=10, convention=DEFAULT_CONVENTION):
    """Mean NDCG@k of a fitted estimator on a :class:`QueryData`."""
    return mean_ndcg(data.y, query_scores(model.model_, data, model.n_jobs), data.groups, k,
                     convention=convention)


def path_markdown(points, strength, *, title, command, convention, train, validation,
                  test=None, top=None, relax=False):
    """The report of a path (its points from strong to weak, listed from
    weak to strong): per point the strength, the features in use (and their
    cost with ``feature_costs``), and NDCG@10 on train, vali and test.
    Returns ``(markdown, rows)``, the rows as JSON-ready dicts (``l1``: the
    value of ``strength``)."""
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
    rows = []
    for point in reversed(points):  # from the weakest penalty, as lasso_path lists them
        model = point.best
        scores = [ndcg_on(model, data, convention=convention) if data is not None else None
                  for data in (train, validation, test)]
        row = {"l1": point.params[strength], "n_nonzero": len(model.model_.selected_indices()),
               "cost": model.feature_cost(), "coef": model.coef_.tolist(),
               "train_ndcg": scores[0], "val_ndcg": scores[1]}
        if test is not None:
            row["test_ndcg"] = scores[2]
        if paired:
            row["pairs"] = [list(names) for names, _ in model.selected_interactions()]
        rows.append(row)
        tested = "" if test is None else f"{scores[2]:.4f}"
        cost = f" {row['cost']:.4g} |" if costed else ""
        pairs = f" {len(row['pairs'])} |" if paired else ""
        lines.append(f"| {row['l1']:.4g} | {row['n_nonzero']} |{pairs}{cost} {scores[0]:.4f} | "
                     f"{scores[1]:.4f} | {tested} |")
    return "\n".join(lines) + "\n", rows
