"""One column's thresholds: the quantile rule of
:func:`rsrank.learning.binning.fit_thresholds`, from a column's values or
from how many rows have each code of a column read through a table of
values (a training set kept as its codes,
:meth:`rsrank.reading.querydata.QueryData.keep_codes_alone`)."""

import numpy as np

__all__ = ["MAX_BINS", "MISSING", "check_max_bins", "as_float32", "has_missing_bin",
           "column_thresholds", "coded_column_thresholds"]

#: Codes are uint8: at most 255 thresholds, 256 bins, per feature
MAX_BINS = 256
#: The last threshold of a feature trained with missing values (NaN): every
#: value is at most +inf, so only NaN lies in the bin above it
MISSING = np.float32(np.inf)


def check_max_bins(max_bins):
    """Refuses a ``max_bins`` that uint8 codes cannot hold."""
    if (not isinstance(max_bins, (int, np.integer)) or isinstance(max_bins, bool)
            or not 2 <= max_bins <= MAX_BINS):
        raise ValueError(f"max_bins must be an integer from 2 to {MAX_BINS}, got {max_bins!r}")


def as_float32(values):
    """``values`` in float32; one beyond float32's range becomes inf, which
    :func:`rsrank.learning.binning.fit_thresholds` refuses."""
    with np.errstate(over="ignore"):
        return np.asarray(values).astype(np.float32)


def has_missing_bin(cuts):
    """Whether a feature's thresholds end with the missing value's bin."""
    return len(cuts) > 0 and cuts[-1] == MISSING


def column_thresholds(values, max_bins):
    """:func:`rsrank.learning.binning.fit_thresholds` of one column's
    float32 ``values``."""
    missing = np.isnan(values)
    bins = max_bins
    if missing.any():  # room for the missing value's code among the uint8 codes
        values, bins = values[~missing], min(max_bins, MAX_BINS - 1)
    ordered = np.sort(values)
    if len(ordered) and (np.isinf(ordered[0]) or np.isinf(ordered[-1])):
        raise ValueError("X has infinite values (as float32)")
    distinct = ordered[np.r_[True, ordered[1:] != ordered[:-1]]] if len(ordered) else ordered
    if len(distinct) <= bins:
        cuts = distinct[:-1]
    else:
        cuts = np.unique(ordered[quantile_positions(bins, len(ordered))])
        cuts = cuts[cuts < distinct[-1]]
    return with_missing(cuts, missing.any())


def quantile_positions(bins, n_values):
    """Where :func:`rsrank.learning.binning.fit_thresholds`' quantiles lie
    among ``n_values`` sorted values: the ``b / bins`` quantile is the
    smallest value with at least that share of them at or below it."""
    ranks = np.ceil(np.arange(1, bins) / bins * n_values).astype(np.int64)
    return np.maximum(ranks - 1, 0)


def with_missing(cuts, missing):
    """A column's thresholds, with the missing value's bin when it has NaN."""
    if missing:
        cuts = np.r_[cuts, MISSING]
    return np.ascontiguousarray(cuts, dtype=np.float32)


def coded_column_thresholds(counts, values, max_bins):
    """:func:`column_thresholds` of the column whose rows read
    ``values[codes]``, from ``counts``, how many rows have each code: the
    same thresholds, without a sort of the rows."""
    counts = np.asarray(counts)[:len(values)]
    held = counts > 0
    missing = bool(np.any(held & np.isnan(values)))
    bins = min(max_bins, MAX_BINS - 1) if missing else max_bins
    valued = held & ~np.isnan(values)
    distinct, inverse = np.unique(as_float32(values[valued]), return_inverse=True)
    if len(distinct) and (np.isinf(distinct[0]) or np.isinf(distinct[-1])):
        raise ValueError("X has infinite values (as float32)")
    if len(distinct) <= bins:
        cuts = distinct[:-1]
    else:
        below = np.cumsum(np.bincount(inverse, counts[valued]).astype(np.int64))
        at = np.searchsorted(below, quantile_positions(bins, int(below[-1])), side="right")
        cuts = np.unique(distinct[at])
        cuts = cuts[cuts < distinct[-1]]
    return with_missing(cuts, missing)
