"""The metric conventions and the metrics' names, as plain values (read by
:mod:`rsrank.evaluation.metrics` and :mod:`rsrank.evaluation.experiments`,
and by the command line without a numerical library): each convention's
gain, discount, score of a query without a relevant document, order of
tied scores and treatment of a list shorter than the cut-off, and the
metric a name such as ``"ndcg@10"`` stands for."""

import re

__all__ = ["CONVENTIONS", "DEFAULT_CONVENTION", "parse_metric"]

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

_METRIC = re.compile(r"^(ndcg|p|precision)@(\d+)$|^(map)$")


def parse_metric(name):
    """``"ndcg@10"``, ``"p@5"`` or ``"map"`` -> ``(kind, k)``."""
    match = _METRIC.match(name.strip().lower())
    if match is None:
        raise ValueError(f"unknown metric {name!r}; expected ndcg@K, p@K or map")
    if match.group(3):
        return "map", None
    kind = "ndcg" if match.group(1) == "ndcg" else "p"
    return kind, int(match.group(2))
