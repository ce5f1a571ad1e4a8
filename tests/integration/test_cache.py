"""The binary cache of parsed files: the same arrays, faster, invalidated by
a change of the source, never written beside a read-only input."""

import gzip
import os
import shutil
import time
import warnings

import numpy as np
import pytest

from rsrank import NonContiguousQueryWarning, iter_letor_chunks, load_letor


@pytest.fixture
def letor_file(tmp_path, bundled_root):
    path = tmp_path / "data" / "train.txt.gz"
    path.parent.mkdir()
    shutil.copy(bundled_root / "Fold1" / "train.txt.gz", path)
    return path


def same(a, b):
    (Xa, ya, qa), (Xb, yb, qb) = a[:3], b[:3]
    assert Xa.shape == Xb.shape
    for name in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(getattr(Xa, name), getattr(Xb, name))
    np.testing.assert_array_equal(ya, yb)
    np.testing.assert_array_equal(qa, qb)


def test_cache_returns_the_parsed_arrays_and_is_reused(letor_file):
    parsed = load_letor(letor_file)
    first = load_letor(letor_file, cache=True)
    entries = list((letor_file.parent / ".rsrank-cache").iterdir())
    assert len(entries) == 1
    second = load_letor(letor_file, cache=True)
    same(parsed, first)
    same(parsed, second)
    assert not second[0].data.flags.writeable  # a read-only memory map
    assert list((letor_file.parent / ".rsrank-cache").iterdir()) == entries


def test_a_changed_source_is_parsed_again(letor_file):
    load_letor(letor_file, cache=True)
    text = gzip.open(letor_file, "rt").read().replace("qid:1 ", "qid:1 ", 1)
    lines = text.splitlines(keepends=True)
    with gzip.open(letor_file, "wt") as handle:
        handle.writelines(lines[:-5])  # fewer rows
    os.utime(letor_file, ns=(time.time_ns(), time.time_ns() + 10**9))
    again = load_letor(letor_file, cache=True)
    assert again[0].shape[0] == len(lines) - 5
    same(again, load_letor(letor_file))
    assert len(list((letor_file.parent / ".rsrank-cache").iterdir())) == 1  # stale one removed


def test_options_are_part_of_the_key(letor_file):
    wide = load_letor(letor_file, n_features=60, cache=True)
    narrow = load_letor(letor_file, cache=True)
    assert wide[0].shape[1] == 60 and narrow[0].shape[1] == 45
    single = load_letor(letor_file, dtype=np.float32, cache=True)
    assert single[0].dtype == np.float32


