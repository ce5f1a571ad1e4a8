"""Models out to search engines: one function per format.

Only features with a non-zero weight appear in an export: each one left out
is a feature the engine never computes. The feature names are the model's
(:meth:`RSRank.feature_names`), and must be the names of the features in the
engine's feature store (Solr, Elasticsearch/OpenSearch) or rank features
(Vespa).

A global scaling (``normalize="zscore"`` or ``"minmax"``) becomes the
engine's own normaliser where the format has one, and is folded into the
weights and a constant where it has none. A per-query scaling cannot be
computed from one document's features, which is all an engine sees when it
scores a document, so such models are refused.

Formats, with the semantics the tests reproduce:

* **Solr LTR** ``org.apache.solr.ltr.model.LinearModel``: score =
  sum over features of ``weights[name] * norm(value)``, with
  ``org.apache.solr.ltr.norm.StandardNormalizer`` computing
  ``(value - avg) / std`` and ``MinMaxNormalizer`` ``(value - min) /
  (max - min)`` (Solr Reference Guide, "Learning To Rank"; Solr's
  ``solr/modules/ltr`` sources). Uploaded to ``/schema/model-store``.
* **Elasticsearch / OpenSearch LTR plugin** ``model/linear``: the
  ``definition`` is a JSON object of feature name to weight, score = sum of
  ``weight * value``; ``feature_normalizers`` maps a feature to
  ``{"standard": {"mean", "standard_deviation"}}``, ``(value - mean) /
  standard_deviation`` (o19s/elasticsearch-learning-to-rank,
  ``docs/training-models.rst`` and ``StandardFeatureNormalizer``; the
  OpenSearch plugin is its fork with the same model format). Min-max scaling
  is written as a standard normaliser too (mean = minimum,
  standard_deviation = maximum - minimum), the same arithmetic: the
  plugin's ``min_max`` normaliser refuses negative bounds, which z-scored
  or raw features often have. Uploaded with ``POST
  _ltr/_featureset/<set>/_createmodel`` on both engines (OpenSearch's
  ``_plugins/_ltr`` path serves the plugin's statistics only). The plugin
  computes every feature of the featureset for every document it rescores,
  so a sparse model saves work only when the featureset holds just the
  model's features: :func:`featureset_subset` writes that featureset from
  the full one.
* **Vespa** rank profile: a ``first-phase`` ranking expression, the sum of
  ``weight * feature`` plus a constant, on raw feature values (Vespa's
  ranking-expression reference). A bare feature name ``x`` is written
  ``attribute(x)``; a name that is already a rank feature (``bm25(title)``,
  ``attribute(pagerank)``, ``fieldMatch(title).completeness``) is kept. Any
  other text is refused, so that no name can change the expression. Vespa
  gives a float attribute that a document lacks the value NaN, which ranks
  the document last: every attribute the expression reads needs a value in
  every document (the value the training data had, 0 in a sparse LETOR
  file, where a feature is absent).

An additive model (``RSRank(additive=True)``) is one step function per
feature, and each is written as one regression tree over its feature: a
balanced tree of the thresholds where its shape changes, whose leaves are
the shape's values. Each engine compares float32 feature values with float32
thresholds by a rule of its own, and the thresholds are written so that
every float32 value goes where ``predict`` puts it (a value equal to a
threshold counts as below it):

* **Solr** ``MultipleAdditiveTreesModel``: a node sends ``x <= threshold``
  left, after adding ``NODE_SPLIT_SLACK`` (1e-6, in float32) to the
  threshold it reads (Solr's ``MultipleAdditiveTreesModel.RegressionTreeNode``);
  the written threshold is the float32 that this addition takes to the
  model's threshold.
* **Elasticsearch / OpenSearch** ``model/xgboost+json``: a node sends
  ``x < split_condition`` to ``yes`` (the plugin's
  ``NaiveAdditiveDecisionTree``), so the condition is the next float32
  above the threshold; a missing value goes to ``yes`` too.
* **Vespa**: the rank expression sums one nested
  ``if(attribute(f) < c, below, above)`` per feature, with the same
  condition as XGBoost's (Vespa's own XGBoost import writes these), as the
  exact double of that float32, since Vespa compares in double; a
  tree-model file would need the model files deployed with the
  application, an expression does not.

Leaf values are float32 in every engine, so scores agree with ``predict``
to float32 rounding.

A model without a non-zero weight is refused by every format: it ranks
every document alike (and Solr refuses a model without features).

A scikit-learn ``Pipeline`` of per-feature scalers (``StandardScaler``,
``MinMaxScaler``, ``MaxAbsScaler``, ``"passthrough"``) ending in RSRank is
exported whole: the scalers and RSRank's own scaling make one affine map per
feature, which becomes the engine's normaliser (or is folded into Vespa's
weights). Its last step alone would drop the scalers: export the pipeline.
"""

