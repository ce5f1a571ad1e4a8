"""The objective: |Delta NDCG|-weighted pair losses of a query data.

Per query, the documents are ranked by the current scores; every pair with
``y_i > y_j`` is weighted by the change in NDCG if the two swapped places
(``pair_weight="delta_ndcg"``, or 1 with ``"unit"``) and pays
``pair_loss(s_i - s_j)``. The objective is the mean of the queries' summed
pair losses, each query's times its weight when the data has
:attr:`~rsrank.reading.querydata.QueryData.query_weights`. :meth:`Objective.pairs` gives the arrays the kernels need for
one :class:`~rsrank.reading.querydata.QueryData`; they are made once per data and
kept there, per (gain, discount, cut-off, loss).
"""

import numbers
from collections import namedtuple
from dataclasses import dataclass

import numpy as np

from .. import _kernels
from ._compile import settle
from ._threads import held_threads
from .binning import BinCodes
from ..evaluation.metrics import discount_values, gain_values
from ..reading._views import as_view

__all__ = ["Objective", "PAIR_LOSSES", "PAIR_WEIGHTS", "PAIR_CURVATURE"]

PAIR_LOSSES = tuple(_kernels.PAIR_LOSSES)
PAIR_WEIGHTS = ("delta_ndcg", "unit")

#: Second derivative of each pair loss at margin 0 (hinge has none: it is
#: given modified Huber's, so that its step size has the same scale)
PAIR_CURVATURE = {"modified_huber": 2.0, "hinge": 2.0, "logistic": 0.25}

#: :meth:`Objective.l1_max` and :meth:`Objective.group_max` are raised by this
#: factor: exactly at the largest gradient, the rounding of a step can leave
#: the weight that attains it a tiny value instead of zero, and once the scores
#: differ, the pair weights of the new ranking can make it grow
EDGE_MARGIN = 1.0 + 1e-9

#: A query data's arrays for one objective, before the label levels.
_Labels = namedtuple("_Labels", "gains inv_ideal discount cutoff")


