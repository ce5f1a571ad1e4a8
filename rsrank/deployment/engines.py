"""Exported models as each search engine reads and scores them.

Each function follows one engine's source, not RSRank's export code: how it
parses the model text (and what it refuses), what it holds for a feature a
document lacks, how it compares a value with a threshold, and in which
precision it sums. :func:`rsrank.deployment.export.parity`, the tests and
``scripts/engine_parity.py`` hold every export to ``predict`` with them,
and a user can check an export before uploading it::

    from rsrank.deployment.engines import engine_scores
    scores = engine_scores(text, X, names, "solr")   # NaN in X: a missing feature

Engines (``ENGINES``), each the behaviour of the source it names:

* ``solr``: Solr's ``LinearModel`` and ``MultipleAdditiveTreesModel``
  (``solr/modules/ltr``) with its defaults: a missing feature holds its
  ``defaultValue``, 0; values set through ``SolrPluginUtils.invokeSetters``
  (a setter whose parameter class is the JSON value's, else any setter of
  that name: a JSON number, which Solr reads as ``Double``, cannot be passed
  to ``setThreshold(float)``); every feature normalised, in float32; a tree
  node sends ``x <= threshold + 1e-6f`` left.
* ``solr-nan``: the same with the feature store's ``defaultValue`` "NaN"
  (what ``rsrank export --solr-features`` writes for a feature trained with
  missing values; Solr 9.2's missing-value support): with the model's
  ``isNullSameAsZero`` false (as the export writes it for such a model), a
  NaN skips its normaliser and takes the node's ``missing`` branch (a
  NullPointerException in Solr when the node has none); with it true (the
  default, and Solr before 9.2), a NaN fails every ``x <= threshold`` and
  goes right at every node (``scoreNode``), its normaliser applied. In
  both, the model's own ``isNullSameAsZero`` is read as written.
* ``elasticsearch-1.5.8``: the o19s plugin before missing values: every
  ranker holds 0 for a missing feature; ``x < split_condition`` goes to
  ``yes``.
* ``elasticsearch``: the o19s plugin from 1.5.9 (``SparseFeatureVector``):
  a tree model holds NaN for a missing feature and sends it to ``missing``,
  a linear model holds 0.
* ``opensearch-3.7``: OpenSearch LTR 3.2 to 3.7: NaN for a missing feature
  of a tree model, and ``threshold > NaN`` is false, so it goes to ``no``.
* ``opensearch``: OpenSearch LTR from 3.8: NaN goes to ``yes`` when
  ``missing`` names it, else to ``no``.
* ``vespa-float`` and ``vespa-double``: the ranking expression in double
  over float or double attributes; an attribute a document lacks is NaN,
  a rank feature such as ``bm25(title)`` is 0.

For the plugins, a float field given as a number is read through a double
(Jackson's ``getFloatValue``) and a string with ``Float.parseFloat``; the
reader checks that a number's text gives the same float32 by either road,
since plugin versions differ in which they take.
"""

import json
import re
from fractions import Fraction

import numpy as np

__all__ = ["ENGINES", "engine_scores", "EngineError", "java_float"]

ENGINES = ("solr", "solr-nan", "elasticsearch-1.5.8", "elasticsearch", "opensearch-3.7",
           "opensearch", "vespa-float", "vespa-double")

F32 = np.float32


class EngineError(ValueError):
    """The engine would refuse the model text (or fail on it)."""


# -- numbers as Java reads them -------------------------------------------------------

_JAVA_FLOAT = re.compile(r"[+-]?(NaN|Infinity|((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)[fFdD]?)")


_FLT_MAX = np.finfo(F32).max
#: the least magnitude that rounds to infinity: FLT_MAX plus half its step
_FLOAT32_OVERFLOW = Fraction(float(_FLT_MAX)) + Fraction(2 ** 104) / 2


