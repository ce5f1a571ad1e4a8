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
  gives a float or double attribute that a document lacks the value NaN;
  each attribute is read as ``if(isNan(a) == 1.0, 0.0, a)``, so that the document
  scores as ``predict`` scores a 0 there.

**Missing features.** RSRank has one meaning of a feature that a document
lacks: it is the value 0, which is what such a feature is in a sparse
LETOR file and what the model was trained on; for a feature the model was
trained with missing values (NaN) in, it is a missing value, which the
model scores with its own step (the model's ``missing_values()``). Every export makes the engine
score such a document as ``predict`` scores it with 0 there, whatever the
engine holds for a missing feature (Solr: the feature's ``defaultValue``,
0 unless set otherwise, or NaN with ``isNullSameAsZero: false``; the LTR
plugins: 0 for linear models, NaN for trees from Elasticsearch LTR 1.5.9
and OpenSearch LTR 3.2; Vespa: NaN for float and double attributes).

An additive model (``RSRank(additive=True)``) is one step function per
feature, and each is written as one regression tree over its feature: a
balanced tree of the thresholds where its shape changes, whose leaves are
the shape's values. Each engine compares feature values with thresholds by
a rule of its own, and the thresholds are written so that every value goes
where ``predict`` puts it (a float32 value equal to a threshold counts as
below it), subnormals and signed zeros included:

* **Solr** ``MultipleAdditiveTreesModel``: a node sends ``x <= threshold``
  left, after adding 1e-6 (in float32) to the threshold it reads (Solr's
  ``RegressionTreeNode``). The written threshold is the float32 that this
  addition takes to the model's threshold. Near zero no float32 does, and
  the feature is then scaled by a power of two (a ``StandardNormalizer``
  with ``avg`` 0, exact in float32 and order-keeping) until every threshold
  lands. Values are JSON strings: Solr's setters take ``float`` or
  ``String``, and its JSON reader makes numbers ``Double``. Each node's
  ``missing`` is the branch of 0 (or of the missing value's bin), which
  Solr 9.2 and later read when the model's ``isNullSameAsZero`` is false:
  a model trained with missing values sets it so (a JSON boolean), and
  :func:`solr_feature_store` gives its NaN-trained features the
  ``defaultValue`` "NaN" a lacking feature needs to reach those branches
  (Solr before 9.2 refuses both keys: ``to_solr(model, missing=False)``
  leaves them out).
* **Elasticsearch / OpenSearch** ``model/xgboost+json``: a node sends
  ``x < split_condition`` to ``yes`` (the plugin's
  ``NaiveAdditiveDecisionTree``), so the condition is the next float32
  above the threshold, and ``missing`` is the branch of 0. OpenSearch LTR
  3.2 to 3.7 ignores ``missing`` and sends a NaN to ``no`` at every node;
  where the rightmost leaf is not the leaf of 0, a root ``x < Infinity``
  sends every finite value to the tree and a NaN to a leaf of 0's value,
  in every plugin version.
* **Vespa**: the expression sums one nested ``if()`` per feature. Vespa
  compares in double: the cut is the midpoint between the threshold and
  the next float32 (nudged by one double where round-half-even takes the
  midpoint down), which splits float attributes and double attributes
  exactly as ``predict`` splits their float32 values. A NaN fails every
  comparison, so each condition is written (``x >= c`` or ``x < c``) to
  make false the branch of 0. A tree-model file would need the model
  files deployed with the application, an expression does not.

Every number is written as the shortest decimal of the float32's exact
double value, which Java reads back as that float32 whether it parses a
float or a double. Leaf values are float32 in Solr and the plugins, so
scores agree with ``predict`` to float32 rounding.

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
from dataclasses import dataclass, replace

import numpy as np

from .binning import has_missing_bin

__all__ = ["FORMATS", "export_model", "to_solr", "to_elasticsearch", "to_opensearch", "to_vespa",
           "upload_hint", "guarantee", "engine_features", "featureset_subset", "fold_pipeline",
           "shape_trees", "solr_scale_exponent", "missing_branches", "WRITERS",
           "solr_feature_store", "solr_defaults"]

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


def _exact_text(value):
    """A float32 ``value`` as the decimal that reads back as it in float32 and
    in double (the shortest decimal of its exact double value)."""
    return repr(float(np.float32(value)))


def _float32_above(t):
    """The next float32 above float32 ``t``: ``x < it`` holds for exactly
    the float32 ``x <= t``."""
    return np.nextafter(np.float32(t), np.float32(np.inf), dtype=np.float32)


#: Solr adds this (in float32) to every threshold it reads
SOLR_SPLIT_SLACK = np.float32(1e-6)


def _solr_threshold(t):
    """The float32 ``c`` whose Solr threshold ``float32(c + 1e-6)`` is
    ``t`` itself, so that Solr's ``x <= threshold`` holds for exactly the
    float32 ``x <= t``; None when no float32 lands on ``t`` (within about
    1e-6 of zero, where the sums near ``t`` are coarser than ``t``'s
    neighbours, or just above a negative power of two)."""
    t = np.float32(t)
    if not np.isfinite(t):
        return None
    up, down = np.float32(np.inf), np.float32(-np.inf)
    with np.errstate(over="ignore"):
        c = np.float32(t - SOLR_SPLIT_SLACK)
        # the landing float32(c + slack) rises with c: walk to the largest c
        # landing at or below t, then see whether it lands on t
        for _ in range(64):
            if not np.isfinite(c):
                return None
            if np.float32(c + SOLR_SPLIT_SLACK) > t:
                c = np.nextafter(c, down)
            elif np.float32(np.nextafter(c, up) + SOLR_SPLIT_SLACK) <= t:
                c = np.nextafter(c, up)
            else:
                return c if np.float32(c + SOLR_SPLIT_SLACK) == t else None
    return None


def solr_scale_exponent(cuts):
    """The smallest power of two ``e >= 0`` such that every float32 cut
    times ``2**e`` has a Solr threshold that lands on it exactly
    (:func:`_solr_threshold`); None when none does. Multiplying by
    ``2**e`` is exact in float32 (a value too large becomes infinite, still
    above every cut), so the scaled feature splits where the model does.
    Dividing would not be: it rounds subnormals onto their neighbours."""
    cuts = np.asarray(cuts, dtype=np.float32)
    for e in range(0, 127):
        with np.errstate(over="ignore"):
            scaled = cuts * np.float32(2.0 ** e)
        if not np.all(np.isfinite(scaled)):
            return None
        if all(_solr_threshold(t) is not None for t in scaled):
            return e
    return None


def shape_trees(model):
    """The model as trees: per feature with a shape in use ``(name, tree)``,
    then per pair in use ``((name_a, name_b), tree)``. A tree is a nested
    dict of nodes ``{"feature": name, "threshold": t, "left": ...,
    "right": ...}`` (``x <= t`` goes left, ``t`` float32) and leaves
    ``{"value": v}``. A shape splits on its feature where its values change
    (steps of 0 merged away); a pair's tree splits on its first feature
    where the rows of its table change, and each of those intervals on the
    second feature where that row changes (a tree of two features)."""
    fitted = model.model_ if hasattr(model, "model_") else model
    out = []
    for shape in fitted.shape_functions():
        out.append((shape["name"], _step_tree(shape["thresholds"], shape["values"],
                                              shape["name"])))
    for pair in fitted.interaction_functions():
        out.append((pair["names"], _pair_tree(pair)))
    return out


def _changes(values):
    """Where consecutive ``values`` (numbers, or rows) differ."""
    values = np.asarray(values)
    if values.ndim == 1:
        return np.flatnonzero(np.diff(values) != 0)
    return np.flatnonzero(np.any(np.diff(values, axis=0) != 0, axis=1))


def _step_tree(cuts, values, feature):
    """One feature's step function over ``cuts`` as a balanced tree. A
    feature with a missing value's bin (its last cut +inf) sends a missing
    value right at every node, to that bin."""
    changes = _changes(values)
    levels = np.r_[values[0], values[changes + 1]]
    return _balanced(cuts[changes], [{"value": float(v)} for v in levels], feature,
                     has_missing_bin(cuts))


def _pair_tree(pair):
    """A pair's table as a tree on its first feature whose leaves are trees
    on its second."""
    (name_a, name_b), (cuts_a, cuts_b) = pair["names"], pair["thresholds"]
    table = pair["values"]
    changes = _changes(table)
    rows = np.r_[0, changes + 1]
    return _balanced(cuts_a[changes], [_step_tree(cuts_b, table[i], name_b) for i in rows],
                     name_a, has_missing_bin(cuts_a))


def _balanced(cuts, leaves, feature, missing_bin=False):
    """A balanced tree over ``cuts`` of ``feature`` with one more ``leaves``
    (nodes) than cuts; ``missing_bin``: the feature has a missing value's bin."""
    if len(cuts) == 0:
        return leaves[0]
    middle = len(cuts) // 2
    node = {"feature": feature, "threshold": np.float32(cuts[middle]),
            "left": _balanced(cuts[:middle], leaves[:middle + 1], feature, missing_bin),
            "right": _balanced(cuts[middle + 1:], leaves[middle + 1:], feature, missing_bin)}
    if missing_bin:
        node["missing_bin"] = True
    return node


def _zero_goes_left(node):
    """Whether a missing value goes left at ``node``: to the missing value's
    bin (right, above the +inf cut) for a feature that has one, else where
    predict puts the value 0 (``0 <= t``), which is what a feature trained
    without missing values is when a document lacks it."""
    if node.get("missing_bin"):
        return False
    return bool(np.float32(0) <= node["threshold"])


def _end_on(node, feature, zero):
    """Where a walk down the nodes of ``feature`` ends (a leaf, or the first
    node of another feature): by the branch of 0 (``zero``) or always
    right (how a NaN goes where ``missing`` is not read)."""
    while "value" not in node and node["feature"] == feature:
        node = node["left"] if zero and _zero_goes_left(node) else node["right"]
    return node


def _feature_cuts(trees):
    """Every finite threshold of each feature over ``trees``, by the name of
    every feature they split on (a missing value's +inf cut is no value)."""
    out = {}

    def walk(node):
        if "value" in node:
            return
        cuts = out.setdefault(node["feature"], [])
        if np.isfinite(node["threshold"]):
            cuts.append(node["threshold"])
        walk(node["left"])
        walk(node["right"])
    for tree in trees:
        walk(tree)
    return out


def _solr_node(node, scales, missing=True):
    """Solr's node: values as strings (its setters take float or String, and
    its JSON reader makes numbers Double, which neither accepts), the
    threshold that lands on the scaled cut after Solr's slack, and the
    branch of 0 for a NaN (Solr 9.2's ``missing``, read when the model sets
    ``isNullSameAsZero`` to false)."""
    if "value" in node:
        return {"value": _exact_text(node["value"])}
    feature = node["feature"]
    if np.isfinite(node["threshold"]):
        cut = np.float32(node["threshold"] * np.float32(2.0 ** scales.get(feature, 0)))
        threshold = _exact_text(_solr_threshold(cut))
    else:  # the missing value's cut: every value at most +inf goes left, NaN right
        threshold = "Infinity"
    out = {"feature": feature, "threshold": threshold}
    if missing:
        out["missing"] = "left" if _zero_goes_left(node) else "right"
    out["left"] = _solr_node(node["left"], scales, missing)
    out["right"] = _solr_node(node["right"], scales, missing)
    return out


def _solr_trees(model, missing=True):
    trees = [tree for _, tree in shape_trees(model)]
    scales, features = {}, []
    # one normaliser per feature: its scaling must land every threshold of
    # every tree it is split in (its shape's and its pairs')
    for feature, cuts in _feature_cuts(trees).items():
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
                                        "std": _exact_text(2.0 ** -scales[feature])}}
        features.append(entry)
    return features, [{"weight": "1.0", "root": _solr_node(tree, scales, missing)}
                      for tree in trees]