@dataclass(frozen=True)
class Objective:
    """Pair loss, pair weight, gain, discount and cut-off.

    Parameters
    ----------
    pair_loss : {"modified_huber", "hinge", "logistic"}
    pair_weight : {"delta_ndcg", "unit"}
    gain : {"exp2", "linear"} or callable
        Gain of a label (see :func:`rsrank.evaluation.metrics.gain_values`).
    discount : {"log2", "letor", "zipf"}, float or callable
        Discount of a place (see :func:`rsrank.evaluation.metrics.discount_values`).
    ndcg_k : int or None
        Cut-off of the NDCG in the swap weights: places from ``ndcg_k`` on
        are not discounted, so pairs with both documents there weigh 0.
    """

    pair_loss: str = "modified_huber"
    pair_weight: str = "delta_ndcg"
    gain: object = "exp2"
    discount: object = "log2"
    ndcg_k: object = None

    def __post_init__(self):
        for name, allowed in (("pair_loss", PAIR_LOSSES), ("pair_weight", PAIR_WEIGHTS)):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        k = self.ndcg_k
        if k is not None and (not isinstance(k, numbers.Integral) or isinstance(k, bool)
                              or k < 1):
            raise ValueError(f"ndcg_k must be an integer >= 1 or None, got {k!r}")
        gain_values(np.array([0.0, 1.0]), self.gain)  # raises on an unknown gain
        discount_values(np.array([1.0, 2.0]), self.discount)  # raises on an unknown discount

    @property
    def loss_code(self):
        return _kernels.PAIR_LOSSES[self.pair_loss]

    @property
    def unit_weights(self):
        return self.pair_weight == "unit"

    def _labels(self, data):
        """Gains, inverse ideal DCG, discount table and cut-off of ``data``."""
        def make():
            gains = data.memo(("gains", self.gain), lambda: gain_values(data.y, self.gain))
            max_size = int(data.sizes.max()) if data.n_queries else 1
            cutoff = max_size if self.ndcg_k is None else min(self.ndcg_k, max_size)
            table = np.zeros(max(max_size, 1))
            table[:cutoff] = discount_values(np.arange(1, cutoff + 1), self.discount)
            ideal = _kernels.ideal_dcg(gains, data.offsets, table)
            inv_ideal = np.divide(1.0, ideal, out=np.zeros_like(ideal), where=ideal > 0)
            return _Labels(gains, inv_ideal, table, max(cutoff, 0))
        return data.memo(("labels", self.gain, self.discount, self.ndcg_k), make)

    def query_factors(self, data):
        """Each query's factor on its pair weights, as the kernels take it
        (their ``inv_ideal``): ``1 / ideal DCG`` with swap weights, 1 with
        unit weights, times the query's weight when ``data`` has them. A
        query of :attr:`~rsrank.reading.querydata.QueryData.preferences` has the
        ideal DCG of its preferred document alone (``1 / d_1`` with swap
        weights)."""
        def make():
            if self.unit_weights:
                factor = np.ones(data.n_queries)
            elif data.preferences is not None:
                factor = np.full(data.n_queries, 1.0 / self._labels(data).discount[0])
            else:
                factor = self._labels(data).inv_ideal
            weights = data.query_weights
            return factor if weights is None else factor * weights
        return data.memo(("factors", self.gain, self.discount, self.ndcg_k, self.pair_weight),
                         make)

    def pairs(self, data):
        """The :class:`~rsrank._kernels.Pairs` record of ``data`` (made once
        per data and objective)."""
        def make():
            labels = self._labels(data)
            levels = np.zeros(data.n_rows, dtype=np.int64)
            n_levels = np.zeros(data.n_queries, dtype=np.int64)
            y = _kernels.read_only(data.y)  # writable labels or not, one build per kernel
            _kernels.all_query_levels(labels.gains, y, data.offsets, labels.discount,
                                      self.loss_code, levels, n_levels)
            pairs = _kernels.Pairs(labels.gains, y, self.query_factors(data),
                                   labels.discount, labels.cutoff, self.loss_code,
                                   self.unit_weights, levels, n_levels)
            preferred = data.preferences
            if preferred is None:
                return pairs
            return pairs._replace(preference_offsets=preferred.offsets, better=preferred.better,
                                  worse=preferred.worse,
                                  preference_weights=self.preference_weights(data))
        return data.memo(("pairs", self.gain, self.discount, self.ndcg_k, self.pair_loss,
                          self.pair_weight), make)

    def preference_weights(self, data):
        """Each of ``data``'s preferences' weight, as the kernels take it
        beside :meth:`query_factors`: with swap weights, a pair from a list
        of ``relevant`` documents is scaled from the ideal DCG of one (the
        factor's) to that of its list, so that pairs summed from lists of
        any number of clicks cost what the lists as queries would."""
        preferred = data.preferences
        if self.unit_weights or preferred.relevant is None:
            return preferred.weight

        def make():
            discount = self._labels(data).discount
            ideal = np.cumsum(discount)[np.minimum(preferred.relevant, len(discount)) - 1]
            return preferred.weight * discount[0] / ideal
        return data.memo(("preference weights", self.discount, self.ndcg_k), make)

    def loss_and_gradient(self, data, w, *, view="none", scale=None):
        """Summed loss of ``data``'s queries at ``w`` and its gradient, with
        the swap weights of the ranking at ``w`` held fixed. ``scale``: one
        factor per feature of a global scaling (the model scores
        ``X @ (scale * w)``); ``view``: a per-query scaling of the rows."""
        w = np.ascontiguousarray(w, dtype=np.float64)
        grad = np.zeros(len(w))
        rows, pairs = data.rows(view), self.pairs(data)
        check_weights(data, view, w)
        total = _objective(rows, pairs, _scale_vector(scale), w, grad, data, view)[0]
        return total, grad

    def row_lambdas(self, data, w, *, view="none", scale=None):
        """The derivative of the summed loss with respect to each row's
        score at ``w`` (the pair gradients, |Delta NDCG|-weighted, of the
        ranking at ``w``), per stored row (query order): what a further
        term of the model would have to follow."""
        w = np.ascontiguousarray(w, dtype=np.float64)
        check_weights(data, view, w)
        work = _objective(data.rows(view), self.pairs(data), _scale_vector(scale), w,
                          np.zeros(len(w)), data, view)[1]
        return work.lam.copy()

    def l1_max(self, data, *, view="none", scale=None, weight_factors=None):
        """The smallest L1 strength that keeps every weight at zero: the
        largest ``|gradient|`` of the mean per-query loss at ``w = 0`` (the
        pair weights of the all-zero model, its ties in row order as the
        kernels break them), each over its ``weight_factors`` (feature
        costs; None: 1). Below it a step from zero moves that weight; at or
        above it, none moves (glmnet's ``lambda_max``). With a truncation
        period K > 1 the weights move between truncations and every
        truncation takes them back to zero.

        ``data`` is a :class:`~rsrank.reading.querydata.QueryData`, or an iterable
        of them holding whole queries (a stream read in blocks)."""
        grad = self.zero_model_gradient(data, view=view, scale=scale)
        if grad.size == 0:
            return 0.0
        if weight_factors is not None:
            grad = grad / np.asarray(weight_factors, dtype=np.float64)
        return float(np.max(np.abs(grad))) * EDGE_MARGIN

    def group_max(self, data, groups, group_factors, *, view="none", scale=None):
        """The smallest group penalty strength that keeps every weight at
        zero (with no L1): the largest Euclidean norm of a group's gradient
        at ``w = 0``, over its factor (the group lasso's ``lambda_max``)."""
        grad = self.zero_model_gradient(data, view=view, scale=scale)
        groups = np.asarray(groups, dtype=np.int64)
        if grad.size == 0 or len(groups) < 2:
            return 0.0
        sizes = np.diff(groups)
        # groups without weights (a constant feature has no step) need no strength
        norms = np.array([np.sqrt(np.sum(grad[lo:hi] ** 2)) for lo, hi in
                          zip(groups[:-1], groups[1:])])
        factors = np.asarray(group_factors, dtype=np.float64)
        return float(np.max(norms[sizes > 0] / factors[sizes > 0], initial=0.0)) * EDGE_MARGIN

    def zero_model_gradient(self, data, *, view="none", scale=None):
        """The gradient of the mean per-query loss at ``w = 0``; ``data`` is a
        :class:`~rsrank.reading.querydata.QueryData` or an iterable of them holding
        whole queries (a stream read in blocks)."""
        blocks = [data] if hasattr(data, "n_queries") else data
        grad, n_queries = None, 0
        for block in blocks:
            if block.n_queries == 0:
                continue
            part = self.loss_and_gradient(block, np.zeros(n_weights(block, view)),
                                          view=view, scale=scale)[1]
            grad = part if grad is None else grad + part
            n_queries += block.n_queries
        return np.zeros(0) if grad is None else grad / n_queries

    def curvature(self, data, *, view="none", scale=None, support=None):
        """The trace of the Hessian of the mean per-query loss at ``w = 0``
        (pair weights of the all-zero model, ties in row order as the
        kernels rank them): ``c / Q * sum_q sum_pairs W_ij |z_i - z_j|^2``,
        ``c`` the pair loss's curvature at margin 0 (:data:`PAIR_CURVATURE`)
        and ``z`` the rows as the kernels score them (times ``scale``). It
        bounds the Hessian's largest eigenvalue, so ``2 / curvature`` is a
        step that full-batch gradient descent on that quadratic can take
        without diverging. ``support`` (a boolean per weight): the trace of
        the Hessian restricted to those weights, the others held at 0.

        Per query it takes O(n d L) with L label levels, by running sums of
        the rows, their squares and the discounts over the levels below
        each place, not O(n^2 d) over the pairs."""
        diagonal = self.hessian_diagonal(data, view=view, scale=scale)
        return float(diagonal.sum() if support is None else diagonal[support].sum())

    def hessian_diagonal(self, data, *, view="none", scale=None):
        """The diagonal of the Hessian of :meth:`curvature`, one value per
        weight; kept with the data (the same for every L1 strength of a
        path)."""
        width = data.n_features
        if data.n_queries == 0:
            return np.zeros(width)
        factor = None if scale is None else np.asarray(scale, dtype=np.float64)

        def make():
            labels = self._labels(data)
            factors = self.query_factors(data)
            rows = data.rows(view)
            preferred = data.preferences
            weights = None if preferred is None else self.preference_weights(data)
            total = None
            if preferred is None and not len(rows.bins):
                total = np.zeros(width)  # rows of features: every query in one call
                ranks = data.memo(("gain ranks", self.gain), lambda: np.unique(
                    labels.gains, return_inverse=True)[1].ravel())  # each gain's place
                _kernels.rows_curvature(rows.dense, rows.data, rows.indices, rows.indptr,
                                        data.offsets, ranks, labels.gains, labels.discount,
                                        factors, _scale_vector(factor), self.unit_weights, total)
            else:
                for q in range(data.n_queries):
                    lo, hi = int(data.offsets[q]), int(data.offsets[q + 1])
                    if hi - lo < 2 or factors[q] == 0:
                        continue
                    if preferred is not None:
                        a, b = preferred.offsets[q], preferred.offsets[q + 1]
                        weight = factors[q] * weights[a:b]
                        better, worse = preferred.better[a:b], preferred.worse[a:b]
                        if not self.unit_weights:  # the places of the all-zero model: row order
                            weight = weight * np.abs(labels.discount[better]
                                                     - labels.discount[worse])
                        if len(rows.bins):
                            total = np.zeros(int(rows.bins[-1])) if total is None else total
                            _preference_step_curvature(_query_codes(rows, lo, hi), rows.bins,
                                                       better, worse, weight, total)
                            continue
                        z = _query_rows(rows, lo, hi, width)
                        if factor is not None:
                            z = z * factor
                        part = weight @ (z[better] - z[worse]) ** 2
                        total = part if total is None else total + part
                        continue
                    # codes: their 0/1 step columns, summed without building them
                    values, level = np.unique(labels.gains[lo:hi], return_inverse=True)
                    total = np.zeros(int(rows.bins[-1])) if total is None else total
                    _kernels.step_curvature(_query_codes(rows, lo, hi), rows.bins, level, values,
                                            labels.discount[:hi - lo], factors[q],
                                            self.unit_weights, total)
            if total is None:
                return np.zeros(len(factor) if factor is not None else width)
            if len(rows.bins) and factor is not None:  # the columns' scales, squared
                total = total * factor * factor
            return PAIR_CURVATURE[self.pair_loss] * total / data.n_queries
        return data.memo(("curvature", self.gain, self.discount, self.ndcg_k, self.pair_loss,
                          self.pair_weight, as_view(view).key,
                          None if factor is None else factor.tobytes()), make)

    def level_curvature(self, data, *, view="none"):
        """Per coded column and code (packed at ``bins[j] + j + c``) the
        summed pair weights of the rows with that code at ``w = 0``, times the
        pair loss's curvature at margin 0, over the queries: a bound on the
        diagonal of the Hessian of the mean per-query loss with respect to
        the column's levels (a pair within one code counts, where it adds
        nothing)."""
        def make():
            rows = data.rows(view)
            labels = self._labels(data)
            weights = np.zeros(data.n_rows)
            _kernels.row_pair_weights(labels.gains, data.offsets, labels.discount,
                                      self.query_factors(data), self.unit_weights, weights)
            out = np.zeros(int(rows.bins[-1]) + len(rows.bins) - 1)
            if rows.indptr.shape[0] > 0:
                _kernels.stored_code_sums(rows.indices, rows.indptr, rows.stored_codes,
                                          rows.zero_codes, rows.bins, weights, out)
            else:
                _kernels.code_sums(rows.dense_codes, rows.bins, weights, out)
            return PAIR_CURVATURE[self.pair_loss] * out / max(data.n_queries, 1)
        return data.memo(("level_curvature", self.gain, self.discount, self.ndcg_k,
                          self.pair_loss, self.pair_weight, as_view(view).key), make)

    def level_step_bound(self, data, *, view="none", iterations=12, steps=None):
        """An estimate of the largest eigenvalue of the loss's Hessian with
        each level's step over its curvature (:meth:`level_curvature`):
        ``iterations`` of the power method, each Hessian product the
        difference of the gradients at two points along the same direction
        (the same ranking, so the same pair weights, and every margin within
        the pair loss's quadratic part), seeded; with unit pair weights,
        which do not follow the ranking, the gradient at 0 and one point
        (``results/level_bound.md``). A level step of one over it cannot
        overshoot along the directions the estimate sees. ``steps``: a
        boolean per step, those a fit can move (None: all); the estimate is
        then over their levels alone, the direction held at zero elsewhere.
        The operator is not symmetric, and the largest estimate is often the
        first (the random direction's): without it most fits step farther,
        in no less time (``results/bound_first_iterate_tried.md``)."""
        def make():
            rows = data.rows(view)
            bins = np.asarray(rows.bins, dtype=np.int64)
            curvature = self.level_curvature(data, view=view)
            inverse = np.divide(1.0, curvature, out=np.zeros_like(curvature),
                                where=curvature > 0)
            direction = np.random.default_rng(0).standard_normal(int(bins[-1]))
            held = None if steps is None else ~np.asarray(steps, dtype=bool)
            passes = rows if held is None else _moving_columns(rows, held)
            if held is not None:
                direction[held] = 0.0

            def gradient(w):  # of the summed loss, read from the columns that move
                grad = np.zeros(len(w))
                _objective(passes, self.pairs(data), np.zeros(0), w, grad, data, view)
                return grad
            # unit pair weights do not follow the ranking: the gradient at 0 serves
            # every product, one gradient an iteration rather than two
            zero = gradient(np.zeros(len(direction))) if self.unit_weights else None
            largest = 0.0
            for _ in range(iterations):
                direction /= np.linalg.norm(direction)
                small = 1e-4 / max(1.0, float(np.abs(direction).sum()))
                near = gradient(small * direction)
                if zero is None:
                    far = gradient(2 * small * direction)
                    product = (far - near) / (small * max(data.n_queries, 1))
                else:
                    product = (near - zero) / (small * max(data.n_queries, 1))
                moved = _kernels.level_moves(product, bins, inverse)
                if held is not None:
                    moved[held] = 0.0
                size = float(np.linalg.norm(moved))
                if size == 0.0:
                    break
                largest = max(largest, size)
                direction = moved
            return largest
        return data.memo(("level_step_bound", self.gain, self.discount, self.ndcg_k,
                          self.pair_loss, self.pair_weight, as_view(view).key, iterations,
                          None if steps is None else np.packbits(steps).tobytes()), make)

    def zero_model_loss(self, data, view="none"):
        """Mean per-query loss of the all-zero weights (every pair at margin
        0, whatever the features), kept with the data: a training loss far
        above it means the steps overshoot. Computed on the rows as ``view``
        views them (the fit's own: rows kept as bin codes alone have no
        other), the same loss whatever the view."""
        return data.memo(("zero_loss", self.gain, self.discount, self.ndcg_k, self.pair_loss,
                          self.pair_weight),
                         lambda: self.loss_and_gradient(
                             data, np.zeros(n_weights(data, view)), view=view)[0]
                         / max(data.n_queries, 1))


