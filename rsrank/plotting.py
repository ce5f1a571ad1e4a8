"""Pictures of additive models: each kept feature's shape function over the
training values (matplotlib, the ``plot`` extra)."""

import numpy as np

__all__ = ["plot_shapes"]


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("pictures need matplotlib: pip install 'rsrank[plot]'") from None
    return plt


def plot_shapes(model, path=None, *, columns=3):
    """Draw each feature an additive model uses: its shape function (the
    contribution to the score against the feature's value, a step at each
    threshold), and under it the share of training rows in each bin when the
    model knows them (models fitted by this version). Features come by
    decreasing spread, as :meth:`~rsrank.RSRank.selected_features` lists
    them. Returns the matplotlib figure; with ``path``, also saves it there
    (the format from its suffix).

    ``model`` is a fitted ``RSRank(additive=True)`` or its
    :class:`~rsrank.model.AdditiveModel`."""
    inner = getattr(model, "model_", model)
    order = {name: k for k, (name, _) in enumerate(inner.selected_features())}
    shapes = sorted(inner.shape_functions(), key=lambda s: order[s["name"]])
    plt = _pyplot()
    if not shapes:
        raise ValueError("the model uses no feature: there is no shape to draw")
    counts = inner.encoding.counts
    columns = max(1, min(columns, len(shapes)))
    rows = (len(shapes) + columns - 1) // columns
    figure = plt.figure(figsize=(4.2 * columns, 3.4 * rows), constrained_layout=True)
    grid = figure.add_gridspec(rows * 4, columns)
    for k, shape in enumerate(shapes):
        row, column = divmod(k, columns)
        top = figure.add_subplot(grid[row * 4:row * 4 + 3, column])
        cuts, values = shape["thresholds"].astype(np.float64), shape["values"]
        # a feature whose thresholds span decades (counts, PageRank) on a log axis
        logarithmic = len(cuts) > 1 and cuts[0] > 0 and cuts[-1] / cuts[0] > 100
        # each bin drawn over [its lower threshold, its upper one]; the open
        # ends get the width of their neighbour (a factor of it on a log axis)
        if logarithmic:
            edges = np.r_[cuts[0] / 2, cuts, cuts[-1] * 2]
        elif len(cuts):
            width = (cuts[-1] - cuts[0]) / max(len(cuts) - 1, 1) if len(cuts) > 1 else 1.0
            edges = np.r_[cuts[0] - width, cuts, cuts[-1] + width]
        else:
            edges = np.array([-0.5, 0.5])
        top.stairs(values, edges, baseline=None, color="C0", linewidth=1.8)
        if logarithmic:
            top.set_xscale("log")
        top.set_title(shape["name"], fontsize=10)
        top.set_ylabel("contribution")
        top.tick_params(labelbottom=False)
        top.grid(alpha=0.3)
        bottom = figure.add_subplot(grid[row * 4 + 3, column], sharex=top)
        if counts is not None:  # rows per unit of the axis: the training values' density
            share = counts[shape["feature"]] / max(counts[shape["feature"]].sum(), 1)
            spans = np.diff(np.log(edges) if logarithmic else edges)
            bottom.stairs(share / spans, edges, fill=True, color="0.7")
            bottom.set_ylabel("density", fontsize=8)
        bottom.set_yticks([])
        bottom.set_xlabel("value")
    if path is not None:
        import io

        from ._files import atomic_write_bytes

        buffer = io.BytesIO()
        suffix = str(path).rsplit(".", 1)[-1].lower() if "." in str(path) else "png"
        figure.savefig(buffer, dpi=110, format=suffix)
        atomic_write_bytes(path, buffer.getvalue())
    return figure
