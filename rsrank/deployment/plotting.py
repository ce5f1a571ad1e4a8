"""Pictures (matplotlib, the ``plot`` extra): of additive models, each kept
feature's shape function over the training values and each pair of a model
with interactions as a heat map; of a regularization path, NDCG against the
features in use; of a comparison of runs, the per-query differences."""

import io
from pathlib import Path

import numpy as np

from ..reading._files import atomic_write_bytes

__all__ = ["plot_shapes", "plot_path", "plot_comparison", "check_picture_path"]


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("pictures need matplotlib: pip install 'rsrank[plot]'") from None
    return plt


def _picture_format(path):
    """The format a picture at ``path`` is saved in: its suffix (png when
    it has none)."""
    suffix = Path(path).suffix.lower().lstrip(".")
    return suffix or "png"


def check_picture_path(path, flag=None):
    """Before any work: matplotlib is there and can write the format that
    ``path``'s suffix names; a ``ValueError`` or ``ImportError`` in one
    line otherwise."""
    _pyplot()
    from matplotlib.backend_bases import FigureCanvasBase

    kinds = FigureCanvasBase.get_supported_filetypes()
    form = _picture_format(path)
    if form not in kinds:
        named = f"{flag} {path}" if flag else str(path)
        raise ValueError(f"{named}: matplotlib cannot write .{form} pictures; give a name "
                         f"ending in {', '.join('.' + k for k in sorted(kinds))}")


def _save(figure, path, dpi):
    """Draw ``figure`` in memory, then write it whole (a full disk leaves no
    half picture; a link or a device at ``path`` is not replaced)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, dpi=dpi, format=_picture_format(path))
    atomic_write_bytes(path, buffer.getvalue())


def _edges(cuts):
    """``(edges, logarithmic)``: each bin drawn over [its lower threshold,
    its upper one]; the open ends get the width of their neighbour (a
    factor of it on a log axis, for thresholds that span decades, as
    counts and PageRank do)."""
    cuts = np.asarray(cuts, dtype=np.float64)
    logarithmic = len(cuts) > 1 and cuts[0] > 0 and cuts[-1] / cuts[0] > 100
    if logarithmic:
        return np.r_[cuts[0] / 2, cuts, cuts[-1] * 2], True
    if len(cuts):
        width = (cuts[-1] - cuts[0]) / max(len(cuts) - 1, 1) if len(cuts) > 1 else 1.0
        return np.r_[cuts[0] - width, cuts, cuts[-1] + width], False
    return np.array([-0.5, 0.5]), False


def plot_shapes(model, path=None, *, columns=3):
    """Draw each feature an additive model uses: its shape function (the
    contribution to the score against the feature's value, a step at each
    threshold), and under it the share of training rows in each bin when the
    model knows them (models fitted by this version); then each pair of a
    model with interactions as a heat map of its cells' contributions over
    both features' grid cuts, cells without training rows hatched. Features
    come by decreasing spread, as :meth:`~rsrank.RSRank.selected_features`
    lists them, then the pairs as
    :meth:`~rsrank.RSRank.selected_interactions` does. Returns the
    matplotlib figure; with ``path``, also saves it there (the format from
    its suffix).

    ``model`` is a fitted ``RSRank(additive=True)`` or its model
    (:class:`~rsrank.learning.model.AdditiveModel`, :class:`~rsrank.learning.model.InteractionModel`)."""
    inner = getattr(model, "model_", model)
    order = {name: k for k, (name, _) in enumerate(inner.selected_features())}
    shapes = sorted(inner.shape_functions(), key=lambda s: order[s["name"]])
    pair_order = {names: k for k, (names, _) in enumerate(inner.selected_interactions())}
    pairs = sorted(inner.interaction_functions(), key=lambda p: pair_order[p["names"]])
    plt = _pyplot()
    if not shapes and not pairs:
        raise ValueError("the model uses no feature: there is no shape to draw")
    panels = len(shapes) + len(pairs)
    columns = max(1, min(columns, panels))
    rows = (panels + columns - 1) // columns
    figure = plt.figure(figsize=(4.2 * columns, 3.4 * rows), constrained_layout=True)
    grid = figure.add_gridspec(rows * 4, columns)
    for k, shape in enumerate(shapes):
        row, column = divmod(k, columns)
        _draw_shape(figure, grid, row, column, shape, inner.encoding.counts)
    for k, pair in enumerate(pairs, start=len(shapes)):
        row, column = divmod(k, columns)
        _draw_pair(figure, figure.add_subplot(grid[row * 4:row * 4 + 4, column]), pair)
    if path is not None:
        _save(figure, path, 110)
    return figure


def _finite(cuts):
    """How many of ``cuts`` are finite: all but a missing value's +inf."""
    return len(cuts) - int(len(cuts) > 0 and not np.isfinite(cuts[-1]))


def _draw_shape(figure, grid, row, column, shape, counts):
    top = figure.add_subplot(grid[row * 4:row * 4 + 3, column])
    finite = _finite(shape["thresholds"])
    values = shape["values"][:finite + 1]
    edges, logarithmic = _edges(shape["thresholds"][:finite])
    top.stairs(values, edges, baseline=None, color="C0", linewidth=1.8)
    if shape.get("missing") is not None:  # a missing value's score, beside the values'
        top.axhline(shape["missing"], color="C3", linestyle=":", linewidth=1.4,
                    label="missing")
        top.legend(fontsize=8, loc="best")
    if logarithmic:
        top.set_xscale("log")
    top.set_title(shape["name"], fontsize=10)
    top.set_ylabel("contribution")
    top.tick_params(labelbottom=False)
    top.grid(alpha=0.3)
    bottom = figure.add_subplot(grid[row * 4 + 3, column], sharex=top)
    if counts is not None:  # rows per unit of the axis: the training values' density
        share = counts[shape["feature"]] / max(counts[shape["feature"]].sum(), 1)
        share = share[:finite + 1]
        spans = np.diff(np.log(edges) if logarithmic else edges)
        bottom.stairs(share / spans, edges, fill=True, color="0.7")
        bottom.set_ylabel("density", fontsize=8)
    bottom.set_yticks([])
    bottom.set_xlabel("value")


