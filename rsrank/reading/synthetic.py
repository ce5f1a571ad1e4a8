"""Synthetic LETOR-like data generated from a known sparse linear model.

Used for the bundled dataset in ``data/`` and for tests that need a ground
truth: which features carry signal is known, so sparsity recovery can be
measured.
"""

import json
from numbers import Integral, Real
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch, check_random_state
from sklearn.utils.validation import check_scalar

from ._files import atomic_write_text
from ..clicks.log import MAX_POSITION
from .querydata import check_labels
from ..evaluation.writers import letor_lines, write_lines

__all__ = ["make_letor_like", "make_mslr_like", "make_web_like", "make_raw_features",
           "make_nonlinear", "make_interactions", "make_edge_values", "write_letor_folds",
           "simulate_clicks", "examination_curve", "click_chance", "CLICK_MODELS"]


def make_letor_like(n_queries=100, docs_per_query=(50, 250), n_features=45, n_informative=8,
                    n_redundant=4, n_constant=9, noise=1.0, decimals=2, random_state=0):
    """Queries of documents whose labels follow a sparse linear score.

    Each query draws ``docs_per_query`` documents (log-uniform between the
    two bounds). Features are Gaussian, normalised to [0, 1] per query and
    feature (LETOR's QueryLevelNorm), then rounded to ``decimals``.
    ``n_informative`` features carry the true weights; ``n_redundant``
    features are noisy copies of informative ones (correlated, but with true
    weight 0); ``n_constant`` features are 0 everywhere, like OHSUMED's
    constant columns; the rest is noise. The latent relevance is ``X @ coef``
    plus Gaussian noise of standard deviation ``noise``; within each query the
    top fraction (random between 5% and 20%) gets label 2 and the next
    fraction (5% to 25%) label 1.

    Returns
    -------
    Bunch
        ``X`` (dense float64), ``y`` (int64), ``qid`` (int64, contiguous),
        ``coef`` (true weights), ``support`` (0-based column indices of the
        non-zero weights), ``redundant`` (``{column: informative column it
        copies}``) and ``constant`` (column indices).
    """
    rng = check_random_state(random_state)
    if n_informative + n_redundant + n_constant > n_features:
        raise ValueError("n_informative + n_redundant + n_constant exceeds n_features")
    columns = rng.permutation(n_features)
    support = np.sort(columns[:n_informative])
    redundant_cols = columns[n_informative:n_informative + n_redundant]
    constant = np.sort(columns[n_informative + n_redundant:
                               n_informative + n_redundant + n_constant])
    copies = {int(c): int(rng.choice(support)) for c in redundant_cols}
    noise_cols = np.sort(columns[n_informative + n_redundant + n_constant:])
    coef = np.zeros(n_features)
    magnitudes = rng.uniform(1.0, 3.0, size=n_informative)
    coef[support] = magnitudes * rng.choice([-1.0, 1.0], size=n_informative, p=[0.25, 0.75])

    low, high = docs_per_query
    # Log-uniform: most queries short, a tail of long ones.
    sizes = np.floor(np.exp(rng.uniform(np.log(low), np.log(high + 1), size=n_queries)))
    sizes = sizes.astype(np.int64)
    blocks_X, blocks_y = [], []
    for size in sizes:
        # Zero-inflated like term-frequency features: about 60% of the values
        # are 0, 80% in the noise columns.
        raw = np.maximum(rng.standard_normal((size, n_features)) - 0.25, 0.0)
        raw[:, noise_cols] *= rng.uniform(size=(size, len(noise_cols))) < 0.5
        for column, source in copies.items():
            raw[:, column] = np.maximum(raw[:, source] + 0.5 * rng.standard_normal(size), 0.0)
        span = raw.max(axis=0) - raw.min(axis=0)
        X = (raw - raw.min(axis=0)) / np.where(span > 0, span, 1.0)
        X[:, constant] = 0.0
        X = np.round(X, decimals)
        # Noise columns carry one decimal less: they hold no signal, and the
        # bundled files stay small.
        X[:, noise_cols] = np.round(X[:, noise_cols], max(decimals - 1, 0))
        latent = X @ coef + noise * rng.standard_normal(size)
        order = np.argsort(-latent, kind="stable")
        n_top = max(1, int(round(rng.uniform(0.05, 0.20) * size)))
        n_mid = int(round(rng.uniform(0.05, 0.25) * size))
        y = np.zeros(size, dtype=np.int64)
        y[order[:n_top]] = 2
        y[order[n_top:n_top + n_mid]] = 1
        blocks_X.append(X)
        blocks_y.append(y)
    qid = np.repeat(np.arange(1, n_queries + 1, dtype=np.int64), sizes)
    return Bunch(X=np.vstack(blocks_X), y=np.concatenate(blocks_y), qid=qid, coef=coef,
                 support=support, redundant=copies, constant=constant)


