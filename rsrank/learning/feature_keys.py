"""The parameters that name features: ``feature_costs``, ``monotone`` and
``exclude``, each a sequence in feature order or keyed by feature name or
index. They are resolved against a training set's features once, before
any work on the data (:func:`check_feature_keys` on its :class:`Columns`;
:meth:`FeatureKeys.resolved` keeps what it found for every later use on the
same features), and laid out on a model's weights as its penalty's groups
and factors, its held terms and its monotone directions
(:func:`rsrank.learning.fitting.laid_out`)."""

from dataclasses import dataclass, field, fields, replace

import numpy as np

from .model import feature_names_or_letor

__all__ = ["FeatureKeys", "Resolved", "feature_indices", "feature_costs", "penalty_layout",
           "excluded", "monotone_directions", "Columns", "check_feature_keys", "source_columns"]


@dataclass(frozen=True)
class FeatureKeys:
    """The parameters that name features, read from an estimator's
    parameters once (:meth:`of`): what each feature costs, the monotone
    direction of each, and the features held at zero. The functions below
    take it (or the parameters, which they read through it)."""

    feature_costs: object = None
    monotone: object = None
    exclude: object = None

    @classmethod
    def of(cls, params):
        """The keys of ``params`` (a :class:`FeatureKeys` is its own)."""
        if isinstance(params, cls):
            return params
        return cls(*(params[f.name] for f in fields(cls) if f.init))

    #: what :meth:`resolved` found, by the features it was resolved on
    found: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def resolved(self, columns):
        """These keys resolved on ``columns``' features (a :class:`Columns`
        or a model: their ``n_features`` and ``names()``) as a
        :class:`Resolved`, once per set of features: a fit sequence (a
        path, the step rates ``"auto"`` tries, a relaxed refit) lays out
        many models on one training set's features."""
        key = (columns.n_features, tuple(columns.names()))
        if key not in self.found:
            self.found[key] = _resolve(self, columns)
        return self.found[key]

    def excluding(self, exclude):
        """These keys with ``exclude`` in place of theirs (a relaxed refit
        holds the terms a penalized fit dropped), keeping the costs and
        directions already resolved."""
        keys = replace(self, exclude=exclude)
        for (width, names), found in self.found.items():
            keys.found[width, names] = replace(found, exclude=_read_only(
                _exclude_keys(exclude, Columns(width, names))))
        return keys


@dataclass(frozen=True, eq=False)
class Resolved:
    """:class:`FeatureKeys` resolved on a set of features: ``costs`` (a
    positive number per feature, or None), ``directions`` (1, -1 or 0 per
    feature, or None without constraints) and ``exclude`` (``(held,
    terms)``: a boolean per feature held in every term, and the terms held
    alone as sorted tuples of feature indices; or None), read-only."""

    costs: object
    directions: object
    exclude: object


def _resolve(keys, columns):
    """The :class:`Resolved` of ``keys`` on ``columns``; a wrong name or
    index, a feature given twice or a bad value refused in one line."""
    return Resolved(_read_only(_costs(keys.feature_costs, columns)),
                    _read_only(_directions(keys.monotone, columns)),
                    _read_only(_exclude_keys(keys.exclude, columns)))


def _read_only(found):
    """``found`` (an array, ``(held, terms)`` or None) made read-only."""
    array = found[0] if isinstance(found, tuple) else found
    if array is not None:
        array.setflags(write=False)
    return found


def feature_indices(model, keys, what):
    """The feature index of each of ``keys`` (an index, or a name of
    ``model``'s features), for the parameter ``what``; a feature given
    twice (by name and by index, say) is an error, not the later value."""
    width, names = model.n_features, model.names()
    where = {name: j for j, name in enumerate(names)}
    out, given = [], {}
    for key in keys:
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            if not 0 <= key < width:
                raise ValueError(f"{what}: feature index {key} is not in 0..{width - 1}")
            j = int(key)
        elif key in where:
            j = where[key]
        else:
            shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
            raise ValueError(f"{what}: no feature is named {key!r} (the features are {shown})")
        if j in given:
            how = {True: "its name", False: "its index"}
            raise ValueError(f"{what}: feature {names[j]!r} is given twice (by "
                             f"{how[isinstance(given[j], str)]} and by "
                             f"{how[isinstance(key, str)]}); give it once")
        given[j] = key
        out.append(j)
    return np.array(out, dtype=np.int64)


def feature_costs(params, model):
    """``feature_costs`` as one positive number per feature of ``model``
    (a sequence in feature order, or a dict by name or index; features a
    dict leaves out cost 1), or None."""
    return FeatureKeys.of(params).resolved(model).costs


