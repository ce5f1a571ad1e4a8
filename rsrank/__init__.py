"""RSRank: sparse linear ranking functions that target NDCG.

The method of Sun, Qin, Tao and Wang (SIGIR 2009): NDCG reduced to
|Delta NDCG|-weighted pairwise classification with the modified Huber loss,
and an L1 penalty applied by truncated gradient (Langford, Li and Zhang 2009).
"""

from ._version import __version__

#: Public names and the module each comes from, imported on first use, so
#: that ``import rsrank`` (and the ``rsrank`` command, before it can catch
#: a Ctrl-C) costs only this file
_EXPORTS = {
    "RSRank": "estimator",
    "RSRankCV": "cv",
    "OneQueryWarning": "estimator",
    "QueryData": "querydata",
    "CacheWarning": "datasets",
    "LetorFormatError": "datasets",
    "NonContiguousQueryWarning": "datasets",
    "dataset_summary": "datasets",
    "iter_letor_chunks": "datasets",
    "iter_letor_folds": "datasets",
    "letor_summary": "datasets",
    "load_letor": "datasets",
    "load_letor_fold": "datasets",
    "read_query_sizes": "datasets",
}

__all__ = [*_EXPORTS, "__version__"]


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'rsrank' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted([*globals(), *_EXPORTS])
