"""``rsrank plot``: an additive model's shape functions (and pairs) as a picture."""

from ..estimator import RSRank
from ..plotting import plot_shapes
from ._commands import COMMANDS
from ._options import UsageError, check_picture_output, positive


def add_parser(commands):
    plot = commands.add_parser("plot", help=COMMANDS["plot"])
    plot.add_argument("model")
    plot.add_argument("--out", required=True, help="picture file (.png, .svg, .pdf)")
    plot.add_argument("--columns", type=positive(int), default=3,
                      help="pictures per row (default 3)")
    plot.set_defaults(run=run)


def run(args):
    check_picture_output(args.out, [args.model])
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
