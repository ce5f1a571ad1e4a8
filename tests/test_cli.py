import pytest

from rsrank.cli import main


def test_info_on_bundled_data(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "Fold1/train" in out and "Fold5/test" in out
    assert "0:" in out  # label histogram


def test_info_on_ohsumed(capsys, ohsumed_root):
    assert main(["info", str(ohsumed_root / "Fold1" / "test.txt.gz")]) == 0
    line = capsys.readouterr().out.splitlines()[1]
    assert line.split()[1:4] == ["22", "3383", "45"]


def test_user_errors_are_one_line_on_stderr(tmp_path, capsys):
    assert main(["info", str(tmp_path / "missing.txt")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing.txt" in err and "Traceback" not in err
    bad = tmp_path / "bad.txt"
    bad.write_text("1 qid:1 1:0.5\n1 qid:1 1:NULL\n")
    assert main(["info", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "line 2" in err and "NULL" in err


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert "rsrank" in capsys.readouterr().out
