"""Every export against predict, scored by each engine's rules.

    python scripts/engine_parity.py [--out results] [--root ../shared/data/OHSUMED]

Writes ``engine_parity.md`` and ``engine_parity.json``. For each model and
each engine of :data:`rsrank.deployment.engines.ENGINES` (Solr with its defaults and
with ``isNullSameAsZero: false``; the Elasticsearch LTR plugin before and
from 1.5.9; OpenSearch LTR 3.2-3.7 and from 3.8; Vespa with float and with
double attributes): whether the engine accepts the export, the largest
absolute difference from ``predict`` and how many test queries it orders
differently, with every value given and with every 0 sent as a missing
feature (predict still sees the 0). Models:

* OHSUMED, each of its 5 folds: an additive model (32 bins) and a linear
  one, trained with an ``eval_set`` on the fold's vali split, scored on its
  test split;
* generated data holding the values engines compare differently
  (``rsrank.reading.synthetic.make_edge_values``: negative values, PageRank-sized
  and subnormal thresholds, values near float32's largest, signed zeros, a
  feature whose top bin holds 0), additive at 32 and 255 bins;
* raw search-engine features (``make_raw_features``), linear.
"""

import argparse
from pathlib import Path

import numpy as np

from rsrank import RSRank
from rsrank.reading.datasets import load_letor_fold
from rsrank.deployment.engines import ENGINES
from rsrank.deployment.export import parity
from rsrank.reading.synthetic import make_edge_values, make_raw_features

from _bench import SHARED_DATA, command_line, write_report


def models(root):
    """``(label, model, X_test, qid_test)`` for every model of the study."""
    if root is not None and Path(root, "Fold1").is_dir():
        for fold in range(1, 6):
            parts = load_letor_fold(root, fold, dense=True)
            (X, y, qid), vali = parts.train, parts.vali[:3]
            X_test, _, qid_test = parts.test
            for kind, params in (("additive, 32 bins", {"additive": True, "max_bins": 32}),
                                 ("linear", {})):
                model = RSRank(**params).fit(X, y, qid=qid, eval_set=vali)
                yield f"OHSUMED Fold{fold}, {kind}", model, X_test, qid_test
    edge = make_edge_values(120, random_state=0)
    train = edge.qid <= 80
    for bins in (32, 255):
        model = RSRank(additive=True, max_bins=bins, max_iter=60)
        model.fit(edge.X[train], edge.y[train], qid=edge.qid[train])
        model.set_feature_names(edge.feature_names)
        yield f"edge values, additive, {bins} bins", model, edge.X[~train], edge.qid[~train]
    raw, raw_test = make_raw_features(200, random_state=0), make_raw_features(60, random_state=1)
    model = RSRank(l1=0.3).fit(raw.X, raw.y, qid=raw.qid)
    model.set_feature_names(raw.feature_names)
    yield "raw features, linear", model, raw_test.X, raw_test.qid


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--root", default=str(SHARED_DATA / "OHSUMED"))
    args = parser.parse_args(argv)
    rows = []
    for label, model, X_test, qid_test in models(args.root):
        engines = [e for e in ENGINES if model.additive or e != "solr-nan"]
        for engine, result in parity(model, X_test, qid_test, engines).items():
            rows.append({"model": label, "engine": engine,
                         "features": len(model.selected_features()), **result})
    lines = ["# Exports in each engine, against predict", "",
             "`python scripts/engine_parity.py`: each export scored by the rules of the engine's "
             "source (`rsrank.deployment.engines`), against `predict` on the test queries. *values*: every "
             "feature given; *missing*: every 0 sent as a missing feature (predict sees the 0). "
             "`solr-nan` is Solr with `isNullSameAsZero: false` and NaN default values (tree "
             "models only).", "", "## Per engine and kind of model", "",
             "| engine | kind | exports accepted | max abs difference (values / missing) "
             "| queries reordered (values / missing) |", "|---|---|---|---|---|"]
    for engine in ENGINES:
        for kind in ("additive", "linear"):
            group = [r for r in rows if r["engine"] == engine and kind in r["model"]]
            if not group:
                continue
            taken = [r for r in group if r["accepted"]]
            queries = sum(r["queries"] for r in taken)
            worst = (max((r["max_abs_difference"] for r in taken), default=np.nan),
                     max((r["max_abs_difference_missing"] for r in taken), default=np.nan))
            lines.append(f"| {engine} | {kind} | {len(taken)} of {len(group)} | "
                         f"{worst[0]:.2g} / {worst[1]:.2g} | "
                         f"{sum(r['reordered'] for r in taken)} / "
                         f"{sum(r['reordered_missing'] for r in taken)} of {queries} |")
    lines += ["", "## Per model", "",
              "| model | features | engine | accepted | max abs difference (values / missing) "
              "| queries reordered (values / missing) |", "|---|---|---|---|---|---|"]
    for row in rows:
        if row["accepted"]:
            cells = (f"{row['max_abs_difference']:.2g} / {row['max_abs_difference_missing']:.2g}",
                     f"{row['reordered']} / {row['reordered_missing']} of {row['queries']}")
        else:
            cells = (row["error"], "")
        lines.append(f"| {row['model']} | {row['features']} | {row['engine']} | "
                     f"{'yes' if row['accepted'] else 'no'} | {cells[0]} | {cells[1]} |")
    accepted = sum(r["accepted"] for r in rows)
    reordered = sum(r.get("reordered", 0) + r.get("reordered_missing", 0) for r in rows)
    lines += ["", f"{accepted} of {len(rows)} exports accepted; {reordered} queries reordered "
              "in all."]
    write_report(args.out, "engine_parity", {"command": command_line(), "rows": rows},
                 "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
