"""CSV ranking data, through the ``rsrank`` command line: the rest of its
tests, through the API, are in tests/integration/test_csv.py."""

import json

import numpy as np
import pytest

from rsrank import load_letor
from rsrank.cli import main
from rsrank.reading.synthetic import make_letor_like
from rsrank.evaluation.writers import write_letor

from integration.test_csv import write_csv


def test_rsrank_train_on_csv_files_equals_letor_text_and_names_features(tmp_path, capsys):
    data = make_letor_like(n_queries=40, docs_per_query=(10, 20), n_features=6,
                           n_informative=3, n_redundant=1, n_constant=1, random_state=1)
    names = ["bm25", "tfidf", "pagerank", "clicks", "age", "length"]
    X = np.round(data.X, 6)
    for kind in ("csv", "txt"):
        fold = tmp_path / kind / "Fold1"
        fold.mkdir(parents=True)
        for split, rows in (("train", data.qid < 24), ("vali", (data.qid >= 24) & (data.qid < 32)),
                            ("test", data.qid >= 32)):
            if kind == "csv":
                write_csv(fold / f"{split}.csv", X[rows], data.y[rows], data.qid[rows], names)
            else:
                write_letor(fold / f"{split}.txt", X[rows], data.y[rows], data.qid[rows])
    results = {}
    for kind in ("csv", "txt"):
        assert main(["train", str(tmp_path / kind), "--max-iter", "30", "--quiet",
                     "--out", str(tmp_path / f"run-{kind}")]) == 0
        results[kind] = json.loads((tmp_path / f"run-{kind}" / "results.json").read_text())
    a, b = results["csv"]["folds"][0], results["txt"]["folds"][0]
    assert a["test"] == b["test"] and a["params"] == b["params"]
    # the same weights, named by the header instead of f1..f6
    assert [w for _, w in a["selected_features"]] == [w for _, w in b["selected_features"]]
    assert [n for n, _ in a["selected_features"]] == [
        names[int(n[1:]) - 1] for n, _ in b["selected_features"]]
    capsys.readouterr()


def reordered(text, order):
    """A CSV text with its columns in ``order`` (names of its header)."""
    lines = [line.split(",") for line in text.splitlines()]
    where = [lines[0].index(name) for name in order]
    return "".join(",".join(fields[k] for k in where) + "\n" for fields in lines)


