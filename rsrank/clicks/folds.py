"""The folds ``rsrank train --clicks`` trains on: a training log (and a
vali log) with the features of the documents they showed, graded by
:func:`rsrank.clicks.grade_clicks`, and a test file judged on its labels.
"""

from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from .._text import LetorFormatError
from ..datasets import find_folds, load_files, split_file
from ..layouts import held_out_queries
from .grading import feature_rows, grade_clicks, plain_clicks
from .reading import read_click_log

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
    the graded training queries validates. ``options`` go to
    :func:`rsrank.load_letor`. ``debias="off"`` reads both logs as they
    are (:func:`plain_clicks`: each session a query, its clicks the
    labels), the baseline debiasing must beat; ``examination`` is then
    None. ``debias="auto"`` reads them both ways: the fold is the debiased
    reading, and its ``plain`` the other's ``train``, ``vali`` and
    ``query_options`` (for
    :func:`~rsrank.clicks.choice.keep_plain_unless_debiased`). ``judge``
    is ``(X, y, qid)`` of the vali log's shown documents graded by their
    click chance (:meth:`~rsrank.clicks.GradedClicks.graded_documents`),
    on which that choice compares the two readings' models.

    Returns a Bunch as :func:`rsrank.layouts.load_splits` gives, with
    ``examination`` (an :class:`rsrank.propensity.Examination`),
    ``clicks`` (the logs' paths) and ``query_options`` (per split, the
    options of its :class:`~rsrank.querydata.QueryData`: the training
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
    if debias not in ("on", "off", "auto"):
        raise ValueError(f"debias must be 'on', 'off' or 'auto', got {debias!r}")
    if debias == "off" and propensity is not None:
        raise ValueError("propensities take the position's bias out of the clicks, which "
                         "plain click training (debias off) leaves in: give one or the other")
    paths = {"train": Path(train), "vali": None if vali is None else Path(vali),
             "test": None if test is None else Path(test)}
    logs = {"train": Path(train_clicks), "vali": None if vali_clicks is None else
            Path(vali_clicks)}
    parts, width = load_files(paths, n_features, return_docids=True, **options)
    logs_read = {split: None if logs[split] is None else read_click_log(logs[split])
                 for split in logs}
    readings = {"on": ("on",), "off": ("off",), "auto": ("on", "off")}[debias]
    folds = [_read_fold(parts, paths, logs, logs_read, reading, propensity, vali_fraction,
                        random_state) for reading in readings]
    fold_data, examination, source = folds[0]
    test_part = parts.get("test")
    out = Bunch(**fold_data, test=None if test_part is None else test_part[:3],
                n_features=width, fold=fold, paths=paths, vali_source=source,
                examination=examination, clicks=logs)
    if len(folds) > 1:
        out.plain = Bunch(**folds[1][0])
    return out


def _read_fold(parts, paths, logs, logs_read, debias, propensity, vali_fraction, random_state):
    """``(train, vali and query_options; examination; vali's source)`` of
    :func:`load_click_fold` for one reading of its logs (``debias`` "on"
    or "off")."""
    graded, examination, model = {}, None, None
    for split in ("train", "vali"):
        if logs[split] is None:
            continue
        X, _, qid, docids = parts[split]
        log = logs_read[split]
        try:
            rows = feature_rows(log, qid, docids)
            found = (grade_clicks(log, rows, model=model, propensity=propensity)
                     if debias == "on" else plain_clicks(log, rows))
        except ValueError as error:
            raise LetorFormatError(logs[split], None, f"{error} (features: "
                                   f"{paths[split]})") from None
        examination, model = examination or found.examination, found.model
        graded[split] = found
    features = {"train": parts["train"], "vali": parts.get("vali")}
    if "vali" not in graded:
        fraction = 0.2 if vali_fraction is None else vali_fraction
        qid = np.asarray(parts["train"][2])
        queries = qid[graded["train"].rows]  # each row's own
        held = held_out_queries(queries, fraction, random_state)
        documents = graded["train"].documents
        held_documents = (None if documents is None else
                          np.isin(qid[documents], np.unique(queries[held])))
        graded["train"], graded["vali"] = (
            graded["train"].take(keep, None if held_documents is None else
                                 held_documents == side)
            for keep, side in ((~held, False), (held, True)))
        features["vali"] = features["train"]
        source = f"{fraction:g} of the training log's queries (seed {random_state})"
    else:
        source = f"{logs['vali']} on {paths['vali']}"
    X, _, qid, _ = features["train"]
    *train, train_options = graded["train"].training(X, qid)
    X, _, qid, _ = features["vali"]
    *vali, vali_weight = graded["vali"].queries(X, qid)
    return ({"train": tuple(train), "vali": tuple(vali),
             "query_options": {"train": train_options,
                               "vali": {} if vali_weight is None else
                               {"query_weight": vali_weight}},
             "judge": graded["vali"].graded_documents(X, qid) if debias == "on" else None},
            examination, source)


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

