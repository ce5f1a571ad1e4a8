"""Position bias: how often users examine each position, and what the
clicks say of each document once it is taken out.

Under the position-based model a user clicks a document shown at
position ``k`` with the chance ``theta_k * gamma_d``: ``theta_k`` that
they examine position ``k``, ``gamma_d`` that an examined document draws
the click. A production ranker that always shows a query's documents in
the same order confounds the two (the top is both examined and
relevant). :func:`estimate_examination` separates them by what every
position shares: the documents fall in a few classes of click chance,
the same at every position, in shares that differ by position; the fit
is expectation-maximisation over the log's clicks alone. Each document's
click chance is then its clicks over its examinations, with a prior at
its position's average (:meth:`ClickClasses.relevance`), and
:func:`click_grades` turns that into grades whose exp2 gain is linear in
it, so the |Delta NDCG| pairs of RSRank train on it unchanged. A log of
users who leave after their first click (the cascade model) is read by
:func:`cascade_examination` instead: a document was examined in the
sessions that reached it.
"""

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit, logsumexp

__all__ = ["Examination", "ClickClasses", "CascadeClicks", "estimate_examination",
           "cascade_examination", "known_examination",
           "click_grades", "CLICK_GRADES"]

#: the top grade of :func:`click_grades`: a click rate of 1
CLICK_GRADES = 3


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


def estimate_examination(document, position, impressions, clicks, *, classes=5, curve=None,
                         max_iter=500, tol=1e-7):
    """The examination curve of a position-based model of the users whose
    documents fall in a few classes of click chance.

    Every document has one of ``classes`` click chances ``gamma_g``
    (shared by all queries and positions), drawn with chances that
    depend on the position it is shown at (a production ranker puts more
    good documents at the top); a user examines position ``k`` with the
    chance ``theta_k``, non-increasing down the list, and clicks an
    examined document with its class's chance. Expectation-maximisation
    fits ``theta``, ``gamma`` and the classes' shares per position to the
    log. The classes identify the curve without randomised rankings: a
    position's click rates are its shares of the same ``gamma_g`` scaled
    by ``theta_k``, down to the clicks of the least relevant documents,
    which every position shows.

    Parameters
    ----------
    document : ndarray of shape (n_entries,)
        Each entry's document, numbered 0, 1, ... (a document shown at
        several positions has an entry at each).
    position, impressions, clicks : ndarray of shape (n_entries,)
    classes : int
        Classes of click chance; more than the data holds cost little (two
        classes then share a chance).
    curve : array-like, optional
        The examination chance of each position, known (for example from a
        randomised experiment): only the classes are fitted.

    Returns
    -------
    examination : Examination
    model : ClickClasses
        What :meth:`ClickClasses.relevance` grades documents with.
    """
    document = np.asarray(document, dtype=np.int64)
    position = np.asarray(position, dtype=np.int64)
    n = np.asarray(impressions, dtype=np.float64)
    c = np.asarray(clicks, dtype=np.float64)
    shown, rate = _by_position(position, n, c)
    if not c.sum():
        raise ValueError("the click log has no clicks: nothing to learn from")
    k = position - 1
    relative = np.where(rate > 0, rate / max(rate[0], 1e-12), 1.0)
    # start: the curve of the raw click rates, made non-increasing, and
    # chances spread geometrically below the top documents' click rate
    theta = np.minimum.accumulate(np.clip(relative, 1e-3, 1.0))
    if curve is not None:
        theta = known_examination(curve, position, n, c).curve
    top = max(float(np.quantile(c[k == 0] / np.maximum(n[k == 0], 1), 0.9)), 1e-3)
    gamma = np.clip(top * np.geomspace(0.05, 1.0, classes), 1e-4, 0.99)
    # the fit runs over the positions the log shows, in order: a position
    # shown nowhere has no clicks to fit, and one deep position must not make
    # the fit as long as the list (each position between takes the curve and
    # the shares of the one shown above it)
    present = np.flatnonzero(shown > 0)
    rank = np.maximum(np.cumsum(shown > 0) - 1, 0)  # per position, the shown one at or above
    k, theta = rank[k], theta[present]
    home = _home_position(document, k, n)
    shares = np.full((len(present), classes), 1.0 / classes)
    before = -np.inf
    for _ in range(max_iter):
        weight, total = _classes_given(document, k, n, c, theta, gamma, shares, home)
        counts = np.zeros((len(present), classes))
        np.add.at(counts, home, weight)
        shares = (counts + 1e-9) / (counts + 1e-9).sum(axis=1, keepdims=True)
        theta, gamma = _fit_chances(document, k, n, c, weight, theta, gamma, curve is None)
        if total - before <= tol * abs(total):
            break
        before = total
    theta, shares = theta[rank], shares[rank]
    found = np.where(shown > 0, theta / theta[0], np.nan)
    return (Examination(found, rate, shown.astype(np.int64), curve is None),
            ClickClasses(theta / theta[0], np.minimum(gamma * theta[0], 1.0), shares))


