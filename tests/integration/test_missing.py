"""Missing values (NaN): a bin of their own in additive models and pairs,
refused by linear ones with a one-line fix, kept by model files, and
scored as predict scores NaN by the engines that read a missing feature."""

import json
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from rsrank import RSRank
from rsrank.learning.binning import MISSING, bin_codes, fit_thresholds
from rsrank.deployment.engines import ENGINES, engine_scores
from rsrank.deployment.export import export_model, guarantee
from rsrank.reading.synthetic import make_interactions

#: the engines that hold a missing feature as NaN and route it by the
#: export's missing branches; Solr's defaults and the Elasticsearch plugin
#: before 1.5.9 hold 0
READ_MISSING = ("solr-nan", "elasticsearch", "opensearch-3.7", "opensearch", "vespa-float",
                "vespa-double")


def with_missing(X, share=0.2, columns=(0,), seed=0):
    X = X.copy()
    rng = np.random.default_rng(seed)
    for j in columns:
        X[rng.uniform(size=len(X)) < share, j] = np.nan
    return X


def test_a_feature_with_missing_values_gets_their_bin_above_plus_infinity():
    values = np.array([[1.0, 5.0], [np.nan, 2.0], [3.0, 7.0], [np.nan, 5.0], [2.0, 1.0]])
    cuts = fit_thresholds(values, 32)
    np.testing.assert_array_equal(cuts[0], np.float32([1.0, 2.0, MISSING]))
    np.testing.assert_array_equal(cuts[1], np.float32([1.0, 2.0, 5.0]))
    codes = bin_codes(values, cuts).toarray()
    np.testing.assert_array_equal(codes[:, 0], [0, 3, 2, 3, 1])
    # a NaN where training had none reads as the value 0 (a missing feature
    # everywhere else), and +inf as a value, not as missing
    later = np.array([[np.inf, np.nan], [-np.inf, 0.0]])
    np.testing.assert_array_equal(bin_codes(later, cuts).toarray(), [[2, 0], [0, 0]])
    # sparse rows: a stored NaN too
    sparse = bin_codes(sp.csr_matrix(values), cuts).toarray()
    np.testing.assert_array_equal(sparse, codes)
    with pytest.raises(ValueError, match="infinite"):
        fit_thresholds(np.array([[1.0], [np.inf]]), 32)


def test_quantiles_leave_missing_values_out():
    rng = np.random.default_rng(1)
    column = rng.normal(size=(1000, 1))
    missing = column.copy()
    missing[rng.uniform(size=1000) < 0.3] = np.nan
    cuts = fit_thresholds(missing, 8)[0]
    assert cuts[-1] == MISSING
    np.testing.assert_array_equal(cuts[:-1], fit_thresholds(
        missing[~np.isnan(missing)].reshape(-1, 1), 8)[0])


@pytest.fixture(scope="module")
def fitted():
    data = make_interactions(("and",), n_queries=150, random_state=0)
    X = with_missing(data.X, columns=(0, 2))  # and_a and main_1: both informative
    test = make_interactions(("and",), n_queries=80, random_state=1)
    X_test = with_missing(test.X, columns=(0, 2), seed=1)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, params in (("additive", {}), ("interactions", {"interactions": 3})):
            model = RSRank(additive=True, learning_rate="curvature", max_iter=200,
                           **params).fit(X, data.y, qid=data.qid)
            out[name] = model.set_feature_names(data.feature_names)
    return data, X, test, X_test, out


