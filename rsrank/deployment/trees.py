"""Step functions as regression trees, in each engine's split rule.

An additive model's shape (and each pair's table) is a tree over its
feature: a balanced tree of the thresholds where its values change
(:func:`shape_trees`). Each engine compares a value with a threshold by a
rule of its own, and holds something of its own for a feature a document
lacks; each writer here steers every value, a missing one included, where
``predict`` puts it:

* Solr (:func:`solr_node`): ``x <= threshold + 1e-6f`` goes left, so the
  written threshold is the float32 that lands on the cut after that slack
  (:func:`solr_threshold`), a feature scaled by a power of two where none
  does (:func:`solr_scale_exponent`);
* the Elasticsearch and OpenSearch LTR plugins (:func:`xgboost_tree`):
  ``x < split_condition`` goes to ``yes``, so the condition is the next
  float32 above the cut; a guard sends a NaN to the branch of 0 in the
  plugin versions that ignore ``missing``;
* Vespa (:func:`vespa_node`): a nested ``if()`` comparing in double at the
  cut between the threshold and the next float32 (:func:`vespa_cut`), the
  condition written so that a NaN's false takes the branch of 0.

One meaning of "missing" everywhere: a document that lacks a feature scores
as predict scores it with the value 0 there, which is what the feature is
in a sparse LETOR file and what the model was trained on, or with NaN
there for a feature trained with missing values (its own bin). Numbers
travel as the shortest decimal of the float32's exact double value
(:func:`exact_text`): Java's ``Float.parseFloat`` and ``(float)
Double.parseDouble`` both read that text back as the same float32, and
Vespa reads it as that double. The formats around the trees are
:mod:`rsrank.deployment.export`'s.
"""

import itertools
import re

import numpy as np

from ..learning.binning import has_missing_bin

__all__ = ["shape_trees", "exact_text", "float32_above", "solr_threshold",
           "solr_scale_exponent", "feature_cuts", "solr_node", "xgboost_tree", "vespa_cut",
           "vespa_node", "vespa_feature", "zero_goes_left", "end_on", "SOLR_SPLIT_SLACK"]


def exact_text(value):
    """A float32 ``value`` as the decimal that reads back as it in float32 and
    in double (the shortest decimal of its exact double value)."""
    return repr(float(np.float32(value)))


def float32_above(t):
    """The next float32 above float32 ``t``: ``x < it`` holds for exactly
    the float32 ``x <= t``."""
    return np.nextafter(np.float32(t), np.float32(np.inf), dtype=np.float32)


#: Solr adds this (in float32) to every threshold it reads
SOLR_SPLIT_SLACK = np.float32(1e-6)