def test_read_only_input_falls_back_to_the_user_cache(letor_file, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # root ignores chmod
    load_letor(letor_file, cache=True)
    assert not (letor_file.parent / ".rsrank-cache").exists()
    assert len(list((tmp_path / "user-cache" / "rsrank").iterdir())) == 1


def test_warnings_come_back_from_the_cache(tmp_path):
    path = tmp_path / "split.txt"
    path.write_text("1 qid:1 1:0.5\n0 qid:2 1:0.1\n2 qid:1 1:0.9\n")
    for _ in range(2):
        with pytest.warns(NonContiguousQueryWarning, match="line 3"):
            load_letor(path, cache=tmp_path / "c")


def test_streaming_reads_the_cache(letor_file):
    from_text = list(iter_letor_chunks(letor_file, 7, n_features=45))
    load_letor(letor_file, n_features=45, cache=True)
    from_cache = list(iter_letor_chunks(letor_file, 7, n_features=45, cache=True))
    assert len(from_text) == len(from_cache)
    for a, b in zip(from_text, from_cache):
        same(a, b)


# -- nothing read back is trusted ---------------------------------------------------------
#
# Each case damages a cache entry the way a crash, a disk error, a hand edit or a
# copied directory can; every load must then warn once, return what a parse returns,
# and leave a valid entry for the next load.

def _entry(letor_file):
    (entry,) = [e for e in (letor_file.parent / ".rsrank-cache").iterdir()
                if not e.name.startswith(".")]
    return entry


def resave(entry, name, change):
    array = np.array(np.load(entry / f"{name}.npy"))
    np.save(entry / f"{name}.npy", change(array), allow_pickle=False)


def _edit_meta(entry, change):
    import json

    meta = json.loads((entry / "meta.json").read_text())
    change(meta)
    (entry / "meta.json").write_text(json.dumps(meta))


def changed(array, position, value):
    array[position] = value
    return array


def _swap_rows(array):
    array[[0, 1]] = array[[1, 0]]  # column indices out of order in row 0
    return array


def _replace_with_other(entry, other):
    shutil.rmtree(entry)
    shutil.copytree(other, entry)


DAMAGE = {
    "column index far out of range": lambda e, o: resave(e, "indices",
                                                          lambda a: changed(a, 3, 5_000_000)),
    "column index just past the width": lambda e, o: resave(e, "indices",
                                                             lambda a: changed(a, 3, 45)),
    "negative column index": lambda e, o: resave(e, "indices", lambda a: changed(a, 0, -1)),
    "column indices not sorted in a row": lambda e, o: resave(e, "indices", _swap_rows),
    "row pointers decrease": lambda e, o: resave(e, "indptr", lambda a: changed(a, 5, a[4] - 1)),
    "row pointers end early": lambda e, o: resave(e, "indptr", lambda a: changed(a, -1, a[-1] - 1)),
    "an infinite value": lambda e, o: resave(e, "data", lambda a: changed(a, 7, np.inf)),
    "a label of 300": lambda e, o: resave(e, "y", lambda a: changed(a.astype(np.int64), 2, 300)),
    "a shorter label array": lambda e, o: resave(e, "y", lambda a: a[:-1]),
    "data stored as another dtype": lambda e, o: resave(e, "data",
                                                         lambda a: a.astype(np.float32)),
    "narrower shape in meta.json": lambda e, o: _edit_meta(e, lambda m: m.update(shape=[
        m["shape"][0], 3])),
    "wider shape in meta.json": lambda e, o: _edit_meta(e, lambda m: m.update(shape=[
        m["shape"][0], 46])),
    "meta.json not JSON": lambda e, o: (e / "meta.json").write_text("{not json"),
    "meta.json a list": lambda e, o: (e / "meta.json").write_text("[]"),
    "an array file truncated": lambda e, o: (e / "data.npy").write_bytes(
        (e / "data.npy").read_bytes()[:200]),
    "an array file missing": lambda e, o: (e / "indptr.npy").unlink(),
    "another file's entry under this key": _replace_with_other,
    # rewritten in place with the same shape and valid values: only the content tells
    "a label changed in place": lambda e, o: resave(e, "y", lambda a: changed(a, 2, (a[2] + 1) % 3)),
    "a value changed in place": lambda e, o: resave(e, "data", lambda a: changed(a, 7, a[7] + 1)),
    "two rows' labels swapped": lambda e, o: resave(e, "y", lambda a: a[[1, 0, *range(2, len(a))]]
                                                     if a[0] != a[1] else changed(a, 0, a[0] + 1)),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_entry_is_removed_and_parsed_again(letor_file, tmp_path, damage):
    from rsrank import CacheWarning

    other_file = tmp_path / "other" / "test.txt.gz"
    other_file.parent.mkdir()
    shutil.copy(letor_file, other_file)
    with open(other_file, "ab") as handle:  # another file: one more query
        handle.write(gzip.compress(b"2 qid:999999 1:0.5 3:1.5\n"))
    cache = tmp_path / "cache"
    load_letor(other_file, cache=cache)
    other_entry = next(e for e in cache.iterdir() if not e.name.startswith("."))
    load_letor(letor_file, cache=cache / "main")
    parsed = load_letor(letor_file)
    source = letor_file.read_bytes()

    entry = next(e for e in (cache / "main").iterdir() if not e.name.startswith("."))
    assert all(not f.stat().st_mode & 0o222 for f in entry.iterdir())  # written read-only
    for file in entry.iterdir():
        file.chmod(0o644)  # as a user who insists on changing it does
    DAMAGE[damage](entry, other_entry)
    with pytest.warns(CacheWarning) as caught:
        again = load_letor(letor_file, cache=cache / "main")
    same(again, parsed)
    messages = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    assert len(messages) == 1 and "\n" not in messages[0]
    assert str(entry) in messages[0] and str(letor_file.resolve()) in messages[0]
    # the entry was written again: the next load uses it without a word
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same(load_letor(letor_file, cache=cache / "main"), parsed)
    assert [e.name for e in (cache / "main").iterdir()] == [entry.name]
    assert letor_file.read_bytes() == source


def test_a_damaged_entry_is_caught_when_streaming(letor_file):
    from rsrank import CacheWarning

    load_letor(letor_file, n_features=45, cache=True)  # the key streaming asks for
    entry = _entry(letor_file)
    resave(entry, "indices", lambda a: changed(a, 3, 5_000_000))
    with pytest.warns(CacheWarning):
        blocks = list(iter_letor_chunks(letor_file, 10, n_features=45, cache=True))
    stacked = np.concatenate([b[1] for b in blocks])
    np.testing.assert_array_equal(stacked, load_letor(letor_file)[1])


def test_killed_writers_leave_no_staging_behind(letor_file):
    cache = letor_file.parent / ".rsrank-cache"
    cache.mkdir()
    key = "0" * 32
    dead = cache / f".{key}.staging-999999999"  # no such process
    dead.mkdir()
    (dead / "data.npy").write_bytes(b"partial")
    legacy_old, legacy_new = cache / f".{key}.ab12cd", cache / f".{'1' * 32}.ef34gh"
    for directory in (legacy_old, legacy_new):
        directory.mkdir()
    day_ago = time.time() - 2 * 24 * 3600
    os.utime(legacy_old, (day_ago, day_ago))
    load_letor(letor_file, cache=True)
    left = sorted(e.name for e in cache.iterdir() if e.name.startswith("."))
    assert left == [legacy_new.name]  # a recent writer of format 1 may still be running


def test_an_interrupted_write_leaves_nothing(letor_file, monkeypatch):
    from rsrank.reading import _cache

    calls = []

    def interrupted(*args, **kwargs):
        calls.append(args[0])
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_save(*args, **kwargs)

    real_save = np.save
    monkeypatch.setattr(_cache.np, "save", interrupted)
    with pytest.raises(KeyboardInterrupt):
        load_letor(letor_file, cache=True)
    monkeypatch.undo()
    assert list((letor_file.parent / ".rsrank-cache").iterdir()) == []
    same(load_letor(letor_file, cache=True), load_letor(letor_file))


@pytest.mark.parametrize("dense", [False, True])
def test_a_fit_on_cached_arrays_compiles_no_epoch_of_its_own(letor_file, dense):
    """The cache's arrays are read-only memory maps and parsed ones are
    writable; numba types the two apart, but the kernels see both as
    read-only views, so the fit on cached rows runs the very builds that
    the fit on parsed rows compiled."""
    from rsrank import RSRank, _kernels

    def fit(X, y, qid):
        RSRank(max_iter=2, normalize="none", n_jobs=1).fit(X, y, qid=qid)

    def rows(loaded):
        X, y, qid = loaded[:3]
        if dense:  # read-only if the cache's was, as np.load(..., mmap_mode="r") gives it
            X, writable = X.toarray(), X.data.flags.writeable
            X.flags.writeable = writable
        return X, y, qid

    fit(*rows(load_letor(letor_file)))
    kernels = [_kernels.epoch_serial, _kernels.csr_epoch_serial, _kernels.all_query_levels,
               _kernels.dense_column_sums, _kernels.stored_column_moments]
    builds = [len(kernel.signatures) for kernel in kernels]
    load_letor(letor_file, cache=True)
    X, y, qid = rows(load_letor(letor_file, cache=True))
    assert not X.flags.writeable if dense else not X.data.flags.writeable
    assert not y.flags.writeable
    fit(X, y, qid)
    assert [len(kernel.signatures) for kernel in kernels] == builds
