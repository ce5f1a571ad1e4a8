"""Steps on levels against steps on the weights for the interactions kind
at MSLR-WEB30K's shape: how far each gets, in how many epochs, and what the
bins add once the fit settles.

    python scripts/level_steps.py [--scale 0.1] [--data DIR] [--out results]

One fold of ``make_mslr_like(teacher="nonlinear")`` (shapes of 20
informative features and products of four pairs of them) at ``--scale`` of
MSLR-WEB30K Fold1, as ``bench_end_to_end.py`` writes it (``--data`` keeps
the files). Each row is one unpenalized fit of ``RSRank(additive=True,
interactions=K)`` on all the training rows with momentum, at most
``--epochs`` epochs, stopped once no weight moves by more than 1e-4 of the
largest:

- ``weights``: steps on the weights at 2 over the trace of the Hessian at
  w = 0 (what ``learning_rate="curvature"`` took before level steps), given
  as a number;
- ``levels x F``: ``learning_rate="curvature"``, which steps on the levels
  of each shape and pair's cells, at F times the level's gradient over its
  curvature (F = ``LEVEL_STEP``, 0.3, unless the row says otherwise).

``columns``: the 20 informative features with the four true pairs
(``interactions=4``) or all 136 with ten pairs. Test NDCG@10 in the
standard convention (exp2 gain, log2 discount, a query without a relevant
document scores 0). Writes ``level_steps.md`` and ``.json``.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from _bench import command_line, set_internal, write_report
from _mslr import mslr_like, write_data

REPO = Path(__file__).resolve().parents[1]


def _rows(scale, data):
    import tempfile

    from rsrank import load_letor

    keep = tempfile.TemporaryDirectory() if data is None else None
    directory = Path(data or keep.name)
    directory.mkdir(parents=True, exist_ok=True)
    write_data(directory, scale, "nonlinear")
    splits = {name: load_letor(directory / f"{name}.txt", dense=True, dtype=np.float32,
                               n_features=136)[:3] for name in ("train", "vali", "test")}
    if keep is not None:
        keep.cleanup()
    return splits


def _fit(splits, columns, pairs, steps, max_bins, interaction_bins, epochs):
    from rsrank import RSRank
    from rsrank.evaluation.metrics import mean_ndcg
    from rsrank.learning.fitting import curvature_rate, setup, start
    from rsrank.reading.querydata import QueryData

    X, y, qid = splits["train"]
    X = np.ascontiguousarray(X[:, columns])
    params = dict(additive=True, interactions=pairs, max_bins=max_bins,
                  interaction_bins=interaction_bins, momentum=True, max_iter=epochs,
                  weight_tol=1e-4, pair_weight="delta_ndcg", random_state=0, eval_train=False,
                  learning_rate="curvature")
    rate = "curvature"
    if steps == "weights":
        data = QueryData(X, y, qid)
        plan = setup(RSRank(**params).get_params(deep=False))
        rate = curvature_rate(plan, data, start(plan, data))
    else:
        set_internal("learning.fitting", "LEVEL_STEP", float(steps))
    started = time.perf_counter()
    estimator = RSRank(**{**params, "learning_rate": rate}).fit(X, y, qid=qid)
    seconds = time.perf_counter() - started
    scores = {name: mean_ndcg(part[1], estimator.predict(
        np.ascontiguousarray(part[0][:, columns])), part[2], 10)
        for name, part in splits.items() if name != "train"}
    return {"seconds": seconds, "epochs": int(estimator.n_iter_), "vali": scores["vali"],
            "test": scores["test"], "pairs": [[int(columns[a]) + 1, int(columns[b]) + 1]
                                              for a, b in estimator.model_.encoding.pairs]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--data", help="directory for the text files (kept and reused)")
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--out", default=str(REPO / "results"))
    args = parser.parse_args(argv)
    splits = _rows(args.scale, args.data)
    informative = np.flatnonzero(mslr_like(args.scale, "nonlinear").coef)
    everything = np.arange(136)
    runs = []
    plan = [(informative, 4, bins, steps) for bins in ((32, 8), (64, 16), (255, 16))
            for steps in ("weights", "0.3")]
    plan += [(everything, 10, (32, 8), steps) for steps in ("weights", "0.1", "0.3", "1.0")]
    plan += [(everything, 10, (255, 16), "0.3")]
    for columns, pairs, (max_bins, interaction_bins), steps in plan:
        row = {"columns": "informative" if len(columns) < 136 else "all", "n_pairs": pairs,
               "max_bins": max_bins, "interaction_bins": interaction_bins, "steps": steps,
               **_fit(splits, columns, pairs, steps, max_bins, interaction_bins, args.epochs)}
        runs.append(row)
        print(row, file=sys.stderr, flush=True)
    lines = ["# Steps on levels against steps on the weights, at MSLR-WEB30K's shape", "",
             f"`make_mslr_like(teacher='nonlinear')` at scale {args.scale:g} "
             f"({len(splits['train'][1]):,} training rows); one unpenalized fit per row on "
             f"all of them, at most {args.epochs} epochs. Test NDCG@10 in the standard "
             "convention.", "",
             "| columns | pairs | bins | pair bins | steps | epochs | seconds | vali NDCG@10 "
             "| test NDCG@10 |", "|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        steps = "weights (trace)" if r["steps"] == "weights" else f"levels x {r['steps']}"
        lines.append(f"| {r['columns']} | {r['n_pairs']} | {r['max_bins']} | "
                     f"{r['interaction_bins']} | {steps} | {r['epochs']} | {r['seconds']:.1f} | "
                     f"{r['vali']:.4f} | {r['test']:.4f} |")
    write_report(Path(args.out), "level_steps", {"command": command_line(), "runs": runs},
                 "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
