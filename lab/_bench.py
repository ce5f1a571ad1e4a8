"""Helpers shared by the benchmark scripts."""

import gzip
import importlib
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


#: everything the scripts reach inside the package, and why; the rest they
#: reach through its public names
INTERNALS = {
    ("reading._files", "atomic_write_text"): "the report writer writes through the package's one "
                                     "output edge",
    ("reading._cache", "content_crc"): "bench_cache times the cache's checksum of an array",
    ("_kernels", "ranked_order"): "bench_lambdas times the ranking kernel against a sort",
    ("_kernels", "level_moves"): "bench_level_bound runs the two-point power method it "
                                 "times the bound against",
    ("_kernels", "pair_histograms_serial"): "bench_pair_search times the search's histograms",
    ("_kernels", "pair_histograms_parallel"): "bench_pair_search times the search's histograms",
    ("_kernels", "PAIR_BLOCK"): "bench_pair_search fills blocks of that many rows a pair at a time",
    ("_kernels", "run_costs"): "bench_pair_grids times the costs of a pair's grid split",
    ("_kernels", "pair_loss_derivative"): "frontier_variants checks its slope against it",
    ("_kernels", "MODIFIED_HUBER"): "frontier_variants checks its slope against it",
    ("reading._reading", "_read_bytes"): "bench_load warms the compiled parser on a file's bytes",
    ("reading._reading", "_fast_parse"): "bench_load times the line reader with the parser off",
    ("reading._parser", "parse_buffer"): "bench_load warms the compiled parser",
    ("reading._parser", "_fresh"): "bench_load times the parser's own page mapping",
    ("learning._threads", "WORK_PER_THREAD"): "bench_threads measures the rule's threshold",
    ("learning._threads", "threads"): "bench_threads measures the rule",
    ("learning._threads", "coding_threads"): "bench_scoring codes every column on the threads "
                                             "predict codes on",
    ("reading._fetch", "REGISTRY"): "fault_probe serves a registry of its own",
    ("reading._fetch", "shutil"): "fault_probe fakes a full disk",
    ("_kernels", "dense_scores"): "bench_epoch times the epoch's passes over X",
    ("_kernels", "dense_add_gradient"): "bench_epoch times the epoch's passes over X",
    ("_kernels", "query_lambdas_from"): "bench_epoch times the epoch's lambdas",
    ("_kernels", "all_query_levels"): "bench_epoch times the epoch's lambdas",
    ("_kernels", "rows_span"): "bench_epoch prefetches the next query's rows as the epoch does",
    ("_kernels", "coded_scores"): "bench_epoch times the additive epoch's passes over the codes",
    ("_kernels", "coded_add_histogram"): "bench_epoch times the additive epoch's passes over "
                                         "the codes",
    ("_kernels", "step_table"): "bench_epoch times the additive epoch's passes over the codes",
    ("_kernels", "uniform_stride"): "bench_epoch times the additive epoch's passes over the "
                                    "codes",
    ("learning.objective", "workspace"): "bench_epoch sizes the additive epoch's histograms as a fit does",
    ("_kernels", "pair_loop_lambdas"): "bench_crossover times the two lambda kernels",
    ("_kernels", "ranked_lambdas"): "bench_crossover times the two lambda kernels",
    ("_kernels", "label_levels"): "bench_crossover times the two lambda kernels",
    ("_kernels", "PREFIX_MIN_SIZE"): "bench_crossover reads the rule against its times",
    ("_kernels", "PREFIX_COST_PER_LEVEL"): "bench_crossover reads the rule against its times",
    ("learning.binning", "_code"): "bench_codes times the codes' definition, a column at a time",
    ("learning.fitting", "LEVEL_STEP"): "level_steps measures the level step's factor",
    ("evaluation.experiments", "fit_and_select"): "profile_stages times a fold's path",
    ("evaluation.experiments", "refit_on_all"): "profile_stages times the refit of a path's "
                                                "choice on all rows",
    ("learning.fitting", "fit_source"): "profile_stages times every fit",
    ("learning.fitting", "pair_search"): "profile_stages times every pair search",
    ("learning.fitting", "top_pairs"): "profile_stages times the pair search's gains",
    ("learning.fitting", "pair_grids"): "profile_stages times the pair search's grids",
    ("reading.querydata", "StepEncoding"): "profile_stages times the bin codes of a training set",
    ("reading.querydata", "PairEncoding"): "profile_stages times the bin codes of a training set",
}


