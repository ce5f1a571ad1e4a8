"""numba kernels on plain arrays: swap weights, pair losses, lambdas,
truncation, and whole training epochs.

Conventions shared by every kernel:

* rows are grouped by query: query ``q`` owns rows ``offsets[q]:offsets[q+1]``
  of ``X`` (CSR ``data, indices, indptr`` or a C-contiguous dense array), of
  ``gains`` and of ``labels``;
* ``discount[p]`` is the discount of 0-based position ``p`` and is 0 from the
  cut-off on; ``cutoff`` is the number of positions that can carry weight;
* ``inv_ideal[q]`` is query ``q``'s factor on its pair weights: ``1 / ideal
  DCG`` at that cut-off with swap weights (0 when the query has no relevant
  document), 1 with unit weights, times the query's weight when queries
  are weighted;
* ``X`` is only read. Weights, scores and lambdas are float64 whatever the
  dtype of ``X``.

All kernels are compiled with ``cache=True``, their cache read and written
under a lock (:class:`~rsrank._kernels.build.LockedCache`). Each parallel
kernel is its serial twin compiled with ``parallel=True``: in an epoch, the
queries of a batch are dealt to a fixed number of gradient rows (a
``prange`` over the rows), so threads write disjoint rows of ``scores``,
``lam`` and the gradient, and the rows are added up in order after the
loop: both builds give the same weights bit for bit.
"""

from .build import cached, forget_stale_builds, read_only, twins, variant
from .epoch import (GRADIENT_ONLY, Pairs, Rows, Steps, Work, coded_epoch_parallel,
                    coded_epoch_serial, compiled_before, csr_epoch_parallel, csr_epoch_serial,
                    epoch_kernels, epoch_parallel, epoch_serial, moving_rows, objective,
                    period_steps, scaled_weights, step_size, take_step, level_moves)
from .memory import (NOTHING_AHEAD, PREFETCH_SPAN_BYTES, items_span, prefetch_plan, rows_span,
                     share_lines)
from .metrics import grouped_order, ideal_dcg, ndcg_at_parallel, ndcg_at_serial
from .pairs import (PAIR_BLOCK, code_sums, grid_residuals, pair_histograms_parallel,
                    pair_histograms_serial, row_curvature, row_pair_weights, rows_curvature,
                    run_costs, step_curvature, stored_code_sums)
from .penalty import (clip_signs, cumulative_penalty, dense_column_moments, dense_column_sums,
                      group_shrink, isotonic, monotone_pairs, monotone_table,
                      stored_column_moments, truncate)
from .lambdas import (PREFIX_COST_PER_LEVEL, PREFIX_MIN_SIZE, all_query_levels, pair_loop_lambdas,
                      preference_lambdas, prefix_sums_apply, query_lambdas, query_lambdas_from,
                      query_levels, ranked_lambdas, sorted_query_lambdas)
from .ranking import (HINGE, LOGISTIC, MODIFIED_HUBER, PAIR_LOSSES, float_bits, label_levels,
                      pair_loss, pair_loss_and_derivative, pair_loss_derivative, ranked_order,
                      ranked_order_from, swap_weight, swap_weight_matrix, top_order)
from .scores import (CODE_BLOCK, code_counts, code_layout, coded_add_histogram, coded_scores,
                     coded_scores_all, csr_add_gradient, csr_scores, dense_add_gradient,
                     dense_codes_parallel, dense_codes_serial, dense_scores,
                     linear_scores_parallel, linear_scores_serial, mapped_columns,
                     slotted_scores, step_table, stored_codes_parallel, stored_codes_serial,
                     strided_scores, suffix_sums, table_size, uniform_stride)

# before any kernel is loaded from numba's cache: builds of older sources go
forget_stale_builds(epoch_serial)

__all__ = [
    "PAIR_BLOCK", "pair_histograms_parallel", "pair_histograms_serial", "row_curvature",
    "rows_curvature",
    "step_curvature", "CODE_BLOCK", "code_layout", "code_sums", "grid_residuals", "run_costs",
    "code_counts",
    "mapped_columns",
    "row_pair_weights", "stored_code_sums",
    "GRADIENT_ONLY", "HINGE", "LOGISTIC", "MODIFIED_HUBER", "PAIR_LOSSES",
    "NOTHING_AHEAD", "PREFETCH_SPAN_BYTES", "PREFIX_COST_PER_LEVEL", "PREFIX_MIN_SIZE", "Pairs",
    "Rows", "Steps", "Work",
    "all_query_levels", "cached", "coded_add_histogram", "coded_epoch_parallel",
    "coded_epoch_serial", "coded_scores", "coded_scores_all", "compiled_before",
    "csr_add_gradient", "csr_epoch_parallel", "csr_epoch_serial", "csr_scores",
    "clip_signs", "isotonic", "monotone_pairs", "monotone_table", "cumulative_penalty",
    "dense_add_gradient", "dense_codes_parallel", "dense_codes_serial", "dense_column_moments",
    "dense_column_sums",
    "dense_scores",
    "epoch_kernels", "epoch_parallel", "epoch_serial", "float_bits", "group_shrink",
    "moving_rows",
    "grouped_order", "ideal_dcg", "items_span", "label_levels", "linear_scores_parallel",
    "linear_scores_serial",
    "ndcg_at_parallel", "ndcg_at_serial", "objective", "pair_loop_lambdas", "pair_loss",
    "pair_loss_and_derivative", "pair_loss_derivative", "period_steps", "preference_lambdas",
    "prefetch_plan", "prefix_sums_apply",
    "query_lambdas", "query_lambdas_from", "query_levels", "ranked_lambdas", "ranked_order",
    "read_only",
    "ranked_order_from", "rows_span", "scaled_weights", "share_lines", "slotted_scores",
    "sorted_query_lambdas",
    "step_size", "step_table", "stored_codes_parallel", "stored_codes_serial",
    "stored_column_moments", "strided_scores",
    "suffix_sums",
    "swap_weight", "swap_weight_matrix", "table_size", "take_step", "level_moves", "top_order", "truncate",
    "twins", "uniform_stride", "variant",
]
