"""Models out to search engines: one function per format.

Only features with a non-zero weight appear in an export: each one left out
is a feature the engine never computes. A global scaling becomes the
engine's normaliser (or is folded into the weights); a per-query scaling
cannot be computed from one document and is refused, as is a model without
a non-zero weight. A ``Pipeline`` of per-feature scalers ending in RSRank is
exported whole. An additive model's shapes and pairs are written as trees
(:mod:`rsrank.deployment.trees`). A document that lacks a feature scores as
``predict`` scores it: with 0 there, or with NaN for a feature trained with
missing values. The guide's "What each engine computes" gives each format's
semantics, as the tests reproduce them.
"""

import copy
import json
import re
from dataclasses import dataclass, replace

import numpy as np

from ._formats import FORMATS
from .engines import ENGINES, EngineError, engine_scores
from ..learning.kinds import for_kind
from .trees import (exact_text, feature_cuts, shape_trees, solr_node, solr_scale_exponent,
                    vespa_feature, vespa_node, xgboost_tree)

__all__ = ["FORMATS", "export_model", "to_solr", "to_elasticsearch", "to_opensearch", "to_vespa",
           "upload_hint", "guarantee", "engine_features", "featureset_subset", "fold_pipeline",
           "shape_trees", "solr_scale_exponent", "missing_branches", "WRITERS",
           "solr_feature_store", "solr_defaults", "parity", "reordered_queries",
           "trained_with_missing", "checked_engines", "ENGINE_VERSIONS"]



def _number(value):
    """The shortest text that reads back as the same float64."""
    return float(repr(float(value)))


def _per_feature_affine(step, width):
    """``(a, b)``: the scaler ``step`` as ``x -> a x + b`` per feature."""
    name = type(step).__name__
    if step is None or step == "passthrough":
        return np.ones(width), np.zeros(width)
    if name == "StandardScaler":
        mean = step.mean_ if getattr(step, "with_mean", True) and step.mean_ is not None \
            else np.zeros(width)
        scale = step.scale_ if getattr(step, "with_std", True) and step.scale_ is not None \
            else np.ones(width)
        return 1.0 / scale, -mean / scale
    if name == "MinMaxScaler":
        if getattr(step, "clip", False):
            raise ValueError("MinMaxScaler(clip=True) is not affine: an engine cannot apply it")
        return np.asarray(step.scale_, dtype=float), np.asarray(step.min_, dtype=float)
    if name == "MaxAbsScaler":
        return 1.0 / step.scale_, np.zeros(width)
    raise ValueError(f"a pipeline step {name} is not a per-feature scaler an engine can apply "
                     "(StandardScaler, MinMaxScaler, MaxAbsScaler or 'passthrough')")


def fold_pipeline(model):
    """``model`` itself, or for a ``Pipeline`` ending in a fitted RSRank a
    copy of that RSRank whose scaling also holds the pipeline's scalers."""
    steps = getattr(model, "steps", None)
    if steps is None:
        return model
    ranker = steps[-1][1]
    if not hasattr(ranker, "model_"):
        raise ValueError("the pipeline's last step is not a fitted RSRank")
    return _writer(ranker).fold(ranker, steps)


def _fold_scalers(ranker, steps):
    """A linear model's pipeline: its scalers folded into its scaling."""
    width = ranker.n_features_in_
    a, b = np.ones(width), np.zeros(width)
    for _, step in steps[:-1]:
        step_a, step_b = _per_feature_affine(step, width)
        a, b = step_a * a, step_a * b + step_b
    if np.any(a <= 0) or not np.all(np.isfinite(a)):
        raise ValueError("a pipeline scaler has a zero or negative factor; an engine's "
                         "normaliser cannot express it")
    inner = ranker.model_
    if not inner.deployable:
        ranker.linear_function()  # raises with the reason
    # (a x + b - offset) / scale = (x - (offset - b) / a) / (scale / a)
    normalize = "minmax" if ranker.normalize == "minmax" else "zscore"
    given = getattr(steps[0][1], "feature_names_in_", None)
    names = inner.names() if given is None else list(given)
    folded = copy.copy(ranker)
    folded.normalize = normalize
    # a missing value the model fills with f is, before the scalers, the raw value (f - b) / a
    fill = None if inner.fill is None else (np.asarray(inner.fill) - b) / a
    folded.model_ = replace(inner, normalize=normalize, offset=(inner.offset - b) / a,
                            scale=inner.scale / a, feature_names=[str(n) for n in names],
                            names_from_columns=False, fill=fill)
    return folded


