"""Ranking metrics with every convention a named parameter.

Libraries disagree on NDCG: LETOR's Eval-Score-3.0.pl does not discount the
first two ranks and scores a query shorter than k as 0; LightGBM and XGBoost
score a query with no relevant document as 1 where scikit-learn and LETOR
score it 0; scikit-learn averages the gain over tied scores where LETOR keeps
file order, and trec_eval orders tied scores by document id (the larger id
first); LETOR and LightGBM take ``2**r - 1`` as the gain, trec_eval and
scikit-learn the label itself. Each of these choices is a keyword here, and
``convention`` selects a coherent preset, named for the tool whose numbers
it reproduces:

============ ======== ========= ========= ============ =========== ===================
convention   gain     discount  empty     ties         short_list  reproduces
============ ======== ========= ========= ============ =========== ===================
"letor"      "exp2"   "letor"   0.0       "stable"     "zero"      LETOR's Eval-Score-3.0
"trec_eval"  "linear" "log2"    0.0       "docid"      "truncate"  trec_eval's ndcg_cut
"sklearn"    "linear" "log2"    0.0       "average"    "truncate"  scikit-learn's ndcg_score
"lightgbm"   "exp2"   "log2"    1.0       "stable"     "truncate"  LightGBM's ndcg@k
"standard"   "exp2"   "log2"    0.0       "stable"     "truncate"  Burges et al. (2005)
============ ======== ========= ========= ============ =========== ===================

``"letor"`` (:data:`DEFAULT_CONVENTION`) is the convention of every score
and selection in the package (:meth:`rsrank.RSRank.score`,
:class:`rsrank.RSRankCV`, the scorers, ``rsrank train``, ``rsrank compare``,
``rsrank evaluate``) unless another is named; the functions of this module
default to ``"standard"``, the textbook formula the objective's
``|ΔNDCG|`` pair weights follow, except :func:`letor_report` and
:func:`letor_per_query`, which are LETOR's. ``ties="docid"`` needs the rows'
document ids (``docids=``): trec_eval sorts a query's documents by
decreasing score, and equal scores by decreasing document id (byte order).
A keyword given explicitly overrides the preset's value.

Every metric has three forms: ``metric(y_true, y_score, ...)`` for one
query, ``metric_per_query(y_true, y_score, qid, ...)`` returning one value per
query (queries in increasing qid order, rows in any order) and
``mean_metric(...)``. The many-query path has no per-query Python loop: rows
are ranked with one ``lexsort`` over (query, score) and per-query sums are
``bincount`` reductions.
"""

from dataclasses import dataclass

import numpy as np

from .. import _kernels
from ..reading._queries import group_queries
from ._conventions import CONVENTIONS, DEFAULT_CONVENTION

__all__ = [
    "nanmean",
    "weighted_values",
    "CONVENTIONS",
    "gain_values",
    "discount_values",
    "dcg",
    "ndcg",
    "ndcg_per_query",
    "mean_ndcg",
    "precision_short_list",
    "precision_at_k",
    "precision_per_query",
    "mean_precision",
    "average_precision",
    "average_precision_per_query",
    "mean_average_precision",
    "reciprocal_rank",
    "reciprocal_rank_per_query",
    "mean_reciprocal_rank",
    "err_at_k",
    "err_per_query",
    "mean_err",
    "linear_dcg",
    "linear_ndcg",
    "misordered_pair_loss",
    "LetorReport",
    "letor_report",
    "letor_per_query",
]



_TIES = ("stable", "pessimistic", "optimistic", "docid", "average")


def _settings(convention, **given):
    """The convention's settings with every explicitly given keyword on top."""
    if convention not in CONVENTIONS:
        raise ValueError(
            f"unknown convention {convention!r}; expected one of {sorted(CONVENTIONS)}"
        )
    settings = dict(CONVENTIONS[convention])
    settings.update({name: value for name, value in given.items() if value is not None})
    if settings["ties"] not in _TIES:
        raise ValueError(f"ties must be one of {_TIES}, got {settings['ties']!r}")
    empty = settings["empty"]
    if not (empty == "skip" or isinstance(empty, (int, float))):
        raise ValueError(f"empty must be a number or 'skip', got {empty!r}")
    return settings