#: Gradient rows of an epoch's workspace: a batch's queries are dealt to
#: them in turn and the rows summed in order, whatever the number of
#: threads that fill them, so one to this many threads give the same model
#: bit for bit (more threads get a row each).
GRADIENT_ROWS = 8


def n_weights(data, view="none"):
    """Weights of a model of ``data``'s rows as ``view`` views them:
    one per feature, or one per step of a step encoding."""
    bins = data.rows(view).bins
    return int(bins[-1]) if len(bins) else data.n_features


def workspace(data, threads, view="none"):
    """Fresh :class:`~rsrank._kernels.Work` for a fit on ``data`` by
    ``threads`` threads: :data:`GRADIENT_ROWS` gradient rows, or one per
    thread beyond that; one weight per feature, or for the rows of a step
    encoding (``view``, see :meth:`rsrank.reading.querydata.QueryData.rows`)
    one per step, and the table of their sums."""
    width = n_weights(data, view)
    row_width, table = _work_widths(data.rows(view), width)
    return _kernels.Work(np.zeros(data.n_rows), np.zeros(data.n_rows),
                         np.zeros((max(GRADIENT_ROWS, threads), row_width)),
                         np.full(data.n_rows, -1, dtype=np.int64), np.zeros(width),
                         np.zeros(table), max(int(threads), 1))