def _guarded(node):
    """``node`` with a guard wherever the plugins need one. A NaN (a missing
    feature in the Elasticsearch plugin from 1.5.9 and in OpenSearch's from
    3.2) takes ``missing`` where a plugin reads it, and ``no`` at every
    node where it does not (OpenSearch 3.2 to 3.7), which ends where
    always going right down the feature's nodes ends. Where that is not
    where the branch of 0 ends, a guard ``x < Infinity`` sends every finite
    value to the tree and a NaN (and +inf) to the branch of 0, in every
    version; a pair's tree is guarded on its first feature and each of its
    subtrees on the second. Older plugins hold 0 for a missing feature."""
    if "value" in node:
        return node
    feature = node["feature"]

    def inner(n):
        if "value" in n or n["feature"] != feature:
            return _guarded(n)
        return {**n, "left": inner(n["left"]), "right": inner(n["right"])}
    node = inner(node)
    zero = _end_on(node, feature, zero=True)
    if _end_on(node, feature, zero=False) == zero:
        return node
    return {"guard": True, "feature": feature, "left": node, "right": zero}


def _xgboost_node(node, counter, depth=0):
    """A ``model/xgboost+json`` node: ``x < split_condition`` goes to ``yes``,
    a NaN to ``missing``, which is the branch of 0."""
    nodeid = next(counter)
    if "value" in node:
        return {"nodeid": nodeid, "leaf": float(_exact_text(node["value"]))}
    yes = _xgboost_node(node["left"], counter, depth + 1)
    no = _xgboost_node(node["right"], counter, depth + 1)
    if node.get("guard") or not np.isfinite(node["threshold"]):
        # a guard, or the missing value's cut: the plugin parses a float field
        # given as a string with Float.parseFloat, which reads Infinity (JSON
        # has no infinity)
        condition, missing = "Infinity", no["nodeid"]
    else:
        condition = float(_exact_text(_float32_above(node["threshold"])))
        missing = yes["nodeid"] if _zero_goes_left(node) else no["nodeid"]
    return {"nodeid": nodeid, "depth": depth, "split": node["feature"],
            "split_condition": condition, "yes": yes["nodeid"], "no": no["nodeid"],
            "missing": missing, "children": [yes, no]}


