"""The defaults and choices of RSRank's parameters and of ``rsrank
train``'s recipe, as plain values: declared once here and read by the
estimator, the kinds, the penalty, the scaling, the recipe and the command
line. Nothing here needs a numerical library, so ``rsrank train --help``
shows them without loading one."""

__all__ = ["NORMALIZERS", "GLOBAL_NORMALIZERS", "QUERY_NORMALIZERS", "L1_METHODS",
           "DEFAULT_NORMALIZE", "DEFAULT_L1_METHOD", "DEFAULT_MAX_ITER", "DEFAULT_MAX_BINS",
           "DEFAULT_INTERACTION_BINS", "MAX_INTERACTION_BINS", "DEFAULT_L1_RATIO",
           "DEFAULT_WITHIN", "SPARSE_WITHIN", "SPARSE_L1_RATIO", "SPARSE_VALI_CV", "PATH_EPOCHS",
           "PATH_WEIGHT_TOL", "PATH_PAIR_WEIGHTS", "PATH_MOMENTUM", "PATH_ROWS", "PATH_PATIENCE",
           "PATH_RELAX_EPOCHS", "PATH_SETTLE_TOL", "LEVEL_STEP", "LEVEL_ROWS", "ROWS_BINS",
           "AUTO_BINS", "LEVEL_LOSS_PATIENCE", "check_within"]

#: values of ``RSRank(normalize=...)`` and ``rsrank train --normalize``
NORMALIZERS = ("none", "zscore", "minmax", "query-zscore", "query-minmax")
GLOBAL_NORMALIZERS = ("zscore", "minmax")
QUERY_NORMALIZERS = ("query-zscore", "query-minmax")
#: values of ``RSRank(l1_method=...)``: truncated gradient, Tsuruoka's cumulative penalty
L1_METHODS = ("truncated", "cumulative")

DEFAULT_NORMALIZE = "zscore"
DEFAULT_L1_METHOD = "truncated"
#: epochs of a fit unless ``max_iter`` says otherwise (the recipe's path takes
#: :data:`PATH_EPOCHS`)
DEFAULT_MAX_ITER = 100
#: bins per feature of an additive model unless ``max_bins`` says otherwise
DEFAULT_MAX_BINS = 32
#: bins per feature of a pair's grid unless ``interaction_bins`` says otherwise,
#: and the most (a pair's cells are one uint8 code: at most 16 x 16)
DEFAULT_INTERACTION_BINS = 8
MAX_INTERACTION_BINS = 16


def _log_spaced(low_decades, per_decade):
    """Fractions of l1_max from 1 down ``low_decades`` decades, ``per_decade``
    points a decade, 1 itself left out, each to three significant digits."""
    return [float(f"{10 ** (-k / per_decade):.3g}")
            for k in range(1, low_decades * per_decade + 1)]


#: The default grid of ``rsrank train``: L1 strengths as fractions of each
#: fold's l1_max, nine log-spaced points from 0.46 down to 1/1000 (1 itself
#: keeps every weight at zero), then 0: a regularization path from strong
#: to weak. With ``--within``, the sparsest point whose vali score is
#: within 1% of the best is kept.
DEFAULT_L1_RATIO = _log_spaced(3, 3) + [0.0]
DEFAULT_WITHIN = 0.01


def check_within(within):
    """``within`` is a fraction in [0, 1) or ``"1se"`` (here, beside its
    default, so that the command line checks ``--within`` without the
    numerical libraries)."""
    if within == "1se":
        return
    if isinstance(within, str) or not 0 <= within < 1:
        raise ValueError(f"within must be in [0, 1) or '1se', got {within!r}")


