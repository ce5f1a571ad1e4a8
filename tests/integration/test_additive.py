"""Additive models: steps on bin codes, against the linear model on the
explicit 0/1 step indicators (the same function, computed without the
kernels' tables and histograms)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from conftest import check_codes_against_indicators
from rsrank import _kernels as K
from rsrank.learning.binning import StepEncoding
from rsrank.learning.objective import Objective, workspace, workspace_fits
from rsrank.learning.penalty import L1Penalty
from rsrank.reading.querydata import QueryData
from rsrank.learning.solver import Solver, SolverState


def queries(seed=0, n_queries=12, sparse=False, copies=1):
    """Rows with few distinct values in some features and zeros in all
    (``copies`` times four features)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 40, n_queries)
    n = int(sizes.sum())
    X = np.column_stack([column for _ in range(copies) for column in (
        rng.normal(size=n), rng.integers(0, 4, n).astype(float), rng.exponential(size=n),
        rng.uniform(size=n))])
    X[rng.uniform(size=X.shape) < 0.3] = 0.0
    y = rng.integers(0, 3, n)
    qid = np.repeat(np.arange(n_queries), sizes)
    return (sp.csr_matrix(X) if sparse else X), y, qid


@pytest.fixture(params=["strided", "packed"])
def layout(request, monkeypatch):
    """Dense rows' slots one stride apart, or packed (as CSR rows' always
    are): the kernels take another loop for each."""
    monkeypatch.setattr(StepEncoding, "stride_fits", lambda self: request.param == "strided")
    return request.param


def check_layout(rows, layout):
    dense = rows.indptr.shape[0] == 0
    assert (K.uniform_stride(rows.slots) > 0) == (dense and layout == "strided")


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("pair_weight", ["delta_ndcg", "unit"])
# dense codes are read four features at a time: 7 features leave three after
@pytest.mark.parametrize("copies, width", [(1, 4), (2, 7), (4, 16)])
def test_loss_and_gradient_equal_the_linear_model_on_step_indicators(sparse, pair_weight,
                                                                     copies, width, layout):
    X, y, qid = queries(1, sparse=sparse, copies=copies)
    X = X[:, :width]
    encoding = StepEncoding.fit(X, 8)
    rows = check_codes_against_indicators(X, y, qid, encoding, pair_weight)
    check_layout(rows, layout)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("copies, width", [(1, 4), (2, 7)])
def test_epochs_with_both_penalties_equal_the_linear_models(sparse, threads, copies, width,
                                                            layout):
    X, y, qid = queries(3, sparse=sparse, copies=copies)
    X = X[:, :width]
    encoding = StepEncoding.fit(X, 6)
    data = QueryData(X, y, qid)
    check_layout(data.rows(encoding), layout)
    steps = QueryData(encoding.indicators(X), y, qid)
    sizes = np.diff(encoding.bins)
    penalty = L1Penalty(0.002, group=0.01, groups=encoding.bins, group_factors=np.sqrt(sizes))
    solver = Solver(Objective(), penalty, learning_rate=0.5, max_iter=30, n_jobs=threads)
    rng = np.random.default_rng(0)
    coded = solver.fit(data, SolverState(np.zeros(encoding.n_steps)), rng, view=encoding)
    rng = np.random.default_rng(0)
    linear = solver.fit(steps, SolverState(np.zeros(encoding.n_steps)), rng)
    np.testing.assert_allclose(coded.coef, linear.coef, rtol=1e-9, atol=1e-12)
    assert np.count_nonzero(coded.coef) > 0
    # every group is in or out as a whole or has zeros inside from the L1
    assert coded.history["loss"] == pytest.approx(linear.history["loss"], rel=1e-10)


