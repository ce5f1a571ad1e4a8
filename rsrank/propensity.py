"""Position bias: how often users examine each position, and what the
clicks say of each document once it is taken out.

Under the position-based model a user clicks a document shown at
position ``k`` with the chance ``theta_k * gamma_d``: ``theta_k`` that
they examine position ``k``, ``gamma_d`` that an examined document draws
the click. A production ranker that always shows a query's documents in
the same order confounds the two (the top is both examined and
relevant), so ``theta`` is estimated jointly with a model of ``gamma``
on the documents' features: :func:`estimate_examination` maximises the
likelihood of the log over both (the fixed point regression-EM, Wang et
al. WSDM 2018, iterates towards). With ``theta``, a document's
examinations are ``sum_k n_k theta_k`` and its clicks over them estimate
``gamma_d`` without the position's bias (inverse propensity weighting);
:func:`click_grades` turns that into grades whose exp2 gain is linear in
it, so the |Delta NDCG| pairs of RSRank train on it unchanged.
"""

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit

__all__ = ["Examination", "estimate_examination", "known_examination", "click_relevance",
           "click_grades", "CLICK_GRADES"]

#: the top grade of :func:`click_grades`: a click rate of 1
CLICK_GRADES = 8


@dataclass(frozen=True)
class Examination:
    """The chance of examining each position, relative to position 1
    (``curve[0]`` is 1), and the log's click rate at each."""

    curve: np.ndarray  #: positions 1 to len(curve)
    click_rate: np.ndarray  #: clicks over impressions per position
    impressions: np.ndarray  #: per position
    estimated: bool  #: False: given (for example by a randomised experiment)

    def to_dict(self):
        return {"positions": list(range(1, len(self.curve) + 1)),
                "examination": [float(v) for v in self.curve],
                "click_rate": [float(v) for v in self.click_rate],
                "impressions": [int(v) for v in self.impressions],
                "estimated": self.estimated}


def _by_position(position, impressions, clicks):
    depth = int(position.max()) if len(position) else 0
    shown = np.bincount(position - 1, weights=impressions, minlength=depth)
    clicked = np.bincount(position - 1, weights=clicks, minlength=depth)
    rate = np.divide(clicked, shown, out=np.zeros(depth), where=shown > 0)
    return shown, rate


def known_examination(propensity, position, impressions, clicks):
    """The :class:`Examination` of given chances (position 1 first; scaled
    so that position 1 is 1), checked to cover every position shown."""
    curve = np.asarray(propensity, dtype=np.float64).ravel()
    shown, rate = _by_position(position, impressions, clicks)
    if len(curve) < len(shown):
        raise ValueError(f"the propensities cover positions 1 to {len(curve)}, but the log "
                         f"shows documents down to position {len(shown)}: give one per "
                         "position")
    if not np.all(np.isfinite(curve)) or np.any(curve <= 0) or np.any(curve > curve[0]):
        raise ValueError("propensities must be finite, above 0, and at most position 1's "
                         "(the top is examined most)")
    return Examination(curve[:len(shown)] / curve[0], rate, shown.astype(np.int64), False)


def estimate_examination(X, position, impressions, clicks, *, l2=1e-3):
    """The examination curve of a position-based model of the users, with
    a logistic model of each document's click chance on its features.

    Parameters
    ----------
    X : ndarray of shape (n_entries, n_features)
        Each entry's document's features (NaN is taken as the column's
        mean).
    position, impressions, clicks : ndarray of shape (n_entries,)
        One entry per document and position of a query.
    l2 : float
        Ridge on the standardised features' weights, per entry.

    Returns
    -------
    examination : Examination
    relevance : ndarray of shape (n_entries,)
        The model's click chance of each entry's document when examined.
    """
    position = np.asarray(position, dtype=np.int64)
    n = np.asarray(impressions, dtype=np.float64)
    c = np.asarray(clicks, dtype=np.float64)
    shown, rate = _by_position(position, n, c)
    if not c.sum():
        raise ValueError("the click log has no clicks: nothing to learn from")
    Z = _standardized(X)
    depth, width, k = len(shown), Z.shape[1], position - 1
    scale = 1.0 / max(n.sum(), 1.0)

    def loss(params):
        a, w, b = params[:depth], params[depth:depth + width], params[-1]
        s = Z @ w + b
        log_chance = log_expit(a)[k] + log_expit(s)
        chance = np.minimum(np.exp(log_chance), 1 - 1e-12)
        value = -(c * log_chance + (n - c) * np.log1p(-chance)).sum() * scale
        value += l2 * (w @ w)
        slope = -(c - (n - c) * chance / (1 - chance)) * scale  # by log_chance
        grad_a = np.bincount(k, weights=slope, minlength=depth) * (1 - expit(a))
        grad_s = slope * (1 - expit(s))
        return value, np.r_[grad_a, Z.T @ grad_s + 2 * l2 * w, grad_s.sum()]

    start = np.r_[np.full(depth, 2.0), np.zeros(width), 0.0]
    result = minimize(loss, start, jac=True, method="L-BFGS-B",
                      options={"maxiter": 5000, "ftol": 1e-12, "gtol": 1e-8})
    theta = expit(result.x[:depth])
    theta = np.where(shown > 0, theta / theta[0], np.nan)
    relevance = expit(Z @ result.x[depth:depth + width] + result.x[-1])
    return Examination(theta, rate, shown.astype(np.int64), True), relevance


def _standardized(X):
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    mean = np.nanmean(X, axis=0) if len(X) else np.zeros(X.shape[1])
    mean = np.where(np.isfinite(mean), mean, 0.0)
    Z = np.where(np.isfinite(X), X, mean) - mean
    spread = Z.std(axis=0)
    return Z / np.where(spread > 0, spread, 1.0)


def click_relevance(document, position, impressions, clicks, curve, prior=None, strength=1.0):
    """Each document's click chance when examined, from its clicks over
    its examinations ``sum_k n_k theta_k`` (inverse propensity weighting).

    ``document`` numbers the documents 0, 1, ... (one may be shown at
    several positions); ``prior`` (per entry, default none) adds
    ``strength`` examinations at the relevance a model predicts, so that
    a document seldom examined is not graded on one or two clicks.
    Returns one value per document, in [0, 1].
    """
    document = np.asarray(document, dtype=np.int64)
    theta = np.asarray(curve, dtype=np.float64)[np.asarray(position) - 1]
    examined = np.bincount(document, weights=np.asarray(impressions) * theta)
    clicked = np.bincount(document, weights=np.asarray(clicks, dtype=np.float64))
    if prior is not None:
        prior_sum = np.bincount(document, weights=np.asarray(prior, dtype=np.float64))
        entries = np.bincount(document)
        clicked = clicked + strength * prior_sum / np.maximum(entries, 1)
        examined = examined + strength
    return np.clip(np.divide(clicked, examined, out=np.zeros_like(clicked),
                             where=examined > 0), 0.0, 1.0)


def click_grades(relevance, top=CLICK_GRADES):
    """Whole grades 0 to ``top`` whose gain ``2**g - 1`` is, to rounding,
    ``(2**top - 1)`` times the click relevance: the NDCG of these grades
    weighs a document by its estimated click chance."""
    relevance = np.clip(np.asarray(relevance, dtype=np.float64), 0.0, 1.0)
    return np.rint(np.log2(1.0 + (2.0 ** top - 1.0) * relevance)).astype(np.int64)
