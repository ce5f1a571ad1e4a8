"""``rsrank info``: a LETOR file or a directory of folds, summarised."""

import sys
from pathlib import Path

from ..reading.datasets import (bundled_data_path, dataset_summary, find_folds, letor_summary,
                                load_letor)
from ..reading.layouts import find_splits


def _print_summary(summaries, out):
    width = max(len("data"), *(len(name) for name in summaries))
    print(f"{'data':<{width}} {'queries':>7} {'docs':>8} {'feats':>5} "
          f"{'docs/query min/med/max':>22} {'no rel':>6}  labels", file=out)
    for name, s in summaries.items():
        low, median, high = s.docs_per_query
        labels = " ".join(f"{label}:{count}" for label, count in s.labels.items())
        print(f"{name:<{width}} {s.n_queries:>7} {s.n_documents:>8} {s.n_features:>5} "
              f"{f'{low}/{median:g}/{high}':>22} {s.queries_without_relevant:>6}  {labels}",
              file=out)


def run(args):
    path = Path(args.path) if args.path else bundled_data_path()
    if path.is_dir() and not find_folds(path):
        summaries = {str(file): dataset_summary(*load_letor(file))
                     for file in find_splits(path).values() if file is not None}
    else:
        summaries = letor_summary(path)
    _print_summary(summaries, sys.stdout)
    return 0
