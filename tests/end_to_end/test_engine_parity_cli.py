"""Every export scored by each engine's rules (``rsrank export --check``),
through the ``rsrank`` command line: the rest of its tests, through the API,
are in tests/integration/test_engine_parity.py."""

import numpy as np

from rsrank.deployment.engines import engine_scores
from rsrank.deployment.export import export_model

from integration import test_engine_parity

edge_model = test_engine_parity.edge_model  # the fixture, shared with test_engine_parity.py



def test_rsrank_export_check_scores_the_export_by_each_versions_rules(edge_model, tmp_path,
                                                                      capsys, monkeypatch):
    import rsrank.deployment.trees
    from rsrank.cli import main
    from rsrank.evaluation.writers import write_letor

    model, held_out, qid = edge_model
    model.save(tmp_path / "m.json")
    write_letor(tmp_path / "test.txt", held_out, np.zeros(len(qid), dtype=int), qid)
    argv = ["export", str(tmp_path / "m.json"), "--format", "opensearch", "--out",
            str(tmp_path / "m.os"), "--check", str(tmp_path / "test.txt")]
    assert main(argv) == 0
    checks = [line for line in capsys.readouterr().err.splitlines() if " check " in line]
    assert [line.split()[3] for line in checks] == ["opensearch-3.7", "opensearch"]
    assert all(": 0 of 20 queries" in line and ", 0 with every 0 sent" in line
               for line in checks), checks
    # a --check file that cannot be read is one line, before anything is written
    bad = tmp_path / "bad.txt"
    bad.write_text("1 qid:1 1:abc\n")
    out = tmp_path / "none.os"
    assert main([*argv[:4], "--out", str(out), "--check", str(bad)]) == 2
    assert "bad.txt, line 1" in capsys.readouterr().err and not out.exists()
    # an export that sends a missing value the wrong way is caught, exit 1
    monkeypatch.setattr(rsrank.deployment.trees, "zero_goes_left", lambda node: False)
    assert main(argv) == 1
    checks = [line for line in capsys.readouterr().err.splitlines() if " check " in line]
    assert any(", 0 with every 0 sent" not in line for line in checks), checks


def test_without_the_guard_the_plugins_from_1_5_9_and_3_8_score_infinity_as_predict(
        edge_model, tmp_path, capsys):
    from rsrank.cli import main
    from rsrank.evaluation.writers import write_letor

    # a value beyond float32's range is +inf in the plugins: predict puts it above every
    # cut; the guard a lacking feature needs in OpenSearch LTR 3.2-3.7 sends it to the
    # branch of 0 instead, so either infinity or 3.2-3.7's lacking features is right
    model, held_out, _ = edge_model
    base = held_out[:1]
    rows = []
    for j in range(base.shape[1]):
        for value in (1e39, -1e39, np.nan):
            row = base.copy()
            row[0, j] = value
            rows.append(row)
    X = np.vstack(rows)
    expected = model.predict(np.where(np.isnan(X), 0.0, X))  # a lacking feature is 0
    infinite, lacking = ~np.isnan(X).any(axis=1), np.isnan(X).any(axis=1)

    def wrong(guard, engine):
        text = export_model(model, engine.split("-")[0], guard=guard)
        scores = engine_scores(text, X, model.feature_names(), engine)
        return np.abs(scores - expected) > 1e-5 * np.abs(expected).max()

    for engine in ("elasticsearch", "opensearch"):
        assert not wrong(False, engine).any(), engine
        assert wrong(True, engine)[infinite].any() and not wrong(True, engine)[lacking].any()
    assert wrong(False, "opensearch-3.7")[lacking].any()
    assert not wrong(True, "opensearch-3.7")[lacking].any()
    # the command line writes it on request, says what it promises, and checks 3.8 on
    path = tmp_path / "model.json"
    model.save(path)
    data = tmp_path / "rows.txt"
    write_letor(data, held_out[:40], np.zeros(40, dtype=int), np.repeat([1, 2], 20))
    assert main(["export", str(path), "--format", "opensearch", "--no-nan-guard",
                 "--out", str(tmp_path / "os.json"), "--check", str(data)]) == 0
    err = capsys.readouterr().err
    assert "beyond float32's range" in err and "check opensearch-3.7" not in err
    assert "check opensearch on" in err
    assert main(["export", str(path), "--format", "vespa", "--no-nan-guard"]) == 2