def write_letor_folds(data, directory, n_folds=5, decimals=2):
    """Write ``Fold1..Fold{n_folds}/{train,vali,test}.txt.gz`` in LETOR's layout.

    Queries are cut into ``n_folds`` consecutive parts. As in LETOR 3.0,
    Fold k tests on part k, validates on part k+4 and trains on parts
    k+1..k+3 (modulo ``n_folds``; shown for 5 folds).
    """
    directory = Path(directory)
    queries = np.unique(data.qid)
    parts = np.array_split(queries, n_folds)
    part_lines = []
    for part in parts:
        rows = np.flatnonzero(np.isin(data.qid, part))
        part_lines.append(letor_lines(data.X[rows], data.y[rows], data.qid[rows],
                                      docids=rows + 1, decimals=decimals))
    for fold in range(n_folds):
        target = directory / f"Fold{fold + 1}"
        target.mkdir(parents=True, exist_ok=True)
        train = [line for step in (1, 2, 3) for line in part_lines[(fold + step) % n_folds]]
        write_lines(target / "train.txt.gz", train)
        write_lines(target / "vali.txt.gz", part_lines[(fold + 4) % n_folds])
        write_lines(target / "test.txt.gz", part_lines[fold])
    truth = {
        "n_features": int(data.X.shape[1]),
        "coef": [float(v) for v in data.coef],
        "support": [int(c) for c in data.support],
        "redundant": {str(k): int(v) for k, v in data.redundant.items()},
        "constant": [int(c) for c in data.constant],
        "note": "column indices are 0-based; feature j in the files is column j - 1",
    }
    atomic_write_text(directory / "truth.json", json.dumps(truth, indent=2) + "\n")


# Label shares of MSLR-WEB30K (grades 0-4), rounded.
MSLR_LABEL_SHARES = (0.514, 0.325, 0.134, 0.019, 0.008)


def make_mslr_like(n_documents=3_771_125, n_queries=31_531, n_features=136, n_informative=20,
                   max_docs_per_query=1251, noise=1.0, dtype=np.float32, random_state=0,
                   teacher="linear"):
    """Data at the shape of MSLR-WEB30K, generated in memory.

    ``n_queries`` queries with a long-tailed (log-normal, median about 100)
    number of documents summing to ``n_documents``, at most
    ``max_docs_per_query``; Gaussian features of ``dtype`` (float32 keeps
    the full shape at about 2 GB); labels 0-4 in MSLR-WEB30K's proportions
    from a sparse score plus noise. Queries are contiguous and in qid
    order.

    ``teacher``: ``"linear"``, the score is ``X @ coef``; ``"nonlinear"``,
    each informative feature enters through a shape of its own (in turn a
    square, an absolute value, a step at 0.5 and a saturating ``tanh(2x)``,
    each times its ``coef``) and the first pairs of them through products,
    which no linear ranker can follow (the same data otherwise, ``coef``
    the shapes' factors).

    Returns
    -------
    Bunch with ``X`` (dense, C order), ``y``, ``qid``, ``coef``.
    """
    rng = np.random.default_rng(random_state)
    if n_queries > n_documents:
        raise ValueError("n_queries exceeds n_documents")
    raw = rng.lognormal(mean=np.log(100.0), sigma=0.7, size=n_queries)
    sizes = np.clip(np.round(raw * n_documents / raw.sum()), 1, max_docs_per_query).astype(np.int64)
    # fix the rounding so the sizes sum exactly to n_documents
    while sizes.sum() != n_documents:
        gap = n_documents - int(sizes.sum())
        room = np.flatnonzero(sizes < max_docs_per_query) if gap > 0 else np.flatnonzero(sizes > 1)
        chosen = rng.choice(room, size=min(abs(gap), len(room)), replace=False)
        sizes[chosen] += np.sign(gap)
    X = rng.standard_normal((n_documents, n_features), dtype=np.float32).astype(dtype, copy=False)
    coef = np.zeros(n_features)
    support = rng.choice(n_features, size=n_informative, replace=False)
    coef[support] = rng.normal(size=n_informative)
    if teacher == "linear":
        signal = X @ coef.astype(X.dtype)
    elif teacher == "nonlinear":
        signal = _shaped_score(X, support, coef)
    else:
        raise ValueError(f"teacher must be 'linear' or 'nonlinear', got {teacher!r}")
    latent = signal + noise * rng.standard_normal(n_documents, dtype=np.float32)
    cuts = np.quantile(latent, np.cumsum(MSLR_LABEL_SHARES[::-1])[:-1])
    y = (len(MSLR_LABEL_SHARES) - 1 - np.searchsorted(cuts, latent)).astype(np.int64)
    qid = np.repeat(np.arange(1, n_queries + 1, dtype=np.int64), sizes)
    return Bunch(X=X, y=y, qid=qid, coef=coef)


