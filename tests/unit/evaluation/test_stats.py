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


def scipy_pvalue(a, b, n_resamples, random_state=0):
    from scipy import stats as scipy_stats

    return scipy_stats.permutation_test(
        (np.asarray(b), np.asarray(a)), lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples", vectorized=True, n_resamples=n_resamples,
        alternative="two-sided", random_state=random_state).pvalue


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=4, max_size=12),
       st.integers(0, 2**31))
def test_exact_permutation_test_equals_scipys_even_with_ties(values, seed):
    # metric values take few levels, so differences tie and many swaps give the
    # observed mean exactly: both count them as at least as extreme
    rng = np.random.default_rng(seed)
    a = np.asarray(values)
    b = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=len(a))
    if np.all(a == b):
        b[0] = 1.0 - a[0]
    n = 2 ** len(a)  # exact: two Monte Carlo estimates would differ by their errors
    assert stats.permutation_test(a, b, n_resamples=n) == pytest.approx(
        scipy_pvalue(a, b, n), abs=1e-12)


def test_exact_permutation_test_over_many_blocks(monkeypatch):
    rng = np.random.default_rng(4)
    a = rng.uniform(size=10)
    b = a + rng.normal(0.1, 0.2, size=10)
    whole = stats.permutation_test(a, b, n_resamples=2 ** 10)
    monkeypatch.setattr(stats, "_FLIPS_PER_BLOCK", 70)  # blocks of 7 of the 1,024 swaps
    assert stats.permutation_test(a, b, n_resamples=2 ** 10) == whole
    assert whole == pytest.approx(exact_sign_flip_pvalue(a, b), abs=1e-12)


def test_monte_carlo_permutation_test_within_its_error_of_scipys_and_never_zero():
    rng = np.random.default_rng(7)
    a = rng.uniform(size=106)
    for shift in (0.0, 0.01, 0.03):
        b = a + rng.normal(shift, 0.1, size=106)
        ours = stats.permutation_test(a, b, n_resamples=100_000, random_state=0)
        theirs = scipy_pvalue(a, b, 20_000, random_state=1)
        error = np.hypot(*(2 * np.sqrt(theirs / 2 * (1 - theirs / 2) / draws)
                           for draws in (100_000, 20_000)))  # of the difference of two estimates
        assert abs(ours - theirs) < 4 * error + 1e-4
        assert stats.permutation_test(a, b, random_state=0) == ours  # seeded: the same draws
    far = stats.permutation_test(a, a + 1.0, n_resamples=1000)
    assert far == pytest.approx(2 / 1001)  # only the observed swap counted as extreme


@pytest.mark.parametrize("bad", [0, -5, 2.5, True, None])
def test_permutation_test_refuses_a_count_of_resamples_that_is_not_positive(bad):
    with pytest.raises(ValueError, match="n_resamples must be a positive integer"):
        stats.permutation_test([0.1, 0.2, 0.3], [0.2, 0.2, 0.5], n_resamples=bad)


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
