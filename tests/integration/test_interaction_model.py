"""Models with pairwise interactions (``additive=True, interactions=K``):
their codes against the explicit 0/1 indicators of their steps, their
scores against table lookups written here, the pairs they find on data
with known pairwise effects, their files, their refusals and their
exports by each engine's rules."""

import json
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import check_codes_against_indicators
from rsrank import QueryData, RSRank
from rsrank.deployment import export
from rsrank.deployment import trees
from rsrank.learning.binning import PairEncoding, fit_thresholds
from rsrank.deployment.export import parity
from rsrank.learning.interactions import candidate_features, row_lambdas
from rsrank.deployment.persistence import ModelFileError
from rsrank.reading.synthetic import make_edge_values, make_interactions


def queries(seed=0, n_queries=14, sparse=False):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 30, n_queries)
    n = int(sizes.sum())
    X = np.column_stack([rng.normal(size=n), rng.integers(0, 4, n).astype(float),
                         rng.exponential(size=n), rng.uniform(size=n), rng.normal(size=n)])
    X[rng.uniform(size=X.shape) < 0.3] = 0.0
    y = rng.integers(0, 3, n)
    qid = np.repeat(np.arange(n_queries), sizes)
    return (sp.csr_matrix(X) if sparse else X), y, qid


def lookups(model, X):
    """A model's scores by looking each row up in its shapes and tables."""
    X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    out = np.zeros(X.shape[0])
    for shape in model.shape_functions():
        codes = np.searchsorted(shape["thresholds"], X[:, shape["feature"]].astype(np.float32))
        out += shape["values"][codes]
    for pair in model.interaction_functions():
        (a, b), (cuts_a, cuts_b) = pair["features"], pair["thresholds"]
        i = np.searchsorted(cuts_a, X[:, a].astype(np.float32))
        k = np.searchsorted(cuts_b, X[:, b].astype(np.float32))
        out += pair["values"][i, k]
    return out