#: the shapes of :func:`make_mslr_like`'s non-linear teacher, in turn
_SHAPES = (np.square, np.abs, lambda v: (v > 0.5).astype(v.dtype), lambda v: np.tanh(2 * v))


def _shaped_score(X, support, coef):
    """The non-linear teacher of :func:`make_mslr_like`: each informative
    feature through its shape, centred, and the products of its first
    pairs, in float32."""
    score = np.zeros(X.shape[0], dtype=np.float32)
    for k, j in enumerate(support):
        column = X[:, j]
        shaped = _SHAPES[k % len(_SHAPES)](column).astype(np.float32)
        score += np.float32(coef[j]) * (shaped - shaped.mean())
    for a, b in zip(support[0:8:2], support[1:8:2]):
        score += np.float32(abs(coef[a]) + abs(coef[b])) * X[:, a] * X[:, b]
    return score


#: the column families of :func:`make_web_like`, in turn over the columns
WEB_FAMILIES = ("score", "count", "length", "fraction", "popularity", "binary", "query")
#: the shapes of :func:`make_web_like`'s truth, on a column's quantile u
#: (0 to 1), each with its own random constant c
_WEB_SHAPES = {
    "saturating": lambda u, c: np.log1p(20 * u) / np.log(21.0),
    "threshold": lambda u, c: (u > 0.6 + 0.35 * c).astype(np.float64),
    "bump": lambda u, c: np.exp(-((u - 0.3 - 0.4 * c) / 0.15) ** 2),
    "top": lambda u, c: u ** 4,
    "sigmoid": lambda u, c: 1 / (1 + np.exp(-25 * (u - 0.7 - 0.25 * c))),
    "decreasing": lambda u, c: -np.square(u),
}
#: the pairwise effects of :func:`make_web_like`'s truth, on two quantiles
_WEB_PAIRS = {
    "and": lambda a, b: ((a > 0.8) & (b > 0.5)).astype(np.float64),
    "switch": lambda a, b: (a - 0.5) * np.sign(b - 0.5),  # b a query column
    "min": lambda a, b: np.square(np.minimum(a, b)),
    "agreement": lambda a, b: -np.abs(a - b),
    "xor": lambda a, b: ((a > 0.5) == (b > 0.5)) - 0.5,
}


