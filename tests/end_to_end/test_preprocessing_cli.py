"""Feature scaling, through the ``rsrank`` command line: the rest of its tests,
through the API, are in tests/integration/test_preprocessing.py."""

import numpy as np
import pytest



@pytest.mark.parametrize("values, methods", [
    ((1e160, -3e159), ["zscore"]),         # squares overflow; the range does not
    ((1e308, -1e308), ["zscore", "minmax"]),  # the range overflows too
])
def test_a_scaling_that_overflows_names_the_feature(values, methods, tmp_path, capsys):
    from rsrank import RSRank
    from rsrank.cli import main

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    X[:, 2] = rng.choice(values, 40)
    y, qid = rng.integers(0, 2, 40), np.repeat(np.arange(4), 10)
    for method in methods:
        with pytest.raises(ValueError, match=r"feature 3 has values from .* its "
                           f"{method} scaling overflows float64"):
            RSRank(normalize=method, max_iter=2).fit(X, y, qid=qid)
    if methods == ["zscore"]:  # min-max scales such a feature fine
        model = RSRank(normalize="minmax", max_iter=2).fit(X, y, qid=qid)
        assert np.all(np.isfinite(model.predict(X)))
    path = tmp_path / "train.txt"
    path.write_text("".join(f"{y[i]} qid:{qid[i]} " + " ".join(
        f"{j + 1}:{float(X[i, j])!r}" for j in range(3)) + "\n" for i in range(40)))
    assert main(["train", "--train", str(path), "--dtype", "float64", "--l1", "0",
                 "--max-iter", "2", "--quiet"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "feature 3 has values from" in line and "divide it by a constant" in line
