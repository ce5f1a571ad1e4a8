"""The contract every model kind keeps, tested once over ``KINDS``: the scikit-
learn checks, fit, partial_fit (fresh and after a fit), warm_start, save and
load (and a damaged file), refit_kept, every engine's export, the shape plot,
and names that are wrong refused before any work: through the command line."""

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