def make_web_like(n_documents=3_771_125, n_queries=31_531, n_features=136, n_informative=16,
                  noise=1.0, random_state=0):
    """Web-search-like data at MSLR-WEB30K's shape whose truth is a sum of
    shapes and pairwise effects (a GA2M) over columns of mixed families: a
    generator unlike :func:`make_mslr_like` in its features, its shapes
    and its pairs, to check a recipe on data it was not tuned on.

    * Query sizes: gamma (shape 1.5) around ``n_documents / n_queries``,
      1 to 1,251 documents, summing to ``n_documents``.
    * Columns, by :data:`WEB_FAMILIES` in turn: a BM25-like ``score``
      (gamma-like, non-negative) and a term ``count`` (Poisson, absent in
      about 40% of the documents), both driven by a hidden topicality of
      the document, so that these columns are correlated as a score over
      body, title and anchor text are; a ``length`` in words (log-normal
      integers); a ``fraction`` (beta(2, 5)); a ``popularity`` around 1e-6
      with a Pareto tail (as PageRank); a ``binary`` flag; a ``query``
      column, constant within a query (as a query's length).
    * The truth: ``n_informative`` document columns, each through a shape
      of its quantile (saturating, a threshold, a bump, the top tail only,
      a sigmoid, decreasing), and six pairwise effects (both above
      thresholds, a document column's effect switched by a query column,
      the smaller of two, the agreement of two, a checkerboard, and a
      second AND), with log-normal weights and random signs. The truth and
      the columns' parameters come from a random stream of their own, so
      data of every size from one ``random_state`` share them.
    * Relevance: the truth scaled to unit variance, plus a query effect
      (normal, standard deviation 0.5: queries differ in how many of their
      documents are relevant) and Gaussian noise of standard deviation
      ``noise``; labels 0-4 in MSLR-WEB30K's shares, cut over all rows (so
      some queries have no relevant document).

    Returns
    -------
    Bunch with ``X`` (float32, C order), ``y``, ``qid`` (contiguous, in
    order), ``families`` (each column's), ``informative`` (the columns of
    the shapes) and ``pairs`` (each pair's two columns and effect).
    """
    check_scalar(n_documents, "n_documents", Integral, min_val=1)
    check_scalar(n_queries, "n_queries", Integral, min_val=1)
    check_scalar(n_features, "n_features", Integral, min_val=len(WEB_FAMILIES))
    document_columns = n_features - n_features // len(WEB_FAMILIES)  # not of queries
    check_scalar(n_informative, "n_informative", Integral, min_val=1, max_val=document_columns)
    check_scalar(noise, "noise", Real, min_val=0)
    if n_queries > n_documents:
        raise ValueError("n_queries exceeds n_documents")
    # the truth (columns' parameters, shapes, pairs, weights) from a stream
    # of its own, so that every size of one random_state shares it
    truth = np.random.default_rng([random_state, 1])
    rng = np.random.default_rng([random_state, 2])
    raw = rng.gamma(1.5, size=n_queries)
    sizes = np.clip(np.round(raw * n_documents / raw.sum()), 1, 1251).astype(np.int64)
    while sizes.sum() != n_documents:
        gap = n_documents - int(sizes.sum())
        room = np.flatnonzero(sizes < 1251) if gap > 0 else np.flatnonzero(sizes > 1)
        chosen = rng.choice(room, size=min(abs(gap), len(room)), replace=False)
        sizes[chosen] += np.sign(gap)
    qid = np.repeat(np.arange(1, n_queries + 1, dtype=np.int64), sizes)
    topical = rng.standard_normal(n_documents)
    families = [WEB_FAMILIES[j % len(WEB_FAMILIES)] for j in range(n_features)]
    X = np.empty((n_documents, n_features), dtype=np.float32)
    for j, family in enumerate(families):
        X[:, j] = _web_column(family, rng, truth.uniform(size=2), topical, sizes)
    documents = [j for j, family in enumerate(families) if family != "query"]
    informative = truth.choice(documents, size=n_informative, replace=False)
    quantile = {}

    def u(j):
        if j not in quantile:  # mid-ranks: tied values share their quantile
            _, at, counts = np.unique(X[:, j], return_inverse=True, return_counts=True)
            quantile[j] = ((np.cumsum(counts) - counts / 2) / n_documents)[at]
        return quantile[j]

    signal = np.zeros(n_documents)
    shapes = list(_WEB_SHAPES)
    for k, j in enumerate(informative):
        weight = truth.lognormal(0.0, 0.5) * truth.choice([-1.0, 1.0])
        signal += weight * _WEB_SHAPES[shapes[k % len(shapes)]](u(j), truth.uniform())
    query_columns = [j for j, family in enumerate(families) if family == "query"]
    pairs = []
    for effect, (a, b) in zip(("and", "switch", "min", "agreement", "xor", "and"),
                              ((0, 1), (2, None), (3, 4), (5, 6), (7, 8), (9, 10))):
        first = int(informative[a % n_informative])
        second = (int(truth.choice(query_columns)) if b is None
                  else int(informative[b % n_informative]))
        weight = 2 * truth.lognormal(0.0, 0.5) * truth.choice([-1.0, 1.0])
        signal += weight * _WEB_PAIRS[effect](u(first), u(second))
        pairs.append((first, second, effect))
    signal = (signal - signal.mean()) / signal.std()
    latent = (signal + np.repeat(rng.normal(0.0, 0.5, n_queries), sizes)
              + noise * rng.standard_normal(n_documents))
    cuts = np.quantile(latent, np.cumsum(MSLR_LABEL_SHARES[::-1])[:-1])
    y = (len(MSLR_LABEL_SHARES) - 1 - np.searchsorted(cuts, latent)).astype(np.int64)
    return Bunch(X=X, y=y, qid=qid, families=families, informative=np.sort(informative),
                 pairs=pairs)


def _web_column(family, rng, own, topical, sizes):
    """One column of :func:`make_web_like` of ``family``, ``own`` its two
    parameters (uniform on 0 to 1)."""
    n = len(topical)
    if family == "score":
        share = 0.3 + 0.6 * own[0]
        mixed = share * topical + np.sqrt(1 - share ** 2) * rng.standard_normal(n)
        return np.maximum(0.0, 8 + 4 * mixed + rng.gamma(2.0, 1.0, n))
    if family == "count":
        present = rng.uniform(size=n) < 0.6
        rate = np.exp(0.5 + (0.3 + 0.6 * own[0]) * topical + rng.normal(0, 0.5, n))
        return rng.poisson(rate * present)
    if family == "length":
        return np.round(np.exp(rng.normal(6.0, 1.0, n)))
    if family == "fraction":
        return rng.beta(2.0, 5.0, n)
    if family == "popularity":
        return 1e-6 * (1 + rng.pareto(1.5, n))
    if family == "binary":
        return rng.uniform(size=n) < 0.05 + 0.45 * own[1]
    return np.repeat(rng.poisson(3.0, len(sizes)) + 1, sizes)  # "query"


