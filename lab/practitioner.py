"""A search engineer's path through RSRank, measured end to end with the CLI.

    python scripts/practitioner.py [--out results] [--seeds 5]
        [--lightgbm ../shared/data/LightGBM-lambdarank-example]

Writes ``practitioner.md``, ``practitioner.json`` and ``exports/`` (the
seed-0 raw-feature model in the four engine formats) into ``--out``:

1. **Raw features** (``rsrank.reading.synthetic.make_raw_features``: BM25 2-30,
   PageRank near 1e-6, document length 50-8,000 with no signal, click
   counts), written as LETOR train/vali/test files, one draw per seed. For
   each: ``rsrank train`` with the old defaults (no scaling, online steps,
   l1 = 0), with today's defaults, and the best single feature chosen on
   vali; test NDCG@10 (LETOR convention) and a paired t-test over the test
   queries of all seeds.
2. **Exports** of the default model: the features each engine computes.
3. **LightGBM's layout**: ``rsrank train <dir>`` on LightGBM's lambdarank
   example (rank.train + .query files; vali = a seeded 20% of the training
   queries) against LightGBM lambdarank on the same split, early-stopped on
   the same vali queries, per seed; NDCG@10 on rank.test under the LETOR
   and LightGBM conventions, paired over the test queries.
4. **The bundled data's default run**: non-zero weights against the 8
   features of the generating model.
"""

import argparse
import contextlib
import io
import json
import tempfile
from pathlib import Path

import numpy as np
from scipy import stats

from rsrank import RSRank, __version__, load_letor
from rsrank.cli import main as rsrank_main
from rsrank.reading.datasets import bundled_data_path
from rsrank.reading.layouts import load_splits
from rsrank.evaluation.writers import write_letor
from rsrank.deployment.export import FORMATS, engine_features, export_model
from rsrank.evaluation.metrics import ndcg_per_query
from rsrank.reading.synthetic import make_raw_features

from _bench import SHARED_DATA, command_line, write_report

REPO = Path(__file__).resolve().parents[1]