def test_group_shrink_is_the_group_lasso_proximal_step():
    rng = np.random.default_rng(4)
    groups = np.array([0, 3, 4, 8], dtype=np.int64)
    factors = np.sqrt(np.diff(groups)).astype(float)
    for _ in range(50):
        v = rng.normal(size=8) * rng.uniform(0, 2)
        alpha = rng.uniform(0, 1)
        w = v.copy()
        K.group_shrink(w, groups, factors, alpha)
        for g in range(3):
            part, lo, hi = v[groups[g]:groups[g + 1]], groups[g], groups[g + 1]
            # the minimiser of |u - v|^2 / 2 + alpha * factor * |u|, by its optimality
            # conditions: u = 0 when |v| <= alpha * factor, else u = v (1 - t / |v|)
            norm = np.linalg.norm(part)
            expected = np.zeros_like(part) if norm <= alpha * factors[g] else \
                part * (1 - alpha * factors[g] / norm)
            np.testing.assert_allclose(w[lo:hi], expected, rtol=1e-12, atol=1e-15)
            if np.any(expected):  # and its objective beats nearby points
                def objective(u):
                    return 0.5 * np.sum((u - part) ** 2) + alpha * factors[g] * np.linalg.norm(u)
                for _ in range(5):
                    nearby = expected + rng.normal(size=len(part)) * 1e-3
                    assert objective(expected) <= objective(nearby) + 1e-15


def test_workspace_has_one_weight_per_step(layout):
    X, y, qid = queries(5)
    X[:, 1] = X[:, 1] > 1  # a feature of two codes among ones of four
    encoding = StepEncoding.fit(X, 4)
    work = workspace(QueryData(X, y, qid), 1, encoding)
    assert work.w_scaled.shape[0] == encoding.n_steps
    # a histogram slot per code: packed (3 + 1 + 3 + 3 steps, a code more each), or
    # five per feature (the most codes of any, four, rounded up to odd) but the last
    size = 3 + 1 + 3 + 3 + 4 if layout == "packed" else 3 * 5 + 4
    assert work.partial.shape[1] == size
    assert work.table.shape[0] == size


def test_a_workspace_made_for_other_rows_is_refused(layout):
    X, y, qid = queries(5)
    data = QueryData(X, y, qid)
    encoding = StepEncoding.fit(X, 4)
    solver = Solver(Objective(), L1Penalty(0.0), learning_rate=0.1, max_iter=1)
    order = np.arange(data.n_queries)
    coded = workspace(data, 1, encoding)
    assert workspace_fits(coded, data.rows(encoding), encoding.n_steps)
    state = SolverState(np.zeros(encoding.n_steps))
    solver.epoch(data, state, order, view=encoding, work=coded)
    # the linear model's workspace has no table and one gradient value per feature
    linear = workspace(data, 1)
    assert not workspace_fits(linear, data.rows(encoding), encoding.n_steps)
    with pytest.raises(ValueError, match="workspace was made for other rows"):
        solver.epoch(data, SolverState(np.zeros(encoding.n_steps)), order, view=encoding,
                     work=linear)


@given(st.lists(st.integers(0, 255), min_size=1, max_size=40), st.data())
@settings(max_examples=200, deadline=None)
def test_uniform_stride_is_found_exactly_when_every_feature_is_a_stride_apart(steps, draw):
    encoding = StepEncoding([np.arange(n, dtype=np.float32) for n in steps])

    def brute_force(slots):  # the stride s > 0 with slots[j] = j * s, if any
        d = len(slots)
        return next((s for s in range(1, 600)
                     if d > 1 and np.array_equal(slots, s * np.arange(d))), 0)

    strided = encoding.strided_slots()
    if len(steps) > 1:  # the most codes of a feature, rounded up to odd
        assert K.uniform_stride(strided) == (max(steps) + 1 if max(steps) % 2 == 0
                                             else max(steps) + 2)
    moved = strided.copy()
    moved[draw.draw(st.integers(0, len(steps) - 1))] += draw.draw(st.sampled_from([-1, 1]))
    for slots in (strided, encoding.slots, moved):
        assert K.uniform_stride(slots) == brute_force(slots)