def _refuse_scalers(ranker, steps):
    """A step model's pipeline: no scaler, its thresholds are on raw values."""
    if any(step is not None and step != "passthrough" for _, step in steps[:-1]):
        raise ValueError("an additive model's thresholds are on the values its pipeline "
                         "scaled, which the engine does not see: train it on the raw "
                         "features (its steps need no scaling) and export it alone")
    return ranker


def _check_deployable(model):
    """Raise for a model an engine cannot evaluate from one document, or
    one without a non-zero weight."""
    if not model.model_.deployable:
        model.linear_function()  # raises for per-query scaling, with the reason
    if not np.any(model.coef_):
        raise ValueError("the model has no non-zero weight: it ranks every document alike "
                         "and there is nothing to export (train with a weaker l1)")


def engine_features(model):
    """``[(column, name)]`` of the features with a non-zero weight: the
    features the engine must compute."""
    names = model.feature_names()
    return [(int(j), names[j]) for j in model.model_.selected_indices()]


# -- additive models as trees -------------------------------------------------------
#
# One meaning of "missing" everywhere: a document that lacks a feature scores
# as predict scores it with the value 0 there, which is what the feature is in
# a sparse LETOR file and what the model was trained on, or with NaN there for
# a feature trained with missing values (its own bin, where a NaN goes). Each engine holds
# something else for a missing feature (0, NaN, or the feature's default) and
# routes NaN by a rule of its own, so each format steers it to the leaf of 0.
#
# Numbers travel as the shortest decimal of the float32's exact double value:
# Java's Float.parseFloat and (float) Double.parseDouble both read that text
# back as the same float32, and Vespa reads it as that double.


def _solr_trees(model, missing=True):
    trees = [tree for _, tree in shape_trees(model)]
    scales, features = {}, []
    # one normaliser per feature: its scaling must land every threshold of
    # every tree it is split in (its shape's and its pairs')
    for feature, cuts in feature_cuts(trees).items():
        scale = solr_scale_exponent(cuts) if cuts else 0
        if scale is None:
            raise ValueError(f"feature {feature!r}: Solr adds 1e-6 to every threshold it reads, "
                             "and no power-of-two scaling of this feature keeps all its "
                             "thresholds exact (they span too many orders of magnitude); "
                             "rescale the feature or use fewer bins (--max-bins)")
        scales[feature] = scale
    for _, feature in engine_features(model):
        if feature not in scales:
            continue
        entry = {"name": feature}
        if scales.get(feature, 0):
            # (value - 0) / 2**-scale is exact in float32 and keeps every
            # value's order; a missing 0 stays 0 and NaN stays NaN
            entry["norm"] = {"class": "org.apache.solr.ltr.norm.StandardNormalizer",
                             "params": {"avg": "0.0",
                                        "std": exact_text(2.0 ** -scales[feature])}}
        features.append(entry)
    return features, [{"weight": "1.0", "root": solr_node(tree, scales, missing)}
                      for tree in trees]


def _scaling(model):
    if model.normalize in ("zscore", "minmax"):
        return model.feature_offset_, model.feature_scale_
    return None


def to_solr(model, *, name="rsrank", store="_DEFAULT_", missing=True):
    """The Solr LTR model JSON (a dict) for ``/schema/model-store``: a
    ``LinearModel``, or a ``MultipleAdditiveTreesModel`` for step functions.

    Parameters
    ----------
    model : fitted RSRank
    name : str
        Model name, as used in ``{!ltr model=NAME}``.
    store : str
        Feature store holding features of the model's feature names.
    missing : bool
        Write each tree node's ``missing`` branch (an additive model),
        which Solr 9.2 and later read; Solr before 9.2 refuses the key.
    """
    model = fold_pipeline(model)
    _check_deployable(model)
    kind, features, params = _writer(model).solr(model, missing)
    return {"store": store, "name": name, "class": f"org.apache.solr.ltr.model.{kind}",
            "features": features, "params": params}


