"""Time to a tested model at MSLR-WEB30K shape, from text files: RSRank's
``rsrank train`` against LightGBM and XGBoost reading the same rows with
their own loaders.

    python scripts/bench_end_to_end.py [--scale 1.0] [--rounds 300] [--data DIR]
        [--teacher linear] [--systems ...] [--out results]

One fold of ``make_mslr_like`` data (136 float32 features, labels 0-4,
long-tailed query sizes; ``--teacher nonlinear``: labels from shapes and
products of the features, which favour trees) at MSLR-WEB30K's size, times
``--scale``: train
2.27 M rows, vali and test 0.75 M each, split by query. The rows are written
once as LETOR text (``qid:`` on every line, 6 significant digits) and, for
LightGBM, as the same lines without ``qid:`` plus ``.query`` files (its
layout). ``--data DIR`` keeps the files there and reuses them.

Each system runs in a fresh process, which reports its peak resident memory
(VmHWM); the wall time is the process's, from its start to the test
predictions written to disk:

- RSRank: ``rsrank train --train --vali --test`` with its defaults: the
  regularization path (ten L1 strengths as fractions of the edge, both pair
  weightings, each point stepping with momentum until its weights settle,
  at most 300 epochs) walked on a seeded sample of about 50,000 training
  rows (``--path-rows``), the sparsest point within 1% of the best vali
  NDCG@10 chosen and fitted again on all the training rows.
  ``rsrank-full``: the same with ``--path-rows 0``, the path on all rows.
  ``rsrank-patience``: the defaults with ``--patience 20``;
  ``rsrank-additive``: with ``--additive`` (a step function per feature);
  ``rsrank-interactions``: with ``--additive --interactions 10`` (and ten
  pairs' grids; on this many rows 255 bins a feature and 16 x 16 grids);
  ``rsrank-interactions-coarse``: the same with ``--max-bins 32
  --interaction-bins 8`` (the bins of fewer rows); ``rsrank-interactions-fine``:
  with ``--max-bins 255 --interaction-bins 16`` given;
  ``rsrank-additive-relax300`` and ``rsrank-interactions-relax300``: the
  additive kinds with each relaxed refit of the path on a sample given
  all 300 epochs (``PATH_RELAX_EPOCHS`` at 300), as before that cap;
  ``rsrank-interactions-tol1e-3``: ``--additive --interactions 10`` with
  every fit stopped once an epoch moves no weight by more than 1e-3 of the
  largest (``--weight-tol 1e-3``; the default is 1e-4).
  ``rsrank-settle1e-4``, ``rsrank-additive-settle1e-4`` and
  ``rsrank-interactions-settle1e-4``: the defaults, ``--additive`` and
  ``--additive --interactions 10`` with the penalized fits of the path on a
  sample stopped at the estimator's ``weight_tol`` (1e-4) alone
  (``PATH_SETTLE_TOL`` at None), as before that rule.
  ``rsrank-interactions-search1e9`` and ``rsrank-interactions-search5e8``:
  ``--additive --interactions 10`` with the pair search's budget of row
  visits (``SEARCH_WORK``, 2e9) at 1e9 and 5e8: its additive fit and its
  gains on a sample of fewer queries. ``rsrank-interactions-sampled``: the
  same with its sample taken however close to all rows it comes
  (``SEARCH_KEEP`` at 1), as before that rule.
- LightGBM ``lambdarank`` and XGBoost ``rank:ndcg`` (``hist``), 2 threads,
  learning rate 0.1, other parameters at their defaults, up to ``--rounds``
  rounds with early stopping after 20 rounds without a better vali
  NDCG@10; test predictions from the best vali round.

The test NDCG@10 of every system is computed here from its predictions with
``rsrank.evaluation.metrics`` (standard convention: exp2 gain, log2 discount, a query
without a relevant document scores 0). Writes ``end_to_end.md`` and
``end_to_end.json`` into ``--out`` (``end_to_end_nonlinear.*`` for the
non-linear teacher, ``end_to_end_web.*`` for ``--teacher web``,
``make_web_like``'s GA2M over columns of mixed families; ``--name``
another).
"""

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _bench import command_line, write_report
from _mslr import ROWS, TEACHERS, write_data