def _home_position(document, k, n):
    """Each document's position with the most impressions (its prior's)."""
    order = np.lexsort((-n, document))
    home = np.zeros(document.max() + 1 if len(document) else 0, dtype=np.int64)
    first = np.ones(len(order), dtype=bool)
    first[1:] = document[order][1:] != document[order][:-1]
    home[document[order][first]] = k[order][first]
    return home


def _log_likelihoods(document, k, n, c, theta, gamma):
    """Per document and class, the log chance of its clicks."""
    p = np.clip(theta[k][:, None] * gamma[None, :], 1e-12, 1 - 1e-12)
    entry = c[:, None] * np.log(p) + (n - c)[:, None] * np.log1p(-p)
    size = document.max() + 1
    return np.stack([np.bincount(document, weights=entry[:, g], minlength=size)
                     for g in range(len(gamma))], axis=1)


def _classes_given(document, k, n, c, theta, gamma, shares, home):
    """Each document's chance of each class given its clicks, and the
    log-likelihood of the log."""
    joint = _log_likelihoods(document, k, n, c, theta, gamma) + np.log(shares[home])
    total = logsumexp(joint, axis=1)
    return np.exp(joint - total[:, None]), float(total.sum())


def _fit_chances(document, k, n, c, weight, theta, gamma, fit_curve=True):
    """The curve (non-increasing: each position's chance the previous
    one's times a sigmoid; kept as it is without ``fit_curve``) and the
    classes' chances that maximise the expected log-likelihood under
    ``weight``. The likelihood depends on the entries only through each
    position's and class's expected clicks and impressions."""
    depth, classes = len(theta), len(gamma)
    w = weight[document]  # per entry and class
    clicked = np.stack([np.bincount(k, weights=w[:, g] * c, minlength=depth)
                        for g in range(classes)], axis=1)
    shown = np.stack([np.bincount(k, weights=w[:, g] * n, minlength=depth)
                      for g in range(classes)], axis=1)
    missed = shown - clicked
    steps_in = depth if fit_curve else 0

    def loss(params):
        steps, b = params[:steps_in], params[steps_in:]
        log_theta = np.cumsum(log_expit(steps)) if fit_curve else np.log(theta)
        g = expit(b)
        p = np.clip(np.exp(log_theta)[:, None] * g[None, :], 1e-12, 1 - 1e-12)
        value = -(clicked * np.log(p) + missed * np.log1p(-p)).sum()
        slope = -(clicked - missed * p / (1 - p))  # by log p
        grad_steps = np.zeros(0)
        if fit_curve:
            grad_steps = np.cumsum(slope.sum(axis=1)[::-1])[::-1] * (1 - expit(steps))
        return value, np.r_[grad_steps, slope.sum(axis=0) * (1 - g)]

    ratio = np.clip(theta / np.r_[1.0, theta[:-1]], 1e-6, 1 - 1e-6)
    gamma = np.clip(gamma, 1e-9, 1 - 1e-9)
    start = np.r_[(np.log(ratio) - np.log1p(-ratio))[:steps_in],
                  np.log(gamma) - np.log1p(-gamma)]
    # bounded logits: a position without clicks keeps a chance of examination
    # (each step at least e**-15 of the one above), never 0, so that
    # examinations divide and the logits start finite
    found = minimize(loss, np.clip(start, -15, 15), jac=True, method="L-BFGS-B",
                     bounds=[(-15.0, 15.0)] * len(start)).x
    if fit_curve:
        theta = np.exp(np.cumsum(log_expit(found[:depth])))
    return theta, expit(found[steps_in:])


