"""Where a user's splits are: the layouts ``rsrank train`` and ``rsrank path``
accept besides ``Fold<k>`` directories.

A directory of ``Fold<k>``, a directory holding ``train``/``vali``/``test``
files under the names LightGBM's examples, SVMrank and plain layouts use,
explicit files, or one file split into train and vali by query
(:func:`resolve_training_data`); feature names in the layouts RankLib,
Elasticsearch LTR and plain lists use (:func:`read_feature_names`).
"""

import re
import warnings
from pathlib import Path

import numpy as np
from sklearn.utils import check_random_state

from ._files import not_a_file
from .folds import Fold
from .datasets import (SPLITS, LetorFormatError, bundled_data_path, find_folds, load_files,
                       query_file_for, read_lines, stream_files, later, rereader)
from ..learning.model import feature_name_problem

__all__ = ["find_splits", "split_queries", "load_splits", "streamed_splits",
           "resolve_training_data", "read_feature_names"]


#: File names tried in a directory without Fold<k>, per split (LightGBM's
#: examples, SVMrank and plain names), each also with ``.txt`` and ``.gz``.
_SPLIT_NAMES = {"train": ("train", "rank.train"),
                "vali": ("vali", "valid", "validation", "rank.vali", "rank.valid"),
                "test": ("test", "rank.test")}


def _find_split(directory, split):
    for stem in _SPLIT_NAMES[split]:
        for suffix in ("", ".txt", ".gz", ".txt.gz", ".csv", ".csv.gz"):
            candidate = directory / f"{stem}{suffix}"
            if candidate.is_file():
                return candidate
    return None


def find_splits(directory):
    """``{"train": path, "vali": path or None, "test": path or None}`` for a
    directory in LightGBM/SVMrank layout (``rank.train``, ``rank.test``,
    optionally ``rank.vali``, with ``.query``/``.group`` files beside them)
    or with ``train.txt``, ``vali.txt``, ``test.txt``; plain or ``.gz``.
    Raises ``FileNotFoundError`` when no training file is there."""
    directory = Path(directory)
    found = {split: _find_split(directory, split) for split in SPLITS}
    if found["train"] is None:
        names = ", ".join(f"{stem}[.txt|.csv][.gz]" for stem in _SPLIT_NAMES["train"])
        raise FileNotFoundError(f"{directory}: no Fold<k> directories and no training file "
                                f"({names}); give --train FILE")
    return found


def split_queries(data, fraction, random_state):
    """Split ``(X, y, qid)`` into two parts by whole queries: a seeded random
    ``fraction`` of the queries (at least one) goes to the second part."""
    return _split_rows(data, held_out_queries(data[2], fraction, random_state))


def _split_rows(data, is_held):
    """``(X, y, qid)`` of the rows outside and inside the mask ``is_held``."""
    X, y, qid = data[:3]
    return (X[~is_held], y[~is_held], qid[~is_held]), (X[is_held], y[is_held], qid[is_held])


def held_out_queries(qid, fraction, random_state):
    """Which rows :func:`split_queries` puts in the second part: those of a
    seeded random ``fraction`` of the queries of ``qid`` (at least one)."""
    queries = np.unique(qid)
    if not 0 < fraction < 1:
        raise ValueError(f"the validation fraction must be in (0, 1), got {fraction}")
    if len(queries) < 2:
        raise ValueError("cannot hold out validation queries from a single query; give a "
                         "validation file")
    n_held = min(len(queries) - 1, max(1, int(round(fraction * len(queries)))))
    held = check_random_state(random_state).choice(queries, n_held, replace=False)
    return np.isin(qid, held)


