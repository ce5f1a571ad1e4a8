"""Text for search engines and TREC tools is built only from checked strings:
feature names, model and profile names, docids and run tags that would change
what an engine or trec_eval reads are refused with the file, line or flag;
nothing is written then, and the inputs stay as they were."""

import gzip
import json

import numpy as np
import pytest

from rsrank import RSRank
from rsrank.cli import main
from rsrank.deployment.export import export_model, featureset_subset, upload_hint
from rsrank.reading.synthetic import make_raw_features


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    data = make_raw_features(60, random_state=0)
    model = RSRank(l1=0.3, max_iter=30, random_state=0).fit(data.X, data.y, qid=data.qid)
    model.set_feature_names(data.feature_names)
    path = tmp_path_factory.mktemp("model") / "model.json"
    model.save(path)
    assert 0 < np.count_nonzero(model.coef_) <= len(data.feature_names)
    return path


def _edited(model_file, tmp_path, change):
    document = json.loads(model_file.read_text())
    change(document)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(document))
    return path


def _rename(index, name):
    return lambda document: document["feature_names"].__setitem__(index, name)


BAD_EXPORTS = {
    # name: (model edit, export arguments, words of the one-line message)
    "a Vespa name that closes the feature": (
        _rename(0, "x) + 1000000 * attribute(boost"), ["--format", "vespa"],
        "is neither a Vespa rank feature"),
    "a Vespa name with a brace": (_rename(0, "x}{"), ["--format", "vespa"],
                                  "is neither a Vespa rank feature"),
    "a feature name with a line break": (_rename(0, "a\nrank-profile evil {"),
                                         ["--format", "vespa"], "control character"),
    "a feature name twice": (lambda d: d["feature_names"].__setitem__(
        1, d["feature_names"][0]), ["--format", "solr"], "is used twice"),
    "an empty feature name": (_rename(0, ""), ["--format", "elasticsearch"], "empty name"),
    "a rank-profile name with spaces and a brace": (
        lambda d: None, ["--format", "vespa", "--name", "bad name { x"], "is not a Vespa name"),
    "a model without a non-zero weight": (
        lambda d: d.__setitem__("coef", [0.0] * len(d["coef"])), ["--format", "solr"],
        "no non-zero weight"),
}


