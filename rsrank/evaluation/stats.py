"""Paired significance tests over queries, for comparing rankers.

Two systems evaluated on the same queries give one value per query each;
the unit of a test is the query (Smucker, Allan and Carterette 2007 compare
these tests on TREC runs). :func:`compare` runs, for every metric and every
system against a baseline:

- the paired t-test (:func:`scipy.stats.ttest_rel`) with the mean
  difference and its confidence interval;
- the paired randomization test (:func:`permutation_test`: swapping the
  two systems' values within each query at random flips the sign of that
  query's difference), exact over all ``2**n`` swaps when that is at most
  ``n_resamples``, otherwise a Monte Carlo estimate; its p-values follow
  :func:`scipy.stats.permutation_test`'s rule, from sign flips drawn as
  bits and summed as one matrix product (scipy draws and sorts two random
  numbers a query and swap, in 37 to 62 times the time:
  ``results/compare_speed.md``);
- Holm's step-down correction of each test's p-values across all the
  metrics and systems compared at once (:func:`holm`).

The per-query values come from :func:`rsrank.evaluation.metrics.letor_per_query`, from
the ``per_query`` entries ``rsrank train`` writes into ``results.json``
(:func:`rsrank.evaluation.reports.per_query_from_results`, averaged over seeds by
:func:`average_over_seeds`), or from any arrays aligned by query.
"""

from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats as _scipy

__all__ = ["PairedTest", "paired_t_test", "permutation_test", "holm", "compare",
           "average_over_seeds"]


@dataclass
class PairedTest:
    """The paired t-test of ``b - a`` over queries."""

    n_queries: int
    mean_a: float
    mean_b: float
    difference: float  # mean of b - a
    ci_low: float
    ci_high: float
    statistic: float
    pvalue: float


def _paired(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"paired values need one value per query in each system, got shapes "
                         f"{a.shape} and {b.shape}")
    if len(a) < 2:
        raise ValueError(f"a paired test needs at least 2 queries, got {len(a)}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("per-query values contain NaN or infinite values; leave those "
                         "queries out of both systems")
    return a, b


def paired_t_test(a, b, *, confidence=0.95):
    """Student's paired t-test of ``b - a``, two-sided, with the
    ``confidence`` interval of the mean difference. Identical systems give
    p = 1 and the interval [0, 0] (scipy returns NaN there)."""
    a, b = _paired(a, b)
    difference = b - a
    if np.all(difference == difference[0]):
        # no spread: t is 0/0 (equal systems) or infinite (a constant shift)
        d = float(difference[0])
        return PairedTest(len(a), float(a.mean()), float(b.mean()), d, d, d,
                          0.0 if d == 0 else np.copysign(np.inf, d), 1.0 if d == 0 else 0.0)
    result = _scipy.ttest_rel(b, a)
    interval = result.confidence_interval(confidence_level=confidence)
    return PairedTest(len(a), float(a.mean()), float(b.mean()), float(difference.mean()),
                      float(interval.low), float(interval.high), float(result.statistic),
                      float(result.pvalue))


#: Sign flips a block of a permutation test draws (rows times queries)
_FLIPS_PER_BLOCK = 1 << 22


def _flip_blocks(n, n_resamples, rng):
    """Blocks of sign flips as 0/1 rows of ``n`` columns (1: that query's
    two values swapped): every one of the ``2**n`` in order when ``rng`` is
    None, else ``n_resamples`` drawn from ``rng`` a bit a query."""
    rows = max(1, _FLIPS_PER_BLOCK // n)
    if rng is None:
        powers = np.arange(n, dtype=np.int64)
        for start in range(0, 2 ** n, rows):
            index = np.arange(start, min(start + rows, 2 ** n), dtype=np.int64)
            yield ((index[:, None] >> powers) & 1).astype(np.float64)
        return
    width = (n + 7) // 8
    for start in range(0, n_resamples, rows):
        drawn = rng.integers(0, 256, size=(min(rows, n_resamples - start), width), dtype=np.uint8)
        yield np.unpackbits(drawn, axis=1, count=n).astype(np.float64)


def permutation_test(a, b, *, n_resamples=100_000, random_state=0):
    """Two-sided p-value of the paired randomization test of the mean of
    ``b - a``: each query's two values are swapped at random, which flips
    the sign of its difference. Exact over all ``2**n`` swaps when
    ``2**n <= n_resamples``; otherwise ``n_resamples`` swaps drawn from
    ``numpy.random.default_rng(random_state)``, and the observed swap
    counted among them (a p-value is never 0). As
    :func:`scipy.stats.permutation_test`, twice the smaller tail, a mean
    within 100 machine epsilons of the observed one counting as equal."""
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) \
            or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    a, b = _paired(a, b)
    if np.all(a == b):
        return 1.0
    d = b - a
    n = len(d)
    total = d.sum()
    observed = total / n
    gamma = abs(observed) * np.finfo(np.float64).eps * 100
    exact = n < 63 and 2 ** n <= n_resamples
    rng = None if exact else np.random.default_rng(random_state)
    at_least = at_most = 0
    for flips in _flip_blocks(n, n_resamples, rng):
        means = (total - 2.0 * (flips @ d)) / n
        at_least += int(np.count_nonzero(means >= observed - gamma))
        at_most += int(np.count_nonzero(means <= observed + gamma))
    draws, counted = (2 ** n, 0) if exact else (n_resamples, 1)
    smaller = (min(at_least, at_most) + counted) / (draws + counted)
    return float(min(1.0, 2.0 * smaller))


