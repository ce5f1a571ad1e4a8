"""make_interactions: relevance made of pairwise effects, as documented."""

import numpy as np
import pytest

from rsrank.reading.synthetic import INTERACTIONS, make_interactions


def test_shapes_names_and_pairs_are_as_documented():
    data = make_interactions(("and", "xor"), n_queries=20, n_main=1, n_noise=3, random_state=4)
    assert data.X.shape == (len(data.y), 2 * 2 + 1 + 3)
    assert data.feature_names == ["and_a", "and_b", "xor_a", "xor_b", "main_1", "noise_1",
                                  "noise_2", "noise_3"]
    assert data.pairs == [(0, 1), (2, 3)]
    assert list(data.informative) == [0, 1, 2, 3, 4]
    assert len(np.unique(data.qid)) == 20 and np.all(np.diff(data.qid) >= 0)
    assert set(np.unique(data.y)) <= {0, 1, 2, 3}
    again = make_interactions(("and", "xor"), n_queries=20, n_main=1, n_noise=3,
                              random_state=4)
    np.testing.assert_array_equal(again.X, data.X)
    np.testing.assert_array_equal(again.y, data.y)


def test_an_unknown_effect_is_refused_by_name():
    with pytest.raises(ValueError, match="effects must name some of"):
        make_interactions(("and", "sum"))
    with pytest.raises(ValueError, match="effects must name some of"):
        make_interactions(())


@pytest.mark.parametrize("name", ["product", "xor", "switch"])
def test_the_pure_pairwise_effects_have_no_main_effect(name):
    """Averaged over one feature, the effect is the same whatever the other's
    value (up to sampling): a sum of one-feature shapes cannot see it."""
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-1, 1, 200_000), rng.uniform(-1, 1, 200_000)
    effect = INTERACTIONS[name](a, b)
    for x in (a, b):
        bins = np.digitize(x, np.linspace(-1, 1, 9)[1:-1])
        means = [effect[bins == k].mean() for k in range(8)]
        assert np.ptp(means) < 0.05 * np.ptp(effect)
    # while the pair itself moves the effect across its whole range
    cells = np.digitize(a, [0]) * 2 + np.digitize(b, [0])
    assert np.ptp([effect[cells == k].mean() for k in range(4)]) > 0.2 * np.ptp(effect)


def test_the_and_effect_has_main_effects_and_labels_follow_the_effects():
    data = make_interactions(("and",), n_queries=200, n_main=0, n_noise=2, noise=0.1,
                             random_state=1)
    a, b = data.X[:, 0], data.X[:, 1]
    both = (a > 0.2) & (b > 0.2)
    assert data.y[both].mean() > data.y[~both].mean() + 1.0
    assert abs(np.corrcoef(data.X[:, 2], data.y)[0, 1]) < 0.05  # noise has no effect
