"""RSRank model files: small, versioned, human-readable JSON.

A model file holds what scoring needs and what a reader checks: the
weights, the feature scaling, the feature names, every parameter, the
library version, a few facts of the fit and a fingerprint of the training
data. The per-epoch history stays in memory (``history_``): it is a record
of training, not part of the model.

Loading never executes anything from the file (unlike pickle or joblib,
which run arbitrary code when they load): it checks the size, the JSON
types and the shapes here, the parameters through the estimator's own
checks (:meth:`rsrank.RSRank.load`), and every message names the file.
"""

import json
import numbers
from collections import namedtuple
from dataclasses import dataclass, replace

import numpy as np

from ..reading._files import atomic_write_text, read_bounded_text
from .._version import __version__
from ..learning.binning import MAX_BINS, MISSING, PairEncoding, StepEncoding, has_missing_bin
from ..learning.defaults import AUTO_BINS, ROWS_BINS
from ..learning.kinds import for_kind
from ..learning.model import AdditiveModel, InteractionModel, LinearModel, feature_name_problem

__all__ = ["MODEL_FORMAT", "MODEL_FORMAT_VERSION", "MAX_MODEL_BYTES", "ModelFileError",
           "SavedModel", "save_model", "load_model", "model_document", "model_from_document"]

MODEL_FORMAT = "rsrank-model"
MODEL_FORMAT_VERSION = 4
#: Linear models are written as version 2, which every earlier reader takes;
#: version 3 adds additive models (``"model": "additive"`` and ``"thresholds"``),
#: version 4 models with pairwise interactions (``"model": "interactions"``,
#: ``"pairs"`` and ``"grids"``), so that a reader of version 3 refuses them
LINEAR_FORMAT_VERSION = 2
ADDITIVE_FORMAT_VERSION = 3
#: Largest model file read (a million features take about 60 MB).
MAX_MODEL_BYTES = 256 * 2**20


#: What a model file holds: the model value, the estimator parameters it was
#: trained with (checked by the estimator that takes them) and ``fitted``
#: facts (``n_iter``, ``t``, ``best_iteration``).
SavedModel = namedtuple("SavedModel", "model params fitted")


class ModelFileError(ValueError):
    """A model file that cannot be read; the message starts with the path."""

    def __init__(self, path, problem):
        self.path, self.problem = str(path), problem
        super().__init__(f"{path}: {problem}")


def _to_json(value):
    """JSON has no inf/nan: write them as strings."""
    if isinstance(value, (float, np.floating)):
        value = float(value)
        if not np.isfinite(value):
            return str(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, (list, tuple, np.ndarray)):  # feature costs, excluded features
        return [_to_json(item) for item in value]
    return value


def _from_json(value):
    if isinstance(value, list):
        return [_from_json(item) for item in value]
    if value in ("inf", "-inf", "nan"):
        return float(value)
    return value


def _scalar(value):
    return value is None or isinstance(value, (str, numbers.Real))


def model_document(model, params, fitted):
    """The JSON-ready dict of a :class:`~rsrank.learning.model.LinearModel` trained
    with the estimator parameters ``params`` (``fitted``: ``n_iter``, ``t``
    and ``best_iteration``)."""
    values = {}
    for name, value in params.items():
        if isinstance(value, np.random.RandomState):
            value = None  # seeds training only; predictions do not depend on it
        if callable(value):
            raise ValueError(f"cannot save parameter {name}={value!r}: a callable has no "
                             "JSON form; use pickle or joblib for this model")
        values[name] = _to_json(value)
    form = for_kind(_KIND_FORMATS, model.kind, "model file form")
    document = {
        "format": MODEL_FORMAT,
        "format_version": form.version,
        "rsrank_version": __version__,
        "n_features": int(model.n_features),
        "feature_names": model.names(),
        # names read from the training DataFrame's columns are checked against
        # the columns of a DataFrame given to predict
        "feature_names_from_columns": bool(model.names_from_columns),
        "normalize": model.normalize,
        "coef": [float(v) for v in model.coef],
        "params": values,
        "fitted": {
            "n_iter": int(fitted.get("n_iter", 0)),
            "t": int(fitted.get("t", 0)),
            "best_iteration": fitted.get("best_iteration"),
            "n_fit_queries": int(model.n_fit_queries),
            "n_nonzero": len(model.selected_indices()),  # the features in use
        },
        "training_data": model.fingerprint,
        "feature_offset": [float(v) for v in model.offset],
        "feature_scale": [float(v) for v in model.scale],
    }
    if getattr(model, "fill", None) is not None:  # what a missing value stands for
        document["feature_fill"] = [float(v) for v in model.fill]
    document.update(form.fields(model))
    return document