REPO = Path(__file__).resolve().parents[1]
SYSTEMS = ["rsrank", "rsrank-full", "rsrank-patience", "rsrank-additive", "rsrank-interactions",
           "rsrank-interactions-coarse", "rsrank-interactions-fine", "rsrank-additive-relax300",
           "rsrank-interactions-relax300", "rsrank-interactions-tol1e-3", "rsrank-settle1e-4",
           "rsrank-additive-settle1e-4", "rsrank-interactions-settle1e-4",
           "rsrank-interactions-search1e9", "rsrank-interactions-search5e8",
           "rsrank-interactions-sampled", "lightgbm", "xgboost"]
#: the flags of each RSRank system beside the files
RSRANK_FLAGS = {"rsrank": [], "rsrank-full": ["--path-rows", "0"],
                "rsrank-patience": ["--patience", "20"], "rsrank-additive": ["--additive"],
                "rsrank-interactions": ["--additive", "--interactions", "10"],
                "rsrank-interactions-coarse": ["--additive", "--interactions", "10", "--max-bins",
                                               "32", "--interaction-bins", "8"],
                "rsrank-interactions-fine": ["--additive", "--interactions", "10", "--max-bins",
                                             "255", "--interaction-bins", "16"],
                "rsrank-additive-relax300": ["--additive"],
                "rsrank-interactions-relax300": ["--additive", "--interactions", "10"],
                "rsrank-interactions-tol1e-3": ["--additive", "--interactions", "10",
                                                "--weight-tol", "1e-3"],
                "rsrank-settle1e-4": [], "rsrank-additive-settle1e-4": ["--additive"],
                "rsrank-interactions-settle1e-4": ["--additive", "--interactions", "10"],
                "rsrank-interactions-search1e9": ["--additive", "--interactions", "10"],
                "rsrank-interactions-search5e8": ["--additive", "--interactions", "10"],
                "rsrank-interactions-sampled": ["--additive", "--interactions", "10"]}
#: systems whose path on a sample gives each relaxed refit all its epochs
#: (300), as before ``PATH_RELAX_EPOCHS``
UNCAPPED = ("rsrank-additive-relax300", "rsrank-interactions-relax300")
#: systems whose path on a sample stops its penalized fits at the estimator's
#: ``weight_tol`` alone (1e-4), as before ``PATH_SETTLE_TOL``
UNSETTLED = ("rsrank-settle1e-4", "rsrank-additive-settle1e-4", "rsrank-interactions-settle1e-4")
#: systems whose pair search has another budget of row visits (``SEARCH_WORK``)
#: or takes a sample of nearly all rows (``SEARCH_KEEP`` at 1)
SEARCH_SETTINGS = {"rsrank-interactions-search1e9": {"SEARCH_WORK": 1e9},
                   "rsrank-interactions-search5e8": {"SEARCH_WORK": 5e8},
                   "rsrank-interactions-sampled": {"SEARCH_KEEP": 1.0}}