def _xgboost_tree(node):
    """A tree for the LTR plugins, guarded (:func:`_guarded`)."""
    return _xgboost_node(_guarded(node), itertools.count())


def _vespa_cut(t):
    """The double ``c`` with ``d < c`` exactly when ``float32(d) <= t``, for
    every double ``d``: the midpoint between ``t`` and the next float32,
    nudged up one double when round-half-even takes that midpoint down to
    ``t`` (``t``'s last bit is 0). A float attribute's values are float32,
    for which ``x < c`` is ``x <= t`` too: one condition serves both
    attribute types."""
    t = np.float32(t)
    above = _float32_above(t)
    if np.isfinite(above):
        middle = (float(t) + float(above)) / 2  # exact: two float32s in double
    else:  # t is FLT_MAX; float32 rounds from FLT_MAX + half its ulp upwards to inf
        middle = float(t) + (float(t) - float(np.nextafter(t, np.float32(-np.inf)))) / 2
    even = int(t.view(np.uint32)) & 1 == 0
    return float(np.nextafter(middle, np.inf)) if even else middle


def _vespa_node(node):
    """Vespa compares in double and a float or double attribute a document
    lacks is NaN, for which every comparison is false: the condition is
    written so that false is the branch of 0, ``x >= c`` when 0 goes below
    the cut, ``x < c`` when it goes above."""
    if "value" in node:
        return repr(float(node["value"]))
    feature = _vespa_feature(node["feature"])
    below, above = _vespa_node(node["left"]), _vespa_node(node["right"])
    if not np.isfinite(node["threshold"]):  # the missing value's cut
        return f"if(isNan({feature}) == 1.0, {above}, {below})"
    cut = repr(_vespa_cut(node["threshold"]))
    if _zero_goes_left(node):
        return f"if({feature} >= {cut}, {above}, {below})"
    return f"if({feature} < {cut}, {below}, {above})"


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


