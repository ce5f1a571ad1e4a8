"""The contract every model kind keeps, tested once over ``KINDS``: the
scikit-learn checks, fit, partial_fit (fresh and after a fit), warm_start,
save and load (and a damaged file), refit_kept, every engine's export, the
shape plot, and names that are wrong refused before any work."""

import json

import numpy as np
import scipy.sparse as sp
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from conftest import small_queries
from rsrank import RSRank, RSRankCV
from rsrank.deployment.engines import ENGINES
from rsrank.deployment.export import parity
from rsrank.learning.kinds import KINDS

#: the parameters that ask for each kind, on small data
KIND_PARAMS = {
    "linear": {},
    "additive": {"additive": True, "max_bins": 8},
    "interactions": {"additive": True, "max_bins": 8, "interactions": 2, "interaction_bins": 4},
}


def test_every_kind_is_tested_and_has_its_parts_everywhere():
    from rsrank.deployment import persistence
    from rsrank.deployment.export import WRITERS
    from rsrank.learning.kinds import for_kind

    assert set(KIND_PARAMS) == set(KINDS)
    # each module that keeps a part per kind has one for every kind, and no other
    for table in (WRITERS, persistence._KIND_FORMATS):
        assert set(table) == set(KINDS)
    with pytest.raises(ValueError, match="no export writer for a model of kind 'forest'"):
        for_kind(WRITERS, "forest", "export writer")


def kind_estimator(kind, **params):
    return RSRank(**KIND_PARAMS[kind], max_iter=5, random_state=0, **params)


#: RSRankCV judges the points of its path on held-out queries; scikit-learn's
@parametrize_with_checks([kind_estimator(kind) for kind in KIND_PARAMS]
                         + [RSRankCV(max_iter=5, cv=2)])
def test_scikit_learn_checks(estimator, check):
    """Every kind and RSRankCV pass scikit-learn's checks, which give one
    query (no qid): RSRankCV then judges its path on the training data,
    with a warning, as LassoCV passes them."""
    check(estimator)


def test_rsrankcv_with_too_few_queries_for_its_folds_judges_on_the_training_data():
    from rsrank import OneQueryWarning

    X, y, qid = small_queries(n_queries=2, n_docs=10, seed=1)
    with pytest.warns(OneQueryWarning, match="2 training queries for 3 folds, so each point "
                                             "of the path is judged on the training data"):
        model = RSRankCV(max_iter=5).fit(X, y, qid=qid)
    assert model.validated_on_ == "the training data"
    X, y, qid = small_queries(n_queries=6, n_docs=10, seed=1)
    assert RSRankCV(max_iter=5).fit(X, y, qid=qid).validated_on_ == "3 folds"


@pytest.fixture(scope="module")
def queries():
    return small_queries(n_queries=30, n_docs=12, seed=3)


@pytest.fixture(scope="module", params=list(KIND_PARAMS))
def fitted(request, queries):
    X, y, qid = queries
    return request.param, kind_estimator(request.param, l1_group=1e-3).fit(X, y, qid=qid)


def test_partial_fit_goes_on_after_a_fit(fitted, queries):
    kind, model = fitted
    X, y, qid = queries
    model = RSRank(**model.get_params()).fit(X, y, qid=qid)
    before, epochs = model.coef_.copy(), model.n_iter_
    model.partial_fit(X[:120], y[:120], qid=qid[:120])
    assert model.n_iter_ == epochs + 1 and model.coef_.shape == before.shape
    assert not np.array_equal(model.coef_, before)
    assert model.model_.kind == kind


def test_partial_fit_from_nothing_fixes_the_model_on_its_first_block(fitted, queries):
    kind, model = fitted
    X, y, qid = queries
    blocks = RSRank(**model.get_params())
    for rows in (slice(0, 180), slice(180, None), slice(0, 180)):
        blocks.partial_fit(X[rows], y[rows], qid=qid[rows])
    assert blocks.n_iter_ == 3 and blocks.model_.kind == kind
    first = RSRank(**model.get_params()).partial_fit(X[:180], y[:180], qid=qid[:180])
    assert first.model_.view.key == blocks.model_.view.key if kind != "linear" else True
    assert np.isfinite(blocks.predict(X)).all()


