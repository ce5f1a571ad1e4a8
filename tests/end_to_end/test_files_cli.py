"""Outputs that never half-exist and never replace an input, through the
``rsrank`` command line: the rest of its tests, through the API, are in
tests/integration/test_files.py."""


def test_results_may_go_beside_the_data_in_its_directory(tmp_path, bundled_root):
    import shutil

    from rsrank.cli import main

    data = tmp_path / "data"
    shutil.copytree(bundled_root / "Fold2", data / "Fold2")
    assert main(["train", str(data), "--max-iter", "2", "--quiet",
                 "--out", str(data / "results")]) == 0
    assert (data / "results" / "results.json").is_file()