RAW_FEATURE_NAMES = ("bm25_title", "bm25_body", "pagerank", "doc_length", "clicks")


def make_raw_features(n_queries=200, docs_per_query=(20, 60), random_state=0):
    """Queries with raw, unscaled features as a search engine logs them.

    Features (in this order, names in ``feature_names``): BM25 of the title
    and of the body (about 2 to 30), PageRank (around 1e-6), document
    length in words (50 to 8,000, no signal) and click counts (0 to a few
    hundred, heavy-tailed). The latent relevance is a linear function of the
    standardised BM25 scores, log PageRank and log clicks plus noise; within
    each query it is cut into labels 0-3. A linear ranker on these raw
    features fails unless they are scaled: document length spans thousands
    and PageRank a millionth.

    Returns
    -------
    Bunch
        ``X`` (dense float64, raw values), ``y``, ``qid`` (contiguous) and
        ``feature_names``.
    """
    rng = check_random_state(random_state)
    low, high = docs_per_query
    sizes = rng.randint(low, high + 1, size=n_queries)
    n = int(sizes.sum())
    relevance_seed = rng.normal(size=n)
    bm25_title = np.clip(10 + 5 * relevance_seed + rng.normal(scale=4, size=n), 2, 30)
    bm25_body = np.clip(12 + 4 * relevance_seed + rng.normal(scale=5, size=n), 2, 30)
    log_pagerank = -14 + 0.8 * relevance_seed + rng.normal(scale=1.0, size=n)
    pagerank = np.exp(log_pagerank)
    doc_length = np.round(np.exp(rng.uniform(np.log(50), np.log(8000), size=n)))
    clicks = rng.poisson(np.exp(1.5 + 0.7 * relevance_seed + rng.normal(scale=0.5, size=n)))
    X = np.column_stack([bm25_title, bm25_body, pagerank, doc_length, clicks]).astype(np.float64)
    latent = (0.35 * (bm25_title - 10) / 5 + 0.25 * (bm25_body - 12) / 4
              + 0.2 * (log_pagerank + 14) + 0.3 * np.log1p(clicks) + rng.normal(scale=0.6, size=n))
    qid = np.repeat(np.arange(1, n_queries + 1), sizes)
    y = _labels_within_queries(latent, sizes)
    return Bunch(X=X, y=y, qid=qid.astype(np.int64), feature_names=list(RAW_FEATURE_NAMES))


def _labels_within_queries(latent, sizes):
    """Labels 0-3: each query's latent relevance cut at its 50%, 80% and
    95% quantiles."""
    y = np.zeros(len(latent), dtype=np.int64)
    start = 0
    for size in sizes:
        block = latent[start:start + size]
        y[start:start + size] = np.searchsorted(np.quantile(block, [0.5, 0.8, 0.95]), block)
        start += size
    return y


#: The informative features of :func:`make_nonlinear`, in column order
NONLINEAR_NAMES = ["peaked", "step", "saturating", "heavy_tailed"]


def make_nonlinear(n_queries=300, docs_per_query=(20, 60), n_noise=16, noise=0.5,
                   random_state=0):
    """Queries whose relevance is a sum of non-linear effects of four
    features, which no linear ranker can express, plus noise features.

    * ``peaked`` (uniform on 0 to 10): best in the middle, ``-(x - 5)^2 / 4``,
      as document length often is;
    * ``step`` (uniform on 0 to 1): ``+1.5`` above 0.7 and nothing below, as
      freshness within a window;
    * ``saturating`` (exponential, mean 3): ``2 (1 - exp(-x))``, as a count
      whose first few matter;
    * ``heavy_tailed`` (log-normal, spanning five decades): ``log(1 + x) / 2``,
      as clicks;
    * ``n_noise`` features (``noise_1`` ...) drawn alike (uniform, normal,
      exponential, log-normal in turn) with no effect.

    The latent relevance is the sum of the effects plus Gaussian noise of
    standard deviation ``noise``; within each query it is cut into labels
    0-3 at its 50%, 80% and 95% quantiles.

    Returns
    -------
    Bunch
        ``X`` (dense float64), ``y``, ``qid`` (contiguous), ``feature_names``
        and ``informative`` (the columns with an effect: 0 to 3).
    """
    rng = check_random_state(random_state)
    low, high = docs_per_query
    sizes = rng.randint(low, high + 1, size=n_queries)
    n = int(sizes.sum())
    peaked = rng.uniform(0, 10, n)
    step = rng.uniform(0, 1, n)
    saturating = rng.exponential(3.0, n)
    heavy = np.exp(rng.normal(2.0, 2.0, n))
    draws = [lambda: rng.uniform(0, 10, n), lambda: rng.normal(0, 1, n),
             lambda: rng.exponential(3.0, n), lambda: np.exp(rng.normal(2.0, 2.0, n))]
    noise_columns = [draws[k % 4]() for k in range(n_noise)]
    X = np.column_stack([peaked, step, saturating, heavy, *noise_columns])
    latent = (-(peaked - 5) ** 2 / 4 + 1.5 * (step > 0.7) + 2 * (1 - np.exp(-saturating))
              + np.log1p(heavy) / 2 + rng.normal(scale=noise, size=n))
    qid = np.repeat(np.arange(1, n_queries + 1), sizes)
    y = _labels_within_queries(latent, sizes)
    names = NONLINEAR_NAMES + [f"noise_{k + 1}" for k in range(n_noise)]
    return Bunch(X=X, y=y, qid=qid.astype(np.int64), feature_names=names,
                 informative=np.arange(len(NONLINEAR_NAMES)))


