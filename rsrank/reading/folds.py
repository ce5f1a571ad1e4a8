"""One fold of data, as every reader makes it and every run takes it."""

import warnings
from dataclasses import dataclass, field, fields, replace

import numpy as np

from ._docids import read_docids
from .querydata import QueryData

__all__ = ["Fold", "Reading", "ReadAfter"]


@dataclass
class Reading:
    """One reading of a fold's click logs (the other one of ``debias="auto"``):
    ``train`` and ``vali`` as :class:`Fold` holds them, their
    ``query_options``, and the ``judge`` of the vali log (None)."""

    train: object
    vali: object
    query_options: dict = field(default_factory=dict)
    judge: object = None


@dataclass
class Fold:
    """One fold: its splits and where they came from.

    Attributes
    ----------
    train, vali, test : tuple or None
        ``(X, y, qid)`` each, with the rows' docids as a fourth item when a
        reader was asked for them; ``train`` is None when it is streamed
        (``train_chunks``), ``test`` None without a test split.
    n_features : int or None
        The features of every split.
    fold : int
        Its number (``Fold<k>``; 1 for files given by name or arrays).
    paths : dict
        Each split's file (None for one held out of another file); empty
        for arrays.
    vali_source : str or None
        Where ``vali`` came from: its file, or the share of the training
        queries held out.
    vali_rows : ndarray or None
        The training file's data rows that were held out as ``vali``.
    train_chunks : callable or None
        Called, the training queries in blocks (a streamed fold).
    query_options : dict
        Per split, the options of its :class:`~rsrank.reading.querydata.QueryData`
        (a click log's preferences and query weights); empty for labels.
    judge : tuple or None
        ``(X, y, qid)`` of a vali click log's shown documents graded by their
        click chance.
    examination : object or None
        The examination curve of a training click log.
    clicks : dict or None
        The click logs' paths.
    plain : Reading or None
        With ``debias="auto"``, the other reading of the logs (plain clicks).
    reread_test : callable or None
        Called, ``test`` read again from its file as it was read (a fold
        read from files): a run lets the test rows' values go while it
        trains and reads them after. None: ``test`` stays as given. A fold
        read for one run (``test_values=False``) holds None for the test
        values from the start.
    reread_vali : callable or None
        The same for ``vali``: a fold read for a run that may keep its
        training rows as bin codes (``vali_values=False``) holds None for
        the vali values until the training rows are coded, so that the two
        are never held together.
    keep_train : bool
        False: a fold built for one run (``rsrank train`` builds its own,
        a run its directory's): once its models are fitted, the run lets
        the training rows' values go before it reads and scores the test
        rows (with one seed, as soon as its refit on all rows has coded
        them; where its path keeps them as bin codes, as soon as they are
        coded, before any fit), and ``train`` then holds None for them. True (default): the
        run leaves ``train`` as given.
    """

    train: object
    vali: object
    test: object = None
    n_features: object = None
    fold: int = 1
    paths: dict = field(default_factory=dict)
    vali_source: object = None
    vali_rows: object = None
    train_chunks: object = None
    query_options: dict = field(default_factory=dict)
    judge: object = None
    examination: object = None
    clicks: object = None
    plain: object = None
    reread_test: object = None
    keep_train: bool = True
    reread_vali: object = None

    def __post_init__(self):
        self.paths = dict(self.paths or {})
        self.query_options = dict(self.query_options or {})

    @classmethod
    def of(cls, data):
        """``data`` as a fold: a :class:`Fold`, or a mapping of the same
        names (a fold given by hand, as ``Bunch(train=..., vali=...)``); a
        name a fold does not have is refused, not dropped."""
        if isinstance(data, cls):
            return data
        unknown = sorted(set(data) - set(_PARTS))
        if unknown:
            raise ValueError(f"a fold has no {', '.join(map(repr, unknown))}: its parts are "
                             f"{', '.join(_PARTS)}")
        return cls(**data)

    def __getitem__(self, name):
        """A part by its name, as a ``Bunch`` gives it (``fold["train"]``)."""
        if name not in _PARTS:
            raise KeyError(name)
        return getattr(self, name)

    def let_train_go(self):
        """Drop the training rows' values (:attr:`keep_train` False): the
        labels, qids and anything after them stay."""
        if self.train is not None:
            self.train = (None, *self.train[1:])

    def file_rows(self, split):
        """``(qid, label, docid)`` of ``split``'s rows in file order: the
        docids of the file's ``#docid = ...`` comments
        (:func:`rsrank.reading.datasets.read_docids`), or ``row<n>`` (its
        n-th data row) for splits given as arrays. A vali split held out of
        the training file (``vali_rows``) has that file's docids of its
        rows."""
        _, y, qid = self[split][:3]
        rows = self.vali_rows if split == "vali" else None
        path = self.paths.get(split) if rows is None else self.paths.get("train")
        if path is None:
            docids = np.array([f"row{n}" for n in range(1, len(y) + 1)], dtype=object)
        else:
            docids = read_docids(path)
            if rows is not None:
                docids = docids[rows]
        return np.asarray(qid), np.asarray(y), docids

    def with_reading(self, reading):
        """This fold with its splits, options and judge from ``reading`` (a
        :class:`Reading`), and no other reading."""
        return replace(self, train=reading.train, vali=reading.vali,
                       query_options=reading.query_options, judge=reading.judge, plain=None)


#: a fold's parts, in order
_PARTS = tuple(part.name for part in fields(Fold))


class ReadAfter:
    """A fold's test split while its model trains: the labels and qids
    only, the rows' values read again from the file when the model is
    ready (:attr:`~rsrank.reading.folds.Fold.reread_test`), so that the
    training never holds them (the fold's ``test`` holds None for them
    until then). Called, the test rows as a
    :class:`~rsrank.reading.querydata.QueryData`, and the fold's ``test``
    whole again; a file whose labels or queries changed in the meantime is
    refused. ``split="vali"``: the same of the vali split
    (:attr:`~rsrank.reading.folds.Fold.reread_vali`), read once the
    training rows are coded; ``options``: its QueryData's."""

    def __init__(self, fold, features, split="test", **options):
        self.split, self.options = split, options
        _, self.y, self.qid = getattr(fold, split)[:3]
        self.fold, self.features = fold, features
        # the values go while the model trains
        setattr(fold, split, (None, *getattr(fold, split)[1:]))

    def restore(self, error):
        """The fold's ``test`` whole again after a run that failed with
        ``error`` before reading it. Where the file cannot be read as it
        was, the fold keeps None for the values and ``error`` says so in a
        note: the run's own error is the one raised."""
        try:
            self()
        except Exception as failed:
            note = (f"{self.fold.paths.get(self.split, f'the {self.split} file')}: not read "
                    f"again after the failed run ({failed}); the fold's {self.split} holds "
                    "None for its rows' values")
            if hasattr(error, "add_note"):
                error.add_note(note)
            else:  # Python 3.10
                warnings.warn(note, RuntimeWarning, stacklevel=3)

    def __call__(self):
        read = getattr(self.fold, f"reread_{self.split}")()
        X, y, qid = read[:3]
        if not (np.array_equal(y, self.y) and np.array_equal(qid, self.qid)):
            raise ValueError(f"{self.fold.paths[self.split]}: the {self.split} file changed "
                             "while the model trained (its labels or queries differ from the "
                             "first reading): run again with the file left as it is")
        setattr(self.fold, self.split, read)
        return QueryData(X, y, qid, feature_names=self.features, **self.options)
