"""``rsrank train`` on click logs: the folds it trains on, and the
examination curve it reports."""

import sys
from pathlib import Path


from ..clicks import has_click_logs, load_click_fold, load_click_folds
from ..reading.datasets import find_folds
from ..reading.layouts import data_name
from ._options import UsageError, loading


def click_data(args):
    """``(data, name, inputs, examinations)`` of a run that trains on click
    logs (``--clicks``, or a ``Fold<k>`` root with ``train.clicks.csv``),
    or None for one on labels."""
    root = Path(args.path) if args.path is not None else None
    folds_with_logs = (args.clicks is None and root is not None and root.is_dir()
                       and find_folds(root) and has_click_logs(root))
    if args.clicks is None and not folds_with_logs:
        for flag, value in (("--vali-clicks", args.vali_clicks),
                            ("--propensity", args.propensity),
                            ("--debias", None if args.debias == "auto" else args.debias)):
            if value is not None:
                raise UsageError(f"{flag} needs --clicks (the training queries' click log)")
        return None
    if args.stream is not None:
        raise UsageError("--stream reads labelled files in blocks; a click log is graded in "
                         "memory: leave --stream out")
    if args.debias == "off" and args.propensity is not None:
        raise UsageError("--propensity takes the position's bias out of the clicks, which "
                         "--debias off leaves in: give one or the other")
    options = dict(**loading(args), n_features=args.n_features, propensity=args.propensity,
                   vali_fraction=args.vali_fraction, random_state=args.seed,
                   debias=args.debias)
    if folds_with_logs:
        data = load_click_folds(root, args.folds, **options)
        name = data_name(args.path, root)
        inputs = [root]
    else:
        train = args.train if args.train is not None else args.path
        if train is None or not Path(train).is_file():
            raise UsageError("--clicks needs the features of the shown documents: --train "
                             "FILE (each row with its docid)")
        if args.folds is not None:
            raise UsageError("--folds needs a directory of Fold<k>; --clicks trains one fold: "
                             "leave --folds out")
        fold = load_click_fold(train, args.clicks, args.vali, args.vali_clicks, args.test,
                               **options)
        data, name = [fold], str(train)
        inputs = [p for p in (*fold.paths.values(), *fold.clicks.values()) if p is not None]
    examinations = {f"Fold{fold.fold}": fold.examination.to_dict() for fold in data
                    if fold.examination is not None}
    if args.debias == "off":
        examinations = {}
    return data, name, inputs, examinations


def print_examination(examinations):
    """The curve of each fold, a line each: what the run took out of the clicks."""
    for fold, found in (examinations or {}).items():
        how = "estimated from the training log" if found["estimated"] else "given"
        values = " ".join(f"{v:.3f}" for v in found["examination"][:10])
        print(f"examination by position ({fold}, {how}): {values}")
    if examinations:
        sys.stdout.flush()


def plain_folds(data):
    """The folds of ``--debias auto``'s plain run: each click fold with its
    plain reading's training and vali data."""
    return [fold.with_reading(fold.plain) for fold in data]


def print_choices(experiment):
    """What ``--debias auto`` kept in each fold, and why, a line each."""
    for fold, choice in zip(experiment.folds, getattr(experiment, "choices", None) or []):
        print(f"debias auto (Fold{fold.fold}): kept {'debiased' if choice.debiased else 'plain'} "
              f"clicks: debiased - plain {choice.metric} on the vali log's documents graded by "
              f"their clicks {choice.difference:+.4f} (standard error "
              f"{choice.standard_error:.4f}, {choice.n_queries} queries)")
