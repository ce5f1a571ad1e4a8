"""LETOR files and folds in: the public face of the readers.

:func:`load_letor` reads a file (:mod:`rsrank.reading._reading`: the compiled parser,
errors that name the line, the binary cache), :func:`iter_letor_chunks` reads
one in blocks of whole queries (:mod:`rsrank.reading._streaming`), and this module
finds and loads the folds of a LETOR directory and summarises data.
"""

import functools
import re
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from ._cache import CacheWarning
from ._csv import align_columns, column_order, csv_feature_names, is_csv
from ._fetch import dataset_bytes, default_data_home, fetch_letor, registry
from ._queries import group_queries
from ._docids import parse_docid, read_docids
from ._reading import (LetorFormatError, NonContiguousQueryWarning, check_exp2_labels,
                       data_line_numbers, dense_if_complete, load_letor, query_file_for,
                       read_lines, read_query_sizes, with_columns)
from ._streaming import iter_letor_chunks
from .folds import Fold

__all__ = [
    "LetorFormatError",
    "NonContiguousQueryWarning",
    "CacheWarning",
    "load_letor",
    "load_letor_fold",
    "iter_letor_chunks",
    "iter_letor_folds",
    "find_folds",
    "read_query_sizes",
    "data_line_numbers",
    "dataset_summary",
    "letor_summary",
    "parse_docid",
    "streamed_fold",
    "stream_files",
    "load_files",
    "bundled_data_path",
    "dense_if_complete",
    "check_exp2_labels",
    "query_file_for",
    "read_docids",
    "read_lines",
    "with_columns",
    "csv_feature_names",
    "align_columns",
    "is_csv",
    "fetch_letor",
    "dataset_bytes",
    "default_data_home",
    "registry",
]

SPLITS = ("train", "vali", "test")


def bundled_data_path():
    """The synthetic LETOR folds written by ``scripts/make_synthetic.py``,
    shipped inside the package (``rsrank/data/synthetic``)."""
    candidate = Path(__file__).resolve().parents[1] / "data" / "synthetic"
    if not (candidate / "Fold1").is_dir():
        raise FileNotFoundError(f"{candidate}: the bundled dataset is missing from this "
                                "installation; reinstall rsrank or give a PATH")
    return candidate


_FOLD_DIR = re.compile(r"Fold(\d+)$")


