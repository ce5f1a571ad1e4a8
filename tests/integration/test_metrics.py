import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.metrics import ndcg_score

from rsrank import load_letor_fold
from rsrank.evaluation import metrics as M

from letor_reference import evaluate as letor_evaluate
from letor_reference import query_ndcg


# -- hand-computed LETOR cases ----------------------------------------------

def test_letor_hand_case_ndcg():
    y = [2, 0, 1]
    s = [3.0, 2.0, 1.0]
    # gains 3, 0, 1; DCG@2 = 3 + 0 (ranks 1-2 undiscounted), ideal 3 + 1
    assert M.ndcg(y, s, 2, convention="letor") == pytest.approx(0.75)
    # DCG@3 = 3 + 0 + 1/log2(3); ideal = 4
    assert M.ndcg(y, s, 3, convention="letor") == pytest.approx((3 + 1 / math.log2(3)) / 4)
    assert M.ndcg(y, s, 3, convention="letor") == pytest.approx(0.9077, abs=1e-4)


def test_letor_short_query_scores_zero_but_truncate_does_not():
    y, s = [2, 0, 1], [3.0, 2.0, 1.0]
    assert M.ndcg(y, s, 5, convention="letor") == 0.0
    assert M.ndcg(y, s, 5, convention="letor", short_list="truncate") == pytest.approx(0.9077, abs=1e-4)
    assert M.precision_at_k(y, s, 5, short_list="zero") == 0.0
    assert M.precision_at_k(y, s, 5, short_list="pad") == pytest.approx(2 / 5)
    assert M.precision_at_k(y, s, 5, short_list="truncate") == pytest.approx(2 / 3)


def test_standard_hand_case():
    y, s = [2, 0, 1], [3.0, 2.0, 1.0]
    dcg = 3 / math.log2(2) + 0 + 1 / math.log2(4)
    ideal = 3 / math.log2(2) + 1 / math.log2(3)
    assert M.ndcg(y, s) == pytest.approx(dcg / ideal)
    assert M.dcg(y, s) == pytest.approx(dcg)


# -- every convention switch changes the answer ------------------------------

def test_gain_switch():
    y, s = [2, 0, 1], [3.0, 2.0, 1.0]
    linear = (2 + 1 / math.log2(4)) / (2 + 1 / math.log2(3))
    assert M.ndcg(y, s, gain="linear") == pytest.approx(linear)
    assert M.ndcg(y, s, gain="exp2") != pytest.approx(linear)
    assert M.ndcg(y, s, gain=lambda r: r ** 2) == pytest.approx(
        (4 + 1 / math.log2(4)) / (4 + 1 / math.log2(3)))


@pytest.mark.parametrize("discount, values", [
    ("log2", [1.0, 1 / math.log2(3), 0.5, 1 / math.log2(5)]),
    ("letor", [1.0, 1.0, 1 / math.log2(3), 0.5]),
    ("zipf", [1.0, 0.5, 1 / 3, 0.25]),
    (0.5, [1.0, 2 ** -0.5, 3 ** -0.5, 0.5]),
    (2.0, [1.0, 0.25, 1 / 9, 1 / 16]),
])
def test_discount_values(discount, values):
    np.testing.assert_allclose(M.discount_values([1, 2, 3, 4], discount), values)


def test_discount_switch_changes_ndcg():
    y, s = [0, 1, 2, 1], [4.0, 3.0, 2.0, 1.0]
    values = {d: M.ndcg(y, s, discount=d) for d in ("log2", "letor", "zipf", 0.5, 2.0)}
    assert len({round(v, 12) for v in values.values()}) == 5


def test_empty_switch():
    y, s = [0, 0, 0], [1.0, 2.0, 3.0]
    assert M.ndcg(y, s) == 0.0
    assert M.ndcg(y, s, empty=1.0) == 1.0
    assert M.ndcg(y, s, convention="lightgbm") == 1.0
    assert math.isnan(M.ndcg(y, s, empty="skip"))
    # "skip" leaves the query out of the mean instead of counting it
    y2, s2, q2 = [0, 0, 1, 0], [1.0, 2.0, 2.0, 1.0], [1, 1, 2, 2]
    assert M.mean_ndcg(y2, s2, q2, empty="skip") == 1.0
    assert M.mean_ndcg(y2, s2, q2) == 0.5
    assert M.mean_ndcg(y2, s2, q2, empty=1.0) == 1.0