def fitted(effects=("xor",), n_queries=120, seed=0, **params):
    data = make_interactions(effects, n_queries=n_queries, random_state=seed)
    settings = dict(additive=True, interactions=3, learning_rate="curvature", max_iter=150)
    settings.update(params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = RSRank(**settings).fit(data.X, data.y, qid=data.qid)
    return model.set_feature_names(data.feature_names), data


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("pair_weight", ["delta_ndcg", "unit"])
def test_loss_and_gradient_equal_the_linear_model_on_step_and_cell_indicators(sparse,
                                                                             pair_weight):
    X, y, qid = queries(1, sparse=sparse)
    encoding = PairEncoding.fit(X, [(0, 2), (1, 3), (2, 4)], max_bins=8, pair_bins=4)
    check_codes_against_indicators(X, y, qid, encoding, pair_weight)


def test_a_pairs_cells_are_its_grid_on_both_features():
    X, _, _ = queries(4)
    encoding = PairEncoding.fit(X, [(0, 4)], max_bins=16, pair_bins=5)
    cuts_a, cuts_b = encoding.grids[0]
    np.testing.assert_array_equal(cuts_a, fit_thresholds(X[:, [0]], 5)[0])
    np.testing.assert_array_equal(cuts_b, fit_thresholds(X[:, [4]], 5)[0])
    n_a, n_b = len(cuts_a) + 1, len(cuts_b) + 1
    assert encoding.grid_shape(0) == (n_a, n_b) and 3 <= n_a <= 5 and 3 <= n_b <= 5
    cells = encoding.cells(X)[:, 0]
    for row in range(X.shape[0]):
        i = np.count_nonzero(cuts_a < np.float32(X[row, 0]))
        k = np.count_nonzero(cuts_b < np.float32(X[row, 4]))
        assert cells[row] == i * n_b + k
    # the training rows per cell are kept for pictures
    assert encoding.counts[-1].sum() == X.shape[0]
    np.testing.assert_array_equal(encoding.counts[-1], np.bincount(cells, minlength=n_a * n_b))


@pytest.mark.parametrize("sparse", [False, True])
def test_predict_is_the_sum_of_shapes_and_pair_tables(sparse):
    model, data = fitted(("and", "xor"), interactions=4)
    assert model.selected_interactions()
    X = sp.csr_matrix(data.X) if sparse else data.X
    np.testing.assert_allclose(model.predict(X), lookups(model, data.X), atol=1e-12)


@pytest.mark.parametrize("effects, seed", [(("xor",), 0), (("and", "product"), 1),
                                           (("switch", "product"), 2)])
def test_the_true_pairs_are_found_and_rank_above_the_additive_model(effects, seed):
    # full-batch steps on cells converge slowly: the fits run long enough to
    # tell, not to converge
    model, data = fitted(effects, n_queries=150, seed=seed, interactions=len(effects) + 2,
                         max_iter=500)
    names = data.feature_names
    true = {(names[a], names[b]) for a, b in data.pairs}
    kept = dict(model.selected_interactions())
    assert true <= set(kept)
    test = make_interactions(effects, n_queries=200, random_state=seed + 100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        additive = RSRank(additive=True, learning_rate="curvature", max_iter=500).fit(
            data.X, data.y, qid=data.qid)
    assert (model.score(test.X, test.y, qid=test.qid)
            > additive.score(test.X, test.y, qid=test.qid) + 0.02)


def test_the_group_penalty_takes_pairs_out_and_relax_refits_the_kept_ones():
    data = make_interactions(("xor",), n_queries=150, random_state=3)
    base = RSRank(additive=True, interactions=5, learning_rate="curvature", max_iter=150)
    edge = base.l1_group_max(data.X, data.y, qid=data.qid)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = base.set_params(l1_group=0.05 * edge, relax=True).fit(
            data.X, data.y, qid=data.qid)
    pairs = model.model_.encoding.pairs
    kept = model.selected_interactions()
    assert 1 <= len(kept) < len(pairs)
    assert ("f1", "f2") in dict(kept)  # xor_a and xor_b
    # the refit moves only the terms the penalized fit kept
    penalized = model.penalized_.model_
    np.testing.assert_array_equal(penalized.selected_terms(), model.model_.selected_terms())
    assert not np.allclose(penalized.coef, model.model_.coef)


def test_exclude_holds_a_pair_a_shape_or_a_feature():
    data = make_interactions(("xor",), n_queries=80, random_state=0)
    params = dict(additive=True, interactions=3, learning_rate="curvature", max_iter=40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        free = RSRank(**params).fit(data.X, data.y, qid=data.qid)
        pairs = [tuple(p) for p in free.model_.encoding.pairs.tolist()]
        assert (0, 1) in pairs
        no_pair = RSRank(**params, exclude=[(0, 1)]).fit(data.X, data.y, qid=data.qid)
        no_shape = RSRank(**params, exclude=[(0,)]).fit(data.X, data.y, qid=data.qid)
        no_feature = RSRank(**params, exclude=[0]).fit(data.X, data.y, qid=data.qid)
    terms = free.model_.term_features()
    pair_term = terms.index((0, 1))
    assert pair_term in free.model_.selected_terms()
    assert pair_term not in no_pair.model_.selected_terms()
    assert 0 in no_pair.model_.selected_terms()
    assert 0 not in no_shape.model_.selected_terms()
    assert pair_term in no_shape.model_.selected_terms()
    assert 0 not in no_feature.model_.selected_indices()


def test_a_pair_costs_both_of_its_features():
    model, _ = fitted(interactions=2, max_iter=5)
    costs = np.arange(1.0, model.n_features_in_ + 1)
    inner = model.model_
    groups, factors, weights = RSRank(additive=True, interactions=2,
                                      feature_costs=costs).penalty_layout(inner)
    sizes = np.diff(groups)
    for g, features in enumerate(inner.term_features()):
        assert factors[g] == pytest.approx(np.sqrt(sizes[g]) * costs[list(features)].sum())
        np.testing.assert_allclose(weights[groups[g]:groups[g + 1]], costs[list(features)].sum())


def test_a_model_file_with_pairs_predicts_the_same_and_is_checked(tmp_path):
    model, data = fitted(("and",), interactions=2)
    path = tmp_path / "model.json"
    model.save(path)
    again = RSRank.load(path)
    np.testing.assert_array_equal(again.predict(data.X), model.predict(data.X))
    assert again.selected_interactions() == model.selected_interactions()
    document = json.loads(path.read_text())
    assert document["model"] == "interactions" and document["format_version"] == 4
    cases = [
        (lambda d: d.update(pairs=[[1, 0]] + d["pairs"][1:]), "'pairs' must be a list"),
        (lambda d: d.update(pairs=[[0, 99]] + d["pairs"][1:]), "'pairs' must be a list"),
        (lambda d: d["grids"].pop(), "'grids' must hold two lists of cuts per pair"),
        (lambda d: d["grids"][0][0].reverse(), "grid cuts of pair 1 must be increasing"),
        (lambda d: d["params"].update(interactions=1), "more than interactions=1"),
        (lambda d: d["params"].update(interaction_bins=3), "more bins than interaction_bins"),
        (lambda d: d["params"].update(interactions=0), "more than interactions=0"),
    ]
    for change, words in cases:
        bad = json.loads(path.read_text())
        change(bad)
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        with pytest.raises(ModelFileError, match=words):
            RSRank.load(tmp_path / "bad.json")


def test_an_additive_model_file_that_claims_pairs_is_refused(tmp_path):
    X, y, qid = queries(0)
    path = tmp_path / "additive.json"
    RSRank(additive=True, max_iter=3).fit(X, y, qid=qid).save(path)
    document = json.loads(path.read_text())
    document["params"]["interactions"] = 2
    path.write_text(json.dumps(document))
    with pytest.raises(ModelFileError, match="interactions=2 but the model has no pairs"):
        RSRank.load(path)


@pytest.mark.parametrize("params, words", [
    (dict(interactions=2), "set additive=True as well"),
    (dict(additive=True, interactions=-1), "interactions must be an integer >= 0"),
    (dict(additive=True, interactions=2.5), "interactions must be an integer >= 0"),
    (dict(additive=True, interactions=2, interaction_bins=17), "from 2 to 16"),
    (dict(additive=True, interaction_bins=4), "applies to pairwise interactions"),
    (dict(interaction_bins=4), "applies to pairwise interactions"),
])
def test_parameters_interactions_cannot_take_are_refused(params, words):
    X, y, qid = queries(0)
    with pytest.raises(ValueError, match=words):
        RSRank(**params).fit(X, y, qid=qid)


def test_interactions_need_the_training_data_in_memory():
    X, y, qid = queries(0)
    model = RSRank(additive=True, interactions=2)
    with pytest.raises(ValueError, match="in memory"):
        model.fit_chunks(lambda: [(X, y, qid)])


def test_models_without_pairs_list_none():
    X, y, qid = queries(0)
    linear = RSRank(max_iter=3).fit(X, y, qid=qid)
    assert linear.selected_interactions() == []
    with pytest.raises(ValueError, match="interactions=K"):
        linear.interaction_functions()
    additive = RSRank(additive=True, max_iter=3).fit(X, y, qid=qid)
    assert additive.selected_interactions() == [] == additive.interaction_functions()


def check_parity(model, X, qid):
    results = parity(model, X, qid)
    for engine, result in results.items():
        assert result["accepted"], (engine, result["error"])
        assert result["reordered"] == 0 and result["reordered_missing"] == 0, engine
        assert result["max_abs_difference"] < 1e-5, engine
        assert result["max_abs_difference_missing"] < 1e-5, engine


def test_every_engine_scores_the_export_of_pairs_as_predict():
    model, data = fitted(("and", "xor"), interactions=4)
    test = make_interactions(("and", "xor"), n_queries=60, random_state=9)
    check_parity(model, test.X, test.qid)


def test_pairs_of_edge_values_keep_parity_and_need_the_plugins_guards(monkeypatch):
    data = make_edge_values(random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = RSRank(additive=True, interactions=6, learning_rate="curvature",
                       max_iter=60).fit(data.X, data.y, qid=data.qid)
    model.set_feature_names(data.feature_names)
    assert len(model.selected_interactions()) >= 3
    check_parity(model, data.X, data.qid)
    # a pair tree on a feature whose zero is not in its top bin needs a guard
    # for OpenSearch 3.2-3.7, which sends a NaN right at every node
    body = json.loads(export.export_model(model, "opensearch"))
    assert "Infinity" in body["model"]["model"]["definition"]
    monkeypatch.setattr(trees, "_guarded", lambda node: node)
    unguarded = parity(model, data.X, data.qid, engines=("opensearch-3.7",))["opensearch-3.7"]
    assert unguarded["max_abs_difference_missing"] > 1e-3


def test_a_pair_tree_splits_on_both_features_where_the_table_changes():
    model, _ = fitted(("and",), interactions=1)
    trees = export.shape_trees(model)
    (names, tree), = [entry for entry in trees if isinstance(entry[0], tuple)]
    pair, = model.interaction_functions()

    def walk(node, x_a, x_b):
        while "value" not in node:
            x = x_a if node["feature"] == names[0] else x_b
            node = node["left"] if np.float32(x) <= node["threshold"] else node["right"]
        return node["value"]
    (cuts_a, cuts_b), table = pair["thresholds"], pair["values"]
    # one value inside each cell, and each cut itself (which is in the lower cell)
    edges_a = np.r_[cuts_a[0] - 1, cuts_a, cuts_a[-1] + 1]
    edges_b = np.r_[cuts_b[0] - 1, cuts_b, cuts_b[-1] + 1]
    for x_a in edges_a:
        for x_b in edges_b:
            row = np.count_nonzero(cuts_a < np.float32(x_a))
            column = np.count_nonzero(cuts_b < np.float32(x_b))
            assert walk(tree, x_a, x_b) == table[row, column]


def test_a_small_search_budget_screens_the_features_the_model_uses_first():
    model, data = fitted(("and",), interactions=2)
    inner = model.model_
    train = QueryData(data.X, data.y, data.qid)
    objective = model.setup().solver.objective
    lam = row_lambdas(inner, objective, train)
    every = candidate_features(inner, lam, train)
    np.testing.assert_array_equal(every, np.arange(train.n_features))
    # room for the pairs of 4 features: the 4 of the largest shapes
    budget = 6 * train.n_rows
    few = candidate_features(inner, lam, train, budget=budget)
    ranges = inner.feature_ranges()[:train.n_features]
    assert len(few) == 4
    assert set(few) == set(np.argsort(-ranges, kind="stable")[:4])


@pytest.mark.parametrize("relax", [False, True])
def test_an_epoch_reads_only_the_columns_it_can_move_and_fits_the_same(monkeypatch, relax):
    """With terms held out (``exclude``, a relaxed refit's dropped ones) the
    epoch reads the codes of the other columns alone (``moving_rows``); the
    fit is the one that reads every column."""
    from rsrank import _kernels
    from rsrank.learning import solver

    data = make_interactions(("xor", "and"), n_queries=80, random_state=1)
    params = dict(additive=True, interactions=4, learning_rate="curvature", max_iter=30,
                  random_state=0)
    if relax:
        edge = RSRank(**params).l1_group_max(data.X, data.y, qid=data.qid)
        params.update(l1_group=0.1 * edge, relax=True)
    else:
        params.update(exclude=[2, 3, (0,), 5])
    read, real = [], _kernels.moving_rows

    def spy(rows, steps, w):
        out = real(rows, steps, w)
        read.append(out.dense_codes.shape[1] if out.column_slots.shape[0] else None)
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        monkeypatch.setattr(solver._kernels, "moving_rows", spy)
        fewer = RSRank(**params).fit(data.X, data.y, qid=data.qid)
        monkeypatch.setattr(solver._kernels, "moving_rows", lambda rows, steps, w: rows)
        every = RSRank(**params).fit(data.X, data.y, qid=data.qid)
    compact = [n for n in read if n is not None]
    assert compact and max(compact) < len(fewer.model_.term_features())
    np.testing.assert_allclose(fewer.model_.coef, every.model_.coef, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(fewer.model_.selected_terms(), every.model_.selected_terms())
    np.testing.assert_allclose(fewer.predict(data.X), every.predict(data.X), rtol=1e-9,
                               atol=1e-12)