def load_splits(train, vali=None, test=None, *, vali_fraction=None, random_state=0,
                n_features=None, dtype=np.float64, cache=None, dense=False, test_values=True,
                vali_values=True):
    """Load explicit train/vali/test files as one fold.

    Parameters
    ----------
    train : path-like
    vali, test : path-like, optional
        Without ``vali``, a seeded ``vali_fraction`` of the training queries
        (default 0.2) is held out for validation.
    vali_fraction : float, optional
        Share of training queries held out; an error together with ``vali``.
    random_state : int
        Seed of the held-out queries.
    n_features : int, optional
        Columns of every ``X`` (default: the largest index over the files).
    test_values : bool
        False: the test file is read first and only its labels and qids
        are kept (``test`` holds None for its values), to be read again by
        the fold's ``reread_test`` once a model is ready: ``rsrank train``'s
        own folds, which never hold the test values beside the training
        ones.
    vali_values : bool
        The same for a vali file (``reread_vali``): a run that keeps its
        training rows as bin codes reads the vali values after coding them.
    dtype, cache, dense
        As in :func:`rsrank.load_letor`; a dense split narrower than the
        others gets columns of zeros.

    Returns
    -------
    Fold
        As :func:`rsrank.reading.datasets.load_letor_fold`: ``train``, ``vali``, ``test`` (``None``
        without a test file), ``n_features``, ``fold`` (1), ``paths`` and
        ``vali_source`` (the vali file, or a description of the split), and
        ``vali_rows``: without ``vali``, the training file's data rows (from
        0) that were held out, so that runs name their documents as the
        file does; else None.
    """
    if vali is not None and vali_fraction is not None:
        raise ValueError("give either a validation file or a validation fraction, not both")
    paths = _existing_files(train, vali, test)
    parts, width = load_files(paths, n_features, dtype=dtype, cache=cache, dense=dense,
                              values_later=later(test_values, vali_values))
    options = dict(dtype=dtype, cache=cache, dense=dense)
    vali_rows = None
    if vali is None:
        fraction = 0.2 if vali_fraction is None else vali_fraction
        is_held = held_out_queries(parts["train"][2], fraction, random_state)
        parts["train"], parts["vali"] = _split_rows(parts["train"], is_held)
        vali_rows = np.flatnonzero(is_held)
        source = f"{fraction:g} of the training queries (seed {random_state})"
    else:
        source = str(paths["vali"])
    for split in ("vali", "test"):
        if split in parts:
            _check_disjoint_queries(parts["train"][2], parts[split][2], paths["train"],
                                    paths[split] or "the held-out queries")
    return Fold(train=parts["train"], vali=parts["vali"], test=parts.get("test"),
                n_features=width, fold=1, paths=paths, vali_source=source,
                vali_rows=vali_rows, reread_test=rereader(paths, "test", n_features, width,
                                                          **options),
                reread_vali=rereader(paths, "vali", n_features, width, **options))


def streamed_splits(train, vali, test=None, *, queries_per_chunk=1000, n_features=None,
                    cache=None, dtype=np.float64, dense=False):
    """Explicit files as one fold whose training file stays on disk: vali
    and test loaded, ``train_chunks()`` giving the training queries in
    blocks of ``queries_per_chunk`` (:func:`rsrank.iter_letor_chunks`), as
    :func:`rsrank.reading.datasets.streamed_fold` gives a ``Fold<k>`` root's. The
    training file's qids are not read ahead, so unlike :func:`load_splits`
    this does not warn of queries shared with vali or test."""
    if vali is None:
        raise ValueError("streaming needs a validation file: no queries can be held out of "
                         "a stream (give --vali, or leave --stream out)")
    paths = _existing_files(train, vali, test)
    fold = stream_files(*paths.values(), queries_per_chunk, n_features=n_features,
                        cache=cache, dtype=dtype, dense=dense)
    fold.paths, fold.vali_source = paths, str(paths["vali"])
    return fold


def _existing_files(train, vali, test):
    """``{"train", "vali", "test"}`` as paths (None where not given), each
    given one checked to be a file."""
    paths = {"train": Path(train), "vali": None if vali is None else Path(vali),
             "test": None if test is None else Path(test)}
    for split, path in paths.items():
        if path is not None and not path.is_file():
            raise not_a_file(path, f"{split} split")
    return paths


