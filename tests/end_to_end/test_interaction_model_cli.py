"""Models with pairwise interactions, through the ``rsrank`` command line: the
rest of its tests, through the API, are in
tests/integration/test_interaction_model.py."""

import re

import numpy as np
import pytest

from rsrank import RSRank
from rsrank.reading.synthetic import make_interactions


@pytest.fixture(scope="module")
def interaction_files(tmp_path_factory):
    from rsrank.evaluation import writers

    root = tmp_path_factory.mktemp("pairs")
    paths = {}
    for part, seed in (("train", 0), ("vali", 1), ("test", 2)):
        data = make_interactions(("xor",), n_queries=120 if part == "train" else 40,
                                 random_state=seed)
        writers.write_letor(root / f"{part}.txt", data.X, data.y, data.qid + 1000 * seed)
        paths[part] = root / f"{part}.txt"
    names = root / "features.txt"
    names.write_text("".join(f"{j + 1} {name}\n" for j, name in enumerate(data.feature_names)))
    paths["names"] = names
    return paths


def test_the_command_line_trains_reports_checks_and_draws_pairs(interaction_files, tmp_path,
                                                                 capsys):
    from rsrank.cli import main

    files, out = interaction_files, tmp_path / "run"
    assert main(["train", "--train", str(files["train"]), "--vali", str(files["vali"]),
                 "--test", str(files["test"]), "--feature-names", str(files["names"]),
                 "--additive", "--interactions", "3", "--monotone", "main_1:+1",
                 "--max-iter", "150", "--quiet", "--out", str(out)]) == 0
    report = capsys.readouterr().out
    assert "pairs: xor_a x xor_b" in report
    path = out / "models" / "Fold1.json"
    model = RSRank.load(path)
    assert ("xor_a", "xor_b") in dict(model.selected_interactions())
    shape, = [shape for shape in model.shape_functions() if shape["name"] == "main_1"]
    assert np.all(np.diff(shape["values"]) >= 0)
    for form in ("solr", "elasticsearch", "vespa"):
        assert main(["export", str(path), "--format", form, "--check",
                     str(files["test"])]) == 0
        capsys.readouterr()
    picture = tmp_path / "pairs.png"
    assert main(["plot", str(path), "--out", str(picture)]) == 0
    assert "the pairs xor_a x xor_b" in capsys.readouterr().out
    assert picture.stat().st_size > 0
    for argv, words in [(["--interactions", "2"], "set additive=True as well"),
                        (["--additive", "--interactions", "2", "--interaction-bins", "20"],
                         "from 2 to 16"),
                        (["--monotone", "main_1:+2"], "NAME:\\+1 or NAME:-1")]:
        try:  # refused by argparse (exit) or by the kind (a usage error, 2)
            code = main(["train", "--train", str(files["train"]), "--quiet", *argv])
        except SystemExit as stop:
            code = stop.code
        assert code == 2 and re.search(words, capsys.readouterr().err), argv