def _nearest_float32(exact):
    """The float32 nearest the non-negative rational ``exact`` (ties to
    even), as Java's ``Float.parseFloat`` rounds a decimal."""
    if exact >= _FLOAT32_OVERFLOW:
        return F32(np.inf)
    guess = F32(min(float(exact), float(_FLT_MAX)))  # within a step of the answer
    with np.errstate(over="ignore"):
        candidates = [np.nextafter(guess, F32(-np.inf)), guess,
                      np.nextafter(guess, F32(np.inf))]
    finite = [c for c in candidates if np.isfinite(c) and c >= 0]
    return min(finite, key=lambda c: (abs(Fraction(float(c)) - exact),
                                      int(c.view(np.uint32)) & 1))


def java_float(text):
    """``Float.parseFloat(text)``: the correctly rounded float32 of a decimal
    (also ``Infinity`` and ``NaN``, a trailing ``f`` or ``d``, surrounding
    whitespace). Raises :class:`EngineError` where Java throws."""
    text = str(text).strip()
    if not _JAVA_FLOAT.fullmatch(text):
        raise EngineError(f"NumberFormatException: {text!r}")
    body = text.rstrip("fFdD") if not text.endswith(("NaN", "Infinity")) else text
    if body.lstrip("+-") == "NaN":
        return F32(np.nan)
    if body.lstrip("+-") == "Infinity":
        return F32(-np.inf) if body.startswith("-") else F32(np.inf)
    negative = body.startswith("-")
    value = _nearest_float32(Fraction(body.lstrip("+-")))
    return -value if negative else value


class _JsonNumber(float):
    """A JSON number that keeps its text, to read it as Java would."""

    def __new__(cls, text):
        number = super().__new__(cls, text)
        number.text = text
        return number


def _plugin_json(text):
    return json.loads(text, parse_float=_JsonNumber)