def holm(pvalues):
    """Holm's step-down adjusted p-values (same order as given): the i-th
    smallest of m becomes ``max over j <= i of min(1, (m - j + 1) p_(j))``.
    Rejecting where the adjusted value is below alpha controls the
    family-wise error rate at alpha."""
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1 or np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("p-values must be a one-dimensional array of numbers in [0, 1]")
    order = np.argsort(p, kind="stable")
    m = len(p)
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(stepped)
    return adjusted


def compare(runs, metrics=None, *, baseline=None, confidence=0.95, n_resamples=100_000,
            random_state=0):
    """Every system against a baseline on every metric, paired over queries.

    Parameters
    ----------
    runs : dict
        ``{name: {"qid": keys, metric: values, ...}}``, one entry per system
        (as :func:`rsrank.evaluation.metrics.letor_per_query` returns). The systems
        must hold the same queries (in any order); a query whose value is
        NaN in any system is left out of that metric's tests.
    metrics : list of str, optional
        Default: the metrics all runs share, in the first run's order.
    baseline : str, optional
        Default: the first run.

    Returns
    -------
    list of dict
        One per (metric, system): the :class:`PairedTest` fields
        (``mean_a`` is the baseline), ``left_out`` (queries without a
        value in either run, not in the test), ``permutation_pvalue``, and
        ``t_pvalue_holm`` and ``permutation_pvalue_holm`` adjusted across
        all rows.
    """
    names = list(runs)
    if len(names) < 2:
        raise ValueError("compare needs at least two runs")
    baseline = names[0] if baseline is None else baseline
    if baseline not in runs:
        raise ValueError(f"baseline {baseline!r} is not one of the runs {names}")
    aligned = _align(runs)
    if metrics is None:
        shared = set.intersection(*(set(run) - {"qid"} for run in runs.values()))
        metrics = [m for m in runs[names[0]] if m in shared]
    rows = []
    for metric in metrics:
        for name in names:
            if name == baseline:
                continue
            for run_name in (baseline, name):
                if metric not in aligned[run_name]:
                    raise ValueError(f"run {run_name!r} has no metric {metric!r}")
            a, b = aligned[baseline][metric], aligned[name][metric]
            kept = ~(np.isnan(a) | np.isnan(b))
            test = paired_t_test(a[kept], b[kept], confidence=confidence)
            rows.append({"metric": metric, "baseline": baseline, "system": name,
                         "left_out": int((~kept).sum()), **asdict(test),
                         "permutation_pvalue": permutation_test(
                             a[kept], b[kept], n_resamples=n_resamples,
                             random_state=random_state)})
    if rows:
        for key in ("pvalue", "permutation_pvalue"):
            adjusted = holm([row[key] for row in rows])
            for row, value in zip(rows, adjusted):
                row[("t_pvalue" if key == "pvalue" else key) + "_holm"] = float(value)
        for row in rows:
            row["t_pvalue"] = row.pop("pvalue")
    return rows


def _align(runs):
    """Each run's metric arrays reordered to the first run's queries."""
    names = list(runs)
    keys = {name: np.asarray(runs[name]["qid"]).astype(str) for name in names}
    reference = keys[names[0]]
    if len(np.unique(reference)) != len(reference):
        raise ValueError(f"run {names[0]!r} lists a query more than once")
    out = {}
    for name in names:
        own = keys[name]
        missing = np.setdiff1d(reference, own)
        extra = np.setdiff1d(own, reference)
        if len(own) != len(np.unique(own)):
            raise ValueError(f"run {name!r} lists a query more than once")
        if len(missing) or len(extra):
            example = (f"query {missing[0]} is missing" if len(missing)
                       else f"query {extra[0]} is extra")
            raise ValueError(f"runs {names[0]!r} and {name!r} are not on the same queries "
                             f"({example}): compare runs on the same test data")
        position = {key: i for i, key in enumerate(own)}
        index = np.array([position[key] for key in reference], dtype=np.int64)
        out[name] = {metric: np.asarray(values, dtype=np.float64)[index]
                     for metric, values in runs[name].items() if metric != "qid"}
    return out


def average_over_seeds(entries):
    """Per-query values of several seeds (dicts as
    :func:`rsrank.evaluation.metrics.letor_per_query` returns, on the same queries)
    averaged query by query."""
    entries = list(entries)
    aligned = _align({i: entry for i, entry in enumerate(entries)}) if len(entries) > 1 else {
        0: {m: np.asarray(v, dtype=np.float64) for m, v in entries[0].items() if m != "qid"}}
    out = {"qid": np.asarray(entries[0]["qid"]).astype(str)}
    for metric in aligned[0]:
        out[metric] = np.mean([aligned[i][metric] for i in aligned], axis=0)
    return out
