"""A unit test of rsrank.learning.recipe: the bins of rsrank train's kinds,
"auto" where a kind has them and none are given."""

from rsrank.learning.defaults import DEFAULT_INTERACTION_BINS, DEFAULT_MAX_BINS
from rsrank.learning.recipe import train_recipe


def bins(**options):
    estimator, _ = train_recipe(**options)
    return estimator.max_bins, estimator.interaction_bins


def test_the_recipe_leaves_the_bins_to_the_rows_where_a_kind_has_them():
    assert bins() == (DEFAULT_MAX_BINS, DEFAULT_INTERACTION_BINS)
    assert bins(additive=True) == ("auto", DEFAULT_INTERACTION_BINS)
    assert bins(additive=True, interactions=10) == ("auto", "auto")
    assert bins(additive=True, interactions=10, max_bins=64, interaction_bins=4) == (64, 4)
