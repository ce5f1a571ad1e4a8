"""RSRank: sparse linear ranking functions that target NDCG.

The method of Sun, Qin, Tao and Wang (SIGIR 2009): NDCG reduced to
|Delta NDCG|-weighted pairwise classification with the modified Huber loss,
and an L1 penalty applied by truncated gradient (Langford, Li and Zhang 2009).
"""

from .estimator import RSRank
from .datasets import (
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

__version__ = "0.1.0"

__all__ = [
    "RSRank",
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