def _solr_additive(model, missing):
    features, trees = _solr_trees(model, missing)
    params = {"trees": trees}
    if missing and _missing_bins(model):
        # a JSON boolean: Solr's setter takes a boolean, and the string "false" fails to
        # load; with the feature store's defaultValue "NaN" (solr_feature_store), a lacking
        # feature then takes the missing branches, as predict scores NaN
        params["isNullSameAsZero"] = False
    return "MultipleAdditiveTreesModel", features, params


def _solr_linear(model, missing):
    scaling = _scaling(model)
    features, weights = [], {}
    for j, feature in engine_features(model):
        entry = {"name": feature}
        if scaling is not None and model.normalize == "zscore":
            entry["norm"] = {"class": "org.apache.solr.ltr.norm.StandardNormalizer",
                             "params": {"avg": repr(_number(scaling[0][j])),
                                        "std": repr(_number(scaling[1][j]))}}
        elif scaling is not None:
            entry["norm"] = {"class": "org.apache.solr.ltr.norm.MinMaxNormalizer",
                             "params": {"min": repr(_number(scaling[0][j])),
                                        "max": repr(_number(scaling[0][j] + scaling[1][j]))}}
        features.append(entry)
        weights[feature] = _number(model.coef_[j])
    return "LinearModel", features, {"weights": weights}


def to_elasticsearch(model, *, name="rsrank", guard=True):
    """The Elasticsearch LTR plugin's ``_createmodel`` request body (a dict):
    a ``model/linear`` definition with ``feature_normalizers``, or a
    ``model/xgboost+json`` one for step functions. ``guard=False`` leaves
    out the trees' guard that OpenSearch LTR 3.2 to 3.7 needs for a lacking
    feature (:func:`rsrank.deployment.trees.xgboost_tree`): the other versions then
    also score a value beyond float32's range as predict does."""
    model = fold_pipeline(model)
    _check_deployable(model)
    return {"model": {"name": name, "model": _writer(model).plugin(model, guard)}}


def _plugin_additive(model, guard=True):
    trees = [xgboost_tree(tree, guard) for _, tree in shape_trees(model)]
    return {"type": "model/xgboost+json", "definition": json.dumps(trees)}


def _plugin_linear(model, guard=True):  # a linear model has no trees to guard
    fill = _fill(model)
    filled = [(name, fill[j]) for j, name in engine_features(model) if fill[j] != 0]
    if filled:
        raise ValueError(f"the model fills a missing {filled[0][0]} with {filled[0][1]:.6g}, not 0 "
                         "(missing='mean'), and the Elasticsearch/OpenSearch plugin holds 0 for "
                         "a missing feature: train with missing='zero' (--missing zero) for "
                         "this engine, or export to Solr or Vespa")
    scaling = _scaling(model)
    definition, normalizers = {}, {}
    for j, feature in engine_features(model):
        definition[feature] = _number(model.coef_[j])
        if scaling is not None:
            normalizers[feature] = {"standard": {"mean": _number(scaling[0][j]),
                                                 "standard_deviation": _number(scaling[1][j])}}
    body = {"type": "model/linear", "definition": json.dumps(definition)}
    if normalizers:
        body["feature_normalizers"] = normalizers
    return body


def to_opensearch(model, *, name="rsrank", guard=True):
    """The OpenSearch LTR plugin's ``_createmodel`` body (the same format)."""
    return to_elasticsearch(model, name=name, guard=guard)


def _vespa_value(feature, fill=0.0):
    """An attribute as a linear term reads it: a float or double attribute a
    document lacks is NaN, which would make the whole score NaN; it counts
    as ``fill`` instead (0, or what ``missing="mean"`` fills), as in
    predict. Rank features (``bm25(title)``) always have a value."""
    if feature.startswith("attribute("):
        return f"if(isNan({feature}) == 1.0, {_number(fill)!r}, {feature})"
    return feature