def save_model(path, model, params, fitted):
    """Write a model as JSON, atomically (see the module docstring and
    :func:`model_document`)."""
    text = json.dumps(model_document(model, params, fitted), indent=1, allow_nan=False) + "\n"
    atomic_write_text(path, text)


def _vector(document, key, n, path, *, positive=False):
    values = document.get(key)
    if (not isinstance(values, list) or len(values) != n
            or not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values)):
        raise ModelFileError(path, f"{key!r} must be a list of {n} numbers")
    array = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(array)) or (positive and not np.all(array > 0)):
        raise ModelFileError(path, f"{key!r} holds {'non-positive or ' if positive else ''}"
                             "non-finite values")
    return array


def model_from_document(document, path="<model>"):
    """A :class:`SavedModel` from :func:`model_document`'s dict; every type
    and shape is checked, and so is the agreement of the parameters with
    the kind of model; a problem raises ``ModelFileError`` naming ``path``
    (also one the checks did not foresee, such as a number too large for
    its array). The parameters' values are checked by the estimator that
    takes them (:meth:`rsrank.RSRank.load`)."""
    try:
        return _model_from_document(document, path)
    except ModelFileError:
        raise
    except (OverflowError, TypeError, ValueError, KeyError, AttributeError) as error:
        raise ModelFileError(path, f"not a valid RSRank model file ({type(error).__name__}: "
                             f"{error})") from None