def test_ties_switch():
    y, s = [0, 2, 0], [1.0, 1.0, 0.0]
    stable = M.ndcg(y, s, ties="stable")  # file order: label 0 first
    pessimistic = M.ndcg(y, s, ties="pessimistic")
    optimistic = M.ndcg(y, s, ties="optimistic")
    average = M.ndcg(y, s, ties="average")
    assert stable == pytest.approx(pessimistic)
    assert optimistic == pytest.approx(1.0)
    assert pessimistic < average < optimistic
    assert average == pytest.approx((pessimistic + optimistic) / 2)
    # pessimistic is not simply file order
    assert M.ndcg([2, 0, 1], [1.0, 1.0, 0.0], ties="pessimistic") < M.ndcg(
        [2, 0, 1], [1.0, 1.0, 0.0], ties="stable")


def test_fractional_cutoff():
    y = [2, 0, 1, 0, 0, 0, 0, 0, 0, 1]
    s = np.arange(10, 0, -1.0)
    # c = 0.25 of 10 documents -> ceil(2.5) = 3
    assert M.ndcg(y, s, 0.25) == pytest.approx(M.ndcg(y, s, 3))
    assert M.ndcg(y, s, 0.25) != pytest.approx(M.ndcg(y, s, 2))
    assert M.ndcg(y, s, 1.0) == pytest.approx(M.ndcg(y, s))


def test_bad_arguments():
    with pytest.raises(ValueError, match="convention"):
        M.ndcg([1, 0], [1, 0], convention="trec")
    with pytest.raises(ValueError, match="ties"):
        M.ndcg([1, 0], [1, 0], ties="random")
    with pytest.raises(ValueError, match="k must"):
        M.ndcg([1, 0], [1, 0], k=0)
    with pytest.raises(ValueError, match="NaN"):
        M.ndcg([1, 0], [np.nan, 0])
    with pytest.raises(ValueError, match="discount"):
        M.ndcg([1, 0], [1, 0], discount="log10")
    with pytest.raises(ValueError, match="entries"):
        M.mean_ndcg([1, 0], [1.0], [1, 1])


# -- independent references ----------------------------------------------------

def test_matches_sklearn_with_ties_averaged():
    rng = np.random.default_rng(0)
    for _ in range(30):
        n = rng.integers(2, 30)
        y = rng.integers(0, 4, n)
        s = np.round(rng.normal(size=n), 1)  # many ties
        for k in (None, 1, 3, 10):
            expected = ndcg_score([y], [s], k=k)
            assert M.ndcg(y, s, k, convention="sklearn") == pytest.approx(expected)


def test_matches_sklearn_without_ties_linear_gain():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, (20, 15))
    s = rng.normal(size=(20, 15))
    qid = np.repeat(np.arange(20), 15)
    for k in (None, 5):
        expected = ndcg_score(y, s, k=k)
        got = M.mean_ndcg(y.ravel(), s.ravel(), qid, k, gain="linear")
        assert got == pytest.approx(expected)


def test_letor_report_matches_reference_on_ohsumed(ohsumed_root):
    rng = np.random.default_rng(2)
    for fold in (1, 3):
        _, y, qid = load_letor_fold(ohsumed_root, fold).test
        # rounded scores create many ties: file order must decide them
        scores = np.round(rng.uniform(size=len(y)), 2)
        ndcg_ref, prec_ref, map_ref = letor_evaluate(y, scores, qid)
        report = M.letor_report(y, scores, qid)
        np.testing.assert_allclose(report.ndcg, ndcg_ref, rtol=1e-12)
        np.testing.assert_allclose(report.precision, prec_ref, rtol=1e-12)
        assert report.map == pytest.approx(map_ref, rel=1e-12)
        assert report.n_queries == len(np.unique(qid))


def test_rows_of_queries_may_interleave():
    # Rows of different queries may be mixed; only the order inside a query
    # matters (it breaks ties under LETOR's file-order rule).
    rng = np.random.default_rng(3)
    qid = np.repeat([7, 3, 5], [12, 3, 9])
    y = rng.integers(0, 3, len(qid))
    s = np.round(rng.uniform(size=len(qid)), 1)
    shuffled_qid = qid[rng.permutation(len(qid))]
    mixed = np.empty(len(qid), dtype=int)
    for q in (3, 5, 7):
        mixed[np.flatnonzero(shuffled_qid == q)] = np.flatnonzero(qid == q)
    assert not np.array_equal(mixed, np.arange(len(qid)))
    expected = np.mean([query_ndcg(list(y[qid == q]), list(s[qid == q]))[9] for q in (3, 5, 7)])
    assert M.mean_ndcg(y, s, qid, 10, convention="letor") == pytest.approx(expected)
    assert M.mean_ndcg(y[mixed], s[mixed], qid[mixed], 10, convention="letor") == pytest.approx(expected)


