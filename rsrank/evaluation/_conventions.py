"""The metric conventions by name, as plain values (read by
:mod:`rsrank.evaluation.metrics` and shown by the command line without a
numerical library): each convention's gain, discount, score of a query
without a relevant document, order of tied scores and treatment of a
list shorter than the cut-off."""

__all__ = ["CONVENTIONS", "DEFAULT_CONVENTION"]

CONVENTIONS = {
    "letor": dict(gain="exp2", discount="letor", empty=0.0, ties="stable", short_list="zero"),
    "trec_eval": dict(gain="linear", discount="log2", empty=0.0, ties="docid",
                      short_list="truncate"),
    "sklearn": dict(gain="linear", discount="log2", empty=0.0, ties="average", short_list="truncate"),
    "lightgbm": dict(gain="exp2", discount="log2", empty=1.0, ties="stable", short_list="truncate"),
    "standard": dict(gain="exp2", discount="log2", empty=0.0, ties="stable", short_list="truncate"),
}

#: the convention of every score and selection unless one is named
DEFAULT_CONVENTION = "letor"