def _model_from_document(document, path):
    if not isinstance(document, dict) or document.get("format") != MODEL_FORMAT:
        raise ModelFileError(path, f"not an RSRank model file (no format: {MODEL_FORMAT!r})")
    version = document.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ModelFileError(path, f"format_version must be a positive integer, got {version!r}")
    if version > MODEL_FORMAT_VERSION:
        raise ModelFileError(path, f"model format version {version} is newer than this rsrank "
                             f"reads ({MODEL_FORMAT_VERSION}); upgrade rsrank")
    n = document.get("n_features")
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ModelFileError(path, f"n_features must be a positive integer, got {n!r}")
    kind = document.get("model", "linear")
    if kind not in _KIND_FORMATS:
        raise ModelFileError(path, f"'model' must be one of {sorted(_KIND_FORMATS)}, got "
                             f"{kind!r}")
    form = for_kind(_KIND_FORMATS, kind, "model file form")
    layout = form.layout(document, n, path)
    coef = _vector(document, "coef", form.n_weights(layout, n), path)
    params = document.get("params")
    if not isinstance(params, dict):
        raise ModelFileError(path, "'params' must be an object of parameter values")
    for name, value in params.items():
        # a list holds feature costs or excluded features; an excluded term is a list itself
        if not (_scalar(value) or isinstance(value, list) and all(
                _scalar(item) or isinstance(item, list) and all(map(_scalar, item))
                for item in value)):
            raise ModelFileError(path, f"parameter {name} has a {type(value).__name__} value")
    params = {k: _from_json(v) for k, v in params.items()}
    if params.get("additive", False) is not form.additive_param:
        raise ModelFileError(path, f"the parameters say additive={params.get('additive')!r} "
                             f"but the model is {kind}: the file was edited or damaged")
    form.check(layout, params, path)
    if version == 1:
        params.setdefault("normalize", "none")  # version 1 predates feature scaling
    normalize = params.get("normalize", "zscore")
    if not isinstance(normalize, str):
        raise ModelFileError(path, f"invalid parameter: normalize={normalize!r}")
    names = document.get("feature_names")
    from_columns = False
    if names is not None:
        if not isinstance(names, list) or len(names) != n or not all(
                isinstance(name, str) for name in names):
            raise ModelFileError(path, f"'feature_names' must be a list of {n} strings")
        from_columns = version == 1 or document.get("feature_names_from_columns") is True
    offset = scale = None
    if "feature_scale" in document:
        offset = _vector(document, "feature_offset", n, path)
        scale = _vector(document, "feature_scale", n, path, positive=True)
    elif normalize in ("zscore", "minmax"):
        raise ModelFileError(path, f"normalize={normalize!r} but no feature_offset and "
                             "feature_scale")
    fitted = document.get("fitted", {})
    if not isinstance(fitted, dict):
        raise ModelFileError(path, "'fitted' must be an object")

    def count(key, default):
        value = fitted.get(key, default)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                  or value < 0):
            raise ModelFileError(path, f"fitted.{key} must be a non-negative integer")
        return value

    fingerprint = document.get("training_data")
    problem = None if names is None else feature_name_problem(names, n)
    if problem:
        raise ModelFileError(path, f"feature_names: {problem}")
    fingerprint = fingerprint if isinstance(fingerprint, dict) else None
    model = form.build(coef, layout, normalize, offset, scale, names, from_columns, fingerprint,
                       count("n_fit_queries", 1) or 1)
    if "feature_fill" in document:
        if not form.fills:
            raise ModelFileError(path, "feature_fill is for linear models")
        model = replace(model, fill=_vector(document, "feature_fill", n, path))
    return SavedModel(model, params, {"n_iter": count("n_iter", 0), "t": count("t", 0),
                                      "best_iteration": count("best_iteration", None)})


def _cuts(cuts, what, path):
    """A list of increasing float32 values (``what`` names it in errors),
    the last of which may be ``"inf"``: the missing value's bin."""
    if isinstance(cuts, list) and cuts and cuts[-1] == "inf":
        return np.r_[_cuts(cuts[:-1], what, path), MISSING].astype(np.float32)
    if (not isinstance(cuts, list) or len(cuts) >= MAX_BINS or not all(
            isinstance(v, numbers.Real) and not isinstance(v, bool) for v in cuts)):
        raise ModelFileError(path, f"{what} must be a list of at most {MAX_BINS - 1} numbers "
                             "(and \"inf\" last for a missing value's bin)")
    values = np.asarray(cuts, dtype=np.float64)
    with np.errstate(over="ignore"):  # beyond float32: inf, refused below
        single = values.astype(np.float32)
    if (not np.all(np.isfinite(values)) or np.any(single != values)
            or np.any(np.diff(values) <= 0)):
        raise ModelFileError(path, f"{what} must be increasing finite float32 values")
    return single


def _cut_texts(cuts):
    """Thresholds for a model file: each float32 as the double of the same
    value (read back exactly), the missing value's bin as ``"inf"``."""
    return [float(t) if np.isfinite(t) else "inf" for t in cuts]


def _thresholds(document, n, path):
    thresholds = document.get("thresholds")
    if not isinstance(thresholds, list) or len(thresholds) != n:
        raise ModelFileError(path, f"'thresholds' must be a list of {n} lists (one per feature)")
    return [_cuts(cuts, f"thresholds of feature {j}", path)
            for j, cuts in enumerate(thresholds, start=1)]