def _plugin_float(value, what):
    """A float field of the LTR plugins' XContent parser: a JSON number
    through double, or a string through ``Float.parseFloat``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise EngineError(f"{what}: expected a float, got {value!r}")
    if isinstance(value, str):
        return java_float(value)
    through_double = F32(float(value))
    if not np.isnan(through_double) and through_double != java_float(
            getattr(value, "text", repr(value))):
        raise EngineError(f"{what}: {value!r} reads as a different float32 through a double "
                          "than directly; plugin versions would disagree")
    return through_double


def _plugin_int(value, what):
    if isinstance(value, bool) or not isinstance(value, int):
        raise EngineError(f"{what}: expected an integer, got {value!r}")
    return value


# -- Solr -----------------------------------------------------------------------------

#: the one-argument setters of the beans Solr fills from the model JSON, by
#: the JSON value types each accepts (Java class of the parameter)
_SOLR_SETTERS = {
    "RegressionTree": {"weight": ("float", "String"), "root": ("Object",)},
    "RegressionTreeNode": {"value": ("float", "String"), "feature": ("String",),
                           "threshold": ("float", "String"), "missing": ("String",),
                           "left": ("Object",), "right": ("Object",)},
    "MultipleAdditiveTreesModel": {"trees": ("Object",), "isNullSameAsZero": ("boolean",)},
    "LinearModel": {"weights": ("Object",)},
    "StandardNormalizer": {"avg": ("float", "String"), "std": ("float", "String")},
    "MinMaxNormalizer": {"min": ("float", "String"), "max": ("float", "String")},
}


def _java_class(value):
    """The class Solr's JSON reader (noggit's ObjectBuilder) gives a value."""
    for kind, name in ((bool, "Boolean"), (str, "String"), (int, "Long"), (float, "Double"),
                       (dict, "LinkedHashMap"), (list, "ArrayList")):
        if isinstance(value, kind):
            return name
    raise EngineError("NullPointerException: a null value in the model")


def _solr_set(bean, key, value):
    """``invokeSetters`` for one entry: the setter whose parameter class is
    the value's, else any setter of that name, which ``Method.invoke`` must
    be able to call with the value. Returns the value as the setter takes
    it."""
    setters = _SOLR_SETTERS[bean].get(key)
    if setters is None:
        raise EngineError(f"No setter corrresponding to '{key}' in {bean}")
    kind = _java_class(value)
    if "String" in setters and kind == "String":
        return java_float(value) if "float" in setters else value
    # the second pass takes a setter of that name in the JVM's method order:
    # each must accept the value for the model to load on every JVM
    for setter in setters:
        accepts = {"Object": True, "boolean": kind == "Boolean", "String": kind == "String",
                   "float": kind == "Long"}[setter]  # Long widens to float; Double does not
        if not accepts:
            raise EngineError(f"argument type mismatch: {bean}.set{key[0].upper()}{key[1:]}"
                              f"({setter}) given a {kind} ({value!r})")
    return F32(value) if "float" in setters else value


def _solr_normalizer(norm):
    """``x -> normalise(x)`` in float32, or None for the identity."""
    if norm is None:
        return None
    name = norm.get("class", "").rsplit(".", 1)[-1]
    params = norm.get("params", {})
    if name == "IdentityNormalizer":
        return None
    if name not in ("StandardNormalizer", "MinMaxNormalizer"):
        raise EngineError(f"unknown normalizer class {norm.get('class')!r}")
    values = {key: _solr_set(name, key, value) for key, value in params.items()}
    if name == "StandardNormalizer":
        avg, std = F32(values.get("avg", F32(0))), F32(values.get("std", F32(1)))
        if not std > 0:
            raise EngineError("Standard Normalizer standard deviation must be positive")
        return lambda x: F32(F32(x - avg) / std)
    low, high = F32(values.get("min", F32(0))), F32(values.get("max", F32(1)))
    delta = F32(high - low)
    if delta == 0:
        raise EngineError("MinMax Normalizer delta must not be zero")
    return lambda x: F32(F32(x - low) / delta)


def _solr_node(spec, index):
    if not isinstance(spec, dict):
        raise EngineError(f"ClassCastException: a tree node is {spec!r}")
    node = {}
    for key, value in spec.items():
        value = _solr_set("RegressionTreeNode", key, value)
        if key in ("left", "right"):
            value = _solr_node(value, index)
        elif key == "threshold":
            value = F32(value + F32(1e-6))  # Solr's NODE_SPLIT_SLACK
        node[key] = value
    if "feature" not in node:
        if "left" in node or "right" in node:
            raise EngineError("MultipleAdditiveTreesModel tree node is leaf with left/right")
        return ("leaf", F32(node.get("value", F32(0))))
    for key in ("threshold", "left", "right"):
        if key not in node:
            raise EngineError(f"MultipleAdditiveTreesModel tree node is missing {key}")
    return ("split", index.get(node["feature"], -1), node["threshold"], node.get("missing"),
            node["left"], node["right"])


def _descend(root, n_rows, step):
    """Every row down a tree at once: ``step(node, rows)`` gives the score of
    the rows reaching a leaf (or a node that ends the walk), else
    ``(goes_left, left, right)``; each node splits the rows that reach it,
    so each row takes exactly the path an engine's loop takes alone."""
    out = np.zeros(n_rows, dtype=F32)

    def walk(node, rows):
        if len(rows) == 0:
            return
        taken = step(node, rows)
        if not isinstance(taken, tuple):
            out[rows] = taken
            return
        goes_left, left, right = taken
        walk(left, rows[goes_left])
        walk(right, rows[~goes_left])

    walk(root, np.arange(n_rows))
    return out


def _solr_tree_scores(root, vectors, null_same_as_zero):
    """``scoreNode`` (``scoreNodeWithNullSupport`` without null-as-zero)."""

    def step(node, rows):
        if node[0] == "leaf":
            return node[1]
        _, feature, threshold, missing, left, right = node
        if feature < 0:
            return F32(0)  # a feature the model does not list scores the tree as 0
        x = vectors[rows, feature]
        goes_left = x <= threshold
        if not null_same_as_zero and np.any(np.isnan(x)):
            if missing is None:
                raise EngineError("NullPointerException: a NaN reached a node without 'missing'")
            goes_left = goes_left | (np.isnan(x) & (missing == "left"))
        return goes_left, left, right

    return _descend(root, len(vectors), step)