#: The pairwise effects :func:`make_interactions` can make: each is a
#: function of two features drawn uniform on [-1, 1], and none but ``"and"``
#: has a main effect (its mean over one feature is the same whatever the
#: other's value)
INTERACTIONS = {
    # both above a threshold: the AND of two conditions, as "fresh and popular"
    "and": lambda a, b: 2.0 * ((a > 0.2) & (b > 0.2)),
    # a product of centred features: no main effect at all
    "product": lambda a, b: 1.5 * a * b,
    # the same sign: a checkerboard, no main effect, no monotone direction
    "xor": lambda a, b: 1.5 * ((a > 0) == (b > 0)),
    # one feature's effect switched by the other: +a when b > 0, -a else
    "switch": lambda a, b: 1.5 * a * np.sign(b),
}


def make_interactions(effects=("and", "product"), n_queries=300, docs_per_query=(20, 60),
                      n_main=2, n_noise=12, noise=0.3, random_state=0):
    """Queries whose relevance holds pairwise effects: relevance that
    depends on two features at once, which no sum of one-feature shapes can
    express when the effect has no main effect.

    Each of ``effects`` (names of :data:`INTERACTIONS`) gets a pair of its
    own features, uniform on [-1, 1]: ``and`` (both above 0.2), ``product``
    (``a b``), ``xor`` (the same sign), ``switch`` (``a`` times the sign of
    ``b``). ``n_main`` features have a one-feature effect
    (``main_k``: ``0.5 x`` on a uniform feature), and ``n_noise`` features
    (``noise_k``) none. The latent relevance is the sum of the effects plus
    Gaussian noise of standard deviation ``noise``; within each query it is
    cut into labels 0-3 at its 50%, 80% and 95% quantiles.

    Returns
    -------
    Bunch
        ``X`` (dense float64), ``y``, ``qid`` (contiguous), ``feature_names``,
        ``pairs`` (the column pairs of the effects, in ``effects``' order) and
        ``informative`` (every column with an effect).
    """
    unknown = [name for name in effects if name not in INTERACTIONS]
    if unknown or not effects:
        raise ValueError(f"effects must name some of {sorted(INTERACTIONS)}, got {effects!r}")
    rng = check_random_state(random_state)
    low, high = docs_per_query
    sizes = rng.randint(low, high + 1, size=n_queries)
    n = int(sizes.sum())
    columns, names, pairs, latent = [], [], [], rng.normal(scale=noise, size=n)
    for name in effects:
        a, b = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
        pairs.append((len(columns), len(columns) + 1))
        columns += [a, b]
        names += [f"{name}_a", f"{name}_b"] if names.count(f"{name}_a") == 0 else [
            f"{name}{len(pairs)}_a", f"{name}{len(pairs)}_b"]
        latent += INTERACTIONS[name](a, b)
    for k in range(n_main):
        x = rng.uniform(-1, 1, n)
        columns.append(x)
        names.append(f"main_{k + 1}")
        latent += 0.5 * x
    informative = np.arange(len(columns))
    for k in range(n_noise):
        columns.append(rng.uniform(-1, 1, n))
        names.append(f"noise_{k + 1}")
    qid = np.repeat(np.arange(1, n_queries + 1), sizes)
    return Bunch(X=np.column_stack(columns), y=_labels_within_queries(latent, sizes),
                 qid=qid.astype(np.int64), feature_names=names, pairs=pairs,
                 informative=informative)