@pytest.mark.parametrize("kind", ["additive", "interactions"])
def test_missing_values_score_as_their_bin(fitted, kind):
    data, X, test, X_test, models = fitted
    model = models[kind]
    scores = model.predict(X_test)
    assert np.all(np.isfinite(scores))
    shape, = [s for s in model.shape_functions() if s["name"] == "and_a"]
    assert shape["missing"] == shape["values"][-1] and shape["thresholds"][-1] == MISSING
    # a row's score with and_a missing is its score with and_a's missing value
    rows = np.flatnonzero(np.isnan(X_test[:, 0]) & ~np.isnan(X_test[:, 2]))[:20]
    moved = X_test[rows].copy()
    moved[:, 0] = 0.5
    difference = model.predict(X_test[rows]) - model.predict(moved)
    if kind == "additive":
        at = np.searchsorted(shape["thresholds"], np.float32(0.5))
        np.testing.assert_allclose(difference, shape["missing"] - shape["values"][at],
                                   atol=1e-12)
    assert np.any(difference != 0)


def test_a_linear_model_refuses_missing_values_with_the_fix():
    data = make_interactions(("and",), n_queries=30, random_state=0)
    X = with_missing(data.X)
    with pytest.raises(ValueError, match=r"missing values \(NaN\) in 1 feature\(s\) \(f1\).*"
                                         r"additive=True"):
        RSRank(max_iter=3).fit(X, data.y, qid=data.qid)
    linear = RSRank(max_iter=3).fit(data.X, data.y, qid=data.qid)
    with pytest.raises(ValueError, match="impute them, or train with additive=True"):
        linear.predict(X)
    with pytest.raises(ValueError, match="infinity"):
        RSRank(additive=True, max_iter=3).fit(np.where(np.isnan(X), np.inf, X), data.y,
                                              qid=data.qid)


@pytest.mark.parametrize("kind", ["additive", "interactions"])
def test_model_files_keep_the_missing_bins(fitted, kind, tmp_path):
    _, _, _, X_test, models = fitted
    path = tmp_path / "model.json"
    models[kind].save(path)
    document = json.loads(path.read_text())  # strict JSON: no Infinity token
    assert document["thresholds"][0][-1] == "inf"
    again = RSRank.load(path)
    np.testing.assert_array_equal(again.predict(X_test), models[kind].predict(X_test))


@pytest.mark.parametrize("kind", ["additive", "interactions"])
def test_engines_that_read_a_missing_feature_score_it_as_predict_scores_nan(fitted, kind):
    data, _, _, X_test, models = fitted
    model = models[kind]
    expected = model.predict(X_test)
    texts = {form: export_model(model, form) for form in ("solr", "elasticsearch", "vespa")}
    for engine in ENGINES:
        form = engine.split("-")[0].replace("opensearch", "elasticsearch")
        scores = engine_scores(texts[form], X_test, data.feature_names, engine)
        difference = np.max(np.abs(scores - expected))
        if engine in READ_MISSING:
            assert difference < 1e-5, engine
        else:  # a missing feature is 0 there, not the missing value's bin
            assert difference > 1e-3, engine
    assert "isNullSameAsZero false" in guarantee("solr", model)


def test_monotone_constraints_leave_the_missing_value_free(fitted):
    data, X, _, X_test, _ = fitted
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = RSRank(additive=True, interactions=3, learning_rate="curvature", max_iter=150,
                       monotone={0: 1, 2: 1}).fit(X, data.y, qid=data.qid)
    for shape in model.shape_functions():
        if shape["feature"] in (0, 2):
            assert np.all(np.diff(shape["values"][:-1]) >= 0)
    for pair in model.interaction_functions():
        for axis, j in enumerate(pair["features"]):
            if j in (0, 2):
                cuts = pair["thresholds"][axis]
                valued = len(cuts) + 1 - (cuts[-1] == MISSING)
                table = pair["values"] if axis == 0 else pair["values"].T
                assert np.all(np.diff(table[:valued], axis=0) >= 0)