def _counts(document, lengths, path):
    """``bin_counts``: per column one count per code (``lengths``), or None."""
    counts = document.get("bin_counts")
    if counts is not None and (not isinstance(counts, list) or len(counts) != len(lengths) or any(
            not isinstance(c, list) or len(c) != length or not all(
                isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2 ** 63 for v in c)
            for c, length in zip(counts, lengths))):
        raise ModelFileError(path, "'bin_counts' must hold, per feature, one count "
                             "(an integer >= 0) per bin: one more than its thresholds (and "
                             "per pair one per cell)")
    return counts


def _encoding(document, n, path):
    """The :class:`~rsrank.learning.binning.StepEncoding` of an additive model's
    ``thresholds``: per feature a list of increasing float32 values."""
    out = _thresholds(document, n, path)
    return StepEncoding(out, _counts(document, [len(t) + 1 for t in out], path))


def _pair_encoding(document, n, path):
    """The :class:`~rsrank.learning.binning.PairEncoding` of a model with pairwise
    interactions: ``thresholds`` as an additive model's, ``pairs`` (two
    feature indices each, 0-based, increasing) and each pair's ``grids``
    (the cuts of both features)."""
    thresholds = _thresholds(document, n, path)
    pairs, grids = document.get("pairs"), document.get("grids")
    if not isinstance(pairs, list) or not all(
            isinstance(pair, list) and len(pair) == 2 and all(
                isinstance(j, int) and not isinstance(j, bool) and 0 <= j < n for j in pair)
            and pair[0] < pair[1] for pair in pairs):
        raise ModelFileError(path, f"'pairs' must be a list of [a, b] feature indices with "
                             f"0 <= a < b < {n}")
    if not isinstance(grids, list) or len(grids) != len(pairs) or not all(
            isinstance(grid, list) and len(grid) == 2 for grid in grids):
        raise ModelFileError(path, "'grids' must hold two lists of cuts per pair")
    grids = [tuple(_cuts(cuts, f"grid cuts of pair {p}", path) for cuts in grid)
             for p, grid in enumerate(grids, start=1)]
    cells = [(len(a) + 1) * (len(b) + 1) for a, b in grids]
    if any(count > MAX_BINS for count in cells):
        raise ModelFileError(path, f"a pair's grid has more than {MAX_BINS} cells")
    counts = _counts(document, [len(t) + 1 for t in thresholds] + cells, path)
    try:
        return PairEncoding(thresholds, pairs, grids, counts)
    except ValueError as error:
        raise ModelFileError(path, str(error)) from None


def _settled_bins(value, default, auto):
    """A file's ``max_bins`` or ``interaction_bins`` as a bound: ``"auto"``
    allows what it settles to on many rows (:data:`ROWS_BINS`)."""
    value = value if value is not None else default
    return auto if value == AUTO_BINS else value


def _max_bins_check(encoding, params, path):
    max_bins = _settled_bins(params.get("max_bins"), 32, ROWS_BINS[0])
    widest = max((len(t) - has_missing_bin(t) for t in encoding.thresholds[:encoding.n_features]),
                 default=0)
    if not isinstance(max_bins, int) or widest > max_bins - 1:
        raise ModelFileError(path, f"a feature has {widest} thresholds, more than "
                             f"max_bins={max_bins!r} allows (max_bins - 1)")


def _step_fields(model):
    """An additive model's own fields: float32 thresholds as the doubles of
    the same value (read back exactly), and the rows per bin."""
    fields = {"model": "additive",
              "thresholds": [_cut_texts(cuts) for cuts in model.encoding.thresholds]}
    if model.encoding.counts is not None:
        fields["bin_counts"] = [[int(c) for c in counts] for counts in model.encoding.counts]
    return fields


def _pair_fields(model):
    """A model with pairs: an additive model's fields, its pairs and each
    pair's grid."""
    encoding = model.encoding
    fields = _step_fields(model)
    fields["model"] = "interactions"
    fields["thresholds"] = fields["thresholds"][:encoding.n_features]
    fields["pairs"] = [[int(a), int(b)] for a, b in encoding.pairs]
    fields["grids"] = [[_cut_texts(cuts) for cuts in grid] for grid in encoding.grids]
    return fields