def test_warm_start_goes_on_as_one_longer_fit(fitted, queries):
    kind, model = fitted
    X, y, qid = queries
    params = {**model.get_params(), "learning_rate": 0.05, "momentum": False}
    whole = RSRank(**{**params, "max_iter": 4}).fit(X, y, qid=qid)
    halves = RSRank(**{**params, "max_iter": 2, "warm_start": True})
    halves.fit(X, y, qid=qid).fit(X, y, qid=qid)
    np.testing.assert_allclose(halves.coef_, whole.coef_, rtol=1e-9, atol=1e-12)


def test_save_and_load_score_alike_and_a_damaged_file_is_one_line(fitted, queries, tmp_path):
    kind, model = fitted
    X, _, _ = queries
    path = tmp_path / "model.json"
    model.save(path)
    loaded = RSRank.load(path)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    assert loaded.model_.kind == kind
    document = json.loads(path.read_text())
    document["coef"] = document["coef"][:-1]
    (tmp_path / "short.json").write_text(json.dumps(document))
    with pytest.raises(ValueError) as caught:
        RSRank.load(tmp_path / "short.json")
    assert "short.json" in str(caught.value) and "\n" not in str(caught.value)


def test_refit_kept_keeps_a_subset_of_the_terms(fitted, queries):
    _, model = fitted
    X, y, qid = queries
    kept = model.refit_kept(X, y, qid=qid)
    names = lambda m: {name for name, _ in m.selected_features()}
    assert names(kept) <= names(model)
    pairs = lambda m: {names for names, _ in m.selected_interactions()}
    assert pairs(kept) <= pairs(model)


def test_every_engine_scores_the_export_as_predict(fitted, queries):
    _, model = fitted
    X, _, qid = queries
    for engine, result in parity(model, X, qid).items():
        if not result["accepted"]:
            pytest.fail(f"{engine} refused the export: {result['error']}")
        assert result["reordered"] == 0 and result["max_abs_difference"] < 1e-4, engine
    assert set(parity(model, X[:12], qid[:12])) == set(ENGINES)


def test_the_shape_plot_draws_additive_kinds_and_names_the_fix_for_linear(fitted, tmp_path):
    pytest.importorskip("matplotlib")
    from rsrank.deployment.plotting import plot_shapes

    kind, model = fitted
    path = tmp_path / "shapes.png"
    if kind == "linear":
        with pytest.raises(ValueError, match="selected_features"):
            plot_shapes(model, path)
        assert not path.exists()
    else:
        plot_shapes(model, path)
        assert path.read_bytes()[:4] == b"\x89PNG"


# -- names that are wrong, before any work ----------------------------------------------------


def no_work(monkeypatch):
    """Make every piece of a fit's work fail loudly: thresholds, the pair
    search and the solver's epochs."""
    import rsrank.reading.querydata
    import rsrank.learning.solver

    def work(*args, **kwargs):
        raise AssertionError("a fit's work ran before its parameters were checked")
    monkeypatch.setattr(rsrank.reading.querydata.QueryData, "step_encoding", work)
    monkeypatch.setattr(rsrank.learning.solver.Solver, "run", work)
    monkeypatch.setattr(rsrank.learning.solver.Solver, "epoch", work)