def workspace_fits(work, rows, width):
    """Whether ``work`` (from :func:`workspace`) fits the kernels' ``rows``
    and a model of ``width`` weights."""
    return ((work.partial.shape[1], len(work.table)) == _work_widths(rows, width)
            and len(work.w_scaled) == width)


def check_weights(data, view, w):
    """Refuse weights ``w`` of another length than a model of ``data``'s
    rows as ``view`` views them has (:func:`n_weights`), before a kernel
    reads or writes past their end."""
    need = n_weights(data, view)
    if need != len(w):
        raise ValueError(f"{len(w)} weights for rows of {need} "
                         f"{'steps' if len(data.rows(view).bins) else 'features'}")


def _objective(rows, pairs, scale, w, grad, data, view):
    """``(summed loss, work)`` of :func:`rsrank._kernels.objective` on the
    threads the innermost :class:`~rsrank.learning._threads.numba_threads`
    block holds (a fit's, for the passes that set up its steps): the
    gradient rows add their queries in the same order on any number of
    threads, so the gradient is the same bit for bit."""
    n = held_threads()
    work = workspace(data, n, view)
    settle()
    epoch = _kernels.epoch_kernels(rows)[1 if n > 1 else 0]
    return _kernels.objective(rows, pairs, scale, w, work, grad, epoch), work