def _costs(costs, model):
    if costs is None:
        return None
    width = model.n_features
    if isinstance(costs, dict):
        out = np.ones(width)
        out[feature_indices(model, costs, "feature_costs")] = list(costs.values())
    else:
        out = np.array(costs, dtype=np.float64).ravel()  # a copy: it is kept read-only
        if out.shape != (width,):
            raise ValueError(f"feature_costs has {out.size} values for {width} features")
    out = np.asarray(out, dtype=np.float64)
    if not np.all(np.isfinite(out)) or np.any(out <= 0):
        raise ValueError("feature_costs must be finite and > 0")
    return out


def penalty_layout(params, model):
    """``(groups, group_factors, weight_factors)`` of ``model``'s weights
    for :class:`~rsrank.learning.penalty.L1Penalty`: one group per term (a feature's
    weights, or a pair's cells: :meth:`groups` of the model), each weighed
    by the square root of its size times the cost of its features (a pair
    costs both of its features' costs); the L1 of each weight times its
    term's cost (None without ``feature_costs``)."""
    costs = feature_costs(params, model)
    groups = model.groups()
    sizes = np.diff(groups)
    term_costs = None if costs is None else np.array(
        [costs[list(features)].sum() for features in model.term_features()])
    factors = np.sqrt(sizes) * (1.0 if costs is None else term_costs)
    weights = None if costs is None else np.repeat(term_costs, sizes)
    return groups, factors, weights


def excluded(params, model):
    """``exclude`` as a boolean per term of ``model`` (its groups of
    weights), or None. A feature (a name or an index) holds every term it
    is in, its own shape and its pairs; a tuple of one feature holds only
    its own shape, a tuple of two only their pair."""
    keys = FeatureKeys.of(params).resolved(model).exclude
    if keys is None:
        return None
    held, terms = keys
    return np.array([bool(held[list(features)].any()) or tuple(features) in terms
                     for features in model.term_features()], dtype=bool)


def _exclude_keys(exclude, model):
    """``exclude`` resolved on ``model``'s features: ``(held, terms)``, a
    boolean per feature held in every term and the set of terms (sorted
    tuples of feature indices) held alone; None without ``exclude``."""
    if exclude is None:
        return None
    if isinstance(exclude, (str, bytes)) or not hasattr(exclude, "__iter__"):
        raise ValueError(f"exclude must be a sequence of feature names or indices, got "
                         f"{exclude!r}")
    exclude = list(exclude)
    held = np.zeros(model.n_features, dtype=bool)
    held[feature_indices(model, [key for key in exclude if not isinstance(key, (tuple, list))],
                         "exclude")] = True
    terms = set()
    for term in (key for key in exclude if isinstance(key, (tuple, list))):
        if len(term) not in (1, 2):
            raise ValueError(f"exclude: a term is a tuple of one feature (its shape) or two (a "
                             f"pair), got {term!r}")
        terms.add(tuple(sorted(feature_indices(model, term, "exclude").tolist())))
    return held, frozenset(terms)


@dataclass(frozen=True)
class Columns:
    """A training set's features as the parameters name them, before any
    model exists: their ``n_features`` and ``names()`` (the given names,
    else LETOR's ``"f1", "f2", ...``)."""

    n_features: int
    feature_names: tuple = None

    def names(self):
        return feature_names_or_letor(self.feature_names, self.n_features)


def check_feature_keys(params, columns):
    """Resolve the parameters that name features (``feature_costs``,
    ``monotone``, ``exclude``) against ``columns`` (:class:`Columns`) once,
    before any work on the data: a wrong name or index, a feature given
    twice, or a bad value is refused in one line."""
    FeatureKeys.of(params).resolved(columns)


def source_columns(source):
    """The :class:`Columns` of a data source (a QueryData, a stream's first
    block, a cluster's partitions)."""
    names = source.feature_names
    return Columns(source.n_features, None if names is None else tuple(names))


def monotone_directions(params, model):
    """``monotone`` as one direction per feature of ``model`` (1
    increasing, -1 decreasing, 0 free): a dict by name or index (features
    it leaves out are free) or a sequence in feature order; None without
    constraints."""
    return FeatureKeys.of(params).resolved(model).directions


def _directions(monotone, model):
    if monotone is None:
        return None
    width = model.n_features
    if isinstance(monotone, dict):
        out = np.zeros(width, dtype=np.int64)
        values = list(monotone.values())
        where = feature_indices(model, monotone, "monotone")
    else:
        if isinstance(monotone, (str, bytes)) or not hasattr(monotone, "__len__"):
            raise ValueError(f"monotone must be a dict of feature: direction or one direction "
                             f"per feature, got {monotone!r}")
        values, where = list(monotone), np.arange(len(monotone))
        if len(values) != width:
            raise ValueError(f"monotone has {len(values)} directions for {width} features")
        out = np.zeros(width, dtype=np.int64)
    for j, value in zip(where, values):
        if isinstance(value, bool) or value not in (-1, 0, 1):
            raise ValueError(f"monotone: the direction of {model.names()[j]!r} must be 1 "
                             f"(increasing), -1 (decreasing) or 0, got {value!r}")
        out[j] = int(value)
    return out if out.any() else None