#: The features of :func:`make_edge_values`, in column order
EDGE_NAMES = ["signed", "pagerank", "subnormal", "huge", "counts", "signed_zero",
              "nonpositive"]


def make_edge_values(n_queries=60, docs_per_query=(10, 30), random_state=0):
    """Queries whose features hold the values that engines compare
    differently: where an exported tree's thresholds are hardest to keep.

    * ``signed``: normal, half its values negative, so 0 (a missing
      feature) lies between thresholds;
    * ``pagerank``: around 1e-6 (log-normal), thresholds of Solr's 1e-6
      slack's size;
    * ``subnormal``: float32 subnormals (about 1e-42) and zeros;
    * ``huge``: up to 3e38, near float32's largest value;
    * ``counts``: small integers, 0 in about half the documents;
    * ``signed_zero``: -1, -0.0, 0.0 and 1, with both zeros;
    * ``nonpositive``: negative (log-normal) or 0, so 0 is the top bin.

    Every feature carries signal (labels 0-3 per query, as in
    :func:`make_nonlinear`).

    Returns
    -------
    Bunch
        ``X`` (dense float64), ``y``, ``qid`` (contiguous), ``feature_names``.
    """
    rng = check_random_state(random_state)
    low, high = docs_per_query
    sizes = rng.randint(low, high + 1, size=n_queries)
    n = int(sizes.sum())
    signed = rng.normal(0, 1, n)
    pagerank = np.exp(rng.normal(np.log(1e-6), 1.0, n))
    subnormal = rng.randint(0, 2000, n) * 1e-45 * (rng.uniform(size=n) < 0.7)
    huge = np.exp(rng.uniform(np.log(1e30), np.log(3e38), n))
    counts = rng.poisson(0.8, n).astype(np.float64)
    signed_zero = rng.choice([-1.0, -0.0, 0.0, 1.0], n)
    nonpositive = -np.exp(rng.normal(0, 1, n)) * (rng.uniform(size=n) < 0.7)
    X = np.column_stack([signed, pagerank, subnormal, huge, counts, signed_zero, nonpositive])
    latent = (np.abs(signed) - 0.8 + np.log(pagerank / 1e-6) / 2 + (subnormal > 1e-42)
              + np.log(huge / 1e30) / 10 + np.minimum(counts, 2) / 2
              + 0.7 * np.signbit(signed_zero) + np.cos(nonpositive)
              + rng.normal(scale=0.5, size=n))
    qid = np.repeat(np.arange(1, n_queries + 1), sizes)
    return Bunch(X=X, y=_labels_within_queries(latent, sizes), qid=qid.astype(np.int64),
                 feature_names=list(EDGE_NAMES))


# -- click logs ------------------------------------------------------------------------------

#: the user models of :func:`simulate_clicks`
CLICK_MODELS = ("position", "cascade")


def examination_curve(top_k=10, eta=1.0):
    """The position-based model's chance that a user examines each of
    positions 1 to ``top_k``: ``(1 / k) ** eta`` (Joachims, Swaminathan and
    Schnabel, WSDM 2017); ``eta`` 0 examines every position."""
    return (1.0 / np.arange(1, top_k + 1)) ** float(eta)


def click_chance(y, max_grade, noise=0.1):
    """The chance that a user clicks an examined document of grade ``y``:
    ``noise + (1 - noise) (2**y - 1) / (2**max_grade - 1)``, so that an
    irrelevant document draws a click now and then and the best one
    always."""
    y = np.clip(np.asarray(y, dtype=np.float64), 0, max_grade)
    return noise + (1.0 - noise) * (2.0 ** y - 1.0) / max(2.0 ** max_grade - 1.0, 1.0)


