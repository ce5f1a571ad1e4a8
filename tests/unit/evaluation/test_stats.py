import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rsrank.evaluation import metrics as M
from rsrank.evaluation import stats


def test_paired_t_test_hand_computed():
    # differences 1, 2, 4: mean 7/3, standard error sqrt(7/9), t = sqrt(7) on 2
    # degrees of freedom, where the t distribution has the closed form
    # F(t) = 1/2 + t / (2 sqrt(2 + t^2)): two-sided p = 1 - t / sqrt(2 + t^2)
    a = np.array([0.2, 0.5, 0.1])
    b = a + np.array([1.0, 2.0, 4.0])
    test = stats.paired_t_test(a, b)
    assert test.difference == pytest.approx(7 / 3)
    assert test.statistic == pytest.approx(math.sqrt(7))
    assert test.pvalue == pytest.approx(1 - math.sqrt(7) / 3)
    # the 97.5% quantile on 2 degrees of freedom: 0.95 sqrt(2 / (1 - 0.95^2))
    half = 0.95 * math.sqrt(2 / (1 - 0.95 ** 2)) * math.sqrt(7 / 9)
    assert (test.ci_low, test.ci_high) == pytest.approx((7 / 3 - half, 7 / 3 + half))
    assert test.n_queries == 3 and test.mean_a == pytest.approx(0.8 / 3)


def test_paired_t_test_without_spread():
    a = np.array([0.125, 0.5, 0.75])  # a + 0.25 is exact
    same = stats.paired_t_test(a, a)
    assert (same.pvalue, same.difference, same.ci_low, same.ci_high) == (1.0, 0.0, 0.0, 0.0)
    shifted = stats.paired_t_test(a, a + 0.25)
    assert shifted.pvalue == 0.0 and shifted.difference == pytest.approx(0.25)


def exact_sign_flip_pvalue(a, b):
    """Brute force: every one of the 2**n swaps of a query's two values."""
    d = np.asarray(b) - np.asarray(a)
    observed = abs(d.mean())
    extreme = 0
    for signs in itertools.product((1.0, -1.0), repeat=len(d)):
        extreme += abs((np.array(signs) * d).mean()) >= observed - 1e-12
    return extreme / 2 ** len(d)


@pytest.mark.parametrize("n", [3, 6, 10])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_permutation_test_equals_exact_enumeration(n, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(size=n)
    b = a + rng.normal(0.15, 0.2, size=n)
    b[0] = a[0]  # a query with no difference
    assert stats.permutation_test(a, b, n_resamples=2 ** n) == pytest.approx(
        exact_sign_flip_pvalue(a, b), abs=1e-12)


def test_permutation_test_monte_carlo_close_to_exact():
    rng = np.random.default_rng(3)
    a = rng.uniform(size=16)
    b = a + rng.normal(0.05, 0.2, size=16)
    exact = exact_sign_flip_pvalue(a, b)
    estimate = stats.permutation_test(a, b, n_resamples=20_000, random_state=0)
    assert estimate == pytest.approx(exact, abs=0.015)  # 4 standard errors at p ~ 0.5


def test_holm_hand_computed():
    adjusted = stats.holm([0.01, 0.04, 0.03, 0.005])
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 -> 0.02, 0.03, 0.06, 0.04,
    # made non-decreasing: 0.02, 0.03, 0.06, 0.06
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert stats.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    with pytest.raises(ValueError, match="p-values"):
        stats.holm([0.1, np.nan])


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=12))
def test_holm_properties(p):
    adjusted = stats.holm(p)
    assert np.all(adjusted >= np.asarray(p) - 1e-15) and np.all(adjusted <= 1)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(adjusted[order]) >= -1e-15)  # keeps the order of the p-values
    assert adjusted.min() == pytest.approx(min(1.0, len(p) * min(p)))


def per_query_runs():
    rng = np.random.default_rng(5)
    qid = np.repeat(np.arange(40), 12)
    y = rng.integers(0, 3, size=len(qid))
    noise = rng.normal(size=(3, len(qid)))
    runs = {}
    for name, strength in (("base", 0.0), ("better", 1.0), ("same", 0.0)):
        scores = strength * y + noise[0 if name == "same" else len(runs)]
        runs[name] = M.letor_per_query(y, scores, qid)
    return runs


def test_compare_pairs_by_query_and_corrects_across_rows():
    runs = per_query_runs()
    rows = stats.compare(runs, ["NDCG@10", "MAP"], n_resamples=2000)
    assert [(r["metric"], r["system"]) for r in rows] == [
        ("NDCG@10", "better"), ("NDCG@10", "same"), ("MAP", "better"), ("MAP", "same")]
    same = rows[1]
    assert same["t_pvalue"] == 1.0 and same["permutation_pvalue"] == 1.0
    better = rows[0]
    direct = stats.paired_t_test(runs["base"]["NDCG@10"], runs["better"]["NDCG@10"])
    assert better["t_pvalue"] == pytest.approx(direct.pvalue)
    assert better["difference"] > 0 and better["t_pvalue"] < 0.01
    assert better["ci_low"] < better["difference"] < better["ci_high"]
    holm = stats.holm([r["t_pvalue"] for r in rows])
    assert [r["t_pvalue_holm"] for r in rows] == pytest.approx(list(holm))
    # the same numbers with one run's queries in another order
    shuffled = dict(runs)
    perm = np.random.default_rng(0).permutation(40)
    shuffled["better"] = {k: np.asarray(v)[perm] for k, v in runs["better"].items()}
    again = stats.compare(shuffled, ["NDCG@10", "MAP"], n_resamples=2000)
    assert [r["t_pvalue"] for r in again] == pytest.approx([r["t_pvalue"] for r in rows])


def test_compare_refuses_runs_on_other_queries():
    runs = per_query_runs()
    runs["better"] = {k: np.asarray(v)[1:] for k, v in runs["better"].items()}
    with pytest.raises(ValueError, match="not on the same queries .*query 0 is missing"):
        stats.compare(runs)
    with pytest.raises(ValueError, match="at least two runs"):
        stats.compare({"base": runs["base"]})


def test_per_query_values_average_to_the_report():
    rng = np.random.default_rng(2)
    qid = rng.permutation(np.repeat(np.arange(30), rng.integers(3, 15, size=30)))
    y = rng.integers(0, 3, size=len(qid))
    scores = rng.normal(size=len(qid))
    for convention in ("letor", "standard"):
        values = M.letor_per_query(y, scores, qid, convention=convention)
        report = M.letor_report(y, scores, qid, convention=convention).as_dict()
        assert list(values)[1:] == list(report)
        for name, mean in report.items():
            assert np.mean(values[name]) == pytest.approx(mean)
        assert np.array_equal(values["qid"], np.arange(30))
