"""Whether a path walked on a sample of the training queries chooses as well
as the path on all of them: ``rsrank train`` with ``--path-rows N`` against
``--path-rows 0`` on generated sets at MSLR-WEB30K's shape.

    python scripts/path_rows_study.py [--rows 50000,25000,15000] [--train-rows 200000]
        [--sets linear,nonlinear,noisy,dense-truth] [--seeds 2] [--data DIR] [--out results]
        [--name path_rows] [--settle-tol none]

Each set is ``make_mslr_like`` (136 float32 features, labels 0-4, long-tailed
query sizes) with one change: ``linear`` its defaults, ``nonlinear`` the
teacher that favours trees, ``noisy`` three times the label noise,
``dense-truth`` 60 informative features instead of 20. Sets from the
generators of the defaults' study (``lab/_datasets.py``), with as many
queries as the rows need: ``long-noisy`` and ``heavy-redundant``
(``make_set``) and ``raw`` (``make_raw_features``, five raw engine
features). A seed is a fresh draw of the set. Its queries go whole to train (about ``--train-rows``
rows), vali and test (a third of that each, as in MSLR-WEB30K's folds),
written once as LETOR text into ``--data`` (kept and reused; a temporary
directory by default).

Per set and seed, ``rsrank train --train --vali --test`` with its defaults
runs in this process once per ``--path-rows`` value and once with
``--path-rows 0`` (the path on every training query, the reference).
Reported: the chosen point and its features, test NDCG@10 (LETOR
convention, mean over the test queries), the fits' seconds (the fold's
``fit_seconds``) and a paired t-test over the test queries against the
reference. Selection never sees test data. Writes ``NAME.md`` and
``NAME.json`` into ``--out``.

``--settle-tol``: the sampled path's penalized fits stop once an epoch moves
no weight by more than this share of the largest (``PATH_SETTLE_TOL``, the
package's by default); ``none`` runs every one to its epochs' end, as
before that rule. The path on all rows never uses it.
"""

import argparse
import tempfile
from pathlib import Path

import numpy as np

from _bench import command_line, fold_per_query, train_folds, write_letor_text, write_report
from _datasets import GENERATED, make_set

SETS = {"linear": {}, "nonlinear": {"teacher": "nonlinear"}, "noisy": {"noise": 3.0},
        "dense-truth": {"n_informative": 60}}
#: sets of the defaults' study's generators, and their documents per query
OTHER = {"long-noisy": GENERATED["long-noisy"]["docs"],
         "heavy-redundant": (20, 120), "raw": (20, 60)}
#: MSLR-WEB30K's queries per row
QUERIES_PER_ROW = 31_531 / 3_771_125