#: Largest label the ``"exp2"`` gain takes: 2**255 times any realistic number
#: of documents stays far below the float64 maximum.
MAX_EXP2_LABEL = 255


def gain_values(labels, gain="exp2"):
    """Gain of each relevance label.

    Parameters
    ----------
    labels : array-like
        Relevance labels (non-negative).
    gain : {"exp2", "linear"} or callable
        ``"exp2"`` is ``2**label - 1`` (Burges; LETOR's table 0, 1, 3 for
        labels 0, 1, 2); ``"linear"`` is the label itself (trec_eval,
        scikit-learn). A callable maps a float array of labels to gains.
    """
    given = np.asarray(labels)
    if gain == "exp2" and given.dtype.kind in "iu" and given.size:
        low, high = int(given.min()), int(given.max())  # high + 1 must not wrap
        if 0 <= low and high <= MAX_EXP2_LABEL:
            # integer grades: a table of 2**g - 1 per grade, one lookup a row
            # (each entry is the very exp2(g) - 1.0 the formula below computes)
            return (np.exp2(np.arange(high + 1, dtype=np.float64)) - 1.0)[given]
    labels = np.asarray(given, dtype=np.float64)
    if callable(gain):
        return np.asarray(gain(labels), dtype=np.float64)
    if gain == "exp2":
        if labels.size and labels.max() > MAX_EXP2_LABEL:
            raise ValueError(f"label {labels.max():g} is too large for the 2^label - 1 gain "
                             f"(at most {MAX_EXP2_LABEL}, so that a query's DCG stays finite); "
                             "relevance grades are small integers, or use gain='linear'")
        return np.exp2(labels) - 1.0
    if gain == "linear":
        return labels.copy()
    raise ValueError(f"gain must be 'exp2', 'linear' or a callable, got {gain!r}")


def discount_values(ranks, discount="log2"):
    """Discount of each 1-based rank.

    Parameters
    ----------
    ranks : array-like of int
        Ranks, 1 for the top of the list.
    discount : str, float or callable
        ``"log2"``: ``1 / log2(1 + r)`` (Jarvelin-Kekalainen as used by
        most libraries). ``"letor"``: LETOR's Eval-Score rule, 1 at ranks
        1 and 2 and ``1 / log2(r)`` from rank 3. ``"zipf"``: ``1 / r``.
        A float ``beta > 0``: the power discount ``r ** -beta`` (Wang et
        al. 2013 analyse ``0 < beta < 1`` as the family that keeps
        separating rankers on long lists, and ``beta > 1`` as fast decay).
        A callable maps a float array of ranks to discounts.
    """
    ranks = np.asarray(ranks, dtype=np.float64)
    if callable(discount):
        return np.asarray(discount(ranks), dtype=np.float64)
    if isinstance(discount, str):
        if discount == "log2":
            return 1.0 / np.log2(1.0 + ranks)
        if discount == "letor":
            return np.where(ranks <= 2.0, 1.0, 1.0 / np.log2(np.maximum(ranks, 2.0)))
        if discount == "zipf":
            return 1.0 / ranks
    elif isinstance(discount, (int, float)) and not isinstance(discount, bool) and discount > 0:
        return ranks ** (-float(discount))
    raise ValueError(
        "discount must be 'log2', 'letor', 'zipf', a positive float beta "
        f"(r**-beta) or a callable, got {discount!r}"
    )


@dataclass
class _Ranking:
    """Rows of many queries laid out query after query in ranked order."""

    labels: np.ndarray  # float64 label at each ranked position
    scores: np.ndarray  # score at each ranked position
    query: np.ndarray  # query index of each position
    ranks: np.ndarray  # 1-based rank inside the query
    sizes: np.ndarray  # documents per query
    qids: np.ndarray