def test_dense_rows_are_strided_when_the_tables_stay_within_twice_the_packed_size():
    rng = np.random.default_rng(6)
    even = rng.normal(size=(200, 5))
    assert K.uniform_stride(StepEncoding.fit(even, 16).rows(even).slots) == 17
    # one feature of 16 codes among 20 of two: strided tables would be 21 * 17 long
    # against 2 * (15 + 20 + 21) packed
    uneven = np.column_stack([even[:, 0], rng.integers(0, 2, (200, 20))])
    encoding = StepEncoding.fit(uneven, 16)
    assert not encoding.stride_fits()
    np.testing.assert_array_equal(encoding.rows(uneven).slots, encoding.slots)
    # CSR rows always have packed slots
    np.testing.assert_array_equal(encoding.rows(sp.csr_matrix(uneven)).slots, encoding.slots)
    encoding = StepEncoding.fit(even, 16)
    assert encoding.stride_fits()
    np.testing.assert_array_equal(encoding.rows(sp.csr_matrix(even)).slots, encoding.slots)


# -- the estimator ---------------------------------------------------------------------

from rsrank import RSRank  # noqa: E402
from rsrank.reading.synthetic import make_nonlinear  # noqa: E402


def nonlinear_split(seed=0, n_queries=120):
    data = make_nonlinear(n_queries=n_queries, random_state=seed)
    train = data.qid <= int(n_queries * 0.7)
    parts = [(data.X[m], data.y[m], data.qid[m]) for m in (train, ~train)]
    return data, parts[0], parts[1]


def test_additive_predictions_are_the_step_sums_of_the_shape_functions():
    _, train, test = nonlinear_split()
    model = RSRank(additive=True, max_bins=16, max_iter=20).fit(*train[:2], qid=train[2])
    # by hand: every shape function looked up with numpy's searchsorted on float32
    expected = np.zeros(len(test[0]))
    for shape in model.shape_functions():
        x = test[0][:, shape["feature"]].astype(np.float32)
        expected += shape["values"][np.searchsorted(shape["thresholds"], x, side="left")]
    np.testing.assert_allclose(model.predict(test[0]), expected, rtol=1e-12, atol=1e-12)
    assert model.coef_.shape == (model.model_.encoding.n_steps,)
    # a value exactly on a threshold has that step off
    shape = model.shape_functions()[0]
    row = test[0][:1].copy()
    row[0, shape["feature"]] = shape["thresholds"][3]
    below = row.copy()
    below[0, shape["feature"]] = np.nextafter(shape["thresholds"][3], -np.inf, dtype=np.float32)
    assert model.predict(row)[0] == pytest.approx(model.predict(below)[0], abs=1e-12)


def test_the_group_penalty_takes_whole_features_out_and_l1_group_max_is_its_edge():
    data, train, _ = nonlinear_split(1)
    base = RSRank(additive=True, max_bins=16, max_iter=40, learning_rate=0.1)
    top = base.l1_group_max(*train[:2], qid=train[2])
    above = RSRank(**{**base.get_params(), "l1_group": top * 1.001}).fit(*train[:2],
                                                                         qid=train[2])
    assert not np.any(above.coef_)
    below = RSRank(**{**base.get_params(), "l1_group": top * 0.9, "max_iter": 1}).fit(
        *train[:2], qid=train[2])
    assert np.any(below.coef_)
    sparse = RSRank(**{**base.get_params(), "l1_group": top * 0.05}).fit(*train[:2],
                                                                         qid=train[2])
    kept = sparse.model_.selected_indices()
    assert set(kept) == set(data.informative)
    bins = sparse.model_.encoding.bins
    for j in range(len(bins) - 1):  # a feature out has every step at zero
        steps = sparse.coef_[bins[j]:bins[j + 1]]
        assert (j in kept) == bool(np.any(steps))