def _solr_scores(document, X, names, default_values):
    """Solr's scores; ``default_values``: per column of ``X``, what the
    feature store gives a feature a document lacks (Solr's
    ``defaultValue``: 0 unless set, or NaN)."""
    features = document.get("features")
    if not features:
        raise EngineError("no features declared for model")
    listed = [f["name"] for f in features]
    if len(set(listed)) != len(listed):
        raise EngineError("duplicated feature in model")
    norms = [_solr_normalizer(f.get("norm")) for f in features]
    values = _columns(X, names, listed).astype(F32)
    kind = document.get("class", "").rsplit(".", 1)[-1]
    # the store's defaultValue for a lacking feature; "NaN" only where the model was
    # trained with missing values (solr_feature_store), which a linear model never is
    default = _columns(np.asarray(default_values, dtype=np.float64)[None, :], names,
                       listed).astype(F32)[0]
    if kind == "LinearModel":
        default = np.where(np.isnan(default), F32(0), default)
    values = np.where(np.isnan(values), default, values)
    params = document.get("params") or {}
    if kind == "LinearModel":
        weights = _solr_set("LinearModel", "weights", params.get("weights"))
        if not isinstance(weights, dict):
            raise EngineError("ClassCastException: weights is not a map")
        w = []
        for name in listed:
            weight = weights.get(name)
            if weight is None:
                raise EngineError(f"Model lacks weight(s) for [{name}]")
            if isinstance(weight, bool) or not isinstance(weight, (int, float)):
                raise EngineError(f"ClassCastException: the weight of {name} is {weight!r}")
            w.append(F32(weight))
        vectors = values
        total = np.zeros(len(values), dtype=F32)
        with np.errstate(all="ignore"):
            for j in range(len(listed)):
                x = norms[j](vectors[:, j]) if norms[j] else vectors[:, j]
                total = total + x * w[j]
        return total.astype(np.float64)
    if kind != "MultipleAdditiveTreesModel":
        raise EngineError(f"Model loading failed for {document.get('class')!r}")
    for key, value in params.items():
        _solr_set("MultipleAdditiveTreesModel", key, value)
    null_same = params.get("isNullSameAsZero", True)
    index = {name: j for j, name in enumerate(listed)}
    trees = []
    for tree in params.get("trees") or []:
        spec = {key: _solr_set("RegressionTree", key, value) for key, value in tree.items()}
        if "weight" not in spec or "root" not in spec:
            raise EngineError("MultipleAdditiveTreesModel tree doesn't contain a weight or root")
        trees.append((F32(spec["weight"]), _solr_node(spec["root"], index)))
    if not trees:
        raise EngineError("no trees declared for model")
    # a NaN stays NaN: normalised with null-as-zero, skipped without; either way a
    # NaN, which goes right at every node with null-as-zero (x <= t is false)
    with np.errstate(all="ignore"):
        vectors = np.column_stack([norms[j](values[:, j]) if norms[j] else values[:, j]
                                   for j in range(len(listed))]).astype(F32)
        total = np.zeros(len(values), dtype=F32)
        for weight, root in trees:
            total = total + weight * _solr_tree_scores(root, vectors, null_same)
    return total.astype(np.float64)


# -- the Elasticsearch / OpenSearch LTR plugins --------------------------------------

_XGBOOST_FIELDS = {"nodeid", "depth", "split", "split_condition", "yes", "no", "missing",
                   "leaf", "children"}