def resolve_training_data(path=None, *, train=None, vali=None, test=None, vali_fraction=None,
                          random_state=0, n_features=None, cache=None, dtype=np.float64,
                          dense=False, stream_queries=None, test_values=True, vali_values=True):
    """Find the training data in any of the layouts ``rsrank train`` reads.

    Parameters
    ----------
    path : path-like, optional
        A directory of ``Fold<k>`` (LETOR), a directory in LightGBM/SVMrank
        layout (see :func:`find_splits`), or one training file. Default: the
        bundled dataset, unless ``train`` is given.
    train, vali, test : path-like, optional
        Explicit files (``train`` instead of ``path``; ``vali`` and ``test``
        also with a training file as ``path``).
    vali_fraction, random_state, n_features, cache, dtype, dense
        As in :func:`load_splits` (for files; a ``Fold<k>`` root is loaded
        later, by :func:`rsrank.evaluation.experiments.run_letor_folds`).
    stream_queries : int, optional
        Leave the training file of files on disk, read in blocks of this
        many queries every epoch (:func:`streamed_splits`).
    test_values, vali_values : bool
        As in :func:`load_splits`, for a fold loaded here.

    Returns
    -------
    data : path or list of Fold
        The ``Fold<k>`` root, or a list with the one fold loaded from files,
        as :func:`rsrank.evaluation.experiments.run_letor_folds` takes them.
    name : str
        What to call the data in tables.
    inputs : list of Path
        Every input file or directory (an output must never replace one).
    """
    if train is not None and path is not None:
        raise ValueError("give either a PATH or a training file, not both")
    single = train if train is not None else (
        path if path is not None and Path(path).is_file() else None)
    if single is None and (vali is not None or test is not None):
        raise ValueError("a vali or test file needs a training file (a directory brings its own)")
    load = dict(n_features=n_features, cache=cache, dtype=dtype, dense=dense)
    if stream_queries is not None and vali_fraction is not None:
        raise ValueError("streaming cannot hold out a fraction of a stream; give a vali file")
    if single is not None:
        if stream_queries is not None:
            fold = streamed_splits(single, vali, test, queries_per_chunk=stream_queries, **load)
        else:
            fold = load_splits(single, vali, test, vali_fraction=vali_fraction,
                               random_state=random_state, test_values=test_values,
                               vali_values=vali_values, **load)
        return [fold], str(single), [p for p in fold.paths.values() if p is not None]
    root = Path(path) if path is not None else bundled_data_path()
    if not root.exists():
        raise FileNotFoundError(f"{root}: no such file or directory")
    if not find_folds(root):
        splits = find_splits(root)
        if stream_queries is not None:
            fold = streamed_splits(splits["train"], splits["vali"], splits["test"],
                                   queries_per_chunk=stream_queries, **load)
        else:
            fold = load_splits(splits["train"], splits["vali"], splits["test"],
                               vali_fraction=vali_fraction, random_state=random_state,
                               test_values=test_values, vali_values=vali_values, **load)
        return [fold], data_name(path, root), _input_files(splits.values())
    if vali_fraction is not None:
        raise ValueError(f"a validation fraction applies to training data without vali files, "
                         f"but {root} has Fold<k> directories with vali files")
    return root, data_name(path, root), _input_files(
        entry for k in find_folds(root) for entry in (root / f"Fold{k}").iterdir())


def data_name(path, root):
    """How a results file names the data: ``rsrank/data/synthetic`` for the
    bundled data (no PATH), else the path as given, relative to the working
    directory when it lies below it (no machine's absolute paths in shared
    results)."""
    if path is None:
        return "rsrank/data/synthetic"
    given = Path(path)
    if given.is_absolute():
        try:
            return str(given.relative_to(Path.cwd()))
        except ValueError:
            return str(given)
    return str(given)


def _input_files(paths):
    """The files among ``paths`` and the query-size files beside them: what
    an output must not replace (an output elsewhere in the data's directory
    is fine)."""
    files = [Path(p) for p in paths if p is not None and Path(p).is_file()]
    return files + [q for q in map(query_file_for, files) if q is not None]


def _check_disjoint_queries(train_qid, other_qid, train_path, other_path):
    # qids invented from .query files (0, 1, 2, ...) restart in every file, so
    # overlapping values are a problem only for files with real qid columns
    if query_file_for(train_path) is not None or query_file_for(other_path) is not None:
        return
    shared = np.intersect1d(train_qid, other_qid)
    if len(shared):
        warnings.warn(f"{other_path} shares {len(shared)} query ids with {train_path} (for "
                      f"example qid {shared[0]}): a query in both training and evaluation "
                      "data inflates the evaluation", UserWarning, stacklevel=3)


