"""Score files and runs are read by qid and docid, checked against the data,
and compared on the same query keys as a results directory."""

import json
import shutil

import numpy as np
import pytest

from rsrank import LetorFormatError, RSRank, load_letor
from rsrank.cli import main
from rsrank.evaluation.runs import read_scores


@pytest.fixture(scope="module")
def scored(bundled_root, tmp_path_factory):
    """A model's scores of the bundled Fold1 test file, written in the three
    layouts by ``rsrank predict``, and a one-seed run directory."""
    base = tmp_path_factory.mktemp("scored")
    data = base / "test.txt.gz"
    shutil.copy(bundled_root / "Fold1" / "test.txt.gz", data)
    run = base / "run"
    assert main(["train", str(bundled_root), "--folds", "1,2", "--l1", "0", "--max-iter", "4",
                 "--learning-rate", "0.01", "--quiet", "--out", str(run)]) == 0
    model = run / "models" / "Fold1.json"
    for form in ("scores", "tsv", "trec"):
        assert main(["predict", str(model), str(data), "--format", form,
                     "--out", str(base / f"s.{form}")]) == 0
    X, y, qid, docids = load_letor(data, return_docids=True)
    scores = RSRank.load(model).predict(X)
    return {"base": base, "data": data, "run": run, "model": model, "y": y, "qid": qid,
            "docids": docids, "scores": scores}


def _read(scored, path):
    return read_scores(path, len(scored["y"]), qid=scored["qid"], docids=scored["docids"],
                       data=scored["data"])


@pytest.mark.parametrize("form", ["scores", "tsv", "trec"])
def test_every_layout_gives_the_models_scores(scored, form):
    np.testing.assert_allclose(_read(scored, scored["base"] / f"s.{form}"), scored["scores"],
                               rtol=1e-9)


def _shuffled(lines, seed=0):
    order = np.random.default_rng(seed).permutation(len(lines))
    return [lines[i] for i in order]


@pytest.mark.parametrize("form", ["tsv", "trec"])
def test_a_run_in_any_order_scores_the_same_documents(scored, form, tmp_path):
    lines = (scored["base"] / f"s.{form}").read_text().splitlines(keepends=True)
    header, body = (lines[:1], lines[1:]) if form == "tsv" else ([], lines)
    if form == "tsv":  # sorted by score, as a user's own run may be
        body = sorted(body, key=lambda line: -float(line.split("\t")[2]))
    else:
        body = _shuffled(body)
    (tmp_path / "r").write_text("".join(header + body))
    np.testing.assert_allclose(_read(scored, tmp_path / "r"), scored["scores"], rtol=1e-9)
    assert main(["evaluate", "--scores", str(tmp_path / "r"), str(scored["data"])]) == 0


def _tsv_rows(scored):
    return (scored["base"] / "s.tsv").read_text().splitlines(keepends=True)


def _trec_rows(scored):
    return (scored["base"] / "s.trec").read_text().splitlines(keepends=True)


BAD_RUNS = {
    # name: (make lines, message, the line it names or None)
    "TSV: a document twice": (lambda s: _tsv_rows(s) + _tsv_rows(s)[1:2],
                              "again (first on line 2)", -1),
    "TSV: a document the data lacks": (
        lambda s: _tsv_rows(s)[:3] + ["1\tnot-a-doc\t0.5\n"] + _tsv_rows(s)[3:],
        "'not-a-doc' of query 1 is not in", 4),
    "TSV: a query the data lacks": (
        lambda s: _tsv_rows(s) + ["99999\t1\t0.5\n"], "of query 99999 is not in", -1),
    "TSV: a document without a score": (lambda s: _tsv_rows(s)[:-1], "no score for 1 of the",
                                        None),
    "TSV: two fields": (lambda s: _tsv_rows(s)[:2] + ["1\t0.5\n"] + _tsv_rows(s)[2:],
                        "2 tab-separated fields", 3),
    "TSV: a score that is not a number": (
        lambda s: _tsv_rows(s)[:2] + ["\t".join(_tsv_rows(s)[2].split("\t")[:2]) + "\tnan\n"]
        + _tsv_rows(s)[3:], "score 'nan' is not a finite number", 3),
    "TREC: five fields": (lambda s: _trec_rows(s)[:4] + [" ".join(
        _trec_rows(s)[4].split()[:5]) + "\n"] + _trec_rows(s)[5:], "TREC runs have 6", 5),
    "TREC: a rank that is not a number": (lambda s: _trec_rows(s)[:1] + [" ".join(
        _trec_rows(s)[1].split()[:3] + ["first"] + _trec_rows(s)[1].split()[4:]) + "\n"]
        + _trec_rows(s)[2:], "rank 'first'", 2),
    "TREC: a document twice": (lambda s: _trec_rows(s) + _trec_rows(s)[:1], "again", -1),
    "scores: a qid before the score": (
        lambda s: [f"1 {v}" for v in (s["base"] / "s.scores").read_text().split()],
        "2 fields; a score file has one number per line", 1),
    "scores: one too few": (lambda s: (s["base"] / "s.scores").read_text().splitlines(True)[:-1],
                            "scores for", None),
}