def _rank(y_true, y_score, qid, ties, docids=None):
    y_true = np.asarray(y_true, dtype=np.float64)
    y_score = np.asarray(y_score, dtype=np.float64)
    if y_true.ndim != 1 or y_score.ndim != 1:
        raise ValueError("y_true and y_score must be one-dimensional (one value per document)")
    if len(y_true) != len(y_score):
        raise ValueError(f"y_true has {len(y_true)} entries but y_score has {len(y_score)}")
    if not np.all(np.isfinite(y_score)):
        raise ValueError("y_score contains NaN or infinite values")
    if not np.all(np.isfinite(y_true)) or np.any(y_true < 0):
        raise ValueError("y_true must hold finite, non-negative relevance labels")
    groups = group_queries(qid, n_rows=len(y_true))
    labels = y_true[groups.order]
    scores = y_score[groups.order]
    query = groups.row_query()
    if ties == "pessimistic":
        keys = (labels, -scores, query)
    elif ties == "optimistic":
        keys = (-labels, -scores, query)
    elif ties == "docid":
        if docids is None:
            raise ValueError("ties='docid' (trec_eval's order of tied scores) needs the rows' "
                             "document ids: pass docids=")
        docids = np.asarray(docids).astype(str)
        if docids.shape != y_true.shape:
            raise ValueError(f"docids has {len(docids)} entries for {len(y_true)} rows")
        # byte order of the ids, as C's strcmp compares them
        codes = np.unique(np.char.encode(docids, "utf-8"), return_inverse=True)[1]
        keys = (-codes.reshape(-1)[groups.order], -scores, query)
    else:
        keys = None
    # stable: equal keys keep their input order
    perm = _kernels.grouped_order(scores, groups.offsets) if keys is None else np.lexsort(keys)
    labels, scores = labels[perm], scores[perm]
    ranks = np.arange(len(labels), dtype=np.int64) - groups.offsets[query] + 1
    return _Ranking(labels, scores, query, ranks, groups.sizes, groups.qids)


def _tie_averaged(values, ranking):
    """Replace each value by its mean over the block of equal scores."""
    n = len(values)
    if n == 0:
        return values
    new_block = np.r_[True, (ranking.scores[1:] != ranking.scores[:-1])
                      | (ranking.query[1:] != ranking.query[:-1])]
    block = np.cumsum(new_block) - 1
    totals = np.bincount(block, weights=values)
    counts = np.bincount(block)
    return (totals / counts)[block]


def _cutoffs(k, sizes):
    """Per-query cut-off: ``None`` is the whole list, an int is fixed and a
    float ``0 < c <= 1`` is ``ceil(c * n)`` for a list of ``n`` documents."""
    sizes = np.asarray(sizes, dtype=np.int64)
    if k is None:
        return sizes.copy()
    if isinstance(k, (bool, np.bool_)):
        raise ValueError(f"k must be a positive int, a fraction in (0, 1] or None, got {k!r}")
    if isinstance(k, (int, np.integer)):
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        return np.full(len(sizes), int(k), dtype=np.int64)
    if isinstance(k, (float, np.floating)) and 0.0 < k <= 1.0:
        return np.ceil(k * sizes - 1e-12).astype(np.int64)
    raise ValueError(f"k must be a positive int, a fraction in (0, 1] or None, got {k!r}")


def _per_query_sum(values, ranking, kq):
    """Sum of ``values`` over the top ``kq[q]`` positions of each query."""
    keep = ranking.ranks <= kq[ranking.query]
    return np.bincount(ranking.query[keep], weights=values[keep], minlength=len(ranking.sizes))


def _ideal_ranking(ranking):
    """The same queries with documents sorted by decreasing label."""
    perm = _kernels.grouped_order(ranking.labels, np.r_[0, np.cumsum(ranking.sizes)])
    return _Ranking(ranking.labels[perm], -ranking.labels[perm], ranking.query,
                    ranking.ranks, ranking.sizes, ranking.qids)


def _ndcg_from_ranking(ranking, k, s):
    kq = _cutoffs(k, ranking.sizes)
    gains = gain_values(ranking.labels, s["gain"])
    discounts = discount_values(ranking.ranks, s["discount"])
    ideal_labels = _ideal_ranking(ranking).labels
    ideal = _per_query_sum(gain_values(ideal_labels, s["gain"]) * discounts, ranking, kq)
    if s["ties"] == "average":
        gains = _tie_averaged(gains, ranking)
    actual = _per_query_sum(gains * discounts, ranking, kq)
    out = np.divide(actual, ideal, out=np.zeros_like(actual), where=ideal > 0)
    out[ideal <= 0] = np.nan if s["empty"] == "skip" else float(s["empty"])
    if s["short_list"] == "zero":
        out[ranking.sizes < kq] = 0.0
    elif s["short_list"] != "truncate":
        raise ValueError(f"short_list must be 'truncate' or 'zero', got {s['short_list']!r}")
    return out