@pytest.mark.parametrize("kind", list(KIND_PARAMS))
@pytest.mark.parametrize("params, words", [
    ({"monotone": {"f2": 1, "nosuch": -1}}, "monotone: no feature is named 'nosuch'"),
    ({"exclude": ["f1", "fx"]}, "exclude: no feature is named 'fx'"),
    ({"feature_costs": {"f9": 2.0}}, "feature_costs: no feature is named 'f9'"),
    ({"monotone": {"f1": 1, 0: 1}}, "given twice"),
    ({"exclude": [("f1", "f2", "f3")]}, "a term is a tuple of one feature"),
])
def test_a_wrong_feature_name_is_refused_before_any_work(kind, params, words, queries,
                                                          monkeypatch):
    X, y, qid = queries
    no_work(monkeypatch)
    with pytest.raises(ValueError, match=words) as caught:
        kind_estimator(kind, **params).fit(X, y, qid=qid)
    assert "\n" not in str(caught.value)


# -- parameters, declared and checked once --------------------------------------------------


def test_every_parameter_is_declared_with_what_it_may_be():
    import inspect

    from rsrank.learning.parameters import CONSTRAINTS

    assert list(CONSTRAINTS) == [name for name in inspect.signature(RSRank).parameters]


def _refused_values():
    """A value each declared constraint refuses, per parameter."""
    from rsrank.learning.parameters import CONSTRAINTS, Checked, Flag, Interval, Options

    for name, constraints in CONSTRAINTS.items():
        if any(isinstance(c, Checked) for c in constraints):
            continue
        kinds = {type(c) for c in constraints}
        if Flag in kinds and Interval not in kinds:
            yield name, "no"  # a string that reads as a word, not a flag
        if Interval in kinds:
            interval = next(c for c in constraints if isinstance(c, Interval))
            yield name, (interval.low - 1 if np.isfinite(interval.low) else "many")
            yield name, float("nan")
        if Options in kinds and Interval not in kinds:
            yield name, "nope"


@pytest.mark.parametrize("name, value", list(_refused_values()),
                         ids=[f"{n}={v!r}" for n, v in _refused_values()])
def test_a_value_a_parameter_cannot_take_is_refused_in_one_line_before_any_work(
        name, value, queries, monkeypatch):
    X, y, qid = queries
    no_work(monkeypatch)
    with pytest.raises(ValueError) as caught:
        RSRank(**{name: value}).fit(X, y, qid=qid)
    message = str(caught.value)
    assert message.startswith(f"{name} must be ") and "\n" not in message, message


@pytest.mark.parametrize("sparse", [False, True])
def test_the_rows_of_a_datas_encodings_are_its_codes_made_once_as_from_scratch(sparse):
    """QueryData keeps the codes its encodings counted their bins with as the
    rows the epochs read, and a pair encoding's rows add the cells to the
    features' codes: the same rows as coding the matrix afresh."""
    from rsrank import QueryData
    from rsrank.learning.binning import PairEncoding, StepEncoding

    rng = np.random.default_rng(11)
    X = rng.normal(size=(900, 6))
    X[rng.random(X.shape) < 0.05] = np.nan  # a missing value's bin
    X[:, 2] = np.round(X[:, 2])  # ties
    qid = np.repeat(np.arange(30), 30)
    rng.shuffle(qid)  # rows of a query apart: the data puts them in query order
    if sparse:
        X = sp.csr_matrix(np.where(np.abs(np.nan_to_num(X)) < 0.5, 0.0, X))
    data = QueryData(X, rng.integers(0, 3, 900), qid)
    steps = data.step_encoding(16)
    fresh = StepEncoding.fit(data.X, 16)
    assert fresh.key == steps.key
    pairs = np.array([[0, 3], [2, 5]])
    encoding = data.pair_encoding(16, pairs, 4)
    again = PairEncoding.fit(data.X, pairs, 16, 4, fresh.thresholds)
    for made, scratch in ((steps, fresh), (encoding, again)):
        for got, want in zip(made.counts, scratch.counts):
            np.testing.assert_array_equal(got, want)
        rows, expected = data.rows(made), scratch.rows(data.X, data.groups.offsets)
        for name in rows._fields:
            np.testing.assert_array_equal(getattr(rows, name), getattr(expected, name))