#: the examinations of :meth:`ClickClasses.relevance`'s prior
PRIOR_EXAMINATIONS = 5.0


@dataclass(frozen=True)
class ClickClasses:
    """The classes :func:`estimate_examination` found: the curve
    (``theta``, 1 at the top), each class's click chance when examined
    (``gamma``) and each position's shares of the classes."""

    theta: np.ndarray
    gamma: np.ndarray
    shares: np.ndarray

    def relevance(self, document, position, impressions, clicks, prior=PRIOR_EXAMINATIONS,
                  reached=None):
        """Each document's click chance when examined: its clicks over its
        examinations ``sum_k n_k theta_k`` (inverse propensity weighting),
        with ``prior`` more examinations at the chance its position's
        classes give on average, so that a document seldom examined is not
        graded on a click or two."""
        document = np.asarray(document, dtype=np.int64)
        k = np.minimum(np.asarray(position, dtype=np.int64), len(self.theta)) - 1
        n = np.asarray(impressions, dtype=np.float64)
        home = _home_position(document, k, n)
        examined = np.bincount(document, weights=n * self.theta[k])
        clicked = np.bincount(document, weights=np.asarray(clicks, dtype=np.float64))
        expected = self.shares[home] @ self.gamma
        return np.clip((clicked + prior * expected) / (examined + prior), 0.0, 1.0)



def click_grades(relevance, floor=0.0, ceiling=1.0, top=CLICK_GRADES):
    """Whole grades 0 to ``top`` whose gain ``2**g - 1`` is, to rounding,
    ``(2**top - 1)`` times the click relevance above ``floor`` (the chance
    of the least clicked class: the clicks any document draws say nothing
    of it) as a share of ``ceiling - floor`` (``ceiling``: the most
    clicked class's): the NDCG of these grades weighs a document by its
    estimated chance of a click it earns."""
    relevance = np.asarray(relevance, dtype=np.float64)
    span = max(float(ceiling) - floor, 1e-12)
    above = np.clip((relevance - floor) / span, 0.0, 1.0)
    return np.rint(np.log2(1.0 + (2.0 ** top - 1.0) * above)).astype(np.int64)


def cascade_examination(document, position, impressions, clicks, reached):
    """The examination of a cascade log (users read down to their first
    click and leave): a document was examined in the sessions that reached
    it (``reached`` per entry: no click above it). The curve is the share of
    sessions reaching each position."""
    position = np.asarray(position, dtype=np.int64)
    n = np.asarray(impressions, dtype=np.float64)
    shown, rate = _by_position(position, n, np.asarray(clicks, dtype=np.float64))
    came, _ = _by_position(position, np.asarray(reached, dtype=np.float64), n)
    share = np.divide(came, shown, out=np.zeros_like(came), where=shown > 0)
    curve = np.where(shown > 0, share / max(share[0], 1e-12), np.nan)
    clicked, _ = _by_position(position, np.asarray(clicks, dtype=np.float64), n)
    per_read = np.divide(clicked, came, out=np.zeros_like(came), where=came > 0)
    model = CascadeClicks(per_read, float(np.min(per_read)), float(np.max(per_read)))
    return Examination(curve, rate, shown.astype(np.int64), True), model


@dataclass(frozen=True)
class CascadeClicks:
    """A cascade log's model: each position's clicks per session that reached
    it (the prior of its documents), and their least and largest."""

    rate: np.ndarray
    low: float
    high: float

    @property
    def gamma(self):
        return np.array([self.low, max(self.high, self.low)])

    def relevance(self, document, position, impressions, clicks, prior=PRIOR_EXAMINATIONS,
                  reached=None):
        """Each document's clicks over the sessions that reached it, with
        ``prior`` more at its position's rate."""
        if reached is None:
            raise ValueError("a cascade log is graded from its sessions: give the validation "
                             "log in the sessions form too")
        document = np.asarray(document, dtype=np.int64)
        k = np.minimum(np.asarray(position, dtype=np.int64), len(self.rate)) - 1
        came = np.bincount(document, weights=np.asarray(reached, dtype=np.float64))
        clicked = np.bincount(document, weights=np.asarray(clicks, dtype=np.float64))
        expected = np.bincount(document, weights=self.rate[k]) / np.bincount(document)
        return np.clip((clicked + prior * expected) / (came + prior), 0.0, 1.0)