def test_feature_costs_price_features_out(tmp_path):
    _, train, _ = nonlinear_split(2)
    params = dict(additive=True, max_bins=16, max_iter=40, learning_rate=0.1)
    top = RSRank(**params).l1_group_max(*train[:2], qid=train[2])
    cheap = RSRank(**params, l1_group=top * 0.05).fit(*train[:2], qid=train[2])
    assert 0 in cheap.model_.selected_indices()
    dear = RSRank(**params, l1_group=top * 0.05, feature_costs={0: 1000.0}).fit(
        *train[:2], qid=train[2])
    assert 0 not in dear.model_.selected_indices()
    # a model file keeps the costs as one per feature (JSON keys would be text)
    dear.save(tmp_path / "dear.json")
    loaded = RSRank.load(tmp_path / "dear.json")
    assert loaded.feature_costs == [1000.0] + [1.0] * 19
    np.testing.assert_array_equal(loaded.predict(train[0]), dear.predict(train[0]))
    # by name, and for a linear model too (its L1 per feature)
    linear = RSRank(max_iter=20, l1=0.05, feature_costs={"f1": 1e6}).fit(*train[:2],
                                                                          qid=train[2])
    assert linear.coef_[0] == 0.0
    for bad, words in [([1.0, 2.0], "2 values for 20 features"), ({"nope": 2.0}, "nope"),
                       ({0: -1.0}, "> 0"), ({99: 2.0}, "index 99")]:
        with pytest.raises(ValueError, match=words):
            RSRank(**params, feature_costs=bad).fit(*train[:2], qid=train[2])


def test_additive_models_refuse_what_they_cannot_do():
    _, train, _ = nonlinear_split(3)
    model = RSRank(additive=True, max_iter=3)
    with pytest.raises(ValueError, match="use fit, not fit_chunks"):
        model.fit_chunks(lambda: iter([train]))
    model.fit(*train[:2], qid=train[2])
    with pytest.raises(ValueError, match="not a linear"):
        model.linear_function()
    with pytest.raises(ValueError, match="shape_functions"):
        RSRank(max_iter=2).fit(*train[:2], qid=train[2]).shape_functions()
    with pytest.raises(ValueError, match="max_bins"):
        RSRank(additive=True, max_bins=1).fit(*train[:2], qid=train[2])


def test_an_additive_model_file_predicts_the_same_and_is_checked(tmp_path):
    import json

    from rsrank.deployment.persistence import ModelFileError

    _, train, test = nonlinear_split(4)
    model = RSRank(additive=True, max_bins=16, max_iter=10).fit(*train[:2], qid=train[2])
    path = tmp_path / "m.json"
    model.save(path)
    loaded = RSRank.load(path)
    np.testing.assert_array_equal(loaded.predict(test[0]), model.predict(test[0]))
    document = json.loads(path.read_text())
    assert document["model"] == "additive" and document["format_version"] == 3
    cases = [
        (lambda d: d["thresholds"][0].reverse(), "increasing"),
        (lambda d: d["thresholds"][0].__setitem__(0, 0.1), "float32"),
        (lambda d: d["thresholds"].pop(), "one per feature"),
        (lambda d: d["coef"].pop(), "'coef' must be a list"),
        (lambda d: d.__setitem__("model", "trees"),
         r"'model' must be one of \['additive', 'interactions', 'linear'\], got 'trees'"),
    ]
    for change, words in cases:
        bad = json.loads(path.read_text())
        change(bad)
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        with pytest.raises(ModelFileError, match=words):
            RSRank.load(tmp_path / "bad.json")
    # a linear model is still written as version 2
    RSRank(max_iter=2).fit(*train[:2], qid=train[2]).save(tmp_path / "linear.json")
    assert json.loads((tmp_path / "linear.json").read_text())["format_version"] == 2


def test_feature_cost_files_are_read_and_checked(tmp_path):
    from rsrank import LetorFormatError
    from rsrank.reading.layouts import read_feature_costs

    good = tmp_path / "costs.txt"
    good.write_text("# cost per feature\nbm25_title 4\n3 2.5\n\nclicks 0.5 # cheap\n")
    assert read_feature_costs(good) == {"bm25_title": 4.0, 2: 2.5, "clicks": 0.5}
    cases = [("x\n", 1, "FEATURE COST"), ("a 1\nb nope\n", 2, "not a number"),
             ("a 0\n", 1, "> 0"), ("a nan\n", 1, "> 0"), ("a 1\na 2\n", 2, "twice"),
             ("0 1\n", 1, "start at 1"), ("# nothing\n", None, "no 'FEATURE COST'")]
    for text, line, words in cases:
        bad = tmp_path / "bad.txt"
        bad.write_text(text)
        with pytest.raises(LetorFormatError, match=words) as caught:
            read_feature_costs(bad)
        assert caught.value.line == line and str(bad) in str(caught.value)


