"""Additive models out to the engines: what each format holds (the scoring of
every export by each engine's rules is in test_engine_parity.py), the
pictures, and what cannot be exported."""

import json

import numpy as np
import pytest

from rsrank import RSRank
from rsrank.deployment.export import export_model, to_elasticsearch, to_solr
from rsrank.reading.synthetic import make_nonlinear

F32 = np.float32


@pytest.fixture(scope="module")
def fitted():
    data = make_nonlinear(n_queries=80, random_state=3)
    train = data.qid <= 60
    model = RSRank(additive=True, max_bins=16, max_iter=30, learning_rate=0.1)
    model.fit(data.X[train], data.y[train], qid=data.qid[train])
    model.set_feature_names(data.feature_names)
    return model, data.X[~train]


def test_only_the_kept_features_appear_and_the_formats_parse(fitted, capsys, tmp_path):
    from rsrank.cli import main

    model, _ = fitted
    kept = [name for name, _ in model.selected_features()]
    path = tmp_path / "m.json"
    model.save(path)
    for form in ("solr", "elasticsearch", "opensearch", "vespa"):
        text = export_model(model, form)
        for name in model.feature_names():
            assert (name in text) == (name in kept), (form, name)
        assert main(["export", str(path), "--format", form]) == 0
        out = capsys.readouterr()
        assert out.out == text
        assert f"the engine computes {len(kept)} of 20 features" in out.err
        # and one line on what the engine's scores promise, missing features included
        promise = [line for line in out.err.splitlines() if line.startswith(f"rsrank export: {form}:")]
        assert len(promise) == 1 and "scores as 0" in promise[0], out.err
    definition = json.loads(to_elasticsearch(model)["model"]["model"]["definition"])
    for tree in definition:  # the plugin's structural checks
        stack = [tree]
        while stack:
            node = stack.pop()
            if "leaf" in node:
                continue
            assert [c["nodeid"] for c in node["children"]] == [node["yes"], node["no"]]
            assert {"nodeid", "depth", "split", "split_condition"} <= set(node)
            stack.extend(node["children"])


def test_solr_thresholds_land_on_the_model_threshold_after_the_slack():
    from rsrank.deployment.trees import solr_scale_exponent, solr_threshold

    rng = np.random.default_rng(0)
    values = np.concatenate([rng.normal(size=300), rng.exponential(size=100) * 1e4,
                             [0.0, -0.0, 1.0, 0.5, 1e-3, 3e38]]).astype(np.float32)
    for t in values:  # away from zero the sum lands on t itself
        c = solr_threshold(t)
        assert c is not None and F32(c + F32(1e-6)) == t, t
    # near zero and at -1 no threshold lands: a power of
    # two scales the feature until every one does
    hard = np.array([1e-9, 1.234e-7, 5e-8, -1.0, 1e-42], dtype=np.float32)
    assert [solr_threshold(t) for t in hard] == [None] * 5
    e = solr_scale_exponent(hard)
    assert e is not None and e > 0
    assert all(solr_threshold(F32(t * F32(2.0 ** e))) is not None for t in hard)
    # cuts that no power of two can bring within range at once are refused
    assert solr_scale_exponent(np.array([1e-44, 3e38], dtype=np.float32)) is None


def test_an_additive_model_in_a_scaling_pipeline_is_refused(fitted):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    model, held_out = fitted
    pipeline = make_pipeline(StandardScaler().fit(held_out), model)
    with pytest.raises(ValueError, match="train it on the raw features"):
        to_solr(pipeline)


def test_rsrank_plot_draws_each_kept_feature(fitted, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from rsrank.cli import main
    from rsrank.deployment.plotting import plot_shapes

    model, _ = fitted
    path = tmp_path / "m.json"
    model.save(path)
    out = tmp_path / "pictures" / "shapes.png"
    assert main(["plot", str(path), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert capsys.readouterr().out.startswith(f"wrote {out}")
    figure = plot_shapes(model)
    # a shape and a density panel per kept feature
    assert len(figure.axes) == 2 * len(model.selected_features())
    # refusals: one line each, nothing written
    RSRank(max_iter=2).fit(np.ones((4, 2)), [0, 1, 0, 1], qid=[1, 1, 2, 2]).save(
        tmp_path / "linear.json")
    for argv, words in [(["plot", str(tmp_path / "linear.json"), "--out",
                          str(tmp_path / "x.png")], "additive models"),
                        (["plot", str(path), "--out", str(path)], "input")]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and words in err, err
    assert not (tmp_path / "x.png").exists()
    assert json.loads(path.read_text())["model"] == "additive"
