"""MSLR-WEB30K's shape for the studies: ``make_mslr_like`` rows at a scale
of its Fold1, split by query and written as LETOR text and in LightGBM's
layout."""

import json
import multiprocessing
from pathlib import Path

import numpy as np

#: MSLR-WEB30K Fold1: rows of train, vali and test, and its queries per row
ROWS = {"train": 2_270_296, "vali": 747_218, "test": 753_611}
QUERIES_PER_ROW = 31_531 / 3_771_125
CHUNK = 50_000


def _write_split(job):
    """Writes one split in both layouts (run in a worker process)."""
    directory, name, X, y, qid = job
    directory = Path(directory)
    with_qid = "%d qid:%d " + " ".join(f"{j}:%.6g" for j in range(1, X.shape[1] + 1)) + "\n"
    without = "%d " + " ".join(f"{j}:%.6g" for j in range(1, X.shape[1] + 1)) + "\n"
    with open(directory / f"{name}.txt", "w") as letor, \
            open(directory / f"{name}.lgb.txt", "w") as lgb:
        for start in range(0, len(y), CHUNK):
            rows = np.column_stack([y[start:start + CHUNK], qid[start:start + CHUNK],
                                    X[start:start + CHUNK].astype(np.float64)]).tolist()
            letor.write("".join(with_qid % tuple(r) for r in rows))
            lgb.write("".join(without % tuple([r[0]] + r[2:]) for r in rows))
    sizes = np.unique(qid, return_counts=True)[1]  # qids increase, rows grouped
    (directory / f"{name}.lgb.txt.query").write_text("".join(f"{s}\n" for s in sizes))
    return name


#: the teachers of the studies: make_mslr_like's two, and ``"web"``,
#: make_web_like (other columns, shapes and pairs)
TEACHERS = ("linear", "nonlinear", "web")


def mslr_like(scale, teacher="linear"):
    """The generated rows of all three splits at ``scale`` of MSLR-WEB30K
    Fold1 (:func:`rsrank.reading.synthetic.make_mslr_like`, or
    ``make_web_like`` for ``teacher="web"``; seed 0)."""
    from rsrank.reading.synthetic import make_mslr_like, make_web_like

    total = sum(max(1, round(n * scale)) for n in ROWS.values())
    queries = max(3, round(total * QUERIES_PER_ROW))
    if teacher == "web":
        return make_web_like(n_documents=total, n_queries=queries, random_state=0)
    return make_mslr_like(n_documents=total, n_queries=queries, random_state=0, teacher=teacher)


def write_data(directory, scale, teacher="linear"):
    """The three splits, their labels and qids (``truth.npz``), reused when
    ``directory`` already holds them for this scale and teacher."""
    stamp = directory / "stamp.json"
    made = {"scale": scale} if teacher == "linear" else {"scale": scale, "teacher": teacher}
    if stamp.exists() and json.loads(stamp.read_text()) == made:
        return
    rows = {name: max(1, round(n * scale)) for name, n in ROWS.items()}
    data = mslr_like(scale, teacher)
    # whole queries to each split, in qid order, until it has its rows
    order = np.argsort(data.qid, kind="stable")
    X, y, qid = data.X[order], data.y[order], data.qid[order]
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])  # first row of each query
    bounds, start = {}, 0
    for name in ("train", "vali"):
        at = int(np.searchsorted(starts, start + rows[name]))
        stop = int(starts[at]) if at < len(starts) else len(qid)
        bounds[name] = (start, stop)
        start = stop
    bounds["test"] = (start, len(qid))
    jobs = [(str(directory), name, X[a:b], y[a:b], qid[a:b]) for name, (a, b) in bounds.items()]
    with multiprocessing.get_context("fork").Pool(2) as pool:
        for name in pool.imap_unordered(_write_split, jobs):
            print(f"wrote {name}", flush=True)
    np.savez(directory / "truth.npz",
             **{f"{name}_{part}": array for name, (a, b) in bounds.items()
                for part, array in (("y", y[a:b]), ("qid", qid[a:b]))})
    stamp.write_text(json.dumps(made))