def write_set(directory, name, seed, train_rows):
    """The set's three splits as LETOR text under ``directory/name-seed``
    (written once)."""
    from rsrank.reading.synthetic import make_mslr_like, make_raw_features

    where = Path(directory) / f"{name}-{seed}"
    if (where / "done").is_file():
        return where
    where.mkdir(parents=True, exist_ok=True)
    total = int(train_rows * 5 / 3)
    if name in OTHER:
        low, high = OTHER[name]
        # make_set draws query sizes log-uniform, make_raw_features uniform
        mean = (low + high) / 2 if name == "raw" else (high - low) / np.log(high / low)
        n_queries = int(np.ceil(total / mean))
        if name == "raw":
            data = make_raw_features(n_queries=n_queries, docs_per_query=(low, high),
                                     random_state=seed)
            X, y, qid = data.X, data.y, data.qid
        else:
            X, y, qid = make_set(1000 + seed, **{**GENERATED[name], "n_queries": n_queries})
    else:
        data = make_mslr_like(n_documents=total, n_queries=max(3, round(total * QUERIES_PER_ROW)),
                              random_state=seed, **SETS[name])
        X, y, qid = data.X, data.y, data.qid
    order = np.argsort(qid, kind="stable")
    X, y, qid = X[order], y[order], qid[order]
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    start = 0
    for split, rows in (("train", train_rows), ("vali", train_rows // 3), ("test", None)):
        at = len(starts) if rows is None else int(np.searchsorted(starts, start + rows))
        stop = int(starts[at]) if at < len(starts) else len(qid)
        write_letor_text(where / f"{split}.txt", X[start:stop], y[start:stop], qid[start:stop])
        start = stop
    (where / "done").write_text("")
    return where


def run(where, path_rows):
    """``rsrank train`` on the set with ``--path-rows``: its one fold."""
    fold, = train_folds(None, ["--train", str(where / "train.txt"), "--vali",
                               str(where / "vali.txt"), "--test", str(where / "test.txt"),
                               "--path-rows", str(path_rows)])
    return fold


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="50000,25000,15000")
    parser.add_argument("--train-rows", type=int, default=200_000)
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--data", default=None)
    parser.add_argument("--out", default="results")
    parser.add_argument("--name", default="path_rows")
    parser.add_argument("--settle-tol", default=None,
                        help="the sampled path's settling rule: a share, or none")
    args = parser.parse_args(argv)
    from rsrank.evaluation import experiments

    if args.settle_tol is not None:
        experiments.PATH_SETTLE_TOL = (None if args.settle_tol.lower() == "none"
                                       else float(args.settle_tol))
    from rsrank.evaluation.stats import paired_t_test

    variants = [int(r) for r in args.rows.split(",")]
    scratch = None if args.data else tempfile.TemporaryDirectory()
    directory = args.data or scratch.name
    report = {"command": command_line(), "train_rows": args.train_rows, "runs": []}
    rows = []
    for name in args.sets.split(","):
        for seed in range(args.seeds):
            where = write_set(directory, name, seed, args.train_rows)
            reference = run(where, 0)
            base = fold_per_query(reference)
            for path_rows in [0, *variants]:
                fold = reference if path_rows == 0 else run(where, path_rows)
                values = fold_per_query(fold)
                mean = float(np.nanmean(list(values.values())))
                entry = {"set": name, "seed": seed, "path_rows": path_rows,
                         "params": fold["params"], "features": fold["n_nonzero"],
                         "test_ndcg10": mean, "fit_seconds": fold["fit_seconds"],
                         "per_query": {str(q): v for q, v in values.items()}}
                compared = ""
                if path_rows:
                    a = np.array([base[q] for q in base])
                    b = np.array([values[q] for q in base])
                    both = np.isfinite(a) & np.isfinite(b)
                    test = paired_t_test(a[both], b[both])  # the sample's path less the full one
                    entry["difference"], entry["pvalue"] = test.difference, test.pvalue
                    compared = f"{test.difference:+.4f} (p = {test.pvalue:.2g})"
                report["runs"].append(entry)
                point = ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                                  for k, v in fold["params"].items() if k != "learning_rate")
                rows.append(f"| {name} | {seed} | {path_rows or 'all'} | {point} | "
                            f"{fold['n_nonzero']} | {mean:.4f} | {compared} | "
                            f"{fold['fit_seconds']:.1f} |")
                print(rows[-1], flush=True)
    summary = []
    for path_rows in variants:
        runs = [r for r in report["runs"] if r["path_rows"] == path_rows]
        full = {(r["set"], r["seed"]): r for r in report["runs"] if r["path_rows"] == 0}
        below = sum(r["difference"] < 0 and r["pvalue"] < 0.05 for r in runs)
        above = sum(r["difference"] > 0 and r["pvalue"] < 0.05 for r in runs)
        same = sum(r["params"] == full[(r["set"], r["seed"])]["params"] for r in runs)
        time = np.mean([r["fit_seconds"] / full[(r["set"], r["seed"])]["fit_seconds"]
                        for r in runs])
        summary.append(f"| {path_rows} | {np.mean([r['difference'] for r in runs]):+.4f} | "
                       f"{below} | {above} | {same} of {len(runs)} | {time:.2f} |")
    settled = ("no share: each runs its epochs" if experiments.PATH_SETTLE_TOL is None
               else f"{experiments.PATH_SETTLE_TOL:g} of the largest weight's move")
    markdown = "\n".join([
        "# The path on a sample of the training queries against the path on all of them", "",
        f"`{command_line()}`: `rsrank train` with its defaults on generated sets at "
        f"MSLR-WEB30K's shape (about {args.train_rows:,} training rows, vali and test a third "
        "of that each; `linear`: `make_mslr_like`'s defaults, `nonlinear`: the teacher that "
        "favours trees, `noisy`: three times the label noise, `dense-truth`: 60 informative "
        "features; from the defaults' study's generators, `long-noisy` and `heavy-redundant` "
        "(`make_set`) and `raw` (`make_raw_features`)); a seed is a fresh draw of the set. Each `--path-rows` value against "
        "`--path-rows 0` (the path on every training query): the chosen point, features kept, "
        "test NDCG@10 (LETOR convention), the paired t-test over the test queries (the sample's "
        "path less the full one) and the fits' seconds. Selection never sees test data. "
        f"The sampled path's penalized fits settle at {settled}.", "",
        "| --path-rows | mean difference | significantly below (p < 0.05) | significantly above "
        "| the same point | fit time / full path |", "|---|---|---|---|---|---|", *summary, "",
        "| set | seed | --path-rows | chosen | features | test NDCG@10 | against all rows | "
        "fit s |", "|---|---|---|---|---|---|---|---|", *rows])
    write_report(args.out, args.name, report, markdown)
    print(markdown)
    if scratch is not None:
        scratch.cleanup()


if __name__ == "__main__":
    main()