#: The sparse recipe, for a selection that gives up 3% or more of the best
#: vali score for fewer features (``within >= SPARSE_WITHIN``): the path
#: twice as dense from 1 down to 0.1 of l1_max, where the sparse models
#: are (six points a decade instead of three), and every point judged on
#: SPARSE_VALI_CV folds of the training queries beside vali, so that the
#: sparsest point within 3% is picked on more queries than vali holds.
#: Across ten datasets it keeps 8.6 features where the default grid kept
#: 10.8 at 3%, and 2.6 of OHSUMED's 45 at 1.041x the dense model's test
#: NDCG@10 (``results/sparse3.md``).
SPARSE_WITHIN = 0.03
SPARSE_L1_RATIO = _log_spaced(1, 6) + [r for r in DEFAULT_L1_RATIO if r < 0.1]
SPARSE_VALI_CV = 3
#: ``rsrank train``'s default recipe (``--learning-rate curvature``): every
#: point of the path at 2 over the trace of the loss's Hessian at w = 0,
#: warm-started from the stronger point, kept at its last epoch (the
#: penalized optimum), for both pair weightings; the selection sees all of
#: them (``results/paths.md``). The epochs a point may take: every kind's
#: (with momentum, which every kind's path takes, 300 epochs reach what
#: 1000 plain ones did not; ``results/interactions.md``).
PATH_EPOCHS = 300
#: ... and stopped earlier once an epoch moves no weight by more than this
#: times the largest (``RSRank(weight_tol=...)``; ``results/paths_tol.md``:
#: 1e-4 keeps every dataset where all 300 epochs put it; 1e-3, which lost on
#: OHSUMED when this was chosen, is within noise there now, in about half to
#: nine tenths of the time, but the additive kinds have not been measured with it)
PATH_WEIGHT_TOL = 1e-4
#: ... for both pair weightings; a path of a kind with pairs walked on a
#: sample (:data:`PATH_ROWS`) walks the first alone, the one its pairs were
#: searched with (:func:`rsrank.learning.path.one_search`)
PATH_PAIR_WEIGHTS = ["unit", "delta_ndcg"]
#: ... and every kind's path steps with Nesterov's momentum: a linear
#: point settles in tens of epochs where plain steps at the curvature-safe
#: size were still moving after 300 (``results/recipe_speed.md``)
PATH_MOMENTUM = True
#: A training set of more rows walks the path on a seeded sample of its
#: queries of about this many rows, and the chosen point is fitted again on
#: all of them (:func:`rsrank.evaluation.experiments.fit_and_select`;
#: ``results/path_rows.md``: never significantly below the path on all rows
#: on eight generated sets at MSLR's shape, where 25,000 was twice;
#: ``results/path_rows_other.md``: once below and once above on six draws
#: of other generators, mean -0.0001)
PATH_ROWS = 50_000
#: ... and each setting of such a path stops after this many strengths in a
#: row that do not raise its best vali score: its weakest points, which
#: keep the most features and take the most epochs, are walked only while
#: they pay
PATH_PATIENCE = 2
#: ... and gives each point's relaxed refit (``relax``) at most this many
#: epochs: on the sample they only rank the points for the selection, and
#: the chosen point is fitted again on all rows with the kind's epochs.
#: An unpenalized additive fit creeps on for hundreds of epochs (its vali
#: NDCG@10 still rising at the 300th), so these refits took most of such
#: a path's time. At a tenth and a quarter of MSLR-WEB30K's shape, on
#: ``make_mslr_like``'s non-linear teacher and ``make_web_like``, the
#: additive kinds chose the same point with the same test NDCG@10 with and
#: without the cap (``results/end_to_end_*.md``, the ``relax300`` rows);
#: at 50 rather than 100, on those four sets and on the first 0.2 and 0.4
#: of each quarter's training queries, the same point and the same test
#: predictions byte for byte, in 0.77x-0.97x the time
#: (``results/relax_epochs_compare.md``)
PATH_RELAX_EPOCHS = 50
#: ... and stops each point's penalized fit once an epoch moves no weight
#: by more than this times the largest (or the estimator's ``weight_tol``,
#: where larger). These fits, too, only rank the points; the chosen one is
#: fitted again on all rows with the estimator's ``weight_tol``. At a tenth
#: and a quarter of MSLR-WEB30K's shape, on ``make_mslr_like``'s
#: non-linear teacher and ``make_web_like``, every kind chose the same
#: point with the same test NDCG@10 with this as with 1e-4, and
#: ``--additive --interactions 10`` took 0-17% less time
#: (``results/settle_tol_*.md``). On the fourteen draws of the path on a
#: sample (``results/path_rows_unsettled.md`` against ``path_rows.md`` and
#: ``path_rows_other.md``) the linear defaults chose a sparser point on two,
#: lower in test NDCG@10 by 0.0037 and 0.0025, and the same on twelve, in
#: about two thirds of the sampled fits' time
PATH_SETTLE_TOL = 1e-3
#: An additive model fitted with ``learning_rate="curvature"`` on rows in
#: memory steps on the levels of its shapes and pairs' cells, each by its
#: gradient over its curvature times this
#: (:func:`rsrank.learning.fitting.level_steps`), at most one over the
#: bound of the power method: on 136 features with ten pairs at a tenth of
#: MSLR-WEB30K's shape 0.1 reached test NDCG@10 0.9057 in 196 epochs, 0.3
#: (and 1, which the bound took down to the same step) 0.9069 in 190, where
#: steps on the weights reached 0.8155 in 300 (``results/level_steps.md``)
LEVEL_STEP = 0.3
#: ... on training sets of at least this many rows; fits on fewer step on
#: the weights at the trace's step. On six small sets (OHSUMED, the bundled
#: data, LightGBM's example, three generated; 2 seeds) level steps lost
#: test NDCG@10 on three, by 0.17 on 30 queries of 20-80 documents
#: (``results/level_steps_small_tried.md``); with this bound the additive
#: kind gives the same values as before, query for query
#: (``results/level_rows_small.md``)
LEVEL_ROWS = 50_000
#: ``max_bins`` and ``interaction_bins`` of ``rsrank train``'s additive
#: kinds (:data:`AUTO_BINS`, "auto") on at least :data:`LEVEL_ROWS`
#: training rows: LightGBM's 255 bins a feature and pair grids of 16 x 16
#: cells (fewer rows: :data:`DEFAULT_MAX_BINS`, :data:`DEFAULT_INTERACTION_BINS`).
#: Quantile bins are widest in the tails, which decide a query's top ten:
#: at a tenth of MSLR-WEB30K's shape ``--additive --interactions 10``
#: scored test NDCG@10 0.9033 at 32 / 8 bins and 0.9662 at 255 / 16
#: (LightGBM 0.9720), at a quarter 0.9668 (LightGBM 0.9686), when these
#: bins were chosen (30ca60c; ``results/end_to_end_nonlinear_*.md`` hold
#: today's runs); on six small sets 255 bins lost
#: (``results/level_steps_small_tried.md``)
ROWS_BINS = (255, MAX_INTERACTION_BINS)
#: A fit on levels whose pair weights follow the ranking (swap weights)
#: stops after this many epochs without a new lowest training loss: its
#: weights never settle (the loss wanders within a few percent from about
#: the tenth epoch on), so every such fit ran all its epochs. At a tenth
#: of MSLR-WEB30K's shape it left the chosen models of ``--additive`` and
#: ``--additive --interactions 10`` as they were, in 30 s and 83 s where
#: they took 47 s and 98 s (at 5ba33f0)
LEVEL_LOSS_PATIENCE = 20
AUTO_BINS = "auto"
