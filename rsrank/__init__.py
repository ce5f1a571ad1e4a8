"""RSRank: sparse linear ranking functions that target NDCG.

The method of Sun, Qin, Tao and Wang (SIGIR 2009): NDCG reduced to
|Delta NDCG|-weighted pairwise classification with the modified Huber loss,
and an L1 penalty applied by truncated gradient (Langford, Li and Zhang 2009).
"""

import sys

from ._version import __version__

#: Public names and the module each comes from, imported on first use, so
#: that ``import rsrank`` (and the ``rsrank`` command, before it can catch
#: a Ctrl-C) costs only this file
_EXPORTS = {
    "RSRank": "estimator",
    "RSRankCV": "cv",
    "OneQueryWarning": "estimator",
    "QueryData": "reading.querydata",
    "CacheWarning": "reading.datasets",
    "LetorFormatError": "reading.datasets",
    "NonContiguousQueryWarning": "reading.datasets",
    "dataset_summary": "reading.datasets",
    "iter_letor_chunks": "reading.datasets",
    "iter_letor_folds": "reading.datasets",
    "letor_summary": "reading.datasets",
    "load_letor": "reading.datasets",
    "load_letor_fold": "reading.datasets",
    "read_query_sizes": "reading.datasets",
}

__all__ = [*_EXPORTS, "ROOMS", "__version__"]

#: The package's rooms by role, and the public modules each holds: a module
#: is imported from its room (``rsrank.evaluation.metrics``) or by its short
#: name (``rsrank.metrics``), which names the same module object
ROOMS = {
    "reading": ("datasets", "folds", "layouts", "querydata", "synthetic"),
    "learning": ("binning", "blockwise", "defaults", "edges", "feature_keys", "fitting",
                 "interactions", "kinds", "model", "objective", "parameters", "path", "penalty",
                 "preprocessing", "recipe", "selection", "solver"),
    "evaluation": ("experiments", "metrics", "model_selection", "reports", "runs", "stats",
                   "writers"),
    "deployment": ("engines", "export", "persistence", "plotting", "trees"),
    "clicks": ("propensity",),
}
_ROOM_OF = {module: room for room, modules in ROOMS.items() for module in modules}


class _ShortNames:
    """Finds ``rsrank.<module>`` for a module of :data:`ROOMS` as the module
    of its room, imported on first use (nothing is imported here)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        package, _, module = name.rpartition(".")
        if package != __name__ or module not in _ROOM_OF:
            return None
        import importlib.util

        return importlib.util.spec_from_loader(name, _ShortNames)

    @staticmethod
    def create_module(spec):
        import importlib

        module = spec.name.rpartition(".")[2]
        module = importlib.import_module(f"{__name__}.{_ROOM_OF[module]}.{module}")
        spec.loader_state = module.__spec__  # which the import system sets to this one
        return module

    @staticmethod
    def exec_module(module):
        """The room's module is already run: its own spec back."""
        module.__spec__ = module.__spec__.loader_state


if not any(finder is _ShortNames for finder in sys.meta_path):
    sys.meta_path.append(_ShortNames)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'rsrank' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted([*globals(), *_EXPORTS])
