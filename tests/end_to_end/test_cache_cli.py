"""The binary cache of parsed files, through the ``rsrank`` command line: the
rest of its tests, through the API, are in tests/integration/test_cache.py."""

import shutil


from rsrank.cli import main

from integration.test_cache import changed, resave


def test_cli_cache_gives_the_same_results(tmp_path, bundled_root, capsys):
    root = tmp_path / "folds"
    shutil.copytree(bundled_root, root)
    argv = ["train", str(root), "--folds", "1", "--max-iter", "5", "--quiet"]
    assert main(argv) == 0
    plain = capsys.readouterr().out
    for _ in range(2):  # writes the cache, then reads it
        assert main(argv + ["--cache", str(tmp_path / "cache")]) == 0
        assert capsys.readouterr().out.replace(" --cache " + str(tmp_path / "cache"), "") == plain
    assert len(list((tmp_path / "cache").iterdir())) == 3


def test_cli_with_a_damaged_cache_warns_once_and_gives_the_same_table(tmp_path, bundled_root,
                                                                       capsys):
    root = tmp_path / "folds"
    shutil.copytree(bundled_root, root)
    cache = tmp_path / "cache"
    args = ["train", str(root), "--folds", "1", "--l1", "0", "--max-iter", "3",
            "--learning-rate", "0.01", "--quiet", "--cache", str(cache)]
    assert main(args + ["--out", str(tmp_path / "a")]) == 0
    clean = capsys.readouterr()
    for entry in cache.iterdir():
        if not entry.name.startswith("."):
            resave(entry, "indices", lambda a: changed(a, 3, 5_000_000))
    assert main(args + ["--out", str(tmp_path / "b")]) == 0
    damaged = capsys.readouterr()
    table = lambda text: [line for line in text.splitlines() if line.startswith("|")]  # noqa
    assert table(damaged.out) == table(clean.out)
    # one line for the train, vali and test entries
    (line,) = damaged.err.splitlines()
    assert "CacheWarning" in line and "failed a check (indices.npy changed since it was written" in line
    assert line.endswith("(and 2 more like it)")