def find_folds(root):
    """Fold numbers ``k`` for which ``root/Fold{k}`` exists, increasing."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: not a directory of LETOR folds")
    folds = sorted(int(m.group(1)) for entry in root.iterdir()
                   if entry.is_dir() and (m := _FOLD_DIR.match(entry.name)))
    return folds


def split_file(root, fold, split):
    directory = Path(root) / f"Fold{fold}"
    for name in (f"{split}.txt", f"{split}.txt.gz", f"{split}.csv", f"{split}.csv.gz"):
        if (directory / name).is_file():
            return directory / name
    raise FileNotFoundError(f"{directory}: no {split}.txt, {split}.csv (or either .gz)")


def load_files(paths, n_features=None, *, only=None, values_later=(), **options):
    """Every file of ``paths`` (split name -> path, or None for no such
    split) read by :func:`load_letor` with ``options``, each made dense (with
    ``dense``) as soon as it is read, so that no two are ever held as CSR,
    then given one column count: ``(parts, width)``. The feature columns of
    CSV files are matched by name to the first CSV file's (a reordered file
    is read in that order; another set of names is an error before any
    file is read). ``only``: the splits to read (default all), their
    columns matched to all of ``paths``' as before. ``values_later``: the
    splits whose rows' values are not kept (None in their place; their
    labels, qids and width are), each read before the others so that its
    values are never held beside theirs: a run's test file, whose values it
    reads again once its model is ready
    (:attr:`~rsrank.reading.folds.Fold.reread_test`)."""
    given = [path for path in paths.values() if path is not None]
    orders = _csv_orders(given)
    parts, widths = {}, {}
    read = [split for split in paths if split in values_later] + [
        split for split in paths if split not in values_later]
    for split in read:
        path = paths[split]
        if path is None or (only is not None and split not in only):
            continue
        part = load_letor(path, n_features, **options)
        widths[split] = part[0].shape[1]
        if split in values_later:
            part = (None,) + tuple(part[1:])
        elif orders.get(str(path)) is not None:
            part = (part[0][:, orders[str(path)]],) + tuple(part[1:])
        parts[split] = part
    width = n_features or max(widths.values())
    return {split: (None if parts[split][0] is None else with_columns(parts[split][0], width),)
            + tuple(parts[split][1:]) for split in paths if split in parts}, width


def reread_split(paths, split, n_features, width, **options):
    """``split`` of ``paths`` read again as :func:`load_files` read it
    (``n_features`` as it was given, so that a cache finds the entry of the
    first reading), at the ``width`` of all of them (a fold's
    :attr:`~rsrank.reading.folds.Fold.reread_test`)."""
    part = load_files(paths, n_features, only=(split,), **options)[0][split]
    return (with_columns(part[0], width),) + tuple(part[1:])


def rereader(paths, split, n_features, width, **options):
    """A fold's ``reread_test`` or ``reread_vali`` (None without that file):
    picklable, as folds travel to worker processes."""
    if paths.get(split) is None:
        return None
    return functools.partial(reread_split, dict(paths), split, n_features, width, **options)


def later(test_values=True, vali_values=True):
    """``load_files``' ``values_later`` of a reader's ``test_values`` and
    ``vali_values``."""
    return tuple(split for split, now in (("test", test_values), ("vali", vali_values))
                 if not now)


def _csv_orders(paths):
    """``{path: column order or None}`` of the CSV files among ``paths``:
    how to put each one's feature columns in the first one's order (None:
    they already are); a :class:`LetorFormatError` names the columns of a
    file whose names are not the first file's."""
    csv_paths = [path for path in paths if is_csv(path)]
    if not csv_paths:
        return {}
    first = csv_feature_names(csv_paths[0])
    orders = {}
    for path in csv_paths[1:]:
        order = column_order(path, first, f"the features of {csv_paths[0]}")
        orders[str(path)] = None if order == list(range(len(order))) else order
    return orders


def stream_files(train, vali, test, queries_per_chunk, *, n_features=None, cache=None,
                 dtype=np.float64, dense=False, fold=1):
    """One fold whose training file stays on disk: ``vali`` and ``test``
    (None: no test) loaded as :func:`load_files` loads them, and
    ``train_chunks()`` giving the training queries in blocks of
    ``queries_per_chunk`` (see :func:`iter_letor_chunks`)."""
    paths = {"vali": vali, "test": test}
    parts, width = load_files(paths, n_features, cache=cache, dtype=dtype, dense=dense)
    return Fold(fold=fold, train=None, n_features=width, vali=parts["vali"],
                test=parts.get("test"),
                reread_test=rereader(paths, "test", n_features, width, cache=cache,
                                     dtype=dtype, dense=dense),
                # a partial, not a lambda: the fold travels to worker processes
                train_chunks=functools.partial(iter_letor_chunks, train, queries_per_chunk,
                                               n_features=width, dtype=dtype, cache=cache))


def streamed_fold(root, fold, n_features, queries_per_chunk, cache=None, *, dtype=np.float64,
                  dense=False):
    """Fold ``fold`` of ``root`` with its train split left on disk (see
    :func:`stream_files`)."""
    train, vali, test = (split_file(root, fold, split) for split in SPLITS)
    return stream_files(train, vali, test, queries_per_chunk, n_features=n_features,
                        cache=cache, dtype=dtype, dense=dense, fold=fold)


