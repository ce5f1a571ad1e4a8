"""Monotone constraints (``monotone=``, ``--monotone``): the projections
against scikit-learn's isotonic regression and brute force, and every kind
of model monotone along each constrained feature on a dense grid, in
predict and in every engine's export."""

import json
import warnings

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression

from rsrank import RSRank, QueryData
from rsrank import _kernels as K
from rsrank.deployment.engines import ENGINES, engine_scores
from rsrank.deployment.export import export_model
from rsrank.reading.synthetic import make_interactions, make_nonlinear

#: increasing in and_a, and_b and main_1 (the AND and a main effect),
#: decreasing asked of product_a, whose true effect has no direction
DIRECTIONS = {"and_a": 1, "and_b": 1, "main_1": 1, "product_a": -1}
KINDS = {"linear": dict(), "additive": dict(additive=True),
         "interactions": dict(additive=True, interactions=4)}


def test_isotonic_is_scikit_learns_isotonic_regression():
    rng = np.random.default_rng(0)
    for n in [1, 2, 3, 7, 16]:
        for _ in range(30):
            x = rng.normal(size=n) * rng.choice([1e-3, 1.0, 1e3])
            for direction in (1, -1):
                out = x.copy()
                K.isotonic(out, direction)
                expected = IsotonicRegression(increasing=direction == 1).fit_transform(
                    np.arange(n), x)
                np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("directions", [(1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1)])
def test_a_table_is_made_exactly_monotone_and_a_monotone_one_is_left_alone(directions):
    rng = np.random.default_rng(1)
    a, b = directions
    for _ in range(40):
        shape = tuple(rng.integers(1, 9, 2))
        table = rng.normal(size=shape)
        out = table.copy()
        K.monotone_table(out, a, b)
        if a:
            assert np.all(a * np.diff(out, axis=0) >= 0)
        if b:
            assert np.all(b * np.diff(out, axis=1) >= 0)
        if a and not b:  # one direction: the projection, column by column
            for k in range(shape[1]):
                expected = IsotonicRegression(increasing=a == 1).fit_transform(
                    np.arange(shape[0]), table[:, k])
                np.testing.assert_allclose(out[:, k], expected, atol=1e-12)
        # a monotone table is its own projection
        again = out.copy()
        K.monotone_table(again, a, b)
        np.testing.assert_allclose(again, out, atol=1e-9)


def test_a_pairs_steps_give_exactly_monotone_running_sums():
    """The steps are set so that the running sums the kernels build (the
    cells) are exactly monotone, not only up to rounding."""
    rng = np.random.default_rng(2)
    for _ in range(200):
        n_a, n_b = rng.integers(2, 9, 2)
        w = rng.normal(size=n_a * n_b - 1) * 10.0 ** rng.integers(-8, 8)
        blocks = np.array([[0, n_a, n_b, 1, -1, n_a, n_b]], dtype=np.int64)
        K.monotone_pairs(w, blocks)
        cells = np.r_[0.0, np.cumsum(w)].reshape(n_a, n_b)
        total, sums = 0.0, [0.0]
        for step in w:  # the kernels' sequential sums
            total += step
            sums.append(total)
        np.testing.assert_array_equal(np.array(sums).reshape(n_a, n_b), cells)
        assert np.all(np.diff(cells, axis=0) >= 0) and np.all(np.diff(cells, axis=1) <= 0)


def grid_rows(data, feature, n_points=121, n_base=40, seed=0):
    """Rows that move one feature along a dense grid (past both ends of its
    training values, through every threshold) with the others held at a
    training row's values: ``(X, n_points)``."""
    rng = np.random.default_rng(seed)
    values = data.X[:, feature]
    span = values.max() - values.min()
    grid = np.unique(np.r_[np.linspace(values.min() - 0.1 * span, values.max() + 0.1 * span,
                                       n_points), np.quantile(values, np.linspace(0, 1, 33))])
    base = data.X[rng.choice(len(data.X), n_base, replace=False)]
    X = np.repeat(base, len(grid), axis=0)
    X[:, feature] = np.tile(grid, n_base)
    return X, len(grid)


def violations(scores, n_points, direction):
    steps = np.diff(scores.reshape(-1, n_points), axis=1)
    return int(np.sum(direction * steps < 0))