def test_nan_in_a_letor_file_is_a_missing_value(tmp_path):
    from rsrank import load_letor

    text = "2 qid:1 1:0.5 2:nan\n0 qid:1 1:0.1 2:3\n1 qid:2 1:nan 2:1\n0 qid:2 1:0.2 2:2\n"
    for name in ("plain.txt", "cached.txt"):
        path = tmp_path / name
        path.write_text(text)
        X, y, qid = load_letor(path, cache=name == "cached.txt")
        X = X.toarray()
        assert np.isnan(X[0, 1]) and np.isnan(X[2, 0]) and X[1, 1] == 3.0
    again = load_letor(path, cache=True)[0].toarray()  # read back from the cache
    np.testing.assert_array_equal(np.isnan(again), np.isnan(X))
    with pytest.raises(ValueError, match="missing values"):
        RSRank(max_iter=2).fit(X, y, qid=qid)
    model = RSRank(additive=True, max_iter=2).fit(X, y, qid=qid)
    assert np.all(np.isfinite(model.predict(X)))
    (tmp_path / "inf.txt").write_text("1 qid:1 1:inf\n0 qid:1 1:1\n")
    with pytest.raises(ValueError, match="line 1: feature 1 has a non-finite value 'inf'"):
        load_letor(tmp_path / "inf.txt")


# -- what a missing value stands for in a linear model ------------------------------------------


@pytest.fixture(scope="module")
def gappy():
    data = make_interactions(("and",), n_queries=60, random_state=2)
    X = with_missing(data.X, share=0.25, columns=(0, 2))
    return data, X


@pytest.mark.parametrize("policy", ["zero", "mean"])
def test_a_linear_model_fills_a_missing_value_as_if_imputed_by_hand(gappy, policy):
    from rsrank.reading._views import fill_values

    data, X = gappy
    fill = fill_values(X, policy)
    by_hand = np.where(np.isnan(X), fill, X)
    expected_fill = np.zeros(X.shape[1]) if policy == "zero" else np.nanmean(X, axis=0)
    np.testing.assert_allclose(fill, expected_fill, rtol=1e-12)
    params = dict(max_iter=30, learning_rate="curvature", random_state=0)
    model = RSRank(missing=policy, **params).fit(X, data.y, qid=data.qid)
    reference = RSRank(**params).fit(by_hand, data.y, qid=data.qid)
    np.testing.assert_allclose(model.coef_, reference.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.predict(X), reference.predict(by_hand), rtol=1e-9)
    np.testing.assert_allclose(model.model_.fill, fill)
    # sparse rows: an absent entry is 0, a stored NaN is missing
    np.testing.assert_allclose(model.predict(sp.csr_matrix(X)), model.predict(X), rtol=1e-12)
    # an eval_set with missing values is scored the same way
    RSRank(missing=policy, **params).fit(X, data.y, qid=data.qid, eval_set=(X, data.y, data.qid))


def test_the_fill_is_kept_in_the_model_file_and_exported(gappy, tmp_path):
    from rsrank.deployment.export import solr_defaults, to_elasticsearch

    data, X = gappy
    mean = RSRank(missing="mean", max_iter=20, learning_rate="curvature").fit(
        X, data.y, qid=data.qid).set_feature_names(data.feature_names)
    mean.save(tmp_path / "m.json")
    assert json.loads((tmp_path / "m.json").read_text())["feature_fill"] == list(
        mean.model_.fill)
    again = RSRank.load(tmp_path / "m.json")
    np.testing.assert_array_equal(again.predict(X), mean.predict(X))
    for engine in ("vespa-float", "vespa-double"):  # a lacking attribute reads as its fill
        scores = engine_scores(export_model(mean, "vespa"), X, data.feature_names, engine)
        np.testing.assert_allclose(scores, mean.predict(X), atol=1e-4)
    defaults = solr_defaults(mean)  # Solr: each fill as the feature store's defaultValue
    used = [name for name, _ in mean.selected_features()]
    assert sorted(defaults) == sorted(name for name in used
                                      if mean.model_.fill[data.feature_names.index(name)])
    assert all(float(defaults[n]) == pytest.approx(mean.model_.fill[data.feature_names.index(n)],
                                                   rel=1e-6) for n in defaults)
    with pytest.raises(ValueError, match="holds 0 for a missing feature: train with "
                                         "missing='zero'"):
        to_elasticsearch(mean)
    zero = RSRank(missing="zero", max_iter=20, learning_rate="curvature").fit(
        X, data.y, qid=data.qid).set_feature_names(data.feature_names)
    text = export_model(zero, "elasticsearch")  # a lacking feature is 0 there: as filled
    for engine in ("elasticsearch", "opensearch", "solr"):
        form = "solr" if engine == "solr" else "elasticsearch"
        text = export_model(zero, form)
        np.testing.assert_allclose(engine_scores(text, X, data.feature_names, engine),
                                   zero.predict(X), atol=1e-4)