def _draw_pair(figure, axes, pair):
    """A pair's cells over its grid (a missing value's row or column, which
    has no place on the axis, is left out)."""
    (name_a, name_b), (cuts_a, cuts_b) = pair["names"], pair["thresholds"]
    n_a, n_b = _finite(cuts_a), _finite(cuts_b)
    (edges_a, log_a), (edges_b, log_b) = _edges(cuts_a[:n_a]), _edges(cuts_b[:n_b])
    values = pair["values"][:n_a + 1, :n_b + 1]
    counts = None if pair["counts"] is None else pair["counts"][:n_a + 1, :n_b + 1]
    limit = float(np.max(np.abs(values))) or 1.0
    mesh = axes.pcolormesh(edges_a, edges_b, values.T, cmap="RdBu_r", vmin=-limit, vmax=limit)
    if counts is not None and np.any(counts == 0):
        empty = np.ma.masked_where(counts.T > 0, np.ones(values.T.shape))
        axes.pcolor(edges_a, edges_b, empty, hatch="//", alpha=0.0)
    if log_a:
        axes.set_xscale("log")
    if log_b:
        axes.set_yscale("log")
    axes.set_title(f"{name_a} x {name_b}", fontsize=10)
    axes.set_xlabel(name_a)
    axes.set_ylabel(name_b)
    figure.colorbar(mesh, ax=axes, label="contribution")


def plot_path(rows, path=None, *, title=None):
    """A regularization path (the rows of ``rsrank path``'s ``path.json``:
    ``n_nonzero``, ``train_ndcg``, ``val_ndcg`` and ``test_ndcg`` per
    point) as NDCG@10 against the features in use, one line per split.
    Saved to ``path`` when given; returns the figure."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(6, 3.6))
    ordered = sorted(rows, key=lambda row: (row["n_nonzero"], -row["l1"]))
    for key, name in (("train_ndcg", "train"), ("val_ndcg", "vali"), ("test_ndcg", "test")):
        if all(key in row for row in ordered):
            axes.plot([row["n_nonzero"] for row in ordered], [row[key] for row in ordered],
                      marker="o", label=name)
    axes.set_xlabel("features in use")
    axes.set_ylabel("NDCG@10")
    axes.legend(loc="lower right")
    if title:
        axes.set_title(title)
    figure.tight_layout()
    if path is not None:
        _save(figure, path, 120)
    return figure


def plot_comparison(runs, metric, baseline, path=None):
    """Each run's per-query difference from ``baseline`` in ``metric``
    (``runs``: ``{name: {"qid": keys, metric: values}}`` as ``rsrank
    compare`` pairs them), sorted, one panel per run: how many queries
    gain, how many lose and by how much. Saved to ``path`` when given;
    returns the figure."""
    plt = _pyplot()
    others = [name for name in runs if name != baseline]
    figure, axes = plt.subplots(len(others), 1, figsize=(6, 2.4 * len(others)), squeeze=False)
    base = dict(zip(map(str, runs[baseline]["qid"]), runs[baseline][metric]))
    for axis, name in zip(axes[:, 0], others):
        pairs = [(value, base[str(q)]) for q, value in zip(runs[name]["qid"], runs[name][metric])
                 if str(q) in base]
        difference = np.sort([a - b for a, b in pairs if np.isfinite(a) and np.isfinite(b)])
        colors = np.where(difference >= 0, "tab:blue", "tab:red")
        axis.bar(np.arange(len(difference)), difference, color=colors, width=1.0)
        axis.axhline(0, color="black", linewidth=0.8)
        axis.set_ylabel(f"{metric} difference")
        axis.set_title(f"{name} - {baseline}: {int(np.sum(difference > 0))} queries up, "
                       f"{int(np.sum(difference < 0))} down", fontsize=9)
    axes[-1, 0].set_xlabel("queries, sorted by the difference")
    figure.tight_layout()
    if path is not None:
        _save(figure, path, 120)
    return figure


def plot_examination(examinations, path=None):
    """The examination curves a run on click logs found (``results.json``'s
    ``examination``: per fold, the chance of examining each position
    relative to the top, and the log's click rate there relative to the
    top's), one line per fold, on a log scale: how much the position's bias
    took out of the raw clicks. Saved to ``path`` when given; returns the
    figure."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(6, 3.6))
    for fold, found in examinations.items():
        positions = found["positions"]
        line, = axes.plot(positions, found["examination"], marker="o",
                          label=f"{fold} examination" + ("" if found["estimated"] else " (given)"))
        top = found["click_rate"][0] or 1.0
        axes.plot(positions, [rate / top for rate in found["click_rate"]], linestyle=":",
                  color=line.get_color(), label=f"{fold} click rate")
    axes.set_yscale("log")
    axes.set_xlabel("position")
    axes.set_ylabel("relative to position 1")
    axes.legend(loc="lower left", fontsize=8)
    figure.tight_layout()
    if path is not None:
        _save(figure, path, 120)
    return figure
