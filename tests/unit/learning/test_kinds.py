"""A unit test of rsrank.learning.kinds' ModelSpec: bins given as "auto"
settle by the training rows, and bins given as numbers stay."""

from rsrank.learning.defaults import (DEFAULT_INTERACTION_BINS, DEFAULT_MAX_BINS, LEVEL_ROWS,
                                      ROWS_BINS)
from rsrank.learning.kinds import ModelSpec


def spec(max_bins, interaction_bins):
    return ModelSpec(additive=True, interactions=3, max_bins=max_bins,
                     interaction_bins=interaction_bins, normalize="zscore", missing="refuse")


def test_auto_bins_settle_by_the_training_rows():
    auto = spec("auto", "auto")
    settled = [(s.max_bins, s.interaction_bins) for s in (
        auto.on_rows(LEVEL_ROWS - 1), auto.on_rows(LEVEL_ROWS), auto.on_rows(None))]
    assert settled == [(DEFAULT_MAX_BINS, DEFAULT_INTERACTION_BINS), ROWS_BINS,
                       (DEFAULT_MAX_BINS, DEFAULT_INTERACTION_BINS)]
    assert ROWS_BINS == (255, 16)
    # everything else stays as it was
    assert auto.on_rows(LEVEL_ROWS).interactions == 3 and auto.on_rows(1).missing == "refuse"


def test_bins_given_as_numbers_stay_whatever_the_rows():
    for rows in (10, LEVEL_ROWS, 10 * LEVEL_ROWS, None):
        assert spec(64, 4).on_rows(rows) == spec(64, 4)
    mixed = spec("auto", 4).on_rows(LEVEL_ROWS)
    assert (mixed.max_bins, mixed.interaction_bins) == (255, 4)
