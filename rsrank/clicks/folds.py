"""The folds ``rsrank train --clicks`` trains on: a training log (and a
vali log) with the features of the documents they showed, graded by
:func:`rsrank.clicks.grade_clicks`, and a test file judged on its labels.
"""

from pathlib import Path

import numpy as np

from ..reading._text import LetorFormatError
from ..reading.datasets import find_folds, load_files, split_file
from ..reading.folds import Fold, Reading
from .grading import feature_rows
from .reading import read_click_log
from .splits import READINGS, LogPart, check_debias, read_clicks

__all__ = ["CLICK_FILES", "load_click_fold", "load_click_folds", "has_click_logs"]


#: a fold's click logs beside its feature files: Fold<k>/train.clicks.csv
CLICK_FILES = {"train": "train.clicks.csv", "vali": "vali.clicks.csv"}


def load_click_fold(train, train_clicks, vali=None, vali_clicks=None, test=None, *,
                    propensity=None, vali_fraction=None, random_state=0, n_features=None,
                    fold=1, debias="on", **options):
    """One fold that trains on clicks: the documents each log showed, graded
    by :func:`grade_clicks` (the examination estimated from the training
    log, or ``propensity`` per position), with the features of ``train``
    and ``vali`` joined on query and document id; ``test`` keeps its
    labels. Without ``vali``, a seeded ``vali_fraction`` (default 0.2) of
    the training log's queries validates (the same in each reading;
    :func:`~rsrank.clicks.splits.read_clicks`). ``options`` go to
    :func:`rsrank.load_letor`. ``debias="off"`` reads both logs as they
    are (:func:`plain_clicks`: each session a query, its clicks the
    labels), the baseline debiasing must beat; ``examination`` is then
    None. ``debias="auto"`` reads them both ways: the fold is the debiased
    reading, and its ``plain`` the other's ``train``, ``vali`` and
    ``query_options`` (for
    :func:`~rsrank.clicks.choice.keep_plain_unless_debiased`). ``judge``
    is ``(X, y, qid)`` of the vali log's shown documents graded by their
    click chance, or on long lists its queries' whole lists
    (:meth:`~rsrank.clicks.GradedClicks.judged_documents`), on which that
    choice compares the two readings' models.

    Returns a :class:`~rsrank.reading.folds.Fold` as :func:`rsrank.reading.layouts.load_splits` gives, with
    ``examination`` (an :class:`rsrank.clicks.propensity.Examination`),
    ``clicks`` (the logs' paths) and ``query_options`` (per split, the
    options of its :class:`~rsrank.reading.querydata.QueryData`: the training
    log's ``preferences`` (:meth:`GradedClicks.training`), the vali log's
    ``query_weight`` (:meth:`GradedClicks.queries`), or none).
    """
    if (vali is None) != (vali_clicks is None):
        given, lacking = ("vali", "vali clicks") if vali_clicks is None else ("vali clicks",
                                                                               "vali")
        raise ValueError(f"the {given} is given without the {lacking}: a vali set of click "
                         "data needs both its features and its click log")
    if vali is not None and vali_fraction is not None:
        raise ValueError("give either a validation file or a validation fraction, not both")
    check_debias(debias, propensity)
    paths = {"train": Path(train), "vali": None if vali is None else Path(vali),
             "test": None if test is None else Path(test)}
    logs = {"train": Path(train_clicks), "vali": None if vali_clicks is None else
            Path(vali_clicks)}
    parts, width = load_files(paths, n_features, return_docids=True, **options)
    joined = {}
    for split in ("train", "vali"):
        if logs[split] is None:
            continue
        log = read_click_log(logs[split])
        X, _, qid, docids = parts[split]
        try:
            rows = feature_rows(log, qid, docids)
        except ValueError as error:
            raise _named(logs, paths)(split, error) from None
        joined[split] = LogPart(log, rows, X, np.asarray(qid))
    read = read_clicks(joined["train"], joined.get("vali"), debias=debias,
                       propensity=propensity,
                       vali_fraction=(0.2 if vali_fraction is None else vali_fraction)
                       if vali is None else None,
                       random_state=random_state, named=_named(logs, paths))
    source = read.vali_source or f"{logs['vali']} on {paths['vali']}"
    test_part = parts.get("test")
    readings = [_reading(read, reading) for reading in READINGS[debias]]
    first = readings[0]
    return Fold(first.train, first.vali, None if test_part is None else test_part[:3],
                width, fold, paths, source, query_options=first.query_options,
                judge=first.judge, examination=read.examination, clicks=logs,
                plain=readings[1] if len(readings) > 1 else None)


def _reading(read, reading):
    """A reading's ``train``, ``vali``, ``query_options`` and ``judge`` as a
    fold holds them (a :class:`~rsrank.reading.folds.Reading`)."""
    *train, train_options = read.train[reading]
    *vali, vali_options = read.vali[reading]
    return Reading(tuple(train), tuple(vali), {"train": train_options, "vali": vali_options},
                   read.judge if reading == "on" else None)


def _named(logs, paths):
    """A log that cannot be read, named by its file and its features'."""
    def named(split, error):
        return LetorFormatError(logs[split], None, f"{error} (features: {paths[split]})")
    return named


def has_click_logs(root):
    """Whether ``root/Fold<k>`` hold training click logs beside their features."""
    return any((Path(root) / f"Fold{k}" / CLICK_FILES["train"]).is_file()
               for k in find_folds(root))


def load_click_folds(root, folds=None, **options):
    """:func:`load_click_fold` of every ``root/Fold<k>`` (or those of
    ``folds``), each with ``train.clicks.csv`` beside its features, and
    ``vali.clicks.csv`` beside its vali file when it has one: a vali file
    without its log (or a log without its file) is refused, as the same
    files given by name are."""
    out = []
    for k in folds or find_folds(root):
        directory = Path(root) / f"Fold{k}"
        train_clicks = directory / CLICK_FILES["train"]
        if not train_clicks.is_file():
            raise FileNotFoundError(f"{directory}: no {CLICK_FILES['train']} (the click log of "
                                    "its training queries)")
        vali_clicks = directory / CLICK_FILES["vali"]
        vali = _optional_split(root, k, "vali")
        if (vali is None) == vali_clicks.is_file():
            raise FileNotFoundError(
                f"{vali}: no {CLICK_FILES['vali']} beside it: add the click log of its queries, "
                "or remove it to validate on a share of the training log's queries"
                if vali is not None else
                f"{vali_clicks}: no vali features beside it (vali.txt, vali.csv or either "
                ".gz): add the features of the documents it shows, or remove it")
        test = _optional_split(root, k, "test")
        out.append(load_click_fold(split_file(root, k, "train"), train_clicks, vali,
                                   vali_clicks if vali is not None else None, test, fold=k,
                                   **options))
    return out


def _optional_split(root, fold, split):
    try:
        return split_file(root, fold, split)
    except FileNotFoundError:
        return None

