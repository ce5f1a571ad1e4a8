"""Every export loads under each engine's rules and scores every document as
predict does, missing features included (rsrank.deployment.engines follows each
engine's source; these tests hold the exports to it, and hold it to the
engines' refusals)."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rsrank import RSRank
from rsrank.deployment.engines import ENGINES, EngineError, engine_scores, java_float
from rsrank.deployment.export import export_model, parity, solr_defaults, to_elasticsearch, to_solr
from rsrank.reading.synthetic import make_edge_values, make_raw_features

F32 = np.float32
TINY = F32(np.finfo(F32).smallest_subnormal)
FLT_MAX = np.finfo(F32).max


@pytest.fixture(scope="module", params=[32, 255], ids=["32-bins", "255-bins"])
def edge_model(request):
    data = make_edge_values(80, random_state=0)
    train = data.qid <= 60
    model = RSRank(additive=True, max_bins=request.param, max_iter=40)
    model.fit(data.X[train], data.y[train], qid=data.qid[train])
    model.set_feature_names(data.feature_names)
    return model, data.X[~train], data.qid[~train]


def probes(model, held_out):
    """Held-out rows, then one row per probe of one feature: at, just below
    and just above each of the model's thresholds in float32, the doubles
    around the midpoint between a threshold and the next float32 (which
    float32 rounds to one side or the other), signed zeros, the smallest
    subnormals, the largest floats and a missing value (NaN)."""
    rows = [held_out[:30]]
    base = held_out[:1]
    specials = [0.0, -0.0, TINY, -TINY, FLT_MAX, -FLT_MAX, np.nan]
    for shape in model.shape_functions():
        values = list(specials)
        for t in shape["thresholds"]:
            above = np.nextafter(t, F32(np.inf))
            middle = (float(t) + float(above)) / 2 if np.isfinite(above) else float(t)
            values += [np.nextafter(t, F32(-np.inf)), t, above,
                       middle, np.nextafter(middle, -np.inf), np.nextafter(middle, np.inf)]
        block = np.repeat(base, len(values), axis=0)
        block[:, shape["feature"]] = np.array(values, dtype=np.float64)
        rows.append(block)
    return np.vstack(rows)


def bin_sums(model, rows):
    """Each row's score as the sum over features of the shape value of the
    bin its float32 value falls in (the count of thresholds strictly below
    it; a missing value counts as 0): in float64, and in float32 as Solr and
    the plugins sum float32 leaves, tree after tree."""
    x = np.where(np.isnan(rows), 0.0, rows).astype(F32)
    total64, total32 = np.zeros(len(x)), np.zeros(len(x), dtype=F32)
    for shape in model.shape_functions():
        values = shape["values"][np.searchsorted(shape["thresholds"], x[:, shape["feature"]],
                                                 side="left")]
        total64 += values
        total32 = total32 + values.astype(F32)
    return total64, total32


@pytest.mark.parametrize("engine", ENGINES)
def test_every_probe_scores_as_predict_in_every_engine(edge_model, engine):
    model, held_out, _ = edge_model
    rows = probes(model, held_out)
    expected = model.predict(np.where(np.isnan(rows), 0.0, rows))  # missing is 0
    total64, total32 = bin_sums(model, rows)
    np.testing.assert_allclose(total64, expected, rtol=1e-12, atol=1e-12)
    text = export_model(model, engine.split("-")[0])
    # solr-nan: the feature store rsrank writes (NaN only for a feature trained with NaN)
    store = ({name: 0.0 for name in model.feature_names()} | solr_defaults(model)
             if engine == "solr-nan" else None)
    scores = engine_scores(text, rows, model.feature_names(), engine, defaults=store)
    # every row takes predict's branch at every node: the engine's sum is the
    # sum of the leaves predict's bins give, to the last bit in float32
    want = total64 if engine.startswith("vespa") else total32.astype(np.float64)
    wrong = np.flatnonzero(np.abs(scores - want) > (1e-12 * np.abs(want).max()
                                                    if engine.startswith("vespa") else 0))
    assert len(wrong) == 0, (engine, rows[wrong[:3]], scores[wrong[:3]], want[wrong[:3]])


def test_the_edge_features_need_what_the_exports_do(edge_model):
    """The generated data exercises each remedy: a Solr feature scaled by a
    power of two, a Solr threshold landing only thanks to it, a plugin
    root for NaN, and 0 lying between thresholds."""
    model, _, _ = edge_model
    solr = to_solr(model)
    scaled = [f["name"] for f in solr["features"] if "norm" in f]
    assert {"pagerank", "subnormal"} <= set(scaled)
    trees = json.loads(to_elasticsearch(model)["model"]["model"]["definition"])
    assert any(tree.get("split_condition") == "Infinity" for tree in trees)
    cuts = {s["name"]: s["thresholds"] for s in model.shape_functions()}
    assert cuts["signed"].min() < 0 < cuts["signed"].max()
    assert 0 < cuts["subnormal"][cuts["subnormal"] > 0].min() < np.finfo(F32).tiny


@pytest.fixture(scope="module")
def linear_model():
    train, test = make_raw_features(80, random_state=0), make_raw_features(30, random_state=1)
    model = RSRank(l1=0.3, max_iter=40, random_state=0).fit(train.X, train.y, qid=train.qid)
    model.set_feature_names(train.feature_names)
    return model, test


@pytest.mark.parametrize("engine", [e for e in ENGINES if e != "solr-nan"])
def test_linear_exports_score_a_missing_feature_as_0(linear_model, engine):
    model, test = linear_model
    rows = test.X.copy()
    rows[np.random.default_rng(0).uniform(size=rows.shape) < 0.3] = np.nan
    expected = model.predict(np.where(np.isnan(rows), 0.0, rows))
    scores = engine_scores(export_model(model, engine.split("-")[0]), rows,
                           model.feature_names(), engine)
    # float32 engines (and Vespa's float attributes) round each product
    np.testing.assert_allclose(scores, expected, rtol=2e-6, atol=2e-6 * np.abs(expected).max())


def test_ohsumed_ranks_alike_in_every_engine(ohsumed_root):
    from rsrank.reading.datasets import load_letor_fold

    parts = load_letor_fold(ohsumed_root, 1, dense=True)
    X, y, qid = parts.train
    X_test, _, qid_test = parts.test
    additive = RSRank(additive=True, max_bins=32, max_iter=20).fit(X, y, qid=qid)
    linear = RSRank(max_iter=20).fit(X, y, qid=qid)
    for model, engines in ((additive, ENGINES), (linear, [e for e in ENGINES if e != "solr-nan"])):
        for engine, result in parity(model, X_test, qid_test, engines).items():
            assert result["accepted"], (engine, result["error"])
            assert result["reordered"] == 0 and result["reordered_missing"] == 0, (engine, result)


# -- the engines' rules, held to what the engines refuse or do -----------------------


def _solr_document(threshold, missing="left", null_same=None):
    node = {"feature": "a", "threshold": threshold, "left": {"value": "1.0"},
            "right": {"value": "2.0"}}
    if missing:
        node["missing"] = missing
    params = {"trees": [{"weight": "1.0", "root": node}]}
    if null_same is not None:
        params["isNullSameAsZero"] = null_same
    return json.dumps({"class": "org.apache.solr.ltr.model.MultipleAdditiveTreesModel",
                       "name": "m", "features": [{"name": "a"}], "params": params})


def test_solr_rules():
    rows = np.array([[0.5], [0.5000011], [np.nan]])
    # a threshold of 0.5 reads as 0.5 + 1e-6: 0.500001 still goes left
    assert engine_scores(_solr_document("0.5"), rows[:2], ["a"], "solr").tolist() == [1.0, 2.0]
    # numbers reach the float/String setters as Double, which neither takes
    with pytest.raises(EngineError, match="argument type mismatch"):
        engine_scores(_solr_document(0.5), rows, ["a"], "solr")
    # a lacking feature is the store's defaultValue: 0 by default, whatever the model says
    for null_same in (None, False):
        document = _solr_document("0.5", "right", null_same)
        assert engine_scores(document, rows, ["a"], "solr")[2] == 1.0
    # defaultValue "NaN": the node's missing branch only with isNullSameAsZero false
    # (a JSON boolean; the string "false" is refused); with it true (the default, and
    # Solr before 9.2) NaN <= threshold is false at every node: right (scoreNode)
    for null_same in (None, True):
        assert engine_scores(_solr_document("0.5", "left", null_same), rows, ["a"],
                             "solr-nan")[2] == 2.0
    assert engine_scores(_solr_document("0.5", "left", False), rows, ["a"],
                         "solr-nan")[2] == 1.0
    assert engine_scores(_solr_document("0.5", "right", False), rows, ["a"],
                         "solr-nan")[2] == 2.0
    # the store's defaultValue per feature: one given as 0 holds 0, as the solr engine does
    assert engine_scores(_solr_document("0.5", "left"), rows, ["a"], "solr-nan",
                         defaults={"a": 0.0})[2] == 1.0
    with pytest.raises(EngineError, match="argument type mismatch"):
        engine_scores(_solr_document("0.5", "right", "false"), rows, ["a"], "solr-nan")
    with pytest.raises(EngineError, match="NullPointerException"):
        engine_scores(_solr_document("0.5", None, False), rows, ["a"], "solr-nan")
    with pytest.raises(EngineError, match="No setter"):
        engine_scores(_solr_document("0.5").replace('"left": {', '"other": 1, "left": {'),
                      rows, ["a"], "solr")


def _xgboost_body(missing=1):
    node = {"nodeid": 0, "depth": 0, "split": "a", "split_condition": 0.5, "yes": 1, "no": 2,
            "children": [{"nodeid": 1, "leaf": 1.0}, {"nodeid": 2, "leaf": 2.0}]}
    if missing is not None:
        node["missing"] = missing
    return json.dumps({"model": {"name": "m", "model": {"type": "model/xgboost+json",
                                                        "definition": json.dumps([node])}}})


def test_plugin_rules():
    rows = np.array([[0.4999], [0.5], [np.nan]])
    per_engine = {engine: engine_scores(_xgboost_body(), rows, ["a"], engine).tolist()
                  for engine in ENGINES if engine.startswith(("elastic", "open"))}
    assert per_engine == {"elasticsearch-1.5.8": [1.0, 2.0, 1.0],  # missing holds 0
                          "elasticsearch": [1.0, 2.0, 1.0],        # NaN takes missing (yes)
                          "opensearch-3.7": [1.0, 2.0, 2.0],       # NaN always goes to no
                          "opensearch": [1.0, 2.0, 1.0]}
    with pytest.raises(EngineError, match="NullPointerException"):
        engine_scores(_xgboost_body(None), rows, ["a"], "elasticsearch")
    assert engine_scores(_xgboost_body(None), rows, ["a"], "opensearch")[2] == 2.0
    with pytest.raises(EngineError, match="not point to the proper children"):
        engine_scores(_xgboost_body().replace('\\"yes\\": 1', '\\"yes\\": 2'), rows, ["a"],
                      "elasticsearch")


def test_vespa_rules():
    def profile(expression):
        return "rank-profile p {\n first-phase {\n  expression {\n" + expression + "\n  }\n }\n}\n"

    rows = np.array([[1.0], [np.nan]])
    text = profile("if(isNan(attribute(a)) == 1.0, 0.0, attribute(a)) * 2 + 1")
    assert engine_scores(text, rows, ["a"], "vespa-double").tolist() == [3.0, 1.0]
    assert np.isnan(engine_scores(profile("2 * attribute(a)"), rows, ["a"], "vespa-float")[1])
    with pytest.raises(EngineError, match="needs a comparison"):
        engine_scores(profile("if(isNan(attribute(a)), 0, 1)"), rows, ["a"], "vespa-float")
    # a float attribute holds float32 values, a double attribute doubles
    value = np.array([[0.1]])
    assert engine_scores(profile("attribute(a)"), value, ["a"], "vespa-float")[0] == float(F32(0.1))
    assert engine_scores(profile("attribute(a)"), value, ["a"], "vespa-double")[0] == 0.1


def test_java_float_against_java():
    """Values printed by Java 17's Float.parseFloat for these texts."""
    cases = {"0.1": F32(0.1), "3.4028235677973366e38": FLT_MAX, "3.4028236e38": F32(np.inf),
             "7.006492321624086e-46": TINY, "7e-46": F32(0.0), "-0.0": F32(-0.0),
             "1.4E-45": TINY, "-Infinity": F32(-np.inf), "2.5f": F32(2.5), " 3 ": F32(3.0)}
    for text, value in cases.items():
        assert java_float(text) == value and np.signbit(java_float(text)) == np.signbit(value)
    with pytest.raises(EngineError):
        java_float("0x")


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2 ** 32 - 1))
def test_exported_numbers_read_back_exactly(bits):
    """Every float32 survives the export's text through Float.parseFloat and
    through a double (the two roads the plugins take)."""
    from rsrank.deployment.trees import exact_text

    value = np.array([bits], dtype=np.uint32).view(F32)[0]
    if not np.isfinite(value):
        return
    text = exact_text(value)
    assert java_float(text) == value and F32(float(text)) == value
    assert np.signbit(java_float(text)) == np.signbit(value)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(-3, 3))