def _vespa_name(kind, name):
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", name):
        raise ValueError(f"{kind} {name!r} is not a Vespa name (letters, digits, '_' and "
                         "'-', not starting with a digit or '-')")
    return name


def to_vespa(model, *, name="rsrank", inherits="default"):
    """A Vespa ``rank-profile`` (text) whose first phase is the model on raw
    feature values: global scaling folded into the weights and a constant."""
    model = fold_pipeline(model)
    _check_deployable(model)
    used = engine_features(model)
    names = model.feature_names()
    body = " +\n                ".join(_writer(model).vespa(model))
    header = (f"rank-profile {_vespa_name('rank-profile name', name)}"
              + (f" inherits {_vespa_name('inherited profile', inherits)}" if inherits else ""))
    missing = _missing_bins(model)
    lacking = ("    # document lacks scores as the value 0, as in RSRank's predict, or as a\n"
               "    # missing value (NaN) for a feature the model was trained with NaN in:\n"
               f"    # {', '.join(names[j] for j in missing)}.\n" if missing else
               "    # document lacks scores as the value 0, as in RSRank's predict.\n")
    return (f"{header} {{\n"
            f"    # RSRank model: {len(used)} of {model.n_features_in_} features. An attribute a\n"
            f"{lacking}"
            f"    first-phase {{\n"
            f"        expression {{\n"
            f"                {body}\n"
            f"        }}\n"
            f"    }}\n"
            f"}}\n")


def _vespa_additive(model):
    return [vespa_node(tree) for _, tree in shape_trees(model)]


def _vespa_linear(model):
    weights, constant = model.linear_function()
    fill = _fill(model)
    return [f"{_number(weights[j])!r} * {_vespa_value(vespa_feature(feature), fill[j])}"
            for j, feature in engine_features(model)] + [repr(_number(constant))]


def _fill(model):
    """What a missing value of each feature of a linear model stands for
    (0, or its ``missing="zero"``/``"mean"`` fill)."""
    return np.nan_to_num(model.model_.missing_values(), nan=0.0)


def export_model(model, form, *, name="rsrank", store="_DEFAULT_", solr_missing=True,
                 guard=True):
    """The model as text in format ``form`` (one of :data:`FORMATS`);
    ``guard``: see :func:`to_elasticsearch`."""
    if form == "solr":
        return json.dumps(to_solr(model, name=name, store=store, missing=solr_missing),
                          indent=2) + "\n"
    if form in ("elasticsearch", "opensearch"):
        return json.dumps(to_elasticsearch(model, name=name, guard=guard), indent=2) + "\n"
    if form == "vespa":
        return to_vespa(model, name=name)
    raise ValueError(f"export format must be one of {FORMATS}, got {form!r}")


def upload_hint(form, *, featureset="rsrank_features", store="_DEFAULT_"):
    """Where the exported text goes, as one line."""
    return {
        "solr": f"PUT it to /solr/<collection>/schema/model-store (features from store {store!r})",
        "elasticsearch": f"POST it to _ltr/_featureset/{featureset}/_createmodel",
        "opensearch": f"POST it to _ltr/_featureset/{featureset}/_createmodel",
        "vespa": "add the rank-profile to the schema (.sd) and deploy",
    }[form]


def guarantee(form, model, guard=True):
    """What the engine's scores of the export promise, as one line."""
    model = fold_pipeline(model)
    writer = _writer(model)
    promise = writer.promises[form]
    if not guard and writer.missing_branches and form in ("elasticsearch", "opensearch"):
        promise = _UNGUARDED_PROMISE
    return (f"every document scores as predict scores it{promise}"
            + (_MISSING_PROMISES[form] if _missing_bins(model) else ""))