def solr_threshold(t):
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
    (:func:`solr_threshold`); None when none does. Multiplying by
    ``2**e`` is exact in float32 (a value too large becomes infinite, still
    above every cut), so the scaled feature splits where the model does.
    Dividing would not be: it rounds subnormals onto their neighbours."""
    cuts = np.asarray(cuts, dtype=np.float32)
    for e in range(0, 127):
        with np.errstate(over="ignore"):
            scaled = cuts * np.float32(2.0 ** e)
        if not np.all(np.isfinite(scaled)):
            return None
        if all(solr_threshold(t) is not None for t in scaled):
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


def zero_goes_left(node):
    """Whether a missing value goes left at ``node``: to the missing value's
    bin (right, above the +inf cut) for a feature that has one, else where
    predict puts the value 0 (``0 <= t``), which is what a feature trained
    without missing values is when a document lacks it."""
    if node.get("missing_bin"):
        return False
    return bool(np.float32(0) <= node["threshold"])


def end_on(node, feature, zero):
    """Where a walk down the nodes of ``feature`` ends (a leaf, or the first
    node of another feature): by the branch of 0 (``zero``) or always
    right (how a NaN goes where ``missing`` is not read)."""
    while "value" not in node and node["feature"] == feature:
        node = node["left"] if zero and zero_goes_left(node) else node["right"]
    return node


def feature_cuts(trees):
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


def solr_node(node, scales, missing=True):
    """Solr's node: values as strings (its setters take float or String, and
    its JSON reader makes numbers Double, which neither accepts), the
    threshold that lands on the scaled cut after Solr's slack, and the
    branch of 0 for a NaN (Solr 9.2's ``missing``, read when the model sets
    ``isNullSameAsZero`` to false)."""
    if "value" in node:
        return {"value": exact_text(node["value"])}
    feature = node["feature"]
    if np.isfinite(node["threshold"]):
        cut = np.float32(node["threshold"] * np.float32(2.0 ** scales.get(feature, 0)))
        threshold = exact_text(solr_threshold(cut))
    else:  # the missing value's cut: every value at most +inf goes left, NaN right
        threshold = "Infinity"
    out = {"feature": feature, "threshold": threshold}
    if missing:
        out["missing"] = "left" if zero_goes_left(node) else "right"
    out["left"] = solr_node(node["left"], scales, missing)
    out["right"] = solr_node(node["right"], scales, missing)
    return out


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
    zero = end_on(node, feature, zero=True)
    if end_on(node, feature, zero=False) == zero:
        return node
    return {"guard": True, "feature": feature, "left": node, "right": zero}


def _xgboost_node(node, counter, depth=0, guard=True):
    """A ``model/xgboost+json`` node: ``x < split_condition`` goes to ``yes``,
    a NaN to ``missing``, which is the branch of 0. Unguarded, the missing
    value's cut is ``x < -Infinity``, false for every value: every value,
    +inf included, goes to ``no`` (the finite values' side) and only a NaN
    to ``missing``, the missing value's bin."""
    nodeid = next(counter)
    if "value" in node:
        return {"nodeid": nodeid, "leaf": float(exact_text(node["value"]))}
    if not guard and not node.get("guard") and not np.isfinite(node["threshold"]):
        no = _xgboost_node(node["left"], counter, depth + 1, guard)
        yes = _xgboost_node(node["right"], counter, depth + 1, guard)
        return {"nodeid": nodeid, "depth": depth, "split": node["feature"],
                "split_condition": "-Infinity", "yes": yes["nodeid"], "no": no["nodeid"],
                "missing": yes["nodeid"], "children": [yes, no]}
    yes = _xgboost_node(node["left"], counter, depth + 1, guard)
    no = _xgboost_node(node["right"], counter, depth + 1, guard)
    if node.get("guard") or not np.isfinite(node["threshold"]):
        # a guard, or the missing value's cut: the plugin parses a float field
        # given as a string with Float.parseFloat, which reads Infinity (JSON
        # has no infinity)
        condition, missing = "Infinity", no["nodeid"]
    else:
        condition = float(exact_text(float32_above(node["threshold"])))
        missing = yes["nodeid"] if zero_goes_left(node) else no["nodeid"]
    return {"nodeid": nodeid, "depth": depth, "split": node["feature"],
            "split_condition": condition, "yes": yes["nodeid"], "no": no["nodeid"],
            "missing": missing, "children": [yes, no]}


def xgboost_tree(node, guard=True):
    """A tree for the LTR plugins, guarded (:func:`_guarded`) unless
    ``guard`` is False: then a NaN takes ``missing`` and +inf the right
    branches, as predict does, where the plugin reads ``missing``
    (Elasticsearch LTR from 1.5.9, OpenSearch LTR from 3.8), and a NaN goes
    right too in OpenSearch LTR 3.2 to 3.7."""
    return _xgboost_node(_guarded(node) if guard else node, itertools.count(), guard=guard)


def vespa_cut(t):
    """The double ``c`` with ``d < c`` exactly when ``float32(d) <= t``, for
    every double ``d``: the midpoint between ``t`` and the next float32,
    nudged up one double when round-half-even takes that midpoint down to
    ``t`` (``t``'s last bit is 0). A float attribute's values are float32,
    for which ``x < c`` is ``x <= t`` too: one condition serves both
    attribute types."""
    t = np.float32(t)
    above = float32_above(t)
    if np.isfinite(above):
        middle = (float(t) + float(above)) / 2  # exact: two float32s in double
    else:  # t is FLT_MAX; float32 rounds from FLT_MAX + half its ulp upwards to inf
        middle = float(t) + (float(t) - float(np.nextafter(t, np.float32(-np.inf)))) / 2
    even = int(t.view(np.uint32)) & 1 == 0
    return float(np.nextafter(middle, np.inf)) if even else middle


def vespa_node(node):
    """Vespa compares in double and a float or double attribute a document
    lacks is NaN, for which every comparison is false: the condition is
    written so that false is the branch of 0, ``x >= c`` when 0 goes below
    the cut, ``x < c`` when it goes above."""
    if "value" in node:
        return repr(float(node["value"]))
    feature = vespa_feature(node["feature"])
    below, above = vespa_node(node["left"]), vespa_node(node["right"])
    if not np.isfinite(node["threshold"]):  # the missing value's cut
        return f"if(isNan({feature}) == 1.0, {above}, {below})"
    cut = repr(vespa_cut(node["threshold"]))
    if zero_goes_left(node):
        return f"if({feature} >= {cut}, {above}, {below})"
    return f"if({feature} < {cut}, {below}, {above})"


_IDENTIFIER = r"[A-Za-z_][A-Za-z0-9_]*"


_ARGUMENT = rf"(?:{_IDENTIFIER}|[0-9]+)"


#: a Vespa rank feature: name(arg, ...) with optional .output parts, or a
#: rank feature of rank features (one level of nesting)
_FEATURE = (rf"{_IDENTIFIER}\((?:{_ARGUMENT}|{_IDENTIFIER}\({_ARGUMENT}(?:,{_ARGUMENT})*\))"
            rf"(?:,(?:{_ARGUMENT}|{_IDENTIFIER}\({_ARGUMENT}(?:,{_ARGUMENT})*\)))*\)"
            rf"(?:\.{_IDENTIFIER})*")


def vespa_feature(name):
    if re.fullmatch(_IDENTIFIER, name):
        return f"attribute({name})"
    if re.fullmatch(_FEATURE, name):
        return name
    raise ValueError(f"feature name {name!r} is neither a Vespa rank feature "
                     "(name(arguments)[.output]) nor an attribute name; rename it "
                     "(--feature-names)")