def cli(*argv):
    """Run ``rsrank`` in-process; returns (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = rsrank_main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def ndcg10(y, scores, qid, convention="letor"):
    return ndcg_per_query(y, scores, qid, 10, convention=convention)


def raw_features(work, seeds, out):
    names = make_raw_features(1).feature_names
    (work / "features.txt").write_text("".join(f"{j + 1} {n}\n" for j, n in enumerate(names)))
    rows, per_query = [], {"old": [], "default": [], "single": []}
    for seed in range(seeds):
        files = {}
        for offset, split in enumerate(("train", "vali", "test")):
            data = make_raw_features(300 if split == "train" else 100,
                                     random_state=3 * seed + offset)
            files[split] = work / f"raw{seed}.{split}.txt"
            write_letor(files[split], data.X, data.y, data.qid + 1000 * offset,
                        docids=[f"{split}{i}" for i in range(len(data.y))])
        common = ["--train", files["train"], "--vali", files["vali"], "--test", files["test"],
                  "--feature-names", work / "features.txt", "--quiet"]
        runs = {}
        for name, extra in (("old", ["--normalize", "none", "--batch-size", "1", "--l1", "0",
                                     "--learning-rate", "0.01", "--within", "0"]),
                            ("default", [])):
            code, _, err = cli("train", *common, *extra, "--out", work / f"run{seed}.{name}")
            assert code == 0, err
            runs[name] = (work / f"run{seed}.{name}", err.strip())
        X, y, qid = load_letor(files["test"])
        Xv, yv, qv = load_letor(files["vali"])
        best = max(((j, sign) for j in range(X.shape[1]) for sign in (1, -1)),
                   key=lambda c: ndcg10(yv, c[1] * Xv[:, c[0]].toarray().ravel(), qv).mean())
        single = ndcg10(y, best[1] * X[:, best[0]].toarray().ravel(), qid)
        row = {"seed": seed, "single_feature": f"{'-' if best[1] < 0 else ''}{names[best[0]]}",
               "single_ndcg10": float(single.mean())}
        for name, (directory, warning) in runs.items():
            model = RSRank.load(directory / "models" / "Fold1.json")
            values = ndcg10(y, model.predict(X), qid)
            per_query[name].append(values)
            row[f"{name}_ndcg10"] = float(values.mean())
            row[f"{name}_nonzero"] = int(np.count_nonzero(model.coef_))
            row[f"{name}_warning"] = warning
            if name == "default":
                row["default_features"] = [n for n, _ in model.selected_features()]
                if seed == 0:
                    exported = write_exports(model, out / "exports")
        per_query["single"].append(single)
        rows.append(row)
    pooled = {k: np.concatenate(v) for k, v in per_query.items()}
    tests = {f"default_vs_{other}": paired(pooled["default"], pooled[other])
             for other in ("single", "old")}
    return {"rows": rows, "tests": tests, "exports": exported,
            "n_test_queries": int(len(pooled["default"]))}


def paired(a, b):
    result = stats.ttest_rel(a, b)
    return {"mean_difference": float(np.mean(a - b)), "t": float(result.statistic),
            "p": float(result.pvalue), "n_queries": int(len(a))}


def write_exports(model, directory):
    directory.mkdir(parents=True, exist_ok=True)
    suffix = {"solr": "json", "elasticsearch": "json", "opensearch": "json", "vespa": "sd"}
    for form in FORMATS:
        (directory / f"{form}.{suffix[form]}").write_text(export_model(model, form))
    return {"n_features": int(model.n_features_in_),
            "engine_features": [name for _, name in engine_features(model)],
            "files": [f"exports/{form}.{suffix[form]}" for form in FORMATS]}


def lightgbm_layout(root, work, seeds):
    import lightgbm

    rows, per_query = [], {"rsrank": [], "lightgbm": []}
    test_path = root / "rank.test.gz"
    for seed in range(seeds):
        code, _, err = cli("train", root, "--seed", seed, "--quiet", "--out",
                           work / f"lgb{seed}")
        assert code == 0, err
        result = json.loads((work / f"lgb{seed}" / "results.json").read_text())["folds"][0]
        model = RSRank.load(work / f"lgb{seed}" / "models" / "Fold1.json")
        # the same split the CLI made: load_splits with the same seed
        fold = load_splits(root / "rank.train.gz", None, test_path, random_state=seed)
        (X, y, qid), (Xv, yv, qv), (Xt, yt, qt) = fold.train, fold.vali, fold.test

        def sizes(q):
            return np.unique(q, return_counts=True)[1]  # qids are contiguous and increasing

        booster = lightgbm.train(
            {"objective": "lambdarank", "metric": "ndcg", "eval_at": [10], "verbosity": -1,
             "seed": seed, "num_threads": 2},
            lightgbm.Dataset(X, y, group=sizes(qid)), num_boost_round=500,
            valid_sets=[lightgbm.Dataset(Xv, yv, group=sizes(qv))],
            callbacks=[lightgbm.early_stopping(30, verbose=False)])
        scores = {"rsrank": model.predict(Xt), "lightgbm": booster.predict(Xt)}
        row = {"seed": seed, "rsrank_nonzero": result["n_nonzero"],
               "rsrank_params": result["params"], "lightgbm_rounds": booster.best_iteration,
               "n_features": int(X.shape[1])}
        for name, s in scores.items():
            per_query[name].append(ndcg10(yt, s, qt))
            for convention in ("letor", "lightgbm"):
                row[f"{name}_{convention}"] = float(ndcg10(yt, s, qt, convention).mean())
        rows.append(row)
    averaged = {k: np.mean(v, axis=0) for k, v in per_query.items()}  # per query, over seeds
    return {"rows": rows, "test": paired(averaged["rsrank"], averaged["lightgbm"])}


def bundled_default(work):
    code, printed, err = cli("train", "--quiet", "--out", work / "bundled")
    assert code == 0, err
    truth = json.loads((bundled_data_path() / "truth.json").read_text())
    support = set(truth["support"])
    rows = []
    for path in sorted((work / "bundled" / "models").glob("Fold*.json")):
        found = set(np.flatnonzero(RSRank.load(path).coef_).tolist())
        rows.append({"fold": path.stem, "nonzero": len(found),
                     "true_found": len(found & support), "n_true": len(support)})
    results = json.loads((work / "bundled" / "results.json").read_text())
    return {"rows": rows, "test_ndcg10": results["mean"]["NDCG@10"],
            "test_ndcg10_std": results["std"]["NDCG@10"]}


def markdown(report):
    raw, lgb, bundled = report["raw"], report["lightgbm"], report["bundled"]
    lines = ["# RSRank on a practitioner's data", "",
             f"Command: `{report['command']}` (rsrank {report['rsrank_version']}). "
             "NDCG@10 with the LETOR convention unless named.", "",
             "## Raw features", "",
             "Train 300, vali 100, test 100 queries per seed (`make_raw_features`); "
             "`rsrank train --train --vali --test --feature-names` with the old defaults "
             "(`--normalize none --batch-size 1 --l1 0 --learning-rate 0.01`) and with "
             "today's defaults; the best single feature (and direction) chosen on vali.", "",
             "| seed | old defaults | today's defaults | non-zeros (of 5) | dropped | best "
             "single feature (vali) | its test NDCG@10 |", "|---|---|---|---|---|---|---|"]
    names = make_raw_features(1).feature_names
    for r in raw["rows"]:
        dropped = ", ".join(n for n in names if n not in r["default_features"]) or "none"
        lines.append(f"| {r['seed']} | {r['old_ndcg10']:.4f} | {r['default_ndcg10']:.4f} | "
                     f"{r['default_nonzero']} | {dropped} | {r['single_feature']} | "
                     f"{r['single_ndcg10']:.4f} |")
    mean = {k: np.mean([r[k] for r in raw["rows"]]) for k in
            ("old_ndcg10", "default_ndcg10", "single_ndcg10")}
    lines.append(f"| mean | {mean['old_ndcg10']:.4f} | {mean['default_ndcg10']:.4f} | | | | "
                 f"{mean['single_ndcg10']:.4f} |")
    for name, t in raw["tests"].items():
        lines.append("")
        lines.append(f"Paired t-test over the {t['n_queries']} test queries, {name}: mean "
                     f"difference {t['mean_difference']:+.4f}, t = {t['t']:.2f}, "
                     f"p = {t['p']:.2g}.")
    warning = raw["rows"][0]["old_warning"]
    lines += ["", "What the old defaults print on seed 0 (stderr):", "", "```", warning, "```", "",
              "## Exports of the seed-0 default model", "",
              f"Each engine computes {len(raw['exports']['engine_features'])} of "
              f"{raw['exports']['n_features']} features "
              f"({', '.join(raw['exports']['engine_features'])}): "
              + ", ".join(f"[{Path(f).name}]({f})" for f in raw["exports"]["files"])
              + ". `tests/unit/deployment/test_export.py` scores each format with an evaluator that follows "
              "the engine's documented semantics and compares with `RSRank.predict`.", "",
              "## LightGBM's layout: `rsrank train ../shared/data/LightGBM-lambdarank-example`",
              "", "Vali: a seeded 20% of rank.train's queries (`--seed`), the same split for "
              "both; LightGBM lambdarank with its defaults, early stopping (30 rounds) on vali "
              "NDCG@10; test: rank.test (50 queries).", "",
              "| seed | RSRank (letor) | LightGBM (letor) | RSRank (lightgbm) | LightGBM "
              "(lightgbm) | RSRank non-zeros | LightGBM rounds |", "|---|---|---|---|---|---|---|"]
    for r in lgb["rows"]:
        lines.append(f"| {r['seed']} | {r['rsrank_letor']:.4f} | {r['lightgbm_letor']:.4f} | "
                     f"{r['rsrank_lightgbm']:.4f} | {r['lightgbm_lightgbm']:.4f} | "
                     f"{r['rsrank_nonzero']} of {r['n_features']} | {r['lightgbm_rounds']} |")
    mean = {k: np.mean([r[k] for r in lgb["rows"]]) for k in
            ("rsrank_letor", "lightgbm_letor", "rsrank_lightgbm", "lightgbm_lightgbm",
             "rsrank_nonzero", "lightgbm_rounds")}
    lines.append(f"| mean | {mean['rsrank_letor']:.4f} | {mean['lightgbm_letor']:.4f} | "
                 f"{mean['rsrank_lightgbm']:.4f} | {mean['lightgbm_lightgbm']:.4f} | "
                 f"{mean['rsrank_nonzero']:.1f} | {mean['lightgbm_rounds']:.0f} |")
    t = lgb["test"]
    lines += ["", f"Per-query test NDCG@10 (letor) averaged over seeds, RSRank minus LightGBM: "
              f"{t['mean_difference']:+.4f}, paired t = {t['t']:.2f}, p = {t['p']:.2g} "
              f"({t['n_queries']} queries).", "",
              "## The bundled data: `rsrank train` with no arguments", "",
              "| fold | non-zero weights | of the 8 true features found |", "|---|---|---|"]
    for r in bundled["rows"]:
        lines.append(f"| {r['fold']} | {r['nonzero']} | {r['true_found']} |")
    counts = [r["nonzero"] for r in bundled["rows"]]
    lines += ["", f"Mean {np.mean(counts):.1f} non-zero weights of 45 (the generating model has "
              f"8), test NDCG@10 {bundled['test_ndcg10']:.4f} ± {bundled['test_ndcg10_std']:.4f}.",
              ""]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "results"))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--lightgbm", default=str(SHARED_DATA / "LightGBM-lambdarank-example"))
    args = parser.parse_args(argv)
    out = Path(args.out)
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch)
        report = {"command": command_line(),
                  "rsrank_version": __version__,
                  "raw": raw_features(work, args.seeds, out),
                  "lightgbm": lightgbm_layout(Path(args.lightgbm), work, args.seeds),
                  "bundled": bundled_default(work)}
    report["command"] = report["command"].strip()
    write_report(out, "practitioner", report, markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