#: what step functions' trees without the guard promise in the plugins
_UNGUARDED_PROMISE = (" to float32 rounding, a value beyond float32's range (above 3.4e38) "
                      "included, in Elasticsearch LTR from 1.5.9 and OpenSearch LTR from 3.8, "
                      "where a feature a document lacks scores as 0 too; OpenSearch LTR 3.2-3.7 "
                      "sends a lacking feature down every tree's right branches: export with "
                      "the guard (without --no-nan-guard) for those versions")


#: per format, the versions of its engine's rules (:data:`rsrank.deployment.engines.ENGINES`)
ENGINE_VERSIONS = {"solr": ("solr", "solr-nan"),
                   "elasticsearch": ("elasticsearch-1.5.8", "elasticsearch"),
                   "opensearch": ("opensearch-3.7", "opensearch"),
                   "vespa": ("vespa-float", "vespa-double")}
#: per format, the versions that hold 0 for a lacking feature, which the
#: promise for a feature trained with missing values leaves out
_HOLD_ZERO = {"solr": ("solr",), "elasticsearch": ("elasticsearch-1.5.8",)}


def checked_engines(form, model, guard=True):
    """``(engines, outside)``: the versions of ``form``'s engine an export of
    ``model`` is for (``solr-nan`` only for a model with missing branches,
    OpenSearch LTR 3.2-3.7 only with the guard), and those among them that
    :func:`guarantee` leaves out."""
    engines = [engine for engine in ENGINE_VERSIONS[form]
               if (engine != "solr-nan" or missing_branches(model))
               and (guard or engine != "opensearch-3.7")]
    outside = _HOLD_ZERO.get(form, ()) if missing_branches(model) else ()
    return engines, [engine for engine in engines if engine in outside]


def _missing_bins(model):
    """The features trained with missing values (a missing value's bin)."""
    return np.flatnonzero(np.isnan(model.model_.missing_values())).tolist()


#: ... and of features trained with missing values (NaN), whose missing
#: value's bin a document lacking the feature takes, as predict scores NaN
_MISSING_PROMISES = {
    "solr": "; a feature trained with missing values scores a document lacking it as predict "
            "scores NaN from Solr 9.2, whose isNullSameAsZero the model sets false, when the "
            "feature store gives it defaultValue \"NaN\" (--solr-features FULL OUT writes "
            "that store); with the store's default, 0, it is 0",
    "elasticsearch": "; a feature trained with missing values scores a document lacking it as "
                     "predict scores NaN from the Elasticsearch plugin 1.5.9 and OpenSearch's "
                     "3.2 (earlier plugins hold 0)",
    "vespa": "; an attribute trained with missing values scores a document lacking it as "
             "predict scores NaN"}
_MISSING_PROMISES["opensearch"] = _MISSING_PROMISES["elasticsearch"]


#: what each format's engine scores of a linear model promise
_LINEAR_PROMISES = {
    "solr": " to float32 rounding; a feature a document lacks is its defaultValue: keep Solr's "
            "default, 0",
    "elasticsearch": " to float32 rounding; a feature a document lacks is 0 in the plugin",
    "vespa": " (to float32 rounding of float attributes); an attribute a document lacks scores "
             "as 0 (an int attribute holds its own default: give it a value)"}
#: ... and of step functions written as trees
_TREE_PROMISES = {
    "solr": " to float32 rounding; a feature a document lacks scores as 0 with Solr's defaults "
            "(isNullSameAsZero true, defaultValue 0) and, from Solr 9.2, with "
            "isNullSameAsZero false",
    "elasticsearch": " to float32 rounding; a feature a document lacks scores as 0 in every "
                     "plugin version; a value beyond float32's range (above 3.4e38), which the "
                     "plugin reads as infinity, can score as a lacking feature: OpenSearch LTR "
                     "3.2-3.7 sends NaN and infinity alike down every tree, and the trees keep "
                     "NaN right (--no-nan-guard scores it as predict does in Elasticsearch LTR "
                     "1.5.9+ and OpenSearch LTR 3.8+)",
    # Vespa sums doubles; a float attribute holds the float32 of a value
    "vespa": "; float and double attributes split exactly where predict does; an attribute a "
             "document lacks scores as 0 (an int attribute holds its own default: give it a "
             "value)"}