def to_elasticsearch(model, *, name="rsrank"):
    """The Elasticsearch LTR plugin's ``_createmodel`` request body (a dict):
    a ``model/linear`` definition with ``feature_normalizers``, or a
    ``model/xgboost+json`` one for step functions."""
    model = fold_pipeline(model)
    _check_deployable(model)
    return {"model": {"name": name, "model": _writer(model).plugin(model)}}


def _plugin_additive(model):
    trees = [_xgboost_tree(tree) for _, tree in shape_trees(model)]
    return {"type": "model/xgboost+json", "definition": json.dumps(trees)}


def _plugin_linear(model):
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
    return [_vespa_node(tree) for _, tree in shape_trees(model)]


def _vespa_linear(model):
    weights, constant = model.linear_function()
    fill = _fill(model)
    return [f"{_number(weights[j])!r} * {_vespa_value(_vespa_feature(feature), fill[j])}"
            for j, feature in engine_features(model)] + [repr(_number(constant))]


def _fill(model):
    """What a missing value of each feature of a linear model stands for
    (0, or its ``missing="zero"``/``"mean"`` fill)."""
    return np.nan_to_num(model.model_.missing_values(), nan=0.0)


def export_model(model, form, *, name="rsrank", store="_DEFAULT_", solr_missing=True):
    """The model as text in format ``form`` (one of :data:`FORMATS`)."""
    if form == "solr":
        return json.dumps(to_solr(model, name=name, store=store, missing=solr_missing),
                          indent=2) + "\n"
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


def guarantee(form, model):
    """What the engine's scores of the export promise, as one line."""
    model = fold_pipeline(model)
    return (f"every document scores as predict scores it{_writer(model).promises[form]}"
            + (_MISSING_PROMISES[form] if _missing_bins(model) else ""))


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
                     "NaN right",
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


#: the writer of each model kind (:data:`rsrank.kinds.KINDS`)
WRITERS = {
    "linear": _Writer(_fold_scalers, _solr_linear, _plugin_linear, _vespa_linear,
                      {**_LINEAR_PROMISES, "opensearch": _LINEAR_PROMISES["elasticsearch"]},
                      missing_branches=False),
    "additive": _Writer(_refuse_scalers, _solr_additive, _plugin_additive, _vespa_additive,
                        {**_TREE_PROMISES, "opensearch": _TREE_PROMISES["elasticsearch"]},
                        missing_branches=True),
}
#: a model with pairs is written as an additive one: its pairs are trees too
WRITERS["interactions"] = WRITERS["additive"]


def _writer(model):
    """The writer of a fitted RSRank's model kind."""
    return WRITERS[model.model_.kind]


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
    out.update({names[j]: _exact_text(fill[j]) for j in sorted(used) if fill[j] != 0})
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