def _internal_module(module, name):
    if (module, name) not in INTERNALS:
        raise ValueError(f"rsrank.{module}.{name} is not in _bench.INTERNALS: reach the "
                         "package through its public names, or add it there with the reason")
    try:
        return importlib.import_module(f"rsrank.{module}")
    except ModuleNotFoundError:  # a package from before the rooms (a --before comparison)
        return importlib.import_module(f"rsrank.{module.rpartition('.')[2]}")


def internal(module, name):
    """``rsrank.<module>.<name>``, one of :data:`INTERNALS`."""
    return getattr(_internal_module(module, name), name)


def set_internal(module, name, value):
    """Set ``rsrank.<module>.<name>`` (one of :data:`INTERNALS`) to ``value``;
    returns what it was."""
    target = _internal_module(module, name)
    was = getattr(target, name)
    setattr(target, name, value)
    return was


def pairwise_differences(X, y, qid, seed=0):
    """``x_i - x_j`` for every pair of documents of one query with
    ``y_i != y_j``, target ``y_i > y_j``; half of the pairs are flipped (a
    seeded coin) so both classes appear. The unweighted pairwise reduction
    that RankSVM-style learners train on."""
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
    rows, targets = [], []
    for q in np.unique(qid):
        idx = np.flatnonzero(qid == q)
        i, j = np.triu_indices(len(idx), 1)
        i, j = idx[i], idx[j]
        keep = y[i] != y[j]
        rows.append(X[i[keep]] - X[j[keep]])
        targets.append((y[i[keep]] > y[j[keep]]).astype(int))
    D, t = np.vstack(rows), np.concatenate(targets)
    flip = np.random.default_rng(seed).uniform(size=len(t)) < 0.5
    D[flip] *= -1
    t[flip] = 1 - t[flip]
    return D, t


def write_letor_text(path, X, y, qid, digits=6, chunk=20_000):
    """Dense rows as LETOR text with ``digits`` significant digits (every
    feature written, zeros too), gzipped for a ``.gz`` path: quick at
    millions of rows, where :func:`rsrank.evaluation.writers.write_letor`, exact to
    the last bit, is slow and large."""
    line = "%d qid:%d " + " ".join(f"{j}:%.{digits}g" for j in range(1, X.shape[1] + 1)) + "\n"
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt") as handle:
        for start in range(0, len(y), chunk):
            stop = min(start + chunk, len(y))
            rows = np.column_stack([y[start:stop], qid[start:stop],
                                    np.asarray(X[start:stop], dtype=np.float64)]).tolist()
            handle.write("".join(line % tuple(r) for r in rows))


def peak_rss_bytes():
    """This process's resident-set high-water mark (VmHWM). Unlike
    getrusage's ru_maxrss it starts afresh at exec, so a child process does
    not inherit its parent's peak."""
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def roofline(X, repeats=5, threads=None):
    """Median seconds of one ``X @ w`` plus one ``X.T @ lambda`` with NumPy
    (vectors in X's dtype, after a warm-up): the two passes over ``X`` an
    epoch cannot avoid. ``threads`` caps BLAS's threads (None: all cores);
    RSRank's online epoch runs on one."""
    from threadpoolctl import threadpool_limits

    w = np.random.default_rng(0).normal(size=X.shape[1]).astype(X.dtype)
    lam = np.random.default_rng(1).normal(size=X.shape[0]).astype(X.dtype)
    with threadpool_limits(limits=threads, user_api="blas"):
        X @ w, X.T @ lam
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            X @ w
            X.T @ lam
            times.append(time.perf_counter() - start)
    return float(np.median(times))


