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

__all__ = ["L1Penalty", "L1_METHODS"]

L1_METHODS = ("truncated", "cumulative")


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
    """

    l1: float = 0.0
    method: str = "truncated"
    period: int = 1
    threshold: float = np.inf

    def __post_init__(self):
        check_number("l1", self.l1, 0)
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