@dataclass(frozen=True)
class _Writer:
    """How one kind of model is written: its pipeline fold, its Solr model
    (class name, features, params), its plugin model body, its Vespa terms,
    what each engine's scores promise, and whether its trees carry missing
    branches (which Solr reads with ``isNullSameAsZero`` false)."""

    fold: object
    solr: object
    plugin: object
    vespa: object
    promises: dict
    missing_branches: bool


#: step functions (and a pair's table) as trees
_TREES = _Writer(_refuse_scalers, _solr_additive, _plugin_additive, _vespa_additive,
                 {**_TREE_PROMISES, "opensearch": _TREE_PROMISES["elasticsearch"]},
                 missing_branches=True)
#: the writer of each model kind (:data:`rsrank.learning.kinds.KINDS`); a model with
#: pairs is written as an additive one: its pairs are trees too
WRITERS = {
    "linear": _Writer(_fold_scalers, _solr_linear, _plugin_linear, _vespa_linear,
                      {**_LINEAR_PROMISES, "opensearch": _LINEAR_PROMISES["elasticsearch"]},
                      missing_branches=False),
    "additive": _TREES,
    "interactions": _TREES,
}


def _writer(model):
    """The writer of a fitted RSRank's model kind."""
    return for_kind(WRITERS, model.model_.kind, "export writer")


def missing_branches(model):
    """Whether the export of ``model`` routes a missing feature by its own
    branches (tree models), which only some engine settings read."""
    return _writer(fold_pipeline(model)).missing_branches


def solr_feature_store(features, model):
    """The Solr LTR features of ``model`` (a list to ``PUT`` to
    ``/schema/feature-store``), from ``features``, the user's full list of
    feature definitions (``{"name", "class", "params", "store"}`` each):
    only the model's features, each with the ``defaultValue`` a document
    lacking it needs (:func:`solr_defaults`): ``"NaN"`` for a feature the
    model was trained with missing values in, so that such a document is a
    missing value (with the model's ``isNullSameAsZero`` false), not 0; a
    linear model's fill for ``missing="mean"``. Raises ``ValueError``
    naming a model feature the list lacks, or one it defines twice."""
    if isinstance(features, dict):
        features = [features]
    if not isinstance(features, list) or not all(
            isinstance(f, dict) and isinstance(f.get("name"), str) for f in features):
        raise ValueError("a feature store is a list of features [{'name': ..., 'class': ..., "
                         "'params': {...}}, ...]")
    by_name = {}
    for feature in features:
        if feature["name"] in by_name:
            raise ValueError(f"the feature store defines {feature['name']!r} twice")
        by_name[feature["name"]] = feature
    model = fold_pipeline(model)
    used = [name for _, name in engine_features(model)]
    lacking = [name for name in used if name not in by_name]
    if lacking:
        raise ValueError(f"the feature store has no feature {lacking[0]!r} of the model "
                         f"({len(lacking)} missing)")
    defaults = solr_defaults(model)
    out = []
    for name in used:
        feature = copy.deepcopy(by_name[name])
        if name in defaults:
            params = feature.get("params") or {}
            if not isinstance(params, dict):
                raise ValueError(f"feature {name!r}: its params are not an object")
            feature["params"] = dict(params, defaultValue=defaults[name])
        out.append(feature)
    return out


def solr_defaults(model):
    """``{feature name: defaultValue}`` of the model's features whose value
    for a document lacking them is not Solr's default 0: ``"NaN"`` for one
    an additive model was trained with missing values in, the fill of a
    linear model's ``missing="mean"`` (a float32 decimal)."""
    model = fold_pipeline(model)
    names = model.feature_names()
    used = {j for j, _ in engine_features(model)}
    fill = _fill(model)
    out = {names[j]: "NaN" for j in _missing_bins(model) if j in used}
    out.update({names[j]: exact_text(fill[j]) for j in sorted(used) if fill[j] != 0})
    return out