@pytest.mark.parametrize("additive", [True, False])
def test_relax_refits_the_kept_features_without_the_penalty(additive):
    data, train, _ = nonlinear_split(4)
    penalty = dict(l1_group=0.0) if additive else dict(l1=0.0)
    params = dict(additive=additive, max_iter=60, learning_rate="curvature",
                  restore_best=False, pair_weight="unit", **({"max_bins": 16} if additive else {}))
    base = RSRank(**params)
    edge = base.l1_group_max if additive else base.l1_max
    strength = "l1_group" if additive else "l1"
    penalty[strength] = 0.1 * edge(*train[:2], qid=train[2])
    relaxed = RSRank(**params, **penalty, relax=True).fit(*train[:2], qid=train[2])
    penalized = RSRank(**params, **penalty).fit(*train[:2], qid=train[2])
    # the penalized fit is the one relax starts from, and it chose the features
    np.testing.assert_allclose(relaxed.penalized_.coef_, penalized.coef_, rtol=1e-9, atol=1e-15)
    assert relaxed.penalized_.relax is False
    kept = set(penalized.model_.selected_indices())
    assert 0 < len(kept) < 20 and set(relaxed.model_.selected_indices()) <= kept
    groups = RSRank(**params).penalty_layout(relaxed.model_)[0]
    for j in range(20):  # a feature left out stays exactly at zero, every step of it
        steps = relaxed.coef_[groups[j]:groups[j + 1]]
        assert (j in kept) or not np.any(steps)
    # without the penalty the pair loss falls below the penalized fit's; the
    # unit-weight loss is convex, and the step is 2 over the kept weights' curvature
    # (these few rows step on the weights, not on levels: LEVEL_ROWS)
    loss = relaxed.history_["loss"]
    assert loss[-1] < penalized.history_["loss"][-1] and np.all(np.diff(loss) <= 1e-12)
    # the kept weights' curvature is smaller than all of them: a longer step
    assert relaxed.learning_rate_ > penalized.learning_rate_
    # the weights grow back from the penalty's shrinkage
    assert np.linalg.norm(relaxed.coef_) > np.linalg.norm(penalized.coef_)
    # without a penalty there is nothing to relax: the plain fit
    plain = RSRank(**params, relax=True).fit(*train[:2], qid=train[2])
    assert not hasattr(plain, "penalized_")
    np.testing.assert_allclose(plain.coef_, RSRank(**params).fit(
        *train[:2], qid=train[2]).coef_, rtol=1e-9, atol=1e-15)


def test_relax_refuses_what_it_cannot_do():
    _, train, _ = nonlinear_split(3)
    for method, call in [("partial_fit", lambda m: m.partial_fit(*train[:2], qid=train[2])),
                         ("fit_chunks", lambda m: m.fit_chunks(lambda: iter([train])))]:
        with pytest.raises(ValueError, match=f"use fit, not {method}"):
            call(RSRank(l1=0.1, relax=True, max_iter=2))
    with pytest.raises(ValueError, match="warm_start=False"):
        RSRank(l1=0.1, relax=True, warm_start=True).fit(*train[:2], qid=train[2])
    with pytest.raises(ValueError, match="relax must be True or False"):
        RSRank(l1=0.1, relax="yes").fit(*train[:2], qid=train[2])


def nonlinear_fold(directory, seed, n_queries=150):
    """One LETOR fold of make_nonlinear in ``directory``/Fold1."""
    from rsrank.evaluation.writers import write_letor

    data, train, test = nonlinear_split(seed, n_queries=n_queries)
    fold = directory / "Fold1"
    fold.mkdir(parents=True)
    vali = train[2] > 80
    for name, (X, y, qid) in [("train", [part[~vali] for part in train]),
                              ("vali", [part[vali] for part in train]), ("test", test)]:
        write_letor(fold / f"{name}.txt", X, y, qid)
    return data