pytrec_eval = pytest.importorskip("pytrec_eval")


def _trec_dicts(y, s, qid):
    qrel, run = {}, {}
    for i, (label, score, q) in enumerate(zip(y, s, qid)):
        qrel.setdefault(str(q), {})[f"d{i}"] = int(label)
        run.setdefault(str(q), {})[f"d{i}"] = float(score)
    return qrel, run


def test_matches_trec_eval_on_ohsumed(ohsumed_root):
    _, y, qid = load_letor_fold(ohsumed_root, 2).test
    s = np.random.default_rng(4).normal(size=len(y))  # no ties
    qrel, run = _trec_dicts(y, s, qid)
    measures = {"ndcg", "ndcg_cut_10", "map", "P_5", "recip_rank"}
    result = pytrec_eval.RelevanceEvaluator(qrel, measures).evaluate(run)
    qids = np.unique(qid)
    ref = {m: np.array([result[str(q)][m] for q in qids]) for m in
           ("ndcg", "ndcg_cut_10", "map", "P_5", "recip_rank")}
    np.testing.assert_allclose(M.ndcg_per_query(y, s, qid, gain="linear"), ref["ndcg"], rtol=1e-6)
    np.testing.assert_allclose(M.ndcg_per_query(y, s, qid, 10, gain="linear"),
                               ref["ndcg_cut_10"], rtol=1e-6)
    np.testing.assert_allclose(M.average_precision_per_query(y, s, qid), ref["map"], rtol=1e-6)
    np.testing.assert_allclose(M.precision_per_query(y, s, qid, 5), ref["P_5"], rtol=1e-6)
    np.testing.assert_allclose(M.reciprocal_rank_per_query(y, s, qid), ref["recip_rank"], rtol=1e-6)


def _ranx_evaluate(qrels, run, metrics):
    """ranx's own evaluation, in a fresh interpreter with numba's compiler
    off: the same code, interpreted (compiling it took half a minute of the
    suite on a new machine)."""
    import json
    import os
    import subprocess
    import sys

    code = ("import json, sys, ranx\n"
            "qrels, run, metrics = json.load(sys.stdin)\n"
            "scores = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), metrics)\n"
            "print(json.dumps({name: float(value) for name, value in scores.items()}))")
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps([qrels, run, metrics]),
                          env={**os.environ, "NUMBA_DISABLE_JIT": "1"}, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_matches_ranx_burges_gain(ohsumed_root):
    pytest.importorskip("ranx")
    _, y, qid = load_letor_fold(ohsumed_root, 4).test
    s = np.random.default_rng(5).normal(size=len(y))
    qrel, run = _trec_dicts(y, s, qid)
    qrels = {q: {d: r for d, r in docs.items() if r > 0} for q, docs in qrel.items()}
    scores = _ranx_evaluate(qrels, run, ["ndcg_burges@10", "ndcg@10"])
    assert M.mean_ndcg(y, s, qid, 10) == pytest.approx(scores["ndcg_burges@10"], rel=1e-6)
    assert M.mean_ndcg(y, s, qid, 10, gain="linear") == pytest.approx(scores["ndcg@10"], rel=1e-6)


# -- ERR, reciprocal rank, AP: brute force ------------------------------------

def _err_brute(y, s, k, top):
    order = sorted(range(len(y)), key=lambda i: -s[i])[:k]
    total, reach = 0.0, 1.0
    for rank, i in enumerate(order, start=1):
        r = (2 ** y[i] - 1) / 2 ** top
        total += reach * r / rank
        reach *= 1 - r
    return total


def test_err_matches_brute_force():
    rng = np.random.default_rng(6)
    qid = np.repeat(np.arange(8), rng.integers(1, 20, 8))
    y = rng.integers(0, 5, len(qid))
    s = rng.normal(size=len(qid))
    for k in (None, 3):
        per_query = M.err_per_query(y, s, qid, k, max_label=4)
        expected = [_err_brute(list(y[qid == q]), list(s[qid == q]), k or 10 ** 6, 4)
                    for q in range(8)]
        np.testing.assert_allclose(per_query, expected, rtol=1e-12)