def ndcg_per_query(y_true, y_score, qid=None, k=None, *, convention="standard",
                   gain=None, discount=None, empty=None, ties=None, short_list=None,
                   docids=None):
    """NDCG of each query.

    Parameters
    ----------
    y_true : array-like of shape (n_rows,)
        Relevance labels (non-negative).
    y_score : array-like of shape (n_rows,)
        Scores; higher ranks first.
    qid : array-like of shape (n_rows,) or None
        Query id per row, rows in any order. ``None``: one query.
    k : int, float or None
        Cut-off. An int keeps the top ``k``; a float ``0 < c <= 1`` keeps
        the top ``ceil(c * n)`` of a list of ``n``; ``None`` keeps all.
    convention : {"standard", "letor", "trec_eval", "sklearn", "lightgbm"}
        Preset for the keywords below (see the module docstring). The
        default here is the textbook formula, which the objective's
        ``|ΔNDCG|`` pair weights use; scores and selections use
        :data:`DEFAULT_CONVENTION`.
    gain : {"exp2", "linear"} or callable
        See :func:`gain_values`.
    discount : {"log2", "letor", "zipf"}, float or callable
        See :func:`discount_values`.
    empty : float or "skip"
        Value of a query whose ideal DCG is 0 (no relevant document);
        ``"skip"`` gives NaN here and leaves the query out of means.
    ties : {"stable", "pessimistic", "optimistic", "docid", "average"}
        Order among equal scores: input order; worst labels first; best
        labels first; decreasing document id (trec_eval's order; needs
        ``docids``); or the gain averaged over the tied block (the
        expectation over random tie-breaking, as scikit-learn does).
    short_list : {"truncate", "zero"}
        A query with fewer than ``k`` documents: evaluate its whole list
        (``"truncate"``) or score it 0 (``"zero"``, LETOR's rule).
    docids : array-like of shape (n_rows,), optional
        Each row's document id, for ``ties="docid"``.

    Returns
    -------
    ndarray of shape (n_queries,)
        One value per query, queries in increasing qid order.
    """
    s = _settings(convention, gain=gain, discount=discount, empty=empty, ties=ties,
                  short_list=short_list)
    ranking = _rank(y_true, y_score, qid, s["ties"], docids)
    return _ndcg_from_ranking(ranking, k, s)


def nanmean(values, weights=None):
    """The mean of the values that are not NaN (NaN when none is), each
    counted ``weights`` times when given (NaN too when those weigh 0)."""
    values = np.asarray(values, dtype=np.float64)
    kept = ~np.isnan(values)
    if weights is None:
        return float(values[kept].mean()) if kept.any() else float("nan")
    weights = np.asarray(weights, dtype=np.float64)[kept]
    total = weights.sum()
    return float(weights @ values[kept] / total) if total > 0 else float("nan")


def weighted_values(values, weights):
    """``values`` (one per query) scaled so that their plain mean over the
    non-NaN ones is their mean weighted by ``weights``: each times its
    weight over the mean weight of those queries (``values`` as they are
    without weights). A selection that compares means of per-query values
    then compares the weighted means."""
    values = np.asarray(values, dtype=np.float64)
    if weights is None:
        return values
    weights = np.asarray(weights, dtype=np.float64)
    kept = ~np.isnan(values)
    mean = weights[kept].mean() if kept.any() else 0.0
    return values * (weights / mean) if mean > 0 else np.full(len(values), np.nan)


def _single(values):
    if len(values) != 1:
        raise ValueError("expected the rows of a single query")
    return float(values[0])


def ndcg(y_true, y_score, k=None, **conventions):
    """NDCG of one query; keywords as in :func:`ndcg_per_query`."""
    return _single(ndcg_per_query(y_true, y_score, None, k, **conventions))


def mean_ndcg(y_true, y_score, qid, k=None, **conventions):
    """Mean NDCG over queries; keywords as in :func:`ndcg_per_query`.
    Queries with ``empty="skip"`` are left out of the mean."""
    return nanmean(ndcg_per_query(y_true, y_score, qid, k, **conventions))