import copy
import itertools
import json
import re

import numpy as np

__all__ = ["FORMATS", "export_model", "to_solr", "to_elasticsearch", "to_opensearch", "to_vespa",
           "upload_hint", "engine_features", "featureset_subset", "fold_pipeline", "shape_trees"]

FORMATS = ("solr", "elasticsearch", "opensearch", "vespa")


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
    if _additive(ranker):
        if any(step is not None and step != "passthrough" for _, step in steps[:-1]):
            raise ValueError("an additive model's thresholds are on the values its pipeline "
                             "scaled, which the engine does not see: train it on the raw "
                             "features (its steps need no scaling) and export it alone")
        return ranker
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
    folded.model_ = type(inner)(inner.coef, normalize, (inner.offset - b) / a, inner.scale / a,
                                [str(n) for n in names], False, inner.fingerprint,
                                inner.n_fit_queries)
    return folded


def _additive(model):
    return getattr(model, "additive", False)


def _check_deployable(model):
    """Raise for a model an engine cannot evaluate from one document, or
    one without a non-zero weight."""
    if not _additive(model):
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


def _float32_above(t):
    """The next float32 above float32 ``t``: ``x < it`` holds for exactly
    the float32 ``x <= t``."""
    return np.nextafter(np.float32(t), np.float32(np.inf), dtype=np.float32)


#: Solr adds this (in float32) to every threshold it reads
SOLR_SPLIT_SLACK = np.float32(1e-6)


def _solr_threshold(t):
    """The largest float32 ``c`` with ``float32(c + 1e-6) <= t``, so that
    Solr's ``x <= c + slack`` holds for the float32 ``x <= t``: exactly so
    when the sum lands on ``t``, as it does unless ``t`` lies within about
    1e-6 of zero (the float32 sums near ``t`` are then coarser than ``t``'s
    neighbours, and the few float32 values between the landing and ``t`` go
    right)."""
    t = np.float32(t)
    up, down = np.float32(np.inf), np.float32(-np.inf)
    c = np.float32(t - SOLR_SPLIT_SLACK)
    for _ in range(100_000):
        if np.float32(c + SOLR_SPLIT_SLACK) > t:
            c = np.nextafter(c, down)
        elif np.float32(np.nextafter(c, up) + SOLR_SPLIT_SLACK) <= t:
            c = np.nextafter(c, up)
        else:
            return c
    raise ValueError(f"no Solr threshold found for {t!r}")  # pragma: no cover


def shape_trees(model):
    """Per feature in use: ``(name, tree)``, the tree a nested dict of
    ``{"threshold": t, "left": ..., "right": ...}`` (``x <= t`` goes left,
    ``t`` float32) and leaves ``{"value": v}``: the feature's shape function
    over the thresholds where it changes (steps of 0 merged away)."""
    out = []
    for shape in model.shape_functions():
        cuts, values = shape["thresholds"], shape["values"]
        changes = np.flatnonzero(np.diff(values) != 0)
        cuts = cuts[changes]
        levels = np.r_[values[0], values[changes + 1]]
        out.append((shape["name"], _balanced(cuts, levels)))
    return out


def _balanced(cuts, levels):
    if len(cuts) == 0:
        return {"value": float(levels[0])}
    middle = len(cuts) // 2
    return {"threshold": np.float32(cuts[middle]),
            "left": _balanced(cuts[:middle], levels[:middle + 1]),
            "right": _balanced(cuts[middle + 1:], levels[middle + 1:])}


def _float(value):
    """A float32 value as the shortest decimal that reads back as it."""
    return float(np.format_float_positional(np.float32(value), unique=True, trim="-")) \
        if np.isfinite(value) else float(value)


def _solr_node(node, feature):
    if "value" in node:
        return {"value": _float(node["value"])}
    return {"feature": feature, "threshold": _float(_solr_threshold(node["threshold"])),
            "left": _solr_node(node["left"], feature),
            "right": _solr_node(node["right"], feature)}


def _xgboost_node(node, feature, counter, depth=0):
    nodeid = next(counter)
    if "value" in node:
        return {"nodeid": nodeid, "leaf": _float(node["value"])}
    yes = _xgboost_node(node["left"], feature, counter, depth + 1)
    no = _xgboost_node(node["right"], feature, counter, depth + 1)
    return {"nodeid": nodeid, "depth": depth, "split": feature,
            "split_condition": _float(_float32_above(node["threshold"])),
            "yes": yes["nodeid"], "no": no["nodeid"], "missing": yes["nodeid"],
            "children": [yes, no]}