def _simulation(y, qid, scores, docids, n_sessions, click_model, eta, top_k, noise,
                max_grade):
    """:func:`simulate_clicks`' arguments checked, as scikit-learn checks an
    estimator's: ``(y, qid, scores, docids, sessions per query, max_grade)``."""
    if click_model not in CLICK_MODELS:
        raise ValueError(f"click_model must be one of {CLICK_MODELS}, got {click_model!r}")
    y = check_labels(y, len(y) if np.ndim(y) == 1 else -1)
    qid = np.asarray(qid)
    scores = np.asarray(scores, dtype=np.float64)
    if not (qid.shape == scores.shape == y.shape):
        raise ValueError(f"y, qid and scores have {len(y)}, {len(qid)} and {len(scores)} rows")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores must be finite: the production ranker orders by them")
    docids = np.arange(len(y)) if docids is None else np.asarray(docids)
    if docids.shape != y.shape:
        raise ValueError(f"docids must be one per row ({len(y)}), got shape {docids.shape}")
    check_scalar(eta, "eta", Real, min_val=0.0)
    check_scalar(noise, "noise", Real, min_val=0.0, max_val=1.0)
    check_scalar(top_k, "top_k", Integral, min_val=1, max_val=MAX_POSITION)
    for name, value in (("eta", eta), ("noise", noise)):
        if not np.isfinite(value):
            raise ValueError(f"{name} must be finite, got {value}")
    top = int(y.max()) if len(y) else 0
    if max_grade is None:
        max_grade = top
    check_scalar(max_grade, "max_grade", Integral, min_val=max(top, 0))
    queries = np.unique(qid)
    sessions = np.asarray(n_sessions)
    if sessions.ndim > 1 or (sessions.ndim == 1 and len(sessions) != len(queries)):
        raise ValueError(f"n_sessions must be one number or one per query ({len(queries)}), "
                         f"got shape {sessions.shape}")
    if sessions.dtype.kind not in "iu" or np.any(sessions < 0):
        raise ValueError("n_sessions must hold whole numbers of sessions, at least 0")
    sessions = np.broadcast_to(sessions.astype(np.int64), queries.shape)
    rows = float(sessions.sum()) * min(top_k, len(y))
    if rows > MAX_SIMULATED_ROWS:
        raise ValueError(f"the log would have up to {rows:.3g} rows, more than "
                         f"{MAX_SIMULATED_ROWS:.0e}: ask for fewer sessions or a smaller top_k")
    return y, qid, scores, docids, sessions, int(max_grade)


#: the most rows :func:`simulate_clicks` draws (sessions times the documents
#: each shows)
MAX_SIMULATED_ROWS = 10**9


def simulate_clicks(y, qid, scores, *, n_sessions=50, click_model="position", eta=1.0,
                    top_k=10, noise=0.1, max_grade=None, docids=None, random_state=None):
    """A click log of a production ranker's result lists on labeled queries.

    Every session of a query shows the same list, the ``top_k`` documents of
    the production ranker's ``scores`` (ties by row order), at positions 1
    to ``top_k``; the ranker is deterministic, as in most engines' logs.

    * ``click_model="position"``: a user examines position ``k`` with the
      chance :func:`examination_curve` gives, independently of the
      document, and clicks an examined document with its
      :func:`click_chance`.
    * ``click_model="cascade"``: a user reads from the top, clicks each
      document read with its :func:`click_chance`, and leaves after the
      first click (so a document's clicks depend on the documents above it,
      which the position-based model does not allow).

    Parameters
    ----------
    y, qid : array-like of shape (n_rows,)
        The grades (0 to ``max_grade``, default the largest) and queries.
    scores : array-like of shape (n_rows,)
        The production ranker's scores.
    n_sessions : int or array-like of shape (n_queries,)
        Sessions per query (one number, or one per query in the order of
        ``np.unique(qid)``).
    docids : array-like of shape (n_rows,), optional
        Each row's document id (default its row number).

    Returns
    -------
    Bunch
        One row per document shown in a session: ``session``, ``qid``,
        ``docid``, ``position`` (1 is the top) and ``click`` (0 or 1); and
        ``examination``, the true chance of examining each position (the
        position-based model's; None for the cascade).
    """
    y, qid, scores, docids, sessions, max_grade = _simulation(
        y, qid, scores, docids, n_sessions, click_model, eta, top_k, noise, max_grade)
    rng = check_random_state(random_state)
    queries = np.unique(qid)
    seen = examination_curve(top_k, eta)
    out = {name: [] for name in ("session", "qid", "docid", "position", "click")}
    first = 0
    for query, count in zip(queries, sessions):
        rows = np.flatnonzero(qid == query)
        shown = rows[np.lexsort((rows, -scores[rows]))][:top_k]  # by score, ties by row
        k = len(shown)
        chance = click_chance(y[shown], max_grade, noise)
        attracted = rng.uniform(size=(count, k)) < chance
        if click_model == "position":
            clicks = attracted & (rng.uniform(size=(count, k)) < seen[:k])
        else:  # read down to the first document that draws a click
            first_click = np.where(attracted.any(axis=1), attracted.argmax(axis=1), k)
            clicks = np.arange(k) == first_click[:, None]
        out["session"].append(np.repeat(np.arange(first, first + count), k))
        out["qid"].append(np.full(count * k, query))
        out["docid"].append(np.tile(docids[shown], count))
        out["position"].append(np.tile(np.arange(1, k + 1), count))
        out["click"].append(clicks.astype(np.int64).ravel())
        first += count
    log = {name: np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
           for name, parts in out.items()}
    return Bunch(**log, examination=seen if click_model == "position" else None)

