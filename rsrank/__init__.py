"""RSRank: sparse linear ranking functions that target NDCG.

The method of Sun, Qin, Tao and Wang (SIGIR 2009): NDCG reduced to
|Delta NDCG|-weighted pairwise classification with the modified Huber loss,
and an L1 penalty applied by truncated gradient (Langford, Li and Zhang 2009).
"""

from ._version import __version__
from .estimator import OneQueryWarning, RSRank
from .querydata import QueryData
from .datasets import (
    CacheWarning,
    LetorFormatError,
    NonContiguousQueryWarning,
    dataset_summary,
    iter_letor_chunks,
    iter_letor_folds,
    letor_summary,
    load_letor,
    load_letor_fold,
    read_query_sizes,
)


__all__ = [
    "RSRank",
    "OneQueryWarning",
    "QueryData",
    "CacheWarning",
    "LetorFormatError",
    "NonContiguousQueryWarning",
    "dataset_summary",
    "iter_letor_chunks",
    "iter_letor_folds",
    "letor_summary",
    "load_letor",
    "load_letor_fold",
    "read_query_sizes",
    "__version__",
]
