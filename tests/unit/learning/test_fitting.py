"""A unit test of rsrank.learning.fitting's setup: the one reader of an
estimator's parameters, each part built from its own, and ``Setup.but``
changing the few a fit sequence varies without copying the rest."""

import pickle

import numpy as np
import pytest

from rsrank import RSRank
from rsrank.learning.fitting import AUTO_DEFAULT, setup
from rsrank.learning.parameters import Parameters
from rsrank.reading.querydata import QueryData


def plan_of(**params):
    return setup(RSRank(**params).get_params(deep=False))


def test_each_part_holds_its_own_parameters():
    plan = plan_of(l1=0.01, l1_group=0.002, pair_loss="hinge", ndcg_k=5, max_iter=7,
                   momentum=False, eval_k=3, learning_rate="curvature", relax=True,
                   random_state=4, monotone=[1, 0], additive=True, max_bins=16)
    solver = plan.solver
    assert (solver.penalty.l1, solver.penalty.group) == (0.01, 0.002)
    assert (solver.objective.pair_loss, solver.objective.ndcg_k) == ("hinge", 5)
    assert (solver.max_iter, solver.momentum, solver.learning_rate) == (7, False, AUTO_DEFAULT)
    assert plan.monitoring.k == 3
    assert (plan.model.additive, plan.model.max_bins) == (True, 16)
    assert plan.features.monotone == [1, 0]
    assert (plan.run.learning_rate, plan.run.relax, plan.run.random_state) == (
        "curvature", True, 4)
    assert plan.rule == "curvature" and plan.relaxed
    # the kind's momentum when none is given
    assert plan_of(additive=True).solver.momentum == plan_of(additive=True).kind.momentum


def test_but_changes_the_named_parts_and_shares_the_rest():
    costs = [1.0, 2.0, 3.0]
    plan = plan_of(l1=0.01, feature_costs=costs, relax=True, learning_rate="auto")
    changed = plan.but(l1=0.0, l1_group=0.0, relax=False, learning_rate=0.05)
    assert (changed.solver.penalty.l1, changed.solver.penalty.group) == (0.0, 0.0)
    assert changed.solver.learning_rate == 0.05 and changed.rule is None
    assert not changed.relaxed
    assert changed.params["l1"] == 0.0 and plan.params["l1"] == 0.01
    # nothing else is copied: the same values, the same feature keys
    assert changed.params["feature_costs"] is plan.params["feature_costs"]
    assert changed.features is plan.features
    assert changed.solver.objective is plan.solver.objective
    held = changed.but(exclude=[0])
    assert held.features.exclude == [0] and held.features.feature_costs is costs
    assert held.params["exclude"] == [0] and changed.params["exclude"] is None
    shorter = plan.but(max_iter=3)  # a path's relaxed refits on a sample take fewer epochs
    assert shorter.solver.max_iter == 3 and shorter.params["max_iter"] == 3
    assert plan.solver.max_iter == plan.params["max_iter"] != 3
    assert shorter.solver.objective is plan.solver.objective
    with pytest.raises(TypeError, match="pair_weight"):  # one the sequence does not vary
        plan.but(pair_weight="unit")


def test_parameters_read_as_a_dict_and_keep_one_layer():
    base = RSRank(l1=0.01).get_params(deep=False)
    params = Parameters(base).but(l1=0.0).but(relax=True)
    assert dict(params) == {**base, "l1": 0.0, "relax": True}
    assert params == {**base, "l1": 0.0, "relax": True} and len(params) == len(base)
    base["l1"] = 5.0  # the set given was copied once: the caller's dict is theirs
    assert params["l1"] == 0.0 and Parameters(base)["l1"] == 5.0
    assert pickle.loads(pickle.dumps(params)) == params
    with pytest.raises(TypeError):
        params["l1"] = 1.0