def _xgboost_node(spec, features, engine):
    if not isinstance(spec, dict):
        raise EngineError(f"a node is {spec!r}")
    unknown = set(spec) - _XGBOOST_FIELDS
    if unknown:
        raise EngineError(f"[node] unknown field [{sorted(unknown)[0]}]")
    nodeid = _plugin_int(spec.get("nodeid"), "nodeid") if "nodeid" in spec else None
    if "leaf" in spec:
        if nodeid is None:
            raise EngineError("This leaf does not have all the required fields")
        return (nodeid, "leaf", _plugin_float(spec["leaf"], "leaf"))
    children = spec.get("children")
    if (nodeid is None or any(k not in spec for k in ("split_condition", "split", "yes", "no",
                                                        "depth"))
            or not isinstance(children, list) or len(children) != 2):
        raise EngineError("This split does not have all the required fields")
    yes, no = _plugin_int(spec["yes"], "yes"), _plugin_int(spec["no"], "no")
    _plugin_int(spec["depth"], "depth")
    missing = _plugin_int(spec["missing"], "missing") if "missing" in spec else None
    left, right = (_xgboost_node(child, features, engine) for child in children)
    if left[0] != yes or right[0] != no:
        raise EngineError("Split structure is invalid, yes, no and/or missing branches does "
                          "not point to the proper children.")
    if missing is None and engine.startswith("elasticsearch"):
        raise EngineError("NullPointerException: a split without 'missing'")
    if missing is not None and engine == "opensearch" and missing not in (yes, no):
        raise EngineError("Split structure is invalid: missing is neither yes nor no")
    if spec["split"] not in features:
        raise EngineError(f"Unknown feature [{spec['split']}]")
    threshold = _plugin_float(spec["split_condition"], "split_condition")
    return (nodeid, "split", features[spec["split"]], threshold, missing == yes, left, right)


def _xgboost_scores(root, vectors, engine):
    """``Split.eval`` of the plugin version ``engine`` for every row at once."""
    honours_missing = engine in ("elasticsearch", "opensearch")

    def step(node, rows):
        if node[1] == "leaf":
            return node[2]
        _, _, feature, threshold, missing_left, left, right = node
        x = vectors[rows, feature]
        with np.errstate(invalid="ignore"):
            goes_left = threshold > x  # false for NaN: NaN goes right
        if honours_missing:
            goes_left = np.where(np.isnan(x), missing_left, goes_left)
        return goes_left, left, right

    return _descend(root, len(vectors), step)


def _plugin_scores(body, X, names, engine):
    try:
        model = body["model"]["model"]
        kind, definition = model["type"], model["definition"]
    except (KeyError, TypeError):
        raise EngineError("the body is not {'model': {'model': {'type', 'definition'}}}") from None
    if not isinstance(definition, str):
        raise EngineError("definition must be a string of JSON")
    parsed = _plugin_json(definition)
    featureset = list(names)  # the featureset: a feature per column of X, in its order
    if kind == "model/linear":
        if not isinstance(parsed, dict):
            raise EngineError("Expected start object")
        weights = np.zeros(len(featureset), dtype=F32)
        for name, weight in parsed.items():
            if name not in featureset:
                raise EngineError(f"Feature [{name}] is unknown.")
            if isinstance(weight, bool) or not isinstance(weight, (int, float)):
                raise EngineError(f"Expected a float but found {weight!r}")
            weights[featureset.index(name)] = _plugin_float(weight, name)
        values = _columns(X, names, featureset).astype(F32)
        values = np.where(np.isnan(values), F32(0), values)  # a dense vector: 0 for missing
        for name, spec in (model.get("feature_normalizers") or {}).items():
            if name not in featureset:
                raise EngineError(f"normalizer for unknown feature [{name}]")
            standard = spec.get("standard")
            if set(spec) != {"standard"} or set(standard) != {"mean", "standard_deviation"}:
                raise EngineError(f"unsupported normalizer {spec!r}")
            mean = _plugin_float(standard["mean"], "mean")
            deviation = _plugin_float(standard["standard_deviation"], "standard_deviation")
            if not deviation > 0:
                raise EngineError("standard deviation must be positive")
            j = featureset.index(name)
            values[:, j] = (values[:, j] - mean) / deviation  # float32 arithmetic
        # LinearRanker sums weight * value over the whole featureset, in its order
        total = np.zeros(len(values), dtype=F32)
        with np.errstate(all="ignore"):
            for j in range(len(featureset)):
                total = total + weights[j] * values[:, j]
        return total.astype(np.float64)
    if kind != "model/xgboost+json":
        raise EngineError(f"unknown model type {kind!r}")
    if isinstance(parsed, dict):
        unknown = set(parsed) - {"objective", "splits"}
        if unknown:
            raise EngineError(f"[xgboost_definition] unknown field [{sorted(unknown)[0]}]")
        parsed = parsed.get("splits")
    if not isinstance(parsed, list) or not parsed:
        raise EngineError("XGBoost model must define at lease one tree")
    index = {name: j for j, name in enumerate(featureset)}
    trees = [_xgboost_node(tree, index, engine) for tree in parsed]
    values = _columns(X, names, featureset).astype(F32)
    if engine == "elasticsearch-1.5.8":
        values = np.where(np.isnan(values), F32(0), values)  # a dense vector: 0 for missing
    total = np.zeros(len(values), dtype=F32)
    for tree in trees:
        total = total + F32(1) * _xgboost_scores(tree, values, engine)  # weights are 1
    return total.astype(np.float64)