def fastest(run, repeats):
    """The least wall time of ``repeats`` calls of ``run()``, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def epoch_timer(X, y, qid, ndcg_k, **params):
    """A function that runs one more kernel epoch and returns its time, on
    a model prepared once (online updates, no scaling by default), after one
    warm-up epoch."""
    from rsrank import QueryData, RSRank
    from rsrank.learning.solver import SolverState

    params = {"normalize": "none", "batch_size": 1, **params}
    solver = RSRank(ndcg_k=ndcg_k, random_state=0, eval_train=False, **params).solver()
    data = QueryData(X, y, qid)
    state = SolverState(np.zeros(X.shape[1]))
    order = np.random.default_rng(0).permutation(data.n_queries)
    work = solver.new_work(data)
    solver.epoch(data, state, order, work=work)

    def run():
        start = time.perf_counter()
        solver.epoch(data, state, order, work=work)
        return time.perf_counter() - start
    return run


def time_epoch(X, y, qid, ndcg_k, repeats=3, **params):
    """Median time of one kernel epoch (after one warm-up epoch)."""
    run = epoch_timer(X, y, qid, ndcg_k, **params)
    return float(np.median([run() for _ in range(repeats)]))


REPO = Path(__file__).resolve().parents[1]
#: the real LETOR data beside the repository (its README says where it comes from);
#: the scripts' default, whatever the working directory
SHARED_DATA = REPO.parent / "shared" / "data"
#: the packages whose versions every report records (those installed)
PACKAGES = ("rsrank", "numpy", "scipy", "numba", "scikit-learn", "lightgbm", "xgboost", "dask")


def portable(argument):
    """A command-line argument without this machine's absolute paths: a path
    inside the repository's parent directory becomes relative to the
    repository, any other absolute path keeps only its last part."""
    text = str(argument)
    if "=" in text and text.startswith("--"):
        flag, value = text.split("=", 1)
        return f"{flag}={portable(value)}"
    if not os.path.isabs(text):
        return text
    if Path(text).resolve().is_relative_to(REPO.parent):
        return os.path.relpath(Path(text).resolve(), REPO)
    return f"<{Path(text).name}>"


def command_line(argv=None):
    """The command that ran this script, as one would type it in the
    repository's root, without absolute paths."""
    argv = sys.argv if argv is None else argv
    script = os.path.relpath(Path(argv[0]).resolve(), REPO)
    return " ".join(shlex.quote(portable(a)) for a in ["python", script, *argv[1:]])


def _git(*args):
    try:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


#: the commit and state of the code when the script started (a run may
#: outlast later commits; what it measured is the code it started with)
STARTED = {"commit": _git("rev-parse", "HEAD"),
           "uncommitted_changes": bool(_git("status", "--porcelain", "--", ".", ":!results"))}


def provenance(argv=None):
    """What produced a result: the git commit the script started from (and
    whether the code had changes not committed, outside ``results/``), the
    machine, the versions and the exact command."""
    from importlib import metadata

    with open("/proc/meminfo") as handle:
        memory = int(next(line for line in handle if line.startswith("MemTotal")).split()[1])
    versions = {"python": platform.python_version()}
    for package in PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            pass
    return {**STARTED,
            "machine": {"system": platform.system(), "machine": platform.machine(),
                        "cpus": os.cpu_count(), "memory_gib": round(memory / 2**20, 1)},
            "versions": versions, "command": command_line(argv)}


def stamp_markdown(stamp):
    """The footer every Markdown result ends with."""
    commit = (stamp["commit"] or "unknown")[:12]
    if stamp["uncommitted_changes"]:
        commit += " with uncommitted changes"
    machine = stamp["machine"]
    versions = ", ".join(f"{name} {version}" for name, version in stamp["versions"].items())
    return (f"\n---\n\nProduced by `{stamp['command']}` at commit {commit}, on "
            f"{machine['system']} {machine['machine']} with {machine['cpus']} CPUs and "
            f"{machine['memory_gib']} GiB; {versions}.\n")


def _replace(path, text):
    internal("reading._files", "atomic_write_text")(path, text)  # the package's one output edge


def write_report(out, name, report, markdown, *, compact=False):
    """Writes ``out/name.json`` (``report`` plus its ``provenance``; on one
    line when ``compact``) and ``out/name.md`` (``markdown`` plus the
    provenance footer). ``out`` is always a directory: every script's
    ``--out`` means the same thing."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    stamp = provenance()
    report = {**report, "provenance": stamp}
    layout = {"separators": (",", ":")} if compact else {"indent": 1}
    _replace(out / f"{name}.json", json.dumps(report, default=float, **layout) + "\n")
    _replace(out / f"{name}.md", markdown.rstrip("\n") + "\n" + stamp_markdown(stamp))
    return report


def train_folds(data, flags):
    """``rsrank train DATA --quiet FLAGS`` in this process, its results
    written aside and read back: ``results.json``'s ``folds`` (``data``
    None: no positional data, the files given in ``flags``)."""
    import contextlib
    import io
    import tempfile

    from rsrank.cli import main as rsrank_main

    with tempfile.TemporaryDirectory() as out:
        with contextlib.redirect_stdout(io.StringIO()):
            rsrank_main(["train", *([] if data is None else [str(data)]), "--quiet", "--out",
                         str(Path(out) / "run"), *flags])
        return json.loads((Path(out) / "run" / "results.json").read_text())["folds"]


def fold_per_query(fold, metric="NDCG@10"):
    """A fold's per-query ``metric`` from ``results.json``, by qid (a query
    its convention skips as NaN)."""
    return {q: np.nan if v is None else v
            for q, v in zip(fold["per_query"]["qid"], fold["per_query"][metric])}