def test_rr_and_ap_hand_case():
    y, s = [0, 0, 1, 0, 2], [5.0, 4.0, 3.0, 2.0, 1.0]
    assert M.reciprocal_rank(y, s) == pytest.approx(1 / 3)
    assert M.average_precision(y, s) == pytest.approx((1 / 3 + 2 / 5) / 2)
    assert M.average_precision(y, s, relevance_threshold=2) == pytest.approx(1 / 5)
    assert M.average_precision([0, 0], [1.0, 0.0]) == 0.0
    assert math.isnan(M.average_precision([0, 0], [1.0, 0.0], empty="skip"))


# -- properties ----------------------------------------------------------------

labels_and_scores = st.integers(2, 40).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 4), min_size=n, max_size=n),
    st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=n, max_size=n, unique=True),
))


@settings(max_examples=200, deadline=None)
@given(labels_and_scores)
def test_linear_dcg_error_equals_misordered_pair_loss(data):
    labels, scores = data
    ideal = M.linear_dcg(labels, labels)
    assert ideal - M.linear_dcg(labels, scores) == pytest.approx(
        M.misordered_pair_loss(labels, scores), abs=1e-9)


def _brute_pair_loss(labels, scores):
    return sum(labels[j] - labels[i] for i in range(len(labels)) for j in range(len(labels))
               if labels[j] > labels[i] and scores[j] < scores[i])


@settings(max_examples=100, deadline=None)
@given(labels_and_scores)
def test_misordered_pair_loss_matches_brute_force(data):
    labels, scores = data
    assert M.misordered_pair_loss(labels, scores) == pytest.approx(_brute_pair_loss(labels, scores))


@settings(max_examples=100, deadline=None)
@given(labels_and_scores, st.sampled_from(["log2", "letor", "zipf", 0.5, 2.0]),
       st.one_of(st.none(), st.integers(1, 12), st.floats(0.05, 1.0)))
def test_ndcg_is_one_for_ideal_order_and_bounded(data, discount, k):
    labels, scores = data
    labels = np.asarray(labels)
    value = M.ndcg(labels, scores, k, discount=discount)
    assert 0.0 <= value <= 1.0 + 1e-12
    if labels.max() > 0:
        assert M.ndcg(labels, labels + 1e-3 * np.arange(len(labels))[::-1], k,
                      discount=discount, ties="stable") == pytest.approx(1.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3), st.floats(-5, 5)),
                min_size=1, max_size=60))
def test_many_query_path_equals_one_query_at_a_time(rows):
    qid = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows])
    s = np.round(np.array([r[2] for r in rows]), 1)
    for convention in ("letor", "standard", "sklearn"):
        per_query = M.ndcg_per_query(y, s, qid, 5, convention=convention)
        single = [M.ndcg(y[qid == q], s[qid == q], 5, convention=convention)
                  for q in np.unique(qid)]
        np.testing.assert_allclose(per_query, single)


def test_grouped_queries_can_be_reused():
    from rsrank.reading._queries import group_queries

    rng = np.random.default_rng(10)
    qid = rng.integers(0, 5, 50)
    y, s = rng.integers(0, 3, 50), rng.normal(size=50)
    groups = group_queries(qid)
    assert M.mean_ndcg(y, s, groups, 5) == M.mean_ndcg(y, s, qid, 5)
    with pytest.raises(ValueError, match="rows"):
        M.mean_ndcg(y[:-1], s[:-1], groups, 5)


# -- one convention everywhere; each named convention is its tool's -------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-3, M.MAX_EXP2_LABEL), min_size=1, max_size=40),
       st.sampled_from([np.int8, np.int16, np.int64, np.uint8, np.uint64]))
def test_exp2_gains_of_integer_grades_are_those_of_the_formula(labels, dtype):
    # integer grades take a table of 2**g - 1; any grade must give the very
    # float of 2**g - 1 (negative grades, which the table leaves to the
    # formula, included), and too large a grade still raises
    labels = np.array(labels)
    if dtype in (np.uint8, np.uint64):
        labels = np.abs(labels)
    labels = labels[labels <= np.iinfo(dtype).max].astype(dtype)
    if not len(labels):
        return
    gains = M.gain_values(labels)
    assert gains.dtype == np.float64
    np.testing.assert_array_equal(gains, np.exp2(labels.astype(np.float64)) - 1.0)
    with pytest.raises(ValueError, match="too large"):
        M.gain_values(np.array([0, M.MAX_EXP2_LABEL + 1], dtype=np.int64))