# -- Vespa ----------------------------------------------------------------------------

_VESPA_TOKEN = re.compile(r"\s*(?:(?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
                          r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op><=|>=|==|[-+*/(),.<>]))")


def _vespa_tokens(text):
    tokens, position = [], 0
    text = text.strip()
    while position < len(text):
        match = _VESPA_TOKEN.match(text, position)
        if not match or match.end() == position:
            raise EngineError(f"cannot parse the expression at {text[position:position + 20]!r}")
        tokens.append(match.group(match.lastgroup))
        position = match.end()
    return tokens


class _VespaExpression:
    """A recursive-descent reader of the scalar part of Vespa's ranking
    expressions (numbers, + - * /, if() with a comparison, isNan(), rank
    features) into a function of a feature lookup, evaluated in double for
    many documents at once (each document's value is what Vespa computes
    for it alone)."""

    def __init__(self, text):
        self.tokens, self.position = _vespa_tokens(text), 0
        self.evaluate = self.sum()
        if self.position != len(self.tokens):
            raise EngineError(f"unexpected {self.tokens[self.position]!r} in the expression")

    def peek(self):
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self, expected=None):
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise EngineError(f"expected {expected!r}, found {token!r}")
        self.position += 1
        return token

    def sum(self):
        terms = [(1.0, self.product())]
        while self.peek() in ("+", "-"):
            sign = 1.0 if self.take() == "+" else -1.0
            terms.append((sign, self.product()))
        return lambda lookup: _fsum_in_order([s * t(lookup) for s, t in terms])

    def product(self):
        factor = self.factor()
        while self.peek() in ("*", "/"):
            operator, right, left = self.take(), self.factor(), factor
            factor = ((lambda lookup, a=left, b=right: a(lookup) * b(lookup)) if operator == "*"
                      else (lambda lookup, a=left, b=right: a(lookup) / b(lookup)))
        return factor

    def factor(self):
        token = self.take()
        if token == "-":
            inner = self.factor()
            return lambda lookup: -inner(lookup)
        if token == "(":
            inner = self.sum()
            self.take(")")
            return inner
        if re.fullmatch(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", token):
            value = float(token)
            return lambda lookup: value
        if token == "if":
            self.take("(")
            left = self.sum()
            operator = self.take()
            if operator not in ("<", "<=", "==", ">=", ">"):
                raise EngineError(f"if() needs a comparison, found {operator!r}")
            right = self.sum()
            self.take(",")
            when_true = self.sum()
            self.take(",")
            when_false = self.sum()
            self.take(")")
            test = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
                    "==": lambda a, b: a == b, ">=": lambda a, b: a >= b,
                    ">": lambda a, b: a > b}[operator]
            return lambda lookup: np.where(test(left(lookup), right(lookup)),
                                           when_true(lookup), when_false(lookup))
        if token == "isNan":
            self.take("(")
            inner = self.sum()
            self.take(")")
            return lambda lookup: np.where(np.isnan(inner(lookup)), 1.0, 0.0)
        # a rank feature: name(arguments)(.output)*
        text = token
        if self.peek() == "(":
            depth = 0
            while True:
                part = self.take()
                text += part
                depth += {"(": 1, ")": -1}.get(part, 0)
                if depth == 0:
                    break
        while self.peek() == ".":
            text += self.take() + self.take()
        return lambda lookup: lookup(text)