@pytest.mark.parametrize("case", list(BAD_EXPORTS))
def test_a_bad_export_is_refused_and_writes_nothing(model_file, tmp_path, case, capsys):
    change, args, words = BAD_EXPORTS[case]
    path = _edited(model_file, tmp_path, change)
    before = path.read_bytes()
    out = tmp_path / "out.txt"
    assert main(["export", str(path), *args, "--out", str(out)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert words in line
    assert not out.exists() and path.read_bytes() == before


@pytest.mark.parametrize("form", ["solr", "elasticsearch", "opensearch", "vespa"])
def test_every_format_refuses_an_all_zero_model(form):
    data = make_raw_features(20, random_state=3)
    model = RSRank(l1=1e9, max_iter=3).fit(data.X, data.y, qid=data.qid)
    assert not model.coef_.any()
    with pytest.raises(ValueError, match="no non-zero weight"):
        export_model(model, form)


@pytest.mark.parametrize("name", ["bm25(title)", "attribute(pagerank)",
                                  "fieldMatch(title).completeness", "nativeRank(title,body)",
                                  "tensorFromWeightedSet(attribute(x))"])
def test_vespa_keeps_rank_features(model_file, tmp_path, name, capsys):
    path = _edited(model_file, tmp_path, _rename(0, name))
    document = json.loads(path.read_text())
    if document["coef"][0] == 0:
        document["coef"][0] = 0.5
        path.write_text(json.dumps(document))
    assert main(["export", str(path), "--format", "vespa"]) == 0
    text = capsys.readouterr().out
    # an attribute that a document lacks is NaN in Vespa; it is read as 0
    term = f"if(isNan({name}) == 1.0, 0.0, {name})" if name.startswith("attribute(") else name
    assert f"* {term} +" in text or f"* {term}\n" in text
    assert "lacks scores as the value 0" in text


def test_opensearch_is_uploaded_to_the_plugins_ltr_path():
    hint = upload_hint("opensearch", featureset="set")
    assert "POST it to _ltr/_featureset/set/_createmodel" in hint and "_plugins" not in hint


def test_the_featureset_subset_holds_the_models_features_only(model_file, tmp_path, capsys):
    model = RSRank.load(model_file)
    names = model.feature_names()
    full = {"featureset": {"features": [
        {"name": name, "params": ["keywords"], "template_language": "mustache",
         "template": {"match": {name: "{{keywords}}"}}} for name in reversed(names)]}}
    (tmp_path / "full.json").write_text(json.dumps(full))
    out = tmp_path / "subset.json"
    assert main(["export", str(model_file), "--format", "elasticsearch",
                 "--subset-featureset", str(tmp_path / "full.json"), str(out)]) == 0
    assert "keep only these" not in capsys.readouterr().err
    kept = json.loads(out.read_text())["featureset"]["features"]
    assert sorted(f["name"] for f in kept) == sorted(n for n, _ in model.selected_features())
    assert kept[0] == next(f for f in full["featureset"]["features"]
                           if f["name"] == kept[0]["name"])
    # a featureset without one of the model's features: refused, nothing written
    del full["featureset"]["features"][-1]
    partial = {"featureset": {"features": [f for f in full["featureset"]["features"]
                                           if f["name"] != kept[0]["name"]]}}
    (tmp_path / "partial.json").write_text(json.dumps(partial))
    assert main(["export", str(model_file), "--format", "opensearch", "--subset-featureset",
                 str(tmp_path / "partial.json"), str(tmp_path / "no.json")]) == 2
    assert "has no feature" in capsys.readouterr().err
    assert not (tmp_path / "no.json").exists()
    with pytest.raises(ValueError, match="twice"):
        featureset_subset({"featureset": {"features": [{"name": "a"}, {"name": "a"}]}}, model)


def test_the_elasticsearch_export_says_the_plugin_computes_the_whole_featureset(model_file,
                                                                                capsys):
    assert main(["export", str(model_file), "--format", "elasticsearch"]) == 0
    assert "computes every feature of rsrank_features" in capsys.readouterr().err


# -- TREC runs ------------------------------------------------------------------------------

def _data(tmp_path, comments):
    lines = [f"{i % 3} qid:{1 + i // 3} 1:{i} 2:{i % 2} 3:1 4:{i} 5:2 #{c}\n"
             for i, c in enumerate(comments)]
    path = tmp_path / "data.txt"
    path.write_text("".join(lines))
    return path


BAD_RUNS = {
    "docids with spaces become one docid": (
        lambda t: _data(t, [f"docid = web page {i}" for i in range(6)]), [],
        "docid 'web' of query 1 again", 2),
    "a tag with a space": (lambda t: _data(t, [f"docid = d{i}" for i in range(6)]),
                           ["--tag", "my run"], "--tag: run tag 'my run'", None),
    "an empty tag": (lambda t: _data(t, [f"docid = d{i}" for i in range(6)]), ["--tag", ""],
                     "--tag: run tag ''", None),
}


@pytest.mark.parametrize("case", list(BAD_RUNS))
def test_a_run_trec_eval_would_misread_is_refused(model_file, tmp_path, case, capsys):
    make, args, words, line = BAD_RUNS[case]
    data = make(tmp_path)
    before = data.read_bytes()
    out = tmp_path / "run.trec"
    assert main(["predict", str(model_file), str(data), "--format", "trec", *args,
                 "--out", str(out)]) == 2
    (message,) = capsys.readouterr().err.splitlines()
    assert words in message
    if line is not None:
        assert f"{data}, line {line}:" in message
    assert not out.exists() and data.read_bytes() == before


def test_a_docid_that_is_not_utf8_is_refused_with_its_line(model_file, tmp_path, capsys):
    path = tmp_path / "data.txt.gz"
    with gzip.open(path, "wb") as handle:
        handle.write(b"1 qid:1 1:0.5 #docid = a\n0 qid:1 1:0.2 #docid = b\xff\xfe\n")
    assert main(["predict", str(model_file), str(path), "--format", "trec"]) == 2
    (message,) = capsys.readouterr().err.splitlines()
    assert "line 2:" in message and "not valid UTF-8" in message


def test_a_good_run_has_six_fields_on_every_line(model_file, tmp_path, capsys):
    data = _data(tmp_path, [f"docid = d{i}" for i in range(6)])
    assert main(["predict", str(model_file), str(data), "--format", "trec",
                 "--tag", "rsrank-1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 6 and all(len(line.split()) == 6 for line in lines)
    assert len({tuple(line.split()[::2][:2]) for line in lines}) == 6  # (qid, docid) unique


def test_a_names_file_must_name_every_feature(tmp_path, bundled_root, capsys):
    names = tmp_path / "names.txt"
    names.write_text("a\nb\nc\n")
    assert main(["train", str(bundled_root), "--folds", "1", "--l1", "0", "--max-iter", "2",
                 "--quiet", "--feature-names", str(names)]) == 2
    assert "names 3 of the 45 features" in capsys.readouterr().err


def test_a_file_without_the_models_features_is_named(model_file, tmp_path, capsys):
    data = tmp_path / "narrow.txt"
    data.write_text("1 qid:1 1:0.5 2:0.1 #docid = a\n0 qid:1 1:0.2 2:0.3 #docid = b\n")
    model = RSRank.load(model_file)
    used_beyond = [name for j, name in enumerate(model.feature_names())
                   if j >= 2 and model.coef_[j] != 0]
    assert used_beyond  # the fixture's model uses a feature past the second
    assert main(["predict", str(model_file), str(data)]) == 0
    (line,) = [text for text in capsys.readouterr().err.splitlines() if "warning" in text]
    assert f"{data} mentions features up to 2" in line and used_beyond[0] in line