def load_letor_fold(root, fold, *, n_features=None, dtype=np.float64, return_docids=False,
                    cache=None, dense=False, test_values=True, vali_values=True):
    """Load ``Fold{fold}/train``, ``vali`` and ``test`` with one column count.

    Parameters
    ----------
    root : path-like
        Directory holding ``Fold1``, ``Fold2``, ...
    fold : int
        Fold number.
    n_features : int, optional
        Columns of every ``X``; by default the largest index over the three files.
    cache : True or path-like, optional
        Cache the parsed files (see :func:`load_letor`).
    dense : bool or "auto"
        As in :func:`load_letor`; a dense split narrower than the others
        gets columns of zeros.
    test_values : bool
        As in :func:`rsrank.reading.layouts.load_splits`: False keeps only
        the test file's labels and qids until the fold's ``reread_test``
        reads it again (a run's own folds).
    vali_values : bool
        The same for the vali file (``reread_vali``).

    Returns
    -------
    Fold
        ``train``, ``vali``, ``test`` (each ``(X, y, qid)``, plus docids as a
        fourth item with ``return_docids=True``), ``n_features``, ``fold``
        and ``paths`` (:class:`~rsrank.reading.folds.Fold`; ``fold["train"]``
        reads as well).
    """
    if fold not in find_folds(root):
        raise FileNotFoundError(f"{Path(root) / f'Fold{fold}'}: fold {fold} does not exist "
                                f"(found folds {find_folds(root)})")
    paths = {split: split_file(root, fold, split) for split in SPLITS}
    options = dict(dtype=dtype, dense=dense, return_docids=return_docids, cache=cache)
    parts, width = load_files(paths, n_features, values_later=later(test_values, vali_values),
                              **options)
    return Fold(**parts, n_features=width, fold=fold, paths=paths,
                reread_test=rereader(paths, "test", n_features, width, **options),
                reread_vali=rereader(paths, "vali", n_features, width, **options))


def iter_letor_folds(root, folds=None, **options):
    """Yield :func:`load_letor_fold` for each fold (all that exist by default)."""
    available = find_folds(root)
    if not available:
        raise FileNotFoundError(f"{root}: no Fold<k> directories")
    for fold in available if folds is None else folds:
        yield load_letor_fold(root, fold, **options)


def dataset_summary(X, y, qid):
    """Counts a reader checks before training.

    Returns
    -------
    Bunch
        ``n_queries``, ``n_documents``, ``n_features``, ``labels`` (label ->
        count), ``docs_per_query`` (min, median, max) and
        ``queries_without_relevant`` (no label above 0).
    """
    y = np.asarray(y)
    groups = group_queries(qid, n_rows=len(y))
    sizes = groups.sizes
    best = np.zeros(groups.n_queries)
    if len(y):
        best = np.maximum.reduceat(y[groups.order], groups.offsets[:-1])
    values, counts = np.unique(y, return_counts=True)
    return Bunch(
        n_queries=int(groups.n_queries),
        n_documents=int(len(y)),
        n_features=int(X.shape[1]),
        labels={int(v): int(c) for v, c in zip(values, counts)},
        docs_per_query=(int(sizes.min()), float(np.median(sizes)), int(sizes.max()))
        if len(sizes) else (0, 0.0, 0),
        queries_without_relevant=int(np.sum(best <= 0)),
    )


def letor_summary(path):
    """:func:`dataset_summary` of a file, or of every split of every fold of a
    fold root. Returns a dict ``{name: Bunch}``."""
    path = Path(path)
    if path.is_dir():
        folds = find_folds(path)
        if not folds:
            raise FileNotFoundError(f"{path}: neither a LETOR file nor a directory of Fold<k>")
        out = {}
        for fold in folds:
            data = load_letor_fold(path, fold)
            for split in SPLITS:
                out[f"Fold{fold}/{split}"] = dataset_summary(*data[split][:3])
        return out
    return {str(path): dataset_summary(*load_letor(path))}
