"""``rsrank plot``: an additive model's shape functions (and pairs), or the
examination curve of a run on click logs, as a picture."""

import json
from pathlib import Path

from ..estimator import RSRank
from ..deployment.plotting import plot_examination, plot_shapes
from ._options import UsageError, check_picture_output


def run(args):
    check_picture_output(args.out, [args.model])
    results = Path(args.model) / "results.json" if Path(args.model).is_dir() else None
    if results is not None or args.model.endswith(".json") and _has_curve(args.model):
        return _curve(results or Path(args.model), args.out)
    model = RSRank.load(args.model)
    try:
        plot_shapes(model, args.out, columns=args.columns)
    except ImportError as error:
        raise UsageError(str(error)) from None
    except ValueError as error:  # a model without shapes to draw
        raise UsageError(f"{args.model}: {error}") from None
    names = ", ".join(name for name, _ in model.selected_features()) or "no feature"
    pairs = ", ".join(f"{a} x {b}" for (a, b), _ in model.selected_interactions())
    print(f"wrote {args.out}: the shapes of {names}" + (f", the pairs {pairs}" if pairs else ""))
    return 0


def _has_curve(path):
    try:
        return "examination" in json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return False


def _curve(results, out):
    """The examination curves of a run on click logs."""
    try:
        found = json.loads(results.read_text()).get("examination")
    except FileNotFoundError:
        raise UsageError(f"{results.parent}: no results.json (a directory rsrank train "
                         "--out wrote)") from None
    if not found:
        raise UsageError(f"{results}: no examination curve (a run of rsrank train on click "
                         "logs, --clicks, has one)")
    try:
        plot_examination(found, out)
    except ImportError as error:
        raise UsageError(str(error)) from None
    print(f"wrote {out}: the examination curve of {', '.join(found)}")
    return 0