def read_feature_names(path, n_features=None):
    """Feature names from a text file.

    Two layouts are read: one name per line (feature 1 first), or
    ``index name`` lines (``1 bm25_title``, ``1:bm25_title`` or tab
    separated, 1-based indices in any order, as RankLib's and the
    Elasticsearch LTR plugin's feature lists give them). Blank lines and
    ``#`` comments are skipped. A list of bare names names every feature,
    in order: fewer names than features is an error. An ``index name``
    list may leave features out; they are called ``f<index>``, with a
    warning that says how many. Names follow
    :func:`rsrank.learning.model.feature_name_problem`.

    Returns
    -------
    list of str
        ``n_features`` names (default: as many as the file lists, or its
        largest index).
    """
    named, plain = {}, []
    for number, text in read_lines(path, 10_000, "feature-name file"):
        text = text.split("#", 1)[0].strip()
        if not text:
            continue
        match = re.fullmatch(r"([0-9]+)(?:[ \t]*:[ \t]*|[ \t]+)(\S.*)", text)
        if match:
            index = int(match.group(1))
            if index < 1:
                raise LetorFormatError(path, number, f"feature index {index}; indices "
                                       "start at 1")
            if index in named:
                raise LetorFormatError(path, number, f"feature {index} is named twice")
            named[index] = match.group(2).strip()
        else:
            plain.append((number, text))
    if named and plain:
        raise LetorFormatError(path, plain[0][0], "mixes 'index name' lines with bare names")
    if not named and not plain:
        raise LetorFormatError(path, None, "no feature names in the file")
    if plain:
        for number, name in plain:
            if len(name.split()) != 1:
                raise LetorFormatError(path, number, f"{name!r}: a feature name is one word "
                                       "(or write 'index name')")
        named = {i + 1: name for i, (_, name) in enumerate(plain)}
    width = max(named) if n_features is None else n_features
    beyond = [index for index in named if index > width]
    if beyond:
        raise LetorFormatError(path, None, f"names feature {max(beyond)} but the data has "
                               f"{width} features")
    if plain and len(named) < width:
        raise LetorFormatError(path, None, f"names {len(named)} of the {width} features, one "
                               f"per line; name every feature (or write 'index name' lines)")
    names = [named.get(j, f"f{j}") for j in range(1, width + 1)]
    problem = feature_name_problem(names, width)
    if problem:
        raise LetorFormatError(path, None, problem)
    if len(named) < width:
        warnings.warn(f"{path} names {len(named)} of the {width} features; the others are "
                      "called f<index>", UserWarning, stacklevel=2)
    return names


def read_feature_costs(path):
    """Feature costs from a text file: ``FEATURE COST`` per line, FEATURE a
    feature name (as ``--feature-names`` or the model give them; ``f3`` for
    LETOR's feature 3 without names) or a 1-based index, COST a number > 0.
    Blank lines and ``#`` comments are skipped; features not listed cost 1.
    Returns a dict for ``RSRank(feature_costs=...)`` (indices 0-based)."""
    costs = {}
    for number, text in read_lines(path, 10_000, "feature-cost file"):
        text = text.split("#", 1)[0].strip()
        if not text:
            continue
        parts = text.rsplit(None, 1)
        if len(parts) != 2:
            raise LetorFormatError(path, number, "expected 'FEATURE COST'")
        feature, value = parts
        try:
            cost = float(value)
        except ValueError:
            raise LetorFormatError(path, number, f"cost {value!r} is not a number") from None
        if not (np.isfinite(cost) and cost > 0):
            raise LetorFormatError(path, number, f"cost {value} must be a finite number > 0")
        key = int(feature) - 1 if feature.isdigit() else feature
        if isinstance(key, int) and key < 0:
            raise LetorFormatError(path, number, "feature indices start at 1")
        if key in costs:
            raise LetorFormatError(path, number, f"feature {feature} is listed twice")
        costs[key] = cost
    if not costs:
        raise LetorFormatError(path, None, "no 'FEATURE COST' line")
    return costs