def dcg(y_true, y_score, k=None, *, convention="standard", gain=None, discount=None,
        ties=None, docids=None):
    """Unnormalised DCG of one query (keywords as in :func:`ndcg_per_query`)."""
    s = _settings(convention, gain=gain, discount=discount, ties=ties)
    ranking = _rank(y_true, y_score, None, s["ties"], docids)
    gains = gain_values(ranking.labels, s["gain"])
    if s["ties"] == "average":
        gains = _tie_averaged(gains, ranking)
    values = gains * discount_values(ranking.ranks, s["discount"])
    return _single(_per_query_sum(values, ranking, _cutoffs(k, ranking.sizes)))


# -- binary-relevance metrics ------------------------------------------------


def precision_per_query(y_true, y_score, qid=None, k=10, *, relevance_threshold=1,
                        ties="stable", short_list="pad", docids=None):
    """Precision at ``k`` of each query.

    Parameters
    ----------
    relevance_threshold : float
        Labels ``>= relevance_threshold`` are relevant (LETOR: 1).
    ties : {"stable", "pessimistic", "optimistic", "average"}
        As in :func:`ndcg_per_query`; ``"average"`` gives the expected
        precision under random tie-breaking.
    short_list : {"pad", "truncate", "zero"}
        A query with ``n < k`` documents: divide by ``k`` (``"pad"``,
        trec_eval), divide by ``n`` (``"truncate"``) or score 0
        (``"zero"``, LETOR's Eval-Score).
    """
    ranking = _rank(y_true, y_score, qid, _check_ties(ties), docids)
    return _precision_from_ranking(ranking, k, relevance_threshold, ties, short_list)


def _precision_from_ranking(ranking, k, relevance_threshold, ties, short_list):
    kq = _cutoffs(k, ranking.sizes)
    relevant = (ranking.labels >= relevance_threshold).astype(np.float64)
    if ties == "average":
        relevant = _tie_averaged(relevant, ranking)
    hits = _per_query_sum(relevant, ranking, kq)
    if short_list == "pad":
        return hits / kq
    if short_list == "truncate":
        return hits / np.minimum(kq, ranking.sizes)
    if short_list == "zero":
        return np.where(ranking.sizes < kq, 0.0, hits / kq)
    raise ValueError(f"short_list must be 'pad', 'truncate' or 'zero', got {short_list!r}")


def _check_ties(ties, allow_average=True):
    allowed = _TIES if allow_average else _TIES[:4]
    if ties not in allowed:
        raise ValueError(f"ties must be one of {allowed}, got {ties!r}")
    return ties


def precision_short_list(convention):
    """The precision ``short_list`` rule that goes with an NDCG convention:
    LETOR scores a query shorter than k as 0, the others divide by k."""
    return "zero" if _settings(convention)["short_list"] == "zero" else "pad"


def precision_at_k(y_true, y_score, k=10, **options):
    """Precision at ``k`` of one query; keywords as in :func:`precision_per_query`."""
    return _single(precision_per_query(y_true, y_score, None, k, **options))


def mean_precision(y_true, y_score, qid, k=10, **options):
    """Mean precision at ``k`` over queries."""
    return nanmean(precision_per_query(y_true, y_score, qid, k, **options))


def _first_hits(ranking, relevance_threshold):
    relevant = ranking.labels >= relevance_threshold
    n_relevant = np.bincount(ranking.query, weights=relevant, minlength=len(ranking.sizes))
    return relevant, n_relevant


def average_precision_per_query(y_true, y_score, qid=None, *, relevance_threshold=1,
                                ties="stable", empty=0.0, docids=None):
    """Average precision of each query over its whole list.

    AP is the mean, over the relevant documents, of the precision at each
    one's rank (LETOR's MAP, trec_eval's ``map``). A query with no relevant
    document gets ``empty`` (0 in LETOR and trec_eval; ``"skip"`` gives NaN).
    """
    ranking = _rank(y_true, y_score, qid, _check_ties(ties, allow_average=False), docids)
    relevant, n_relevant = _first_hits(ranking, relevance_threshold)
    cum = np.cumsum(relevant)
    starts = np.r_[0, np.cumsum(ranking.sizes)[:-1]]
    before = np.r_[0, cum][starts][ranking.query]
    hits_so_far = cum - before
    precision = np.where(relevant, hits_so_far / ranking.ranks, 0.0)
    total = np.bincount(ranking.query, weights=precision, minlength=len(ranking.sizes))
    return _with_empty(total, n_relevant, empty)