def featureset_subset(featureset, model):
    """The body of an Elasticsearch/OpenSearch LTR featureset holding only
    the model's features, from ``featureset``, the full one (the body
    ``{"featureset": {"features": [...]}}`` of ``POST _ltr/_featureset/<set>``
    or its ``features`` list). Raises ``ValueError`` naming a model feature
    the featureset lacks, or one it defines twice."""
    features = featureset
    if isinstance(features, dict):
        features = features.get("featureset", features).get("features")
    if not isinstance(features, list) or not all(
            isinstance(f, dict) and isinstance(f.get("name"), str) for f in features):
        raise ValueError("a featureset is {'featureset': {'features': [{'name': ...}, ...]}}")
    by_name = {}
    for feature in features:
        if feature["name"] in by_name:
            raise ValueError(f"the featureset defines {feature['name']!r} twice")
        by_name[feature["name"]] = feature
    used = [name for _, name in engine_features(model)]
    missing = [name for name in used if name not in by_name]
    if missing:
        raise ValueError(f"the featureset has no feature {missing[0]!r} of the model "
                         f"({len(missing)} missing)")
    return {"featureset": {"features": [by_name[name] for name in used]}}


# -- parity with predict --------------------------------------------------------------


def reordered_queries(reference, scores, qid):
    """The queries whose documents ``scores`` order differently from
    ``reference``: some pair ranked the other way round, or tied in one and
    not in the other."""
    reference, scores, qid = (np.asarray(a) for a in (reference, scores, qid))
    out = []
    for q in np.unique(qid):
        rows = np.flatnonzero(qid == q)
        a, b = reference[rows], scores[rows]
        if np.any(np.sign(a[:, None] - a[None, :]) != np.sign(b[:, None] - b[None, :])):
            out.append(q.item())
    return out


def trained_with_missing(model):
    """One bool per feature: whether a document lacking it is not the value
    0 for ``model`` (a fitted estimator): a missing value scored by its own
    step (an additive model trained with NaN in it), or a linear model's
    nonzero fill (``missing="mean"``); the model's ``missing_values()``."""
    values = model.model_.missing_values()
    return np.isnan(values) | (values != 0)


def parity(model, X, qid, engines=ENGINES, **export_options):
    """Each engine's scores of ``model``'s export against ``model.predict``
    on the rows ``X`` of queries ``qid``: as given, and with every 0 sent
    to the engine as a missing feature. Each feature is judged by what a
    missing value means for it: predict still sees the 0 of a feature
    trained without missing values (a lacking feature is 0 there), and a
    NaN for one trained with them (:func:`trained_with_missing`).

    Returns ``{engine: {"accepted", "error", "max_abs_difference",
    "reordered", "max_abs_difference_missing", "reordered_missing",
    "queries"}}``; a refused export has ``accepted`` False and its
    ``error``.
    """
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=np.float64)
    names = model.feature_names()
    # solr-nan: the feature store rsrank export --solr-features writes (NaN for a
    # feature trained with missing values, a linear model's fill, else Solr's 0)
    store = {name: 0.0 for name in names} | {
        name: float(value) for name, value in solr_defaults(model).items()}
    expected = model.predict(X)
    absent = np.where(X == 0, np.nan, X)
    expected_absent = model.predict(np.where(trained_with_missing(model), absent, X))
    out = {}
    texts = {}  # one export per format, scored by each version of its engine
    for engine in engines:
        form = engine.split("-")[0]
        result = {"queries": int(len(np.unique(qid))), "accepted": True, "error": None}
        try:
            if form not in texts:
                texts[form] = export_model(model, form, **export_options)
            text = texts[form]
            defaults = store if engine == "solr-nan" else None
            given = engine_scores(text, X, names, engine, defaults=defaults)
            missing = engine_scores(text, absent, names, engine, defaults=defaults)
        except EngineError as error:
            result.update(accepted=False, error=str(error))
            out[engine] = result
            continue
        result.update(
            max_abs_difference=float(np.max(np.abs(given - expected))),
            reordered=len(reordered_queries(expected, given, qid)),
            max_abs_difference_missing=float(np.max(np.abs(missing - expected_absent))),
            reordered_missing=len(reordered_queries(expected_absent, missing, qid)))
        out[engine] = result
    return out