@pytest.mark.parametrize("case", list(BAD_RUNS))
def test_a_bad_run_is_refused_with_its_line(scored, case, tmp_path, capsys):
    make, message, line = BAD_RUNS[case]
    lines = [text if text.endswith("\n") else text + "\n" for text in make(scored)]
    path = tmp_path / "bad.run"
    path.write_text("".join(lines))
    before = path.read_bytes(), scored["data"].read_bytes()
    with pytest.raises(LetorFormatError, match=message.replace("(", r"\(").replace(")", r"\)")) \
            as raised:
        _read(scored, path)
    text = str(raised.value)
    assert str(path) in text
    if line is not None:
        assert f"line {line if line > 0 else len(lines)}:" in text
    # the command line says the same in one line and exits 2
    assert main(["evaluate", "--scores", str(path), str(scored["data"])]) == 2
    (error,) = capsys.readouterr().err.splitlines()
    assert message.split(" (")[0] in error and str(path) in error
    assert (path.read_bytes(), scored["data"].read_bytes()) == before


def test_data_with_one_docid_twice_cannot_be_matched(scored, tmp_path):
    docids = scored["docids"].copy()
    docids[1] = docids[0]
    with pytest.raises(LetorFormatError, match="on data rows 1 and 2"):
        read_scores(scored["base"] / "s.tsv", len(docids), qid=scored["qid"], docids=docids,
                    data=scored["data"])
    # a file of scores needs no docids
    np.testing.assert_allclose(read_scores(scored["base"] / "s.scores", len(docids)),
                               scored["scores"], rtol=1e-9)


def test_a_keyed_run_needs_the_data(scored):
    with pytest.raises(LetorFormatError, match="matched to the data by qid and docid"):
        read_scores(scored["base"] / "s.trec")


def test_compare_a_run_directory_with_score_files_of_one_fold(scored, capsys):
    run, data = scored["run"], scored["data"]
    assert main(["compare", str(run), str(scored["base"] / "s.tsv"), "--data", str(data),
                 "--json", "--resamples", "100"]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    n_queries = len(np.unique(scored["qid"]))
    assert {row["n_queries"] + row["left_out"] for row in document["tests"]} == {n_queries}
    assert "Fold1 test queries" in captured.err or "1 test queries" in captured.err
    # the same model's scores: no difference on any metric
    assert all(row["difference"] == pytest.approx(0, abs=1e-12) for row in document["tests"])


def test_compare_refuses_a_file_that_is_no_folds_test(scored, bundled_root, capsys):
    vali = bundled_root / "Fold1" / "vali.txt.gz"
    X, y, qid = load_letor(vali)
    (scored["base"] / "vali.scores").write_text("".join(f"{v}\n" for v in X.sum(axis=1).A1))
    assert main(["compare", str(scored["run"]), str(scored["base"] / "vali.scores"),
                 "--data", str(vali)]) == 2
    assert "no fold of the run holds exactly the queries" in capsys.readouterr().err


def test_compare_says_which_queries_a_test_left_out(scored, tmp_path, capsys):
    edited = tmp_path / "edited"
    shutil.copytree(scored["run"], edited)
    document = json.loads((edited / "results.json").read_text())
    document["folds"][0]["per_query"]["MAP"][0] = float("nan")
    (edited / "results.json").write_text(json.dumps(document))
    assert main(["compare", str(scored["run"]), str(edited), "--metrics", "MAP,NDCG@10",
                 "--resamples", "10"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("left out of that test: MAP of " + str(edited) + ": 1.")
