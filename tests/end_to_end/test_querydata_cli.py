"""The query data built once, through the ``rsrank`` command line: the rest of
its tests, through the API, are in tests/integration/test_querydata.py."""

import json
import sys

import pytest

import rsrank
from rsrank.reading._queries import QueryGroups


@pytest.mark.parametrize("names", [False, True])
def test_one_fold_of_rsrank_train_validates_and_groups_each_split_once(
        bundled_root, monkeypatch, tmp_path, names):
    from rsrank.reading import _reading as datasets
    from rsrank.reading import querydata
    from rsrank.cli import main

    counts = {"parse": 0, "validate": 0, "group": 0}
    parse, check, group = (datasets._parse_file, querydata.check_array,
                           rsrank.reading._queries.group_queries)

    def counted(key, function, only=lambda *a, **k: True):
        def wrapper(*args, **kwargs):
            counts[key] += bool(only(*args, **kwargs))
            return function(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(datasets, "_parse_file", counted("parse", parse))
    monkeypatch.setattr(querydata, "check_array", counted("validate", check))
    grouping = counted("group", group, lambda qid, *a, **k: not isinstance(qid, QueryGroups))
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("rsrank") and \
                getattr(module, "group_queries", None) is group:
            monkeypatch.setattr(module, "group_queries", grouping)
    argv = ["train", str(bundled_root), "--folds", "1", "--quiet", "--max-iter", "3",
            "--out", str(tmp_path / "run")]
    if names:  # named features: the names fit the fold's width once it is read, no extra parse
        (tmp_path / "names.txt").write_text("1 first\n3 third\n")
        argv += ["--feature-names", str(tmp_path / "names.txt")]
    assert main(argv) == 0
    # train, vali and test: one each, whatever the grid (4 points by default), and the
    # test file read again once the model is ready (its values are not held while it
    # trains): a fourth parse, not a fourth check or grouping of its queries
    assert counts == {"parse": 4, "validate": 3, "group": 3}
    if names:
        model = json.loads((tmp_path / "run" / "models" / "Fold1.json").read_text())
        assert model["feature_names"][:4] == ["first", "f2", "third", "f4"]
        assert len(model["feature_names"]) == 45


def test_with_a_cache_the_test_file_read_again_after_the_fit_is_not_parsed_again(
        bundled_root, monkeypatch, tmp_path):
    from rsrank.reading import _reading
    from rsrank.cli import main

    parsed = []
    parse = _reading._parse_file
    monkeypatch.setattr(_reading, "_parse_file",
                        lambda *a, **k: parsed.append(a[0]) or parse(*a, **k))
    argv = ["train", str(bundled_root), "--folds", "1", "--quiet", "--max-iter", "3",
            "--cache", str(tmp_path / "cache")]
    assert main(argv + ["--out", str(tmp_path / "a")]) == 0
    assert sorted(map(str, parsed)) == sorted(str(bundled_root / "Fold1" / f"{split}.txt.gz")
                                              for split in ("test", "train", "vali"))
    assert main(argv + ["--out", str(tmp_path / "b")]) == 0
    assert len(parsed) == 3  # the second run reads every file from the cache