def test_the_vespa_cut_splits_doubles_as_float32_rounding_does(bits, nudge):
    from rsrank.deployment.trees import vespa_cut

    t = np.array([bits], dtype=np.uint32).view(F32)[0]
    if not np.isfinite(t):
        return
    above = np.nextafter(t, F32(np.inf))
    below = np.nextafter(t, F32(-np.inf))
    step = float(above) - float(t) if np.isfinite(above) else float(t) - float(below)
    middle = float(t) + step / 2
    d = middle
    for _ in range(abs(nudge)):
        d = np.nextafter(d, np.inf if nudge > 0 else -np.inf)
    for value in (d, float(t), float(above) if np.isfinite(above) else float(t)):
        with np.errstate(over="ignore"):
            assert (value < vespa_cut(t)) == (F32(value) <= t), (t, value)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2 ** 32 - 1))
def test_a_solr_threshold_lands_on_the_cut_or_is_none(bits):
    from rsrank.deployment.trees import SOLR_SPLIT_SLACK, solr_threshold

    t = np.array([bits], dtype=np.uint32).view(F32)[0]
    if not np.isfinite(t):
        return
    c = solr_threshold(t)
    if c is None:
        # then truly no float32 lands: the landings of the float32 around
        # t - slack step over t
        start = F32(t - SOLR_SPLIT_SLACK)
        near = [start]
        for direction in (F32(np.inf), F32(-np.inf)):
            x = start
            for _ in range(8):
                x = np.nextafter(x, direction)
                near.append(x)
        with np.errstate(over="ignore"):
            assert all(F32(x + SOLR_SPLIT_SLACK) != t for x in near)
    else:
        assert F32(c + SOLR_SPLIT_SLACK) == t


def test_a_plugin_number_that_double_rounding_would_move_is_refused():
    """0.5 + 2**-25 + 2**-60 lies just above the midpoint between two
    float32s: read directly it rounds up, through the nearest double (the
    midpoint itself) it rounds to even, down. Plugin versions differ in
    which road they take."""
    from fractions import Fraction

    exact = Fraction(1, 2) + Fraction(1, 2 ** 25) + Fraction(1, 2 ** 60)
    digits = str(exact.numerator * 10 ** 60 // exact.denominator)
    decimal = "0." + digits.rjust(60, "0")
    assert Fraction(decimal) == exact
    assert java_float(decimal) != F32(float(decimal))
    body = _xgboost_body().replace('\\"split_condition\\": 0.5',
                                   f'\\"split_condition\\": {decimal}')
    with pytest.raises(EngineError, match="different float32"):
        engine_scores(body, np.array([[0.5]]), ["a"], "elasticsearch")


