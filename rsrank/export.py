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
  standard_deviation = maximum - minimum): some plugin releases compute
  ``min_max`` as ``value / (maximum - minimum)``, without the shift.
  Uploaded with ``POST _ltr/_featureset/<set>/_createmodel``
  (OpenSearch: ``_plugins/_ltr``).
* **Vespa** rank profile: a ``first-phase`` ranking expression, the sum of
  ``weight * feature`` plus a constant, on raw feature values (Vespa's
  ranking-expression reference). A bare feature name ``x`` is written
  ``attribute(x)``; a name that is already a rank feature (``bm25(title)``,
  ``attribute(pagerank)``) is kept.
"""

import json
import re

import numpy as np

__all__ = ["FORMATS", "export_model", "to_solr", "to_elasticsearch", "to_opensearch", "to_vespa",
           "upload_hint", "engine_features"]

FORMATS = ("solr", "elasticsearch", "opensearch", "vespa")


def _number(value):
    """The shortest text that reads back as the same float64."""
    return float(repr(float(value)))


def _check_deployable(model):
    """Raise for a model an engine cannot evaluate from one document."""
    model.linear_function()  # raises for per-query scaling, with the reason


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


def _vespa_feature(name):
    if "(" in name:
        return name
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError(f"feature name {name!r} is neither a Vespa rank feature nor an "
                         "attribute name; rename it (--feature-names)")
    return f"attribute({name})"


def to_vespa(model, *, name="rsrank", inherits="default"):
    """A Vespa ``rank-profile`` (text) whose first phase is the model on raw
    feature values: global scaling folded into the weights and a constant."""
    _check_deployable(model)
    weights, constant = model.linear_function()
    used = engine_features(model)
    terms = [f"{_number(weights[j])!r} * {_vespa_feature(feature)}" for j, feature in used]
    terms.append(repr(_number(constant)))
    body = " +\n                ".join(terms)
    header = f"rank-profile {name}" + (f" inherits {inherits}" if inherits else "")
    return (f"{header} {{\n"
            f"    # RSRank model: {len(used)} of {model.n_features_in_} features\n"
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
        "opensearch": f"POST it to _plugins/_ltr/_featureset/{featureset}/_createmodel",
        "vespa": "add the rank-profile to the schema (.sd) and deploy",
    }[form]
