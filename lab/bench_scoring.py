"""Scoring rows with a sparse additive model: the columns it reads alone
against every column coded.

    python scripts/bench_scoring.py [--out results] [--documents 188302] [--repeats 3]

Rows from ``make_mslr_like`` (136 float32 features; 188,302 rows, as the
test rows of a quarter of MSLR-WEB30K's shape), an encoding of 255 bins per
feature fitted on them and pairs on 16 x 16 grids, as ``rsrank train
--additive --interactions K`` makes on such rows. The models: random step
heights on 17 features and 4 pairs (what that command kept at a tenth of
the shape of ``make_web_like``), on 40 features and 10 pairs, and on every
feature and pair. Times, fastest of ``--repeats``, on the threads the
machine has:

* every column coded, then the scores (``predict`` before
  :meth:`~rsrank.learning.model.AdditiveModel.narrowed`);
* ``predict``: the columns of the features and pairs with a step off zero
  alone (all of them: the rows as they are, not a copy), coded by the
  narrowed model's encoding, which drops the pairs at zero.

The largest difference between the two is reported beside each (the sums
of fewer columns round in another order). Writes ``scoring.md`` and
``scoring.json`` into ``--out``.
"""

import argparse

import numpy as np

from _bench import command_line, fastest, internal, write_report


def _model(encoding, features, pairs, rng):
    """Step heights on ``features`` and on the first ``pairs`` pairs."""
    from rsrank.learning.model import InteractionModel

    coef = np.zeros(encoding.n_steps)
    bins, width = encoding.bins, encoding.n_features
    for g in [*features, *range(width, width + pairs)]:
        coef[bins[g]:bins[g + 1]] = rng.normal(size=bins[g + 1] - bins[g])
    return InteractionModel(coef, encoding)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results")
    parser.add_argument("--documents", type=int, default=188_302)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    from rsrank.learning.binning import PairEncoding, fit_thresholds
    from rsrank.reading.synthetic import make_mslr_like

    coding_threads = internal("learning._threads", "coding_threads")

    def every_column(model):  # predict before narrowed(), on the threads it codes on
        with coding_threads(None, X.size):
            rows = model.encoding.rows(X)
        return model.score_rows(rows)

    queries = max(args.documents * 4000 // 468_598, 1)
    X = make_mslr_like(n_documents=args.documents, n_queries=queries, random_state=0).X
    rng = np.random.default_rng(0)
    all_pairs = np.array([(a, b) for a in range(0, 136, 8) for b in range(a + 4, 136, 8)])
    all_pairs = all_pairs[rng.permutation(len(all_pairs))[:10]]
    grids = fit_thresholds(X, 16)
    encoding = PairEncoding(fit_thresholds(X, 255), all_pairs,
                            [(grids[a], grids[b]) for a, b in all_pairs])
    rows, cases = [], []
    for n_features, n_pairs in ((17, 4), (40, 10), (136, 10)):
        features = np.sort(rng.choice(136, n_features, replace=False))
        model = _model(encoding, features, n_pairs, rng)
        model.score_matrix(X[:1000])  # the kernels loaded
        times = {}
        for name, score in (("every column", lambda m=model: every_column(m)),
                            ("the columns read", lambda m=model: m.score_matrix(X))):
            times[name] = (fastest(score, args.repeats), score())
        full, narrow = times["every column"], times["the columns read"]
        read = len(model.narrowed()[1])
        case = {"features": n_features, "pairs": n_pairs, "columns_read": read,
                "every_column_s": full[0], "columns_read_s": narrow[0],
                "ratio": narrow[0] / full[0],
                "max_abs_difference": float(np.max(np.abs(full[1] - narrow[1])))}
        cases.append(case)
        rows.append(f"| {n_features} | {n_pairs} | {read} | {full[0]:.3f} | {narrow[0]:.3f} | "
                    f"{case['ratio']:.2f}x | {case['max_abs_difference']:.1e} |")
    lines = ["# Scoring with a sparse additive model: the columns it reads alone", "",
             f"Command: `{command_line()}`", "",
             f"{len(X):,} rows of `make_mslr_like` (136 features), an encoding of 255 bins a "
             "feature and 10 pairs on 16 x 16 grids; random step heights on the features and "
             f"pairs in use. Fastest of {args.repeats} runs.", "",
             "| features in use | pairs in use | columns read | every column coded (s) | "
             "the columns read alone (s) | ratio | largest difference |",
             "|---|---|---|---|---|---|---|", *rows, "",
             "A model reads the features it uses and those of its pairs; the others are "
             "neither read nor coded, so its scores cost in proportion to what it uses. The "
             "scores differ only in the rounding of their sums."]
    write_report(args.out, "scoring", {"rows": len(X), "cases": cases}, "\n".join(lines))


if __name__ == "__main__":
    main()
