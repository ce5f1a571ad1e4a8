"""The contract every model kind keeps, through the ``rsrank`` command line:
the rest of its tests, through the API, are in
tests/integration/test_kinds.py."""

from conftest import run_cli

from integration.test_kinds import no_work


def test_the_command_line_refuses_a_wrong_name_before_any_fit(bundled_root, capsys,
                                                              monkeypatch):
    no_work(monkeypatch)
    for flags in (["--monotone", "nosuch:+1"], ["--additive", "--interactions", "2",
                                                "--monotone", "f1:+1,nosuch:-1"]):
        code, err = run_cli(["train", bundled_root, "--folds", "1", *flags], capsys)
        assert code == 2 and err[-1].startswith("rsrank train: error: monotone: no feature "
                                                "is named 'nosuch'")
