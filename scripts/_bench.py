"""Helpers shared by the benchmark scripts."""

import time

import numpy as np


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