def _with_empty(total, denominator, empty):
    out = np.divide(total, denominator, out=np.zeros_like(total), where=denominator > 0)
    out[denominator <= 0] = np.nan if empty == "skip" else float(empty)
    return out


def average_precision(y_true, y_score, **options):
    """Average precision of one query."""
    return _single(average_precision_per_query(y_true, y_score, None, **options))


def mean_average_precision(y_true, y_score, qid, **options):
    """MAP: mean average precision over queries."""
    return nanmean(average_precision_per_query(y_true, y_score, qid, **options))


def reciprocal_rank_per_query(y_true, y_score, qid=None, *, relevance_threshold=1,
                              ties="stable", empty=0.0):
    """``1 / rank`` of the first relevant document of each query (``empty``
    when there is none)."""
    ranking = _rank(y_true, y_score, qid, _check_ties(ties, allow_average=False))
    relevant, n_relevant = _first_hits(ranking, relevance_threshold)
    best = np.full(len(ranking.sizes), np.inf)
    np.minimum.at(best, ranking.query[relevant], ranking.ranks[relevant].astype(np.float64))
    return _with_empty(1.0 / best, (n_relevant > 0).astype(np.float64), empty)


def reciprocal_rank(y_true, y_score, **options):
    """Reciprocal rank of one query."""
    return _single(reciprocal_rank_per_query(y_true, y_score, None, **options))


def mean_reciprocal_rank(y_true, y_score, qid, **options):
    """MRR over queries."""
    return nanmean(reciprocal_rank_per_query(y_true, y_score, qid, **options))


def err_per_query(y_true, y_score, qid=None, k=None, *, max_label=None, ties="stable"):
    """Expected reciprocal rank (Chapelle et al. 2009) of each query.

    ``ERR@k = sum_r (1/r) R_r prod_{i<r} (1 - R_i)`` with the stopping
    probability ``R = (2**label - 1) / 2**max_label``. ``max_label``
    defaults to the largest label in ``y_true``; pass the top grade of the
    scale to compare across data sets.
    """
    ranking = _rank(y_true, y_score, qid, _check_ties(ties, allow_average=False))
    top = float(np.max(ranking.labels, initial=0.0)) if max_label is None else float(max_label)
    if len(ranking.labels) and np.max(ranking.labels) > top:
        raise ValueError(f"labels exceed max_label={max_label}")
    stop = (np.exp2(ranking.labels) - 1.0) / np.exp2(top)
    # R < 1 always, so log(1 - R) is finite; an exclusive per-query cumsum of
    # it gives the probability that the user reaches each rank.
    log_continue = np.log1p(-stop)
    cum = np.cumsum(log_continue)
    starts = np.r_[0, np.cumsum(ranking.sizes)[:-1]]
    before = np.r_[0.0, cum][starts][ranking.query]
    reach = np.exp(cum - log_continue - before)
    values = reach * stop / ranking.ranks
    return _per_query_sum(values, ranking, _cutoffs(k, ranking.sizes))


def err_at_k(y_true, y_score, k=None, **options):
    """ERR@k of one query."""
    return _single(err_per_query(y_true, y_score, None, k, **options))


def mean_err(y_true, y_score, qid, k=None, **options):
    """Mean ERR@k over queries."""
    return nanmean(err_per_query(y_true, y_score, qid, k, **options))


# -- linear NDCG (ECML/PKDD 2010 Discovery Challenge) ------------------------


def linear_dcg(y_true, y_score):
    """``sum_i r_i (n - i)`` over the ranked list of one query (i 1-based),
    the DCG of the ECML/PKDD 2010 Discovery Challenge; ties kept stable."""
    ranking = _rank(y_true, y_score, None, "stable")
    n = len(ranking.labels)
    return float(np.sum(ranking.labels * (n - ranking.ranks)))


def linear_ndcg(y_true, y_score):
    """Linear DCG divided by its ideal value (0 when the ideal is 0)."""
    y_true = np.asarray(y_true, dtype=np.float64)
    ideal = linear_dcg(y_true, y_true)
    return linear_dcg(y_true, y_score) / ideal if ideal > 0 else 0.0