@pytest.fixture(scope="module")
def models():
    data = make_interactions(("and", "product"), n_queries=120, random_state=0)
    train = QueryData(data.X, data.y, data.qid, feature_names=data.feature_names)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, kind in KINDS.items():
            params = dict(learning_rate="curvature", max_iter=200, **kind)
            out[name] = (RSRank(monotone=DIRECTIONS, **params).fit(train),
                         RSRank(**params).fit(train))
    return data, out


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_is_monotone_in_predict_and_every_export(models, kind):
    data, fitted = models
    constrained, free = fitted[kind]
    names = data.feature_names
    texts = {form: export_model(constrained, form)
             for form in ("solr", "elasticsearch", "vespa")}
    seen_free = 0
    for name, direction in DIRECTIONS.items():
        X, n_points = grid_rows(data, names.index(name))
        assert violations(constrained.predict(X), n_points, direction) == 0, name
        seen_free += violations(free.predict(X), n_points, direction)
        for engine in ENGINES:
            scores = engine_scores(texts[engine.split("-")[0].replace("opensearch",
                                                                      "elasticsearch")],
                                   X, names, engine)
            assert violations(scores, n_points, direction) == 0, (name, engine)
    # the grid sees the violations of the same model fitted without constraints
    assert seen_free > 0


def test_constrained_shapes_and_weights_have_the_constrained_signs(models):
    data, fitted = models
    names = data.feature_names
    linear = fitted["linear"][0]
    for name, direction in DIRECTIONS.items():
        assert direction * linear.coef_[names.index(name)] >= 0
    for kind in ("additive", "interactions"):
        for shape in fitted[kind][0].shape_functions():
            direction = DIRECTIONS.get(shape["name"], 0)
            if direction:
                assert np.all(direction * np.diff(shape["values"]) >= 0)


def test_monotone_by_index_or_sequence_is_the_same_and_files_keep_it(tmp_path):
    data = make_nonlinear(n_queries=60, n_noise=2, random_state=1)
    params = dict(additive=True, learning_rate="curvature", max_iter=50)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_index = RSRank(monotone={1: 1, 2: 1}, **params).fit(data.X, data.y, qid=data.qid)
        by_list = RSRank(monotone=[0, 1, 1, 0, 0, 0], **params).fit(data.X, data.y,
                                                                    qid=data.qid)
    np.testing.assert_allclose(by_index.coef_, by_list.coef_, rtol=1e-9, atol=1e-15)
    path = tmp_path / "model.json"
    by_index.save(path)
    assert json.loads(path.read_text())["params"]["monotone"] == [0, 1, 1, 0, 0, 0]
    np.testing.assert_array_equal(RSRank.load(path).predict(data.X), by_index.predict(data.X))


@pytest.mark.parametrize("monotone, words", [
    ({"nope": 1}, "no feature is named 'nope'"),
    ({0: 2}, "must be 1 \\(increasing\\), -1 \\(decreasing\\) or 0"),
    ({0: True}, "must be 1 \\(increasing\\), -1 \\(decreasing\\) or 0"),
    ([1, 0], "monotone has 2 directions for 6 features"),
    ("f1", "monotone must be a dict"),
])
def test_bad_constraints_are_refused(monotone, words):
    data = make_nonlinear(n_queries=10, n_noise=2, random_state=1)
    with pytest.raises(ValueError, match=words):
        RSRank(monotone=monotone, max_iter=2).fit(data.X, data.y, qid=data.qid)


def test_a_missing_value_in_a_pair_keeps_the_other_feature_monotone():
    """A pair (a, b) with a NaN in a: its scores along a constrained b (the
    pair's missing row) must be monotone too, in predict and every engine;
    with a NaN in b, along a constrained a (the missing column). A missing
    value's own place is free."""
    data = make_interactions(("and",), n_queries=100, random_state=0)
    names = data.feature_names
    rng = np.random.default_rng(0)
    X = data.X.copy()
    X[rng.random(len(X)) < 0.2, names.index("and_a")] = np.nan
    X[rng.random(len(X)) < 0.2, names.index("and_b")] = np.nan
    directions = {"and_a": 1, "and_b": 1, "main_1": -1}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = RSRank(additive=True, interactions=3, learning_rate="curvature", max_iter=300,
                       random_state=0, monotone=directions).fit(
            QueryData(X, data.y, data.qid, feature_names=names))
    assert model.selected_interactions(), "the test needs pairs"
    texts = {form: export_model(model, form) for form in ("solr", "elasticsearch", "vespa")}
    checked = 0
    for (a, b), _ in model.selected_interactions():
        for missing, along in ((a, b), (b, a)):
            direction = directions.get(along, 0)
            if not direction:
                continue
            grid, n_points = grid_rows(data, names.index(along))
            grid[:, names.index(missing)] = np.nan
            assert violations(model.predict(grid), n_points, direction) == 0, (missing, along)
            for engine in ENGINES:
                form = engine.split("-")[0].replace("opensearch", "elasticsearch")
                scores = engine_scores(texts[form], grid, names, engine)
                assert violations(scores, n_points, direction) == 0, (missing, along, engine)
            checked += 1
    assert checked > 0
