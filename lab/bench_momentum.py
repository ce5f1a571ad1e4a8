"""Full-batch steps with and without Nesterov's momentum on additive models:
the training loss after a number of epochs.

    python scripts/bench_momentum.py [--queries 300] [--out results]

Data: :func:`rsrank.reading.synthetic.make_interactions` (``and`` and
``product``, seed 0), its queries split 60/20/20 as the interactions study
splits them. Each fit: ``RSRank(additive=True[, interactions=10],
learning_rate="curvature", max_iter=E, momentum=M)`` on train, no penalty;
reported: the mean per-query training loss of the last epoch (at the
ranking of that epoch), the test NDCG@10 (LETOR convention; no penalty and
no selection, so it shows the fit, not the recipe) and the seconds.
"""

import argparse
import time
import warnings

import numpy as np

from _bench import command_line, write_report
from _synthetic import per_query_ndcg, splits

EPOCHS = (100, 300, 1000, 3000)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--out", default="results")
    parser.add_argument("--name", default="momentum")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    from rsrank import RSRank
    from rsrank.reading.synthetic import make_interactions

    data = make_interactions(("and", "product"), n_queries=args.queries, random_state=0)
    train, _, test = splits(data, 0)
    rows = []
    for interactions in (0, 10):
        for momentum in (False, True):
            for epochs in EPOCHS:
                start = time.perf_counter()
                model = RSRank(additive=True, interactions=interactions,
                               learning_rate="curvature", max_iter=epochs,
                               momentum=momentum).fit(train[0], train[1], qid=train[2])
                seconds = time.perf_counter() - start
                rows.append({"interactions": interactions, "momentum": momentum,
                             "epochs": epochs, "loss": float(model.history_["loss"][-1]),
                             "test_ndcg": float(np.nanmean(per_query_ndcg(
                                 test, model.predict(test[0])))), "seconds": seconds})
                print(rows[-1], flush=True)
    lines = ["# Momentum on additive models", "", f"`{command_line()}`: "
             "`make_interactions(('and', 'product'))`, seed 0, train 60% of its queries; "
             "`RSRank(additive=True, learning_rate='curvature')` without a penalty. Training "
             "loss of the last epoch (mean per query), test NDCG@10 (LETOR convention) and "
             "seconds, with and without Nesterov's momentum.", "",
             "| pairs | epochs | loss, plain | loss, momentum | test, plain | test, momentum "
             "| seconds, plain | seconds, momentum |", "|---|---|---|---|---|---|---|---|"]
    for interactions in (0, 10):
        for epochs in EPOCHS:
            plain, pushed = (next(r for r in rows if r["interactions"] == interactions
                                  and r["epochs"] == epochs and r["momentum"] == m)
                             for m in (False, True))
            lines.append(f"| {interactions} | {epochs} | {plain['loss']:.4f} | "
                         f"{pushed['loss']:.4f} | {plain['test_ndcg']:.4f} | "
                         f"{pushed['test_ndcg']:.4f} | {plain['seconds']:.1f} | "
                         f"{pushed['seconds']:.1f} |")
    write_report(args.out, args.name, {"command": command_line(), "rows": rows},
                 "\n".join(lines))


if __name__ == "__main__":
    main()