def test_the_path_selects_among_the_penalized_and_the_relaxed_fits(tmp_path):
    from rsrank.evaluation.experiments import run_letor_folds

    data = nonlinear_fold(tmp_path, 5)
    estimator = RSRank(additive=True, max_bins=16, max_iter=200, learning_rate="curvature",
                       restore_best=False, pair_weight="unit", relax=True, random_state=0)
    grid = {"l1_group_ratio": [0.2, 0.05, 0.01]}
    run = run_letor_folds(tmp_path, estimator, grid, path=True, within=0.01).folds[0]
    assert [point["params"]["relax"] for point in run.grid] == [False, True] * 3
    # the pair of each strength keeps the same features, and the selection sees both
    for penalized, relaxed in zip(run.grid[::2], run.grid[1::2]):
        assert penalized["n_nonzero"] == relaxed["n_nonzero"]
    chosen = [p for p in run.grid if p["params"] == run.params]
    assert len(chosen) == 1 and chosen[0]["vali_score"] >= 0.99 * max(
        p["vali_score"] for p in run.grid)
    assert set(run.model.model_.selected_indices()) == set(data.informative)


@pytest.mark.parametrize("additive", [True, False])
def test_excluded_features_stay_at_zero(additive, tmp_path):
    data, train, _ = nonlinear_split(6)
    params = dict(additive=additive, max_iter=15, learning_rate=0.1,
                  **({"max_bins": 8} if additive else {}))
    model = RSRank(**params, exclude=[0, "f3"]).fit(*train[:2], qid=train[2])
    used = set(model.model_.selected_indices())
    assert not used & {0, 2} and len(used) > 10  # the others are free
    groups = RSRank(**params).penalty_layout(model.model_)[0]
    assert not np.any(model.coef_[groups[0]:groups[1]]) and not np.any(
        model.coef_[groups[2]:groups[3]])
    with_group = RSRank(**params, l1_group=1e-3, exclude=[1]).fit(*train[:2], qid=train[2])
    assert 1 not in with_group.model_.selected_indices()
    model.save(tmp_path / "model.json")
    assert RSRank.load(tmp_path / "model.json").exclude == [0, "f3"]
    for bad, words in [([99], "index 99"), (["nope"], "nope"), ("f1", "a sequence")]:
        with pytest.raises(ValueError, match=words):
            RSRank(**params, exclude=bad).fit(*train[:2], qid=train[2])
    with pytest.raises(ValueError, match="truncation_period=1"):
        RSRank(**params, exclude=[0], truncation_period=2).fit(*train[:2], qid=train[2])


@pytest.mark.parametrize("additive", [True, False])
@pytest.mark.parametrize("pair_weight", ["delta_ndcg", "unit"])
def test_at_the_edge_of_the_path_every_weight_stays_at_zero(additive, pair_weight):
    """Exactly at l1_max (l1_group_max), the first point of rsrank path: a
    step's rounding must not leave the weight with the largest gradient a
    tiny value, which the pair weights of its new ranking then grow (the
    bundled folds 4 and 5 kept up to 34 features without the margin)."""
    from rsrank import load_letor_fold
    from rsrank.reading.datasets import bundled_data_path

    name = "l1_group" if additive else "l1"
    for fold in (4, 5):
        train = QueryData(*load_letor_fold(bundled_data_path(), fold).train[:3])
        for costs in (None, {0: 2.0, 4: 3.0}):
            base = RSRank(additive=additive, learning_rate="curvature", max_iter=3,
                          restore_best=False, pair_weight=pair_weight, feature_costs=costs)
            edge = base.l1_group_max(train) if additive else base.l1_max(train)
            at = RSRank(**{**base.get_params(), name: edge}).fit(train)
            assert not np.any(at.coef_), (fold, costs)
            below = RSRank(**{**base.get_params(), name: edge * 0.99}).fit(train)
            assert np.any(below.coef_), (fold, costs)


