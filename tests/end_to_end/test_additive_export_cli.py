"""Additive models out to the engines and their pictures, through the
``rsrank`` command line: the rest of its tests, through the API, are in
tests/integration/test_additive_export.py."""

import json

import numpy as np
import pytest

from rsrank import RSRank
from rsrank.deployment.export import export_model, to_elasticsearch

from integration import test_additive_export

fitted = test_additive_export.fitted  # the fixture, shared with test_additive_export.py



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