def test_an_additive_fit_on_the_curvature_rule_steps_on_levels_and_settles_sooner(monkeypatch):
    """Level steps (learning_rate="curvature", rows in memory, here on any
    number of rows) against plain steps at the trace's rate, the same
    epochs from zero: the level fit ends at a lower training loss, and the
    plan says it steps on levels."""
    from rsrank.learning import fitting
    from rsrank.learning.fitting import InMemory, curvature_rate, level_steps, start
    from rsrank.reading.synthetic import make_letor_like

    monkeypatch.setattr(fitting, "LEVEL_ROWS", 0)

    data = make_letor_like(n_queries=60, n_features=8, n_informative=4, n_redundant=1,
                           n_constant=1, random_state=0)
    X, y, qid = data.X, data.y, data.qid
    plan = plan_of(additive=True, learning_rate="curvature")
    queries = QueryData(X, y, qid)
    model = start(plan, queries)
    rate, (bins, levels) = level_steps(plan, InMemory(queries, None), model)
    assert 0 < rate <= 0.3
    assert np.array_equal(bins, model.encoding.bins) and (levels > 0).any()
    trace_rate = curvature_rate(plan, queries, model)
    common = dict(additive=True, max_iter=40, momentum=True, random_state=0, eval_train=False)
    losses = [RSRank(learning_rate=rate, **common).fit(X, y, qid=qid).history_["loss"][-1]
              for rate in ("curvature", trace_rate)]
    assert losses[0] < losses[1]


def test_level_steps_need_levels_rows_in_memory():
    """Fewer training rows than LEVEL_ROWS, rows not in memory, another
    rule or a linear kind: steps on the weights."""
    from rsrank.learning.defaults import LEVEL_ROWS
    from rsrank.learning.fitting import takes_levels

    additive = plan_of(additive=True, learning_rate="curvature")
    assert takes_levels(additive, in_memory=True, n_rows=LEVEL_ROWS)
    assert not takes_levels(additive, in_memory=True, n_rows=LEVEL_ROWS - 1)
    assert not takes_levels(additive, in_memory=False, n_rows=10 * LEVEL_ROWS)
    assert not takes_levels(plan_of(additive=True, learning_rate=0.01), in_memory=True,
                            n_rows=10 * LEVEL_ROWS)
    assert not takes_levels(plan_of(learning_rate="curvature"), in_memory=True,
                            n_rows=10 * LEVEL_ROWS)


@pytest.mark.parametrize("levels", [True, False])
def test_a_screened_fit_ends_where_the_fit_of_every_term_ends(monkeypatch, levels):
    """A penalized additive fit stepping on a working set first, with terms
    missing from it, ends at the fit of all terms from zero (a convex loss,
    both settled far): the same terms kept, the same weights; no held term
    would move at its weights; a term the caller excludes stays out; and it
    records the parameters it was given, not its working exclusions."""
    from rsrank.learning import edges, fitting
    from rsrank.reading.synthetic import make_letor_like

    monkeypatch.setattr(fitting, "LEVEL_ROWS", 0 if levels else 10 ** 9)
    data = make_letor_like(n_queries=60, n_features=10, n_informative=4, n_redundant=1,
                           n_constant=0, random_state=1)
    queries = QueryData(data.X, data.y, data.qid)
    common = dict(additive=True, max_bins=8, learning_rate="curvature", pair_weight="unit",
                  momentum=True, weight_tol=1e-9, max_iter=20000, random_state=0,
                  eval_train=False, restore_best=False)
    edge = plan_of(**common, l1_group=1.0)
    strength = 0.15 * edges.edge(edge, queries, "l1_group")
    for exclude in (None, [2]):
        plan = plan_of(**common, l1_group=strength, exclude=exclude)
        whole = fitting.fit(plan, queries)
        kept = whole.model.selected_terms()
        assert 2 <= len(kept) < 10 and (exclude is None or 2 not in kept)
        screened = fitting.fit(plan, queries, working=kept[:1])
        assert np.array_equal(screened.model.selected_terms(), kept)
        scale = np.abs(whole.model.coef).max()
        assert np.allclose(screened.model.coef, whole.model.coef, atol=1e-5 * scale)
        groups = np.asarray(whole.model.groups())
        assert not fitting.entering(plan, queries, screened.model, screened.model.coef,
                                     groups).any()
        assert screened.params["exclude"] == exclude


