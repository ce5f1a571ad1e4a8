"""The L1 penalty and how it is applied to the steps.

``"truncated"`` is the truncated gradient of Langford, Li and Zhang (JMLR
2009), RSRank's: every ``period`` steps, each weight with
``|w_j| <= threshold`` moves toward 0 by ``l1`` times the period's step
sizes without crossing it. ``"cumulative"`` is the cumulative penalty of
Tsuruoka, Tsujii and Ananiadou (ACL 2009), scikit-learn's L1 for
``SGDClassifier``: each weight moves toward 0 by what it is still owed of
the running total, so a weight that noisy steps push off zero pays the
penalty it missed. Both leave exact zeros. The arithmetic is in
:func:`rsrank._kernels.take_step`.
"""

import numbers
from dataclasses import dataclass

import numpy as np

from .defaults import L1_METHODS

__all__ = ["L1Penalty", "L1_METHODS"]


def check_number(name, value, low, *, integer=False, strict=False, allow_none=False):
    """``ValueError`` naming ``name`` unless ``value`` is a number (an
    integer with ``integer``) at least ``low`` (above it with ``strict``),
    or None with ``allow_none``."""
    if value is None and allow_none:
        return
    kind = numbers.Integral if integer else numbers.Real
    if (not isinstance(value, kind) or isinstance(value, bool)
            or (value <= low if strict else value < low)):
        sign = ">" if strict else ">="
        what = "an integer" if integer else "a number"
        extra = " or None" if allow_none else ""
        raise ValueError(f"{name} must be {what} {sign} {low}{extra}, got {value!r}")
    if not integer and np.isnan(value):
        raise ValueError(f"{name} must be a number, got nan")


@dataclass(frozen=True)
class L1Penalty:
    """L1 strength and its method.

    Parameters
    ----------
    l1 : float
        Strength g; 0 applies no penalty.
    method : {"truncated", "cumulative"}
    period : int
        K: apply the penalty every K steps.
    threshold : float
        theta of the truncated gradient: only weights with ``|w_j| <= theta``
        are shrunk (``inf``: every weight). Not used by ``"cumulative"``.
    group : float
        Strength of the group penalty ``group * sum_g factor_g * ||w_g||``
        (the group lasso; with ``l1`` the sparse group lasso), applied every
        ``period`` steps as its proximal step
        (:func:`rsrank._kernels.group_shrink`). 0: none.
    groups : ndarray of int64, optional
        The groups as offsets into the weights: group ``g`` holds
        ``w[groups[g]:groups[g + 1]]`` (an additive model's steps of one
        feature). None: no groups.
    group_factors : ndarray, optional
        One factor per group (``sqrt`` of its size times its feature's cost).
    weight_factors : ndarray, optional
        One factor per weight on the L1 strength (its feature's cost). None:
        1 everywhere.
    signs : ndarray, optional
        Monotone constraints as signs, one per weight: 1 keeps it at least
        0, -1 at most 0, 0 leaves it free (the indicator of that set as a
        penalty: its proximal step clips). None: none.
    monotone_blocks : ndarray of int64 of shape (n, 7), optional
        The pairs whose cells must be monotone: the offset of a pair's
        steps, its grid's bins along each feature, the direction along
        each and the bins of each that hold values, not a missing value
        (:func:`rsrank._kernels.monotone_pairs`). None: none.
    """

    l1: float = 0.0
    method: str = "truncated"
    period: int = 1
    threshold: float = np.inf
    group: float = 0.0
    groups: np.ndarray = None
    group_factors: np.ndarray = None
    weight_factors: np.ndarray = None
    signs: np.ndarray = None
    monotone_blocks: np.ndarray = None

    def __post_init__(self):
        check_number("l1", self.l1, 0)
        check_number("l1_group", self.group, 0)
        for name in ("groups", "group_factors", "weight_factors", "signs"):
            value = getattr(self, name)
            dtype = np.int64 if name == "groups" else np.float64
            object.__setattr__(self, name, np.zeros(0, dtype) if value is None
                               else np.ascontiguousarray(value, dtype=dtype))
        object.__setattr__(self, "monotone_blocks", np.zeros((0, 7), np.int64)
                           if self.monotone_blocks is None else np.ascontiguousarray(
                               self.monotone_blocks, dtype=np.int64).reshape(-1, 7))
        if len(self.groups) and len(self.group_factors) != len(self.groups) - 1:
            raise ValueError(f"{len(self.groups) - 1} groups but {len(self.group_factors)} "
                             "group factors")
        check_number("truncation_period", self.period, 1, integer=True)
        check_number("truncation_threshold", self.threshold, 0)
        if self.method not in L1_METHODS:
            raise ValueError(f"l1_method must be one of {L1_METHODS}, got {self.method!r}")
        if self.method == "cumulative" and self.threshold != np.inf:
            raise ValueError("truncation_threshold applies to l1_method='truncated' only; the "
                             "cumulative penalty shrinks every weight (leave it at inf)")

    @property
    def cumulative(self):
        return self.method == "cumulative"

    @staticmethod
    def new_state(n_features):
        """The cumulative penalty's record: per weight what it received, and
        last the total each could have received (zeros at the start)."""
        return np.zeros(n_features + 1)