def test_csv_files_of_one_dataset_are_matched_by_column_name(tmp_path, capsys):
    rows = "".join(f"{q},{(q * d) % 3},{d / 7:.4f},{(q + d) % 5},{d % 2}\n"
                   for q in range(1, 9) for d in range(6))
    text = "qid,label,bm25,clicks,fresh\n" + rows
    runs = {}
    for name, vali_order in (("same", ["qid", "label", "bm25", "clicks", "fresh"]),
                             ("moved", ["fresh", "label", "clicks", "qid", "bm25"])):
        fold = tmp_path / name / "Fold1"
        fold.mkdir(parents=True)
        (fold / "train.csv").write_text(text)
        (fold / "vali.csv").write_text(reordered(text, vali_order))
        (fold / "test.csv").write_text(reordered(text, vali_order[::-1]))
        assert main(["train", str(tmp_path / name), "--quiet", "--max-iter", "10", "--l1",
                     "0", "--out", str(tmp_path / f"run-{name}")]) == 0
        runs[name] = json.loads((tmp_path / f"run-{name}" / "results.json").read_text())
    assert runs["moved"]["folds"][0]["test"] == runs["same"]["folds"][0]["test"]
    for key in ("vali_score", "selected_features", "per_query"):
        assert runs["moved"]["folds"][0][key] == runs["same"]["folds"][0][key]
    fold = tmp_path / "same" / "Fold1"
    (fold / "vali.csv").write_text(text.replace("clicks", "clickz", 1))
    assert main(["train", str(tmp_path / "same"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "vali.csv, line 1: no column 'clicks' of the features of" in err
    assert "column 'clickz' is not among the features of" in err and err.count("\n") == 1
    (fold / "vali.csv").write_text(text)
    assert main(["train", str(tmp_path / "same"), "--quiet", "--stream"]) == 2
    assert "a CSV file is read whole, not streamed" in capsys.readouterr().err


def test_a_model_scores_a_csv_by_its_column_names(tmp_path, capsys):
    rows = "".join(f"{q},{(q * d) % 3},{d / 7:.4f},{(q + d) % 5},{d % 2},x{q}-{d}\n"
                   for q in range(1, 9) for d in range(6))
    text = "qid,label,bm25,clicks,fresh,docid\n" + rows
    (tmp_path / "train.csv").write_text(text)
    model = tmp_path / "model.json"
    assert main(["train", "--train", str(tmp_path / "train.csv"), "--quiet", "--max-iter",
                 "20", "--l1", "0", "--out", str(tmp_path / "run")]) == 0
    (tmp_path / "run" / "models" / "Fold1.json").rename(model)
    capsys.readouterr()
    scores = {}
    for name, order in (("same", ["qid", "label", "bm25", "clicks", "fresh", "docid"]),
                        ("moved", ["docid", "fresh", "bm25", "label", "clicks", "qid"])):
        (tmp_path / f"{name}.csv").write_text(reordered(text, order))
        assert main(["predict", str(model), str(tmp_path / f"{name}.csv")]) == 0
        scores[name] = capsys.readouterr().out
        assert main(["evaluate", str(model), str(tmp_path / f"{name}.csv")]) == 0
        scores[name + " evaluate"] = capsys.readouterr().out.split("\n", 1)[1]
    assert scores["moved"] == scores["same"] and len(scores["same"].split()) == 48
    assert scores["moved evaluate"] == scores["same evaluate"]
    for header, words in (("qid,label,bm25,clickz,fresh,docid", ["no column 'clicks'",
                                                                  "'clickz' is not among"]),
                          ("qid,label,bm25,fresh,docid", ["no column 'clicks'"]),
                          ("qid,label,bm25,clicks,fresh,docid,age", ["'age' is not among"])):
        width = len(header.split(","))
        body = "".join(",".join((line.split(",") + ["1"])[:width]) + "\n"
                       for line in rows.splitlines())
        if "clicks" not in header and "clickz" not in header:
            body = "".join(",".join(line.split(",")[:3] + line.split(",")[4:]) + "\n"
                           for line in rows.splitlines())
        (tmp_path / "bad.csv").write_text(header + "\n" + body)
        for command in (["predict", str(model)], ["evaluate", str(model)],
                        ["export", str(model), "--format", "solr", "--check"]):
            assert main(command + [str(tmp_path / "bad.csv")]) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and "bad.csv, line 1: " in err, err
            assert all(word in err for word in words), err
            assert "matched by name" in err
    # a model of LETOR text knows its features as f1, f2, ...: a CSV is matched to those
    (tmp_path / "train.txt").write_text("".join(
        f"{fields[1]} qid:{fields[0]} 1:{fields[2]} 2:{fields[3]} 3:{fields[4]}\n"
        for fields in (line.split(",") for line in rows.splitlines())))
    assert main(["train", "--train", str(tmp_path / "train.txt"), "--quiet", "--max-iter", "5",
                 "--l1", "0", "--out", str(tmp_path / "run-txt")]) == 0
    capsys.readouterr()
    assert main(["predict", str(tmp_path / "run-txt" / "models" / "Fold1.json"),
                 str(tmp_path / "same.csv")]) == 2
    err = capsys.readouterr().err
    assert "no column 'f1', 'f2', 'f3' of the model's features" in err and err.count("\n") == 1


def test_a_cell_beyond_the_csv_field_limit_is_one_line(tmp_path, capsys):
    path = tmp_path / "big.csv"
    path.write_text("qid,label,bm25\n1,0,0.5\n1,1," + "9" * 200_000 + "\n")
    with pytest.raises(ValueError, match=r"big.csv, line 3: a cell longer than 131,072"):
        load_letor(path)
    assert main(["info", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a cell longer than" in err