def child(system, directory, rounds, scratch):
    """Runs in a fresh process: trains, writes ``{system}.test.npy`` and
    prints one JSON line."""
    directory, scratch = Path(directory), Path(scratch)
    phases = {}
    start = time.perf_counter()
    if system.startswith("rsrank"):
        from rsrank.cli import main
        from rsrank.evaluation import experiments

        if system in UNCAPPED:
            experiments.PATH_RELAX_EPOCHS = 300
        if system in UNSETTLED:
            experiments.PATH_SETTLE_TOL = None
        if system in SEARCH_SETTINGS:
            from rsrank.learning import interactions

            vars(interactions).update(SEARCH_SETTINGS[system])

        out = scratch / f"{system}-out"
        code = main(["train", "--train", str(directory / "train.txt"),
                     "--vali", str(directory / "vali.txt"), "--test",
                     str(directory / "test.txt"), "--out", str(out), "--quiet",
                     *RSRANK_FLAGS[system]])
        if code:
            raise SystemExit(f"rsrank train exited with {code}")
        result = json.loads((out / "results.json").read_text())
        scores = np.loadtxt(out / "predictions" / "Fold1.test.txt")
        fold = result["folds"][0]
        extra = {"selected_l1": fold["params"].get("l1"), "fit_s": fold.get("fit_seconds"),
                 "n_nonzero": fold.get("n_nonzero"), "best_round": fold.get("best_iteration"),
                 "selected": fold["params"], "points": len(fold["grid"]),
                 "pairs": [" x ".join(pair) for pair, _ in fold.get("selected_interactions", [])],
                 "refit": bool(fold["grid"][-1].get("refit"))}
    elif system == "lightgbm":
        import lightgbm

        params = {"objective": "lambdarank", "metric": "ndcg", "eval_at": [10],
                  "learning_rate": 0.1, "num_threads": 2, "verbosity": -1}
        train = lightgbm.Dataset(str(directory / "train.lgb.txt"), params=params)
        vali = lightgbm.Dataset(str(directory / "vali.lgb.txt"), reference=train, params=params)
        train.construct(), vali.construct()
        phases["load_s"] = time.perf_counter() - start
        booster = lightgbm.train(params, train, num_boost_round=rounds, valid_sets=[vali],
                                 callbacks=[lightgbm.early_stopping(20, verbose=False)])
        phases["train_s"] = time.perf_counter() - start - phases["load_s"]
        scores = booster.predict(str(directory / "test.lgb.txt"),
                                 num_iteration=booster.best_iteration, num_threads=2)
        extra = {"best_round": int(booster.best_iteration)}
    elif system == "xgboost":
        import xgboost

        train = xgboost.DMatrix(f"{directory / 'train.txt'}?format=libsvm", nthread=2)
        vali = xgboost.DMatrix(f"{directory / 'vali.txt'}?format=libsvm", nthread=2)
        phases["load_s"] = time.perf_counter() - start
        params = {"objective": "rank:ndcg", "eval_metric": "ndcg@10", "tree_method": "hist",
                  "eta": 0.1, "nthread": 2}
        booster = xgboost.train(params, train, num_boost_round=rounds,
                                evals=[(vali, "vali")], early_stopping_rounds=20,
                                verbose_eval=False)
        phases["train_s"] = time.perf_counter() - start - phases["load_s"]
        test = xgboost.DMatrix(f"{directory / 'test.txt'}?format=libsvm", nthread=2)
        scores = booster.predict(test, iteration_range=(0, booster.best_iteration + 1))
        extra = {"best_round": int(booster.best_iteration) + 1}
    np.save(scratch / f"{system}.test.npy", np.asarray(scores, dtype=np.float64))
    sys.path.insert(0, str(REPO / "lab"))
    from _bench import peak_rss_bytes

    print(json.dumps({"system": system, "inner_s": time.perf_counter() - start, **phases,
                      **extra, "peak_rss_bytes": peak_rss_bytes()}))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--data", help="directory for the text files (kept and reused)")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--teacher", choices=TEACHERS, default="linear")
    parser.add_argument("--out", default=str(REPO / "results"))
    parser.add_argument("--name", help="the report's name (default end_to_end, or "
                        "end_to_end_nonlinear for the non-linear teacher)")
    parser.add_argument("--append", action="store_true",
                        help="keep the other systems' rows of --out/end_to_end.json (same data)")
    parser.add_argument("--runs", help="keep each RSRank system's `rsrank train` output "
                        "(its results.json, model and predictions) in this directory")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child[0], args.child[1], int(args.child[2]), args.child[3])
    unknown = sorted(set(args.systems.split(",")) - set(SYSTEMS))
    if unknown:
        parser.error(f"unknown systems {', '.join(unknown)}; known: {', '.join(SYSTEMS)}")
    name = args.name or ("end_to_end" if args.teacher == "linear"
                         else f"end_to_end_{args.teacher}")
    from rsrank.evaluation.metrics import mean_ndcg

    keep = tempfile.TemporaryDirectory() if args.data is None else None
    directory = Path(args.data or keep.name)
    directory.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    write_data(directory, args.scale, args.teacher)
    print(f"data ready in {time.perf_counter() - started:.0f} s", flush=True)
    truth = np.load(directory / "truth.npz")
    shape = {name: {"rows": int(len(truth[f"{name}_y"])),
                    "queries": int(len(np.unique(truth[f"{name}_qid"]))),
                    "text_bytes": (directory / f"{name}.txt").stat().st_size}
             for name in ROWS}
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        if args.runs:
            scratch = args.runs
            Path(scratch).mkdir(parents=True, exist_ok=True)
        for system in args.systems.split(","):
            start = time.perf_counter()
            done = subprocess.run([sys.executable, __file__, "--child", system, str(directory),
                                   str(args.rounds), scratch], capture_output=True, text=True)
            wall = time.perf_counter() - start
            if done.returncode:
                raise SystemExit(f"{system} failed:\n{done.stderr[-3000:]}")
            row = json.loads(done.stdout.strip().splitlines()[-1])
            scores = np.load(Path(scratch) / f"{system}.test.npy")
            row["wall_s"] = wall
            row["test_ndcg10"] = mean_ndcg(truth["test_y"], scores, truth["test_qid"], 10)
            results.append(row)
            print(row, flush=True)
    if keep is not None:
        keep.cleanup()
    commands = {r["system"]: command_line()
                for r in results}
    if args.append:
        previous = json.loads((Path(args.out) / f"{name}.json").read_text())
        if previous["shape"] != shape:
            raise SystemExit("--append: the data differ from the recorded run's")
        commands = {**previous.get("commands", {r["system"]: previous["command"]
                                                 for r in previous["results"]}), **commands}
        ran = {r["system"] for r in results}
        results = sorted([r for r in previous["results"] if r["system"] not in ran] + results,
                         key=lambda r: SYSTEMS.index(r["system"]))
    import lightgbm
    import numba
    import xgboost

    from rsrank import __version__

    report = {"command": command_line(),
              "machine": f"{platform.machine()}, {numba.config.NUMBA_NUM_THREADS} cores",
              "versions": {"rsrank": __version__, "lightgbm": lightgbm.__version__,
                           "xgboost": xgboost.__version__},
              "scale": args.scale, "teacher": args.teacher, "rounds": args.rounds,
              "shape": shape, "results": results,
              "commands": commands}
    by = {r["system"]: r for r in results}
    base = by.get("lightgbm", results[0])
    names = {"rsrank": "RSRank `rsrank train` (defaults)",
             "rsrank-full": "RSRank `rsrank train --path-rows 0` (the path on all rows)",
             "rsrank-patience": "RSRank `rsrank train --patience 20`",
             "rsrank-additive": "RSRank `rsrank train --additive`",
             "rsrank-interactions": "RSRank `rsrank train --additive --interactions 10`",
             "rsrank-interactions-coarse": "RSRank `rsrank train --additive --interactions 10 "
                                           "--max-bins 32 --interaction-bins 8`",
             "rsrank-interactions-fine": "RSRank `rsrank train --additive --interactions 10 "
                                         "--max-bins 255 --interaction-bins 16`",
             "rsrank-additive-relax300": "RSRank `rsrank train --additive`, relaxed refits "
                                         "on the sample uncapped (300 epochs)",
             "rsrank-interactions-relax300": "RSRank `rsrank train --additive --interactions "
                                             "10`, relaxed refits on the sample uncapped "
                                             "(300 epochs)",
             "lightgbm": "LightGBM lambdarank", "xgboost": "XGBoost rank:ndcg (hist)"}
    names.update({system: f"{names[system.replace('-settle1e-4', '')]}, the path's "
                          "penalized fits on the sample settled to 1e-4"
                  for system in UNSETTLED})
    names.update({system: f"RSRank `rsrank train --additive --interactions 10`, the pair "
                          f"search's budget {SEARCH_SETTINGS[system]['SEARCH_WORK']:.0e} row "
                          "visits" for system in SEARCH_SETTINGS
                  if "SEARCH_WORK" in SEARCH_SETTINGS[system]})
    names["rsrank-interactions-sampled"] = ("RSRank `rsrank train --additive --interactions "
                                            "10`, the pair search on a sample of nearly all "
                                            "rows")
    names.update({system: f"RSRank `rsrank train {' '.join(flags)}`"
                  for system, flags in RSRANK_FLAGS.items() if system not in names})
    command_text = "; ".join(
        f"`{c.strip()}` ({', '.join(s for s, cc in commands.items() if cc == c)})"
        for c in dict.fromkeys(commands.values()))
    lines = ["# Time to a tested model at MSLR-WEB30K shape"
             + {"linear": "", "nonlinear": ", non-linear teacher",
                "web": ", a GA2M over columns of mixed families"}[args.teacher], "",
             f"Commands: {command_text}", "",
             f"{report['machine']}; rsrank {__version__}, LightGBM {lightgbm.__version__}, "
             f"XGBoost {xgboost.__version__}. Data: "
             + ("`make_web_like()`" if args.teacher == "web"
                else f"`make_mslr_like(teacher={args.teacher!r})`")
             + " written as LETOR text "
             "(136 features, 6 significant digits); "
             + ", ".join(f"{name} {s['rows']:,} rows / {s['queries']:,} queries / "
                         f"{s['text_bytes'] / 1e9:.2f} GB" for name, s in shape.items())
             + f" (scale {args.scale:g} of MSLR-WEB30K Fold1). Each system in a fresh process "
             "from text to test predictions; peak memory is the process's VmHWM. Test NDCG@10 "
             "in the standard convention, from each system's best vali round.", "",
             "| system | wall seconds | vs LightGBM | load s | train s | best round | "
             "test NDCG@10 | vs LightGBM | peak memory | vs LightGBM |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        load = f"{r['load_s']:.0f}" if "load_s" in r else ""
        train = f"{r['train_s']:.0f}" if "train_s" in r else ""
        best = "" if r.get("best_round") is None else str(r["best_round"])
        lines.append(f"| {names[r['system']]} | {r['wall_s']:.0f} | "
                     f"{r['wall_s'] / base['wall_s']:.2f}x | {load} | {train} | {best} | "
                     f"{r['test_ndcg10']:.4f} | {r['test_ndcg10'] / base['test_ndcg10']:.4f} | "
                     f"{r['peak_rss_bytes'] / 2**20:,.0f} MiB | "
                     f"{r['peak_rss_bytes'] / base['peak_rss_bytes']:.2f}x |")
    for system in RSRANK_FLAGS:
        if system in by:
            r = by[system]
            chosen = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                               for k, v in r.get("selected", {}).items())
            walked = ("the path on a sample, the choice refit on all rows" if r.get("refit")
                      else "the path on all rows")
            pairs = f" and the pairs {', '.join(r['pairs'])}" if r.get("pairs") else ""
            lines += ["", f"{names[system]} kept {r['n_nonzero']} of 136 features{pairs} "
                      f"({chosen}; {r.get('points', '?')} fits, {walked}); its fits took "
                      f"{r['fit_s']:.0f} s of the wall time."]
    lines += ["", {"linear": "The data come from a linear teacher, which favours a linear "
                             "model: compare the times, not the NDCG, across systems.",
                   "nonlinear": "The data come from a non-linear teacher (shapes and products "
                                "of features), which favours trees: the NDCG shows what a "
                                "linear model gives up there.",
                   "web": "The data come from `make_web_like`: scores, counts, lengths, "
                          "fractions, popularities, flags and query columns, relevance a sum "
                          "of shapes of 16 columns and six pairwise effects (one switched by a "
                          "query column) with noise as strong as the signal; a generator the "
                          "recipe was not tuned on."}[args.teacher]]
    if args.teacher == "web":  # every size of the seed shares the truth
        from rsrank.reading.synthetic import make_web_like

        truth_pairs = make_web_like(n_documents=2_000, n_queries=20, random_state=0).pairs
        lines.append("")
        lines.append("Its true pairs (features numbered from 1, as in the files): " + ", ".join(
            f"f{min(a, b) + 1} x f{max(a, b) + 1} ({effect})" for a, b, effect in truth_pairs)
            + ".")
    text = "\n".join(lines) + "\n"
    out = Path(args.out)
    write_report(out, name, report, text)
    print(text)


if __name__ == "__main__":
    main()
