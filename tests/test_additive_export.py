"""Additive models in the engines: each format evaluated by that engine's own
rules (from their sources: Solr's MultipleAdditiveTreesModel, the
Elasticsearch/OpenSearch LTR plugin's NaiveAdditiveDecisionTree, Vespa's
if() expressions), on held-out rows and on values at, just below and just
above every threshold."""

import json
import re

import numpy as np
import pytest

from rsrank import RSRank
from rsrank.export import export_model, shape_trees, to_elasticsearch, to_solr, to_vespa
from rsrank.synthetic import make_nonlinear

F32 = np.float32


def solr_score(document, row):
    """Solr: float32 everywhere; a threshold read from the model gets
    1e-6f added; x <= threshold goes left; a tree scores weight * leaf."""
    index = {f["name"]: j for j, f in enumerate(document["features"])}
    total = F32(0)
    for tree in document["params"]["trees"]:
        node = tree["root"]
        while "value" not in node:
            threshold = F32(F32(node["threshold"]) + F32(1e-6))
            node = node["left"] if row[index[node["feature"]]] <= threshold else node["right"]
        total = F32(total + F32(F32(tree["weight"]) * F32(node["value"])))
    return total


def xgboost_json_score(body, values):
    """The LTR plugin: float32 condition; threshold > x goes to yes (the
    first child), NaN to missing; leaves float32, summed in float32."""
    total = F32(0)
    for tree in json.loads(body["model"]["model"]["definition"]):
        node = tree
        while "leaf" not in node:
            x = values[node["split"]]
            if np.isnan(x):
                go = node["missing"]
            else:
                go = node["yes"] if F32(node["split_condition"]) > x else node["no"]
            node = next(c for c in node["children"] if c["nodeid"] == go)
        total = F32(total + F32(node["leaf"]))
    return total


def vespa_score(text, values):
    """Vespa's expression in double: a sum of if(attribute(f) < c, a, b)."""
    expression = re.search(r"expression \{\s*(.*?)\s*\}", text, re.S).group(1)
    tokens = re.findall(r"if\(|attribute\([A-Za-z_][A-Za-z0-9_]*\)|[-+]?[0-9.]+(?:e[-+]?[0-9]+)?"
                        r"|<|,|\)|\+", expression)
    position = 0

    def take():
        nonlocal position
        position += 1
        return tokens[position - 1]

    def term():
        token = take()
        if token == "if(":
            name = take()[len("attribute("):-1]
            assert take() == "<"
            limit = float(take())
            assert take() == ","
            below = term()
            assert take() == ","
            above = term()
            assert take() == ")"
            return below if float(values[name]) < limit else above
        return float(token)

    total = term()
    while position < len(tokens):
        assert take() == "+"
        total += term()
    return total


@pytest.fixture(scope="module")
def fitted():
    data = make_nonlinear(n_queries=80, random_state=3)
    train = data.qid <= 60
    model = RSRank(additive=True, max_bins=16, max_iter=30, learning_rate=0.1)
    model.fit(data.X[train], data.y[train], qid=data.qid[train])
    model.set_feature_names(data.feature_names)
    return model, data.X[~train]


def probe_rows(model, held_out):
    """Held-out rows, then rows that put one feature at, just below and just
    above each of its thresholds in turn (float32 neighbours)."""
    rows = [held_out[:40].astype(np.float32)]
    base = held_out[:1].astype(np.float32)
    for shape in model.shape_functions():
        for t in shape["thresholds"]:
            for value in (np.nextafter(t, F32(-np.inf)), t, np.nextafter(t, F32(np.inf))):
                row = base.copy()
                row[0, shape["feature"]] = value
                rows.append(row)
    return np.vstack(rows)


def test_every_engine_scores_like_predict(fitted):
    model, held_out = fitted
    rows = probe_rows(model, held_out)
    expected = model.predict(rows)
    names = model.feature_names()
    solr, elastic, vespa = to_solr(model), to_elasticsearch(model), to_vespa(model)
    used = {name for name, _ in shape_trees(model)}
    assert [f["name"] for f in solr["features"]] == [n for n in names if n in used]
    # a routing mistake moves a score by a whole step, far above float32 rounding
    steps = np.abs(model.coef_[model.coef_ != 0])
    tolerance = 1e-6 * (1 + np.abs(expected).max())
    assert steps.min() > 10 * tolerance
    for row, want in zip(rows, expected):
        values = dict(zip(names, row))
        solr_row = np.array([values[f["name"]] for f in solr["features"]], dtype=np.float32)
        assert abs(float(solr_score(solr, solr_row)) - want) <= tolerance
        assert abs(float(xgboost_json_score(elastic, values)) - want) <= tolerance
        assert abs(vespa_score(vespa, values) - want) <= tolerance


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
    from rsrank.export import _solr_threshold

    rng = np.random.default_rng(0)
    values = np.concatenate([rng.normal(size=300), rng.exponential(size=100) * 1e4,
                             [0.0, 1e-7, -1e-7, 1.0, 0.5, 1e-3]]).astype(np.float32)
    exact = 0
    for t in values:
        c = _solr_threshold(t)
        landed = F32(c + F32(1e-6))
        assert landed <= t and F32(np.nextafter(c, F32(np.inf)) + F32(1e-6)) > t
        exact += landed == t
        if abs(t) > 2e-6:  # away from zero the sum lands on t itself
            assert landed == t, t
    assert exact >= len(values) - 2


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
    from rsrank.plotting import plot_shapes

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