def misordered_pair_loss(y_true, y_score):
    """``R(f) = sum_{a<b} (b - a) #{label-b document scored below a label-a one}``.

    Jin and Geng prove ``linear_dcg(ideal) - linear_dcg(f) == R(f)`` when
    scores have no ties. O(n log n): for each document, the label mass of
    documents strictly above it in score order with a lower label.
    """
    labels = np.asarray(y_true, dtype=np.float64)
    scores = np.asarray(y_score, dtype=np.float64)
    order = np.argsort(-scores, kind="stable")
    labels = labels[order]
    # a pair (i above j, label_i < label_j) costs label_j - label_i
    total = 0.0
    for value in np.unique(labels):
        below_count = np.cumsum(labels < value)  # documents above with a lower label
        mass = np.cumsum(np.where(labels < value, labels, 0.0))
        at = labels == value
        total += float(np.sum(value * below_count[at] - mass[at]))
    return total


# -- the LETOR table ---------------------------------------------------------


@dataclass
class LetorReport:
    """NDCG@1..k, P@1..k and MAP averaged over queries, as LETOR reports them."""

    ndcg: np.ndarray
    precision: np.ndarray
    map: float
    n_queries: int

    def as_dict(self):
        out = {f"NDCG@{i + 1}": float(v) for i, v in enumerate(self.ndcg)}
        out.update({f"P@{i + 1}": float(v) for i, v in enumerate(self.precision)})
        out["MAP"] = float(self.map)
        return out

    def __str__(self):
        rows = [("NDCG", self.ndcg), ("P", self.precision)]
        head = "\t".join(["metric"] + [f"@{i + 1}" for i in range(len(self.ndcg))])
        lines = [head] + [
            "\t".join([name] + [f"{v:.4f}" for v in values]) for name, values in rows
        ]
        lines.append(f"MAP\t{self.map:.4f}")
        return "\n".join(lines)


def letor_per_query(y_true, y_score, qid, *, max_k=10, convention=DEFAULT_CONVENTION,
                    docids=None, short_list=None):
    """Each query's NDCG@1..max_k, P@1..max_k and AP, the values behind
    :func:`letor_report` (its numbers are their means over queries) and the
    unit of a paired significance test (:mod:`rsrank.evaluation.stats`).
    ``short_list`` overrides the convention's NDCG rule for a query shorter
    than k (``"truncate"``: scored on what it holds, and its precision
    padded).

    Returns
    -------
    dict
        ``"qid"``: the queries' ids in increasing order; ``"NDCG@k"``,
        ``"P@k"`` and ``"MAP"``: one float array each, aligned with
        ``"qid"`` (NaN for a query that a convention with ``empty="skip"``
        leaves out).
    """
    s = _settings(convention, short_list=short_list)
    ranking = _rank(y_true, y_score, qid, s["ties"], docids)
    out = {"qid": ranking.qids}
    ks = range(1, max_k + 1)
    for k in ks:
        out[f"NDCG@{k}"] = _ndcg_from_ranking(ranking, k, s)
    short = "zero" if s["short_list"] == "zero" else "pad"
    for k in ks:
        out[f"P@{k}"] = _precision_from_ranking(ranking, k, 1, s["ties"], short)
    ap_ties = "stable" if s["ties"] == "average" else s["ties"]
    out["MAP"] = average_precision_per_query(y_true, y_score, qid, ties=ap_ties, docids=docids)
    return out


def letor_report(y_true, y_score, qid, *, max_k=10, convention=DEFAULT_CONVENTION,
                 docids=None):
    """The table LETOR's Eval-Score prints: NDCG@1..max_k, P@1..max_k and MAP.

    With ``convention="letor"`` (default) every number follows
    Eval-Score-3.0.pl: gain ``2**r - 1``, no discount at ranks 1-2 and
    ``1/log2(r)`` after, 0 for a query without relevant documents or shorter
    than k, file order among tied scores, labels >= 1 relevant for P@k and
    MAP. Other conventions change NDCG's keywords; precision then divides by
    ``k`` for short lists (trec_eval) instead of scoring them 0.
    """
    values = letor_per_query(y_true, y_score, qid, max_k=max_k, convention=convention,
                             docids=docids)
    ks = range(1, max_k + 1)
    return LetorReport(np.array([nanmean(values[f"NDCG@{k}"]) for k in ks]),
                       np.array([nanmean(values[f"P@{k}"]) for k in ks]),
                       nanmean(values["MAP"]), len(values["qid"]))
