"""What the commands' actions share once the command line is read: the
rules between options (``--path-rows``), the training data and how it is
loaded, the command line as text, output checks, the fit of a file's
columns to a model and the first-run notice (the arguments themselves are
:mod:`rsrank.cli._arguments`')."""

import contextlib
import os
import shlex
import sys
import warnings

import numpy as np
import scipy.sparse as sp

from ..learning._compile import deferred
from ..reading._files import check_not_input, check_output_target, make_parents, resolved
from .._kernels import compiled_before
from ..reading.datasets import align_columns, is_csv
from ..reading.layouts import resolve_training_data
from ..deployment.plotting import check_picture_path
from ..learning.defaults import PATH_ROWS
from ._edge import MADE_DIRECTORIES, UsageError


def curvature_recipe(args):
    return getattr(args, "learning_rate", None) == ["curvature"]


def path_rows(args, vali_cv=None):
    """The training rows above which the path walks a sample
    (``--path-rows``; None: never). A sample ``--path-rows`` asks for where
    no path samples (without ``--learning-rate curvature``, with
    ``--stream`` or with the folds ``vali_cv`` of the training queries) is
    refused, not ignored."""
    rows = getattr(args, "path_rows", None)
    if rows:
        if not curvature_recipe(args):
            raise UsageError("--path-rows samples the path of --learning-rate curvature (the "
                             "default): leave it out with other rates")
        if getattr(args, "stream", None) is not None:
            raise UsageError("--path-rows samples a training set in memory; --stream reads it "
                             "in blocks every epoch: leave one out")
        if vali_cv:
            raise UsageError(f"--path-rows samples the path, and the {vali_cv} folds of the "
                             "training queries judged beside vali (--vali-cv, the sparse "
                             "recipe's default with --within 0.03 or more) walk it on every "
                             "query: give --vali-cv 0 to sample, or leave --path-rows out")
    return (PATH_ROWS if rows is None else rows or None) if curvature_recipe(args) else None


def command_line(argv):
    return "rsrank " + " ".join(shlex.quote(a) for a in argv)


def on_terminal():
    return sys.stderr.isatty()


def training_data(args, test_values=True, vali_values=True):
    """The data of a command that trains (:func:`resolve_training_data`);
    ``test_values`` False for a run that reads its test values after
    the fit, ``vali_values`` False for one that reads them after coding
    its training rows."""
    return resolve_training_data(args.path, train=args.train, vali=args.vali, test=args.test,
                                 vali_fraction=args.vali_fraction, random_state=args.seed,
                                 n_features=args.n_features, cache=args.cache,
                                 stream_queries=getattr(args, "stream", None),
                                 test_values=test_values, vali_values=vali_values,
                                 **loading(args))


def named_inputs(args):
    """The paths a training command reads, as its command line names them,
    for an early check of ``--out`` before the data are read: the files,
    and the directories except one ``--out`` lies within (results may go
    beside the data in its directory; the files read there are checked once
    they are known)."""
    out = resolved(args.out)
    names = ("path", "train", "vali", "test", "clicks", "vali_clicks")
    named = [value for value in (getattr(args, name, None) for name in names)
             if value is not None]
    return [path for path in named if not (os.path.isdir(path) and out != resolved(path)
                                           and out.is_relative_to(resolved(path)))]


def loading(args):
    """How ``rsrank train`` keeps the splits: a file whose every line holds
    every feature as one dense array, in ``--dtype``."""
    return {"dtype": np.dtype(args.dtype).type, "dense": "auto"}


def check_file_output(out, inputs, flag="--out"):
    """Refuse, before any work, an output file that is an input, a
    directory (or anything :func:`rsrank.reading._files.check_output_target`
    refuses), or in a directory that cannot be written."""
    if out is None:
        return
    if not str(out).strip():
        raise UsageError(f"{flag} is empty")
    check_not_input(out, inputs)
    kind = check_output_target(out, flag)  # a directory, a socket, a dangling link: refused
    if kind == "through":  # a device or a FIFO: written through
        return
    MADE_DIRECTORIES.extend(make_parents(out))  # removed at the end if still empty
    parent = resolved(out).parent
    if not parent.is_dir() or not os.access(parent, os.W_OK):
        raise UsageError(f"{flag} {out}: cannot write in {parent}")


def check_picture_output(out, inputs, flag="--out"):
    """:func:`check_file_output` for a picture, and before any work, that
    matplotlib is there and writes the format its suffix names."""
    if out is None:
        return
    check_file_output(out, inputs, flag)
    try:
        check_picture_path(out, flag)
    except ImportError as error:
        raise UsageError(f"{flag}: {error}") from None


def first_run(args):
    """On a first run (numba's cache lacks the kernels): one line on a
    terminal, and the parallel kernels compiled aside while the serial ones
    run (:func:`rsrank.learning._compile.deferred`)."""
    if compiled_before():
        return contextlib.nullcontext()
    if not getattr(args, "quiet", False) and on_terminal():
        print("rsrank: compiling kernels, first run only (up to half a minute)",
              file=sys.stderr, flush=True)
    return deferred()


def fit_width(X, model, path):
    """X in the model's columns: a CSV file's columns matched to the
    model's feature names (never by position), a LETOR file's padded to the
    model's feature count (a file need not mention the last columns); more
    columns than the model knows is an error."""
    width = model.n_features_in_
    if is_csv(path):
        if model.model_.feature_names is None:
            raise UsageError(f"{path}: CSV columns are matched to the model's features by "
                             "name, and this model has none (trained on LETOR text without "
                             "--feature-names): score a LETOR file, or name the features "
                             "when training")
        return sp.csr_matrix(align_columns(path, X, model.feature_names()))
    if X.shape[1] > width:
        raise UsageError(f"{path} has feature indices up to {X.shape[1]} but the model has "
                         f"{width} features")
    names, used = model.feature_names(), model.model_.selected_indices()
    beyond = [names[j] for j in used if j >= X.shape[1]]
    if beyond:
        alike = ("every document gets the same score" if len(beyond) == len(used)
                 else "every document gets 0 there")
        warnings.warn(f"{path} mentions features up to {X.shape[1]}, but the model uses "
                      f"{len(beyond)} of its {len(used)} features beyond them "
                      f"({', '.join(beyond[:3])}{', ...' if len(beyond) > 3 else ''}); "
                      f"{alike}: is it the file the model was trained for?", UserWarning,
                      stacklevel=2)
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], width))