def _vespa_node(node, feature):
    """Vespa compares in double: the condition is written as the exact double
    of the float32 (a shorter decimal may lie above it), leaves in full."""
    if "value" in node:
        return repr(float(node["value"]))
    return (f"if({feature} < {float(_float32_above(node['threshold']))!r}, "
            f"{_vespa_node(node['left'], feature)}, {_vespa_node(node['right'], feature)})")


def _scaling(model):
    if model.normalize in ("zscore", "minmax"):
        return model.feature_offset_, model.feature_scale_
    return None


def to_solr(model, *, name="rsrank", store="_DEFAULT_"):
    """The Solr LTR ``LinearModel`` JSON (a dict) for ``/schema/model-store``.

    Parameters
    ----------
    model : fitted RSRank
    name : str
        Model name, as used in ``{!ltr model=NAME}``.
    store : str
        Feature store holding features of the model's feature names.
    """
    model = fold_pipeline(model)
    _check_deployable(model)
    if _additive(model):
        trees = [{"weight": 1.0, "root": _solr_node(tree, feature)}
                 for feature, tree in shape_trees(model)]
        return {"store": store, "name": name,
                "class": "org.apache.solr.ltr.model.MultipleAdditiveTreesModel",
                "features": [{"name": feature} for _, feature in engine_features(model)],
                "params": {"trees": trees}}
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
    return {"store": store, "name": name, "class": "org.apache.solr.ltr.model.LinearModel",
            "features": features, "params": {"weights": weights}}


def to_elasticsearch(model, *, name="rsrank"):
    """The Elasticsearch LTR plugin's ``_createmodel`` request body (a dict)
    with a ``model/linear`` definition and ``feature_normalizers``."""
    model = fold_pipeline(model)
    _check_deployable(model)
    if _additive(model):
        trees = [_xgboost_node(tree, feature, itertools.count())
                 for feature, tree in shape_trees(model)]
        return {"model": {"name": name, "model": {"type": "model/xgboost+json",
                                                  "definition": json.dumps(trees)}}}
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
    return {"model": {"name": name, "model": body}}


def to_opensearch(model, *, name="rsrank"):
    """The OpenSearch LTR plugin's ``_createmodel`` body (the same format)."""
    return to_elasticsearch(model, name=name)


_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"
_ARGUMENT = rf"(?:{_IDENTIFIER}|[0-9]+)"
#: a Vespa rank feature: name(arg, ...) with optional .output parts, or a
#: rank feature of rank features (one level of nesting)
_FEATURE = (rf"{_IDENTIFIER}\((?:{_ARGUMENT}|{_IDENTIFIER}\({_ARGUMENT}(?:,{_ARGUMENT})*\))"
            rf"(?:,(?:{_ARGUMENT}|{_IDENTIFIER}\({_ARGUMENT}(?:,{_ARGUMENT})*\)))*\)"
            rf"(?:\.{_IDENTIFIER})*")


def _vespa_feature(name):
    if re.fullmatch(_IDENTIFIER, name):
        return f"attribute({name})"
    if re.fullmatch(_FEATURE, name):
        return name
    raise ValueError(f"feature name {name!r} is neither a Vespa rank feature "
                     "(name(arguments)[.output]) nor an attribute name; rename it "
                     "(--feature-names)")


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
    if _additive(model):
        terms = [_vespa_node(tree, _vespa_feature(feature))
                 for feature, tree in shape_trees(model)]
    else:
        weights, constant = model.linear_function()
        terms = [f"{_number(weights[j])!r} * {_vespa_feature(feature)}" for j, feature in used]
        terms.append(repr(_number(constant)))
    body = " +\n                ".join(terms)
    header = (f"rank-profile {_vespa_name('rank-profile name', name)}"
              + (f" inherits {_vespa_name('inherited profile', inherits)}" if inherits else ""))
    return (f"{header} {{\n"
            f"    # RSRank model: {len(used)} of {model.n_features_in_} features. Every attribute\n"
            f"    # read here needs a value in every document: without one it is NaN.\n"
            f"    first-phase {{\n"
            f"        expression {{\n"
            f"                {body}\n"
            f"        }}\n"
            f"    }}\n"
            f"}}\n")


def export_model(model, form, *, name="rsrank", store="_DEFAULT_"):
    """The model as text in format ``form`` (one of :data:`FORMATS`)."""
    if form == "solr":
        return json.dumps(to_solr(model, name=name, store=store), indent=2) + "\n"
    if form in ("elasticsearch", "opensearch"):
        return json.dumps(to_elasticsearch(model, name=name), indent=2) + "\n"
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