def _moving_columns(rows, held):
    """Coded ``rows`` with the dense codes of the columns that have a step
    not ``held`` alone (``column_slots``: their slots), as the epochs read
    a relaxed fit's kept columns; ``rows`` as they are otherwise."""
    if rows.indptr.shape[0] > 0 or rows.dense_codes.shape[1] != rows.slots.shape[0]:
        return rows
    bins = np.asarray(rows.bins, dtype=np.int64)
    column = np.repeat(np.arange(len(bins) - 1), np.diff(bins))
    kept = np.unique(column[~held])
    return rows._replace(dense_codes=np.ascontiguousarray(rows.dense_codes[:, kept]),
                         column_slots=np.ascontiguousarray(rows.slots[kept]))


def _work_widths(rows, width):
    """A workspace's gradient row width and table length: an additive
    model's gradient rows are its histograms (a slot per code), at least
    one value per weight."""
    table = _kernels.table_size(rows)
    return max(width, table), table


def _scale_vector(scale):
    if scale is None:
        return np.zeros(0)
    return np.ascontiguousarray(scale, dtype=np.float64)



def _query_rows(rows, lo, hi, width):
    """Rows ``lo:hi`` of feature :class:`~rsrank._kernels.Rows` (not bin
    codes) as a dense float64 array."""
    if rows.indptr.shape[0] == 0:
        return np.asarray(rows.dense[lo:hi], dtype=np.float64)
    out = np.zeros((hi - lo, width))
    start, stop = rows.indptr[lo], rows.indptr[hi]
    row_of = np.repeat(np.arange(hi - lo), np.diff(rows.indptr[lo:hi + 1]))
    out[row_of, rows.indices[start:stop]] = rows.data[start:stop]
    return out