def _fsum_in_order(values):
    total = 0.0
    for value in values:
        total += value
    return total


def _vespa_scores(text, X, names, attribute_type):
    match = re.search(r"first-phase\s*\{\s*expression\s*\{(.*?)\}\s*\}", text, re.S)
    if not match:
        raise EngineError("no first-phase expression in the rank profile")
    expression = _VespaExpression(match.group(1))
    columns = {name: j for j, name in enumerate(names)}
    X = np.asarray(X, dtype=np.float64)

    def lookup(feature):
        attribute = re.fullmatch(r"attribute\(([A-Za-z_][A-Za-z0-9_]*)\)", feature)
        name = attribute.group(1) if attribute and attribute.group(1) in columns else feature
        if name not in columns:
            raise EngineError(f"the data has no feature {feature!r}")
        values = X[:, columns[name]]
        if attribute_type == "float":
            values = values.astype(F32).astype(np.float64)
        # a missing attribute is NaN; a rank feature without a match is 0
        return values if attribute else np.where(np.isnan(values), 0.0, values)

    with np.errstate(invalid="ignore"):
        scores = expression.evaluate(lookup)
    return np.broadcast_to(np.asarray(scores, dtype=np.float64), (len(X),)).copy()


# -- the entry point ------------------------------------------------------------------


def _columns(X, names, wanted):
    columns = {name: j for j, name in enumerate(names)}
    missing = [name for name in wanted if name not in columns]
    if missing:
        raise EngineError(f"the model reads feature {missing[0]!r}, which the data lacks")
    return np.asarray(X, dtype=np.float64)[:, [columns[name] for name in wanted]]


def engine_scores(text, X, names, engine, *, defaults=None):
    """The scores ``engine`` gives the rows ``X`` with the exported model
    ``text``.

    Parameters
    ----------
    text : str
        What :func:`rsrank.deployment.export.export_model` wrote for the engine.
    X : array of shape (n_rows, n_features)
        Feature values; NaN marks a feature the document lacks.
    names : list of str
        The feature name of each column of ``X``.
    engine : str
        One of :data:`ENGINES`.
    defaults : dict, optional
        Solr: the feature store's ``defaultValue`` of each feature name (a
        number, or "NaN"), what a document lacking it holds; a feature not
        named holds the engine's (``solr`` 0, ``solr-nan`` NaN).
        :func:`rsrank.deployment.export.solr_defaults` gives those of the store
        ``rsrank export --solr-features`` writes.

    Raises :class:`EngineError` where the engine would refuse the model.
    """
    X = np.asarray(X, dtype=np.float64)
    if engine in ("solr", "solr-nan"):
        default = 0.0 if engine == "solr" else np.nan
        given = defaults or {}
        return _solr_scores(json.loads(text), X, names,
                            [float(given.get(name, default)) for name in names])
    if engine in ("elasticsearch-1.5.8", "elasticsearch", "opensearch-3.7", "opensearch"):
        return _plugin_scores(_plugin_json(text), X, names, engine)
    if engine in ("vespa-float", "vespa-double"):
        return _vespa_scores(text, X, names, engine.split("-")[1])
    raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