def _steps_check(encoding, params, path):
    _max_bins_check(encoding, params, path)
    if params.get("interactions", 0) != 0:
        raise ModelFileError(path, f"the parameters say interactions="
                             f"{params.get('interactions')!r} but the model has no pairs: the "
                             "file was edited or damaged")


def _pairs_check(encoding, params, path):
    _max_bins_check(encoding, params, path)
    budget = params.get("interactions", 0)
    if not isinstance(budget, int) or encoding.n_pairs > budget:
        raise ModelFileError(path, f"the model has {encoding.n_pairs} pairs, more than "
                             f"interactions={budget!r} allows")
    bins = _settled_bins(params.get("interaction_bins"), 8, ROWS_BINS[1])
    if not isinstance(bins, int) or any(len(cuts) - has_missing_bin(cuts) > bins - 1
                                        for grid in encoding.grids for cuts in grid):
        raise ModelFileError(path, f"a pair's grid has more bins than interaction_bins="
                             f"{bins!r} allows")


@dataclass(frozen=True)
class _KindFormat:
    """How one kind of model is written and read back: its format version,
    the ``additive`` parameter its estimator has, its own fields, their
    reading (a layout of the weights, None when the kind has none), the
    number of weights, a check of the layout against the parameters, the
    model built from what was read, and whether it may hold a
    ``feature_fill`` (a linear model's missing values)."""

    version: int
    additive_param: bool
    fields: object
    layout: object
    n_weights: object
    check: object
    build: object
    fills: bool = False


#: the file form of each model kind (:data:`rsrank.learning.kinds.KINDS`)
_KIND_FORMATS = {
    "linear": _KindFormat(
        LINEAR_FORMAT_VERSION, False, lambda model: {}, lambda document, n, path: None,
        lambda layout, n: n, lambda layout, params, path: None,
        lambda coef, layout, normalize, *rest: LinearModel(coef, normalize, *rest), fills=True),
    "additive": _KindFormat(
        ADDITIVE_FORMAT_VERSION, True, _step_fields, _encoding,
        lambda encoding, n: encoding.n_steps, _steps_check,
        lambda coef, encoding, normalize, offset, scale, *rest: AdditiveModel(coef, encoding,
                                                                              *rest)),
    "interactions": _KindFormat(
        MODEL_FORMAT_VERSION, True, _pair_fields, _pair_encoding,
        lambda encoding, n: encoding.n_steps, _pairs_check,
        lambda coef, encoding, normalize, offset, scale, *rest: InteractionModel(coef, encoding,
                                                                                 *rest)),
}


def _looks_like_letor(text):
    """Whether the first line that is not blank or a comment reads as a
    LETOR/SVMlight data line (a label, then ``qid:`` or ``index:value``)."""
    for line in text.splitlines():
        tokens = line.split("#", 1)[0].split()
        if tokens:
            return (tokens[0].lstrip("+-").replace(".", "", 1).isdigit() and len(tokens) > 1
                    and ":" in tokens[1])
    return False


def load_model(path):
    """Read a model file written by :func:`save_model` (format versions 1
    to 4) as a :class:`SavedModel`. Raises ``ModelFileError`` (a ``ValueError``) with the path and
    the problem, ``FileNotFoundError`` when there is no file."""
    text = read_bounded_text(path, MAX_MODEL_BYTES, "RSRank model file")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        if _looks_like_letor(text):
            raise ModelFileError(path, "LETOR data, not an RSRank model file (a JSON document): "
                                 "were the model and the data file given in each other's "
                                 "place?") from None
        raise ModelFileError(path, f"not a valid RSRank model file ({error})") from None
    except RecursionError:
        raise ModelFileError(path, "not a valid RSRank model file (JSON nested too deeply)") \
            from None
    return model_from_document(document, path)