def test_a_pipelines_scalers_carry_the_fill_into_the_engine(gappy):
    """The fill is in the space the model sees, after the pipeline's
    scalers; folded into the engine's raw values it is (fill - b) / a."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler, StandardScaler

    data, X = gappy
    raw = X * np.array([10.0] + [1.0] * (X.shape[1] - 1)) + 3.0  # other units and origin
    for scaler in (StandardScaler(), MinMaxScaler()):
        pipeline = make_pipeline(scaler, RSRank(missing="mean", max_iter=20,
                                                learning_rate="curvature"))
        pipeline.fit(raw, data.y, rsrank__qid=data.qid)
        expected = pipeline.predict(raw)
        for engine in ("vespa-float", "vespa-double"):
            names = [f"f{j + 1}" for j in range(X.shape[1])]  # the pipeline's, unnamed
            scores = engine_scores(export_model(pipeline, "vespa"), raw, names, engine)
            np.testing.assert_allclose(scores, expected, atol=1e-4)


def test_a_missing_value_met_only_after_training_is_filled_or_refused_in_words(gappy):
    """Training rows without NaN and a test file with one: the policy's fill
    (the training mean from the column moments), or the refusal that names
    --missing, never NaN scores."""
    from rsrank import QueryData
    from rsrank.evaluation.metrics import mean_ndcg

    data, X = gappy
    complete = np.nan_to_num(X, nan=0.5)
    test = QueryData(X, data.y, data.qid)
    model = RSRank(missing="mean", max_iter=10, learning_rate="curvature").fit(
        complete, data.y, qid=data.qid)
    np.testing.assert_allclose(model.model_.fill, complete.mean(axis=0), rtol=1e-12)
    by_hand = np.where(np.isnan(X), complete.mean(axis=0), X)
    np.testing.assert_allclose(model.predict(test), model.predict(by_hand), rtol=1e-12)
    assert model.score(test) == pytest.approx(mean_ndcg(data.y, model.predict(by_hand),
                                                        data.qid, 10, convention="letor"))
    plain = RSRank(max_iter=10, learning_rate="curvature").fit(complete, data.y, qid=data.qid)
    for call in (lambda: plain.predict(test), lambda: plain.score(test),
                 lambda: plain.predict(X)):
        with pytest.raises(ValueError, match=r"missing values \(NaN\).*--missing"):
            call()


@pytest.mark.parametrize("kind", ["additive", "interactions"])
def test_unguarded_plugin_trees_score_a_value_beyond_float32_as_predict_does(fitted, kind):
    """Without the guard, a value above float32's range (infinity in the
    plugin) in a feature trained with NaN takes the top finite bin, as in
    predict, not the missing value's bin: the missing cut is x < -Infinity,
    which only a NaN leaves, by ``missing``."""
    from rsrank.deployment.engines import engine_scores

    _, _, _, X_test, models = fitted
    model = models[kind]
    X = np.where(np.isnan(X_test), 0.0, X_test)
    X[::3, 0] = 5e38  # trained with NaN; float32 reads it as infinity
    X[1::3, 0] = np.nan
    expected = model.predict(X)
    for form, engines in (("elasticsearch", ("elasticsearch", "opensearch")),):
        text = export_model(model, form, guard=False)
        for engine in engines:
            scores = engine_scores(text, X, model.feature_names(), engine)
            np.testing.assert_allclose(scores, expected, rtol=1e-5, atol=1e-5, err_msg=engine)