@pytest.mark.parametrize("levels", [True, False])
def test_a_pair_search_on_levels_fits_its_additive_model_for_fewer_epochs(monkeypatch, levels):
    from rsrank.learning import fitting
    from rsrank.reading.synthetic import make_interactions

    monkeypatch.setattr(fitting, "LEVEL_ROWS", 0 if levels else 10 ** 9)
    data = make_interactions(("and",), n_queries=30, random_state=0)
    queries = QueryData(data.X, data.y, data.qid)
    epochs, fit = [], fitting.fit

    def recording(plan, *args, **kwargs):
        epochs.append(plan.solver.max_iter)
        return fit(plan, *args, **kwargs)
    monkeypatch.setattr(fitting, "fit", recording)
    plan = plan_of(additive=True, interactions=1, learning_rate="curvature")
    pairs, _ = fitting.pair_search(plan, queries)
    assert len(pairs) == 1
    assert epochs == [fitting.SEARCH_LEVEL_EPOCHS if levels else fitting.SEARCH_EPOCHS]


def _with_a_pair():
    """40 queries of 25 rows whose labels follow a feature, a pair's product
    and a threshold."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(1000, 6))
    return QueryData(X, (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int) + (X[:, 3] > 1),
                     np.repeat(np.arange(40), 25))


def test_a_relaxed_refit_from_zero_bounds_its_level_steps_over_the_kept_terms(monkeypatch):
    """refit_terms (a relaxed choice fitted again on all rows) steps on the
    kept terms' levels by their own bound; refit_kept (a penalized fit's
    relaxed refit, on the same rows) keeps the bound of every term, the
    penalized fit's step."""
    from rsrank.learning import fitting
    from rsrank.learning.fitting import LEVEL_STEP, refit_kept, refit_terms, start

    monkeypatch.setattr(fitting, "LEVEL_ROWS", 0)
    queries = _with_a_pair()
    plan = plan_of(additive=True, interactions=2, learning_rate="curvature", max_iter=5,
                   l1_group=0.05, relax=False)
    model = start(plan, queries)
    kept = np.array([0, 1, 3])
    moving = np.isin(np.arange(len(model.term_features())), kept)
    objective = plan.solver.objective

    def rate(bound):
        return LEVEL_STEP if bound * LEVEL_STEP <= 1 else 1.0 / bound
    own = objective.level_step_bound(queries, view=model.view,
                                     steps=np.repeat(moving, np.diff(model.groups())))
    every = objective.level_step_bound(queries, view=model.view)
    assert rate(own) != rate(every)  # the data tell the two apart
    assert refit_terms(plan, queries, kept).learning_rate == rate(own)
    penalized = fitting.fit(plan, queries)
    assert refit_kept(plan, penalized, queries).learning_rate == rate(every)


def test_a_screened_fit_given_its_terms_bounds_its_level_steps_over_its_working_set(
        monkeypatch):
    """A penalized fit given the terms it expects to keep (a choice fitted
    again on all rows) takes the bound of its last working set's levels; a
    warm point of a path, given none, keeps the bound of every term."""
    from rsrank.learning import fitting
    from rsrank.learning.fitting import LEVEL_STEP, start

    monkeypatch.setattr(fitting, "LEVEL_ROWS", 0)
    queries = _with_a_pair()
    plan = plan_of(additive=True, interactions=2, learning_rate="curvature", max_iter=300,
                   l1_group=2.0, relax=False, pair_weight="unit")
    model = start(plan, queries)
    objective = plan.solver.objective

    def rate(terms):
        steps = None if terms is None else np.repeat(
            np.isin(np.arange(len(model.term_features())), terms), np.diff(model.groups()))
        bound = objective.level_step_bound(queries, view=model.view, steps=steps)
        return LEVEL_STEP if bound * LEVEL_STEP <= 1 else 1.0 / bound
    whole = fitting.fit(plan, queries)
    kept = whole.model.selected_terms()
    assert 0 < len(kept) < len(model.term_features())
    assert rate(kept) != rate(None)  # the data tell the two apart
    given = fitting.fit(plan, queries, working=kept)
    assert np.array_equal(given.model.selected_terms(), kept)
    assert given.learning_rate == rate(kept)
    warm = fitting.fit(plan, queries, coef_init=whole.model.coef,
                       working=np.zeros(0, dtype=np.int64))
    assert warm.learning_rate == rate(None)
