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

A model without a non-zero weight is refused by every format: it ranks
every document alike (and Solr refuses a model without features).

A scikit-learn ``Pipeline`` of per-feature scalers (``StandardScaler``,
``MinMaxScaler``, ``MaxAbsScaler``, ``"passthrough"``) ending in RSRank is
exported whole: the scalers and RSRank's own scaling make one affine map per
feature, which becomes the engine's normaliser (or is folded into Vespa's
weights). Its last step alone would drop the scalers: export the pipeline.
"""

import copy
import json
import re

import numpy as np

__all__ = ["FORMATS", "export_model", "to_solr", "to_elasticsearch", "to_opensearch", "to_vespa",
           "upload_hint", "engine_features", "featureset_subset", "fold_pipeline"]

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


def _check_deployable(model):
    """Raise for a model an engine cannot evaluate from one document, or
    one without a non-zero weight."""
    model.linear_function()  # raises for per-query scaling, with the reason
    if not np.any(model.coef_):
        raise ValueError("the model has no non-zero weight: it ranks every document alike "
                         "and there is nothing to export (train with a weaker l1)")


def engine_features(model):
    """``[(column, name)]`` of the features with a non-zero weight: the
    features the engine must compute."""
    names = model.feature_names()
    return [(int(j), names[j]) for j in np.flatnonzero(model.coef_)]


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
    weights, constant = model.linear_function()
    used = engine_features(model)
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