def _query_codes(rows, lo, hi):
    """Rows ``lo:hi`` of coded :class:`~rsrank._kernels.Rows` as a dense
    array of codes, one column per code column."""
    if rows.indptr.shape[0] == 0:
        return rows.dense_codes[lo:hi]
    start, stop = rows.indptr[lo], rows.indptr[hi]
    return BinCodes(rows.stored_codes[start:stop], (hi - lo, len(rows.zero_codes)),
                    rows.indices[start:stop], rows.indptr[lo:hi + 1] - start,
                    rows.zero_codes).toarray()


def _preference_step_curvature(codes, bins, better, worse, weight, out):
    """Add one query's ``sum_k weight[k] (z_better - z_worse)^2`` to
    ``out`` for every step column ``z = [code_j > b]`` (at
    ``out[bins[j] + b]``) of its dense ``codes``: a pair differs on the
    columns from the lower of its two codes to below the higher, so each
    pair adds its weight over that run (by differences, summed along each
    feature's steps)."""
    widths = np.diff(bins)
    codes = np.minimum(codes, widths[None, :])  # codes past the last step: above all
    low = np.minimum(codes[better], codes[worse])
    high = np.maximum(codes[better], codes[worse])
    # a slot per step and one more per feature, so that a run's end stays in its feature
    start = bins[:-1] + np.arange(len(widths))
    runs = np.zeros(int(bins[-1]) + len(widths) + 1)
    np.add.at(runs, (start + low).ravel(), np.repeat(weight, len(widths)))
    np.add.at(runs, (start + high).ravel(), -np.repeat(weight, len(widths)))
    summed = np.cumsum(runs)
    steps = np.concatenate([np.arange(s, s + w) for s, w in zip(start, widths)]).astype(np.int64)
    out += summed[steps]
