"""rsrank._kernels.build: builds of changed kernel sources are forgotten;
cached builds are saved and loaded under a lock."""


import numba

from rsrank._kernels.build import (CACHE_LOCK, SOURCES_STAMP, LockedDispatcher, cache_lock,
                                  forget_builds, njit)


def test_builds_of_changed_kernel_sources_are_forgotten(tmp_path):
    """numba checks a cached kernel against its own file only: a change to
    a file of kernels it calls must remove the builds, and nothing else."""
    sources = [tmp_path / "src" / "epoch.py", tmp_path / "src" / "penalty.py"]
    sources[0].parent.mkdir()
    for source in sources:
        source.write_text("x = 1\n")
    cache = tmp_path / "cache"
    cache.mkdir()
    builds = [cache / "epoch.epoch_serial-1.py311.nbi", cache / "epoch.epoch_serial-1.py311.1.nbc",
              cache / "penalty.truncate-9.py311.nbi"]
    other = cache / "user_module.f-1.py311.nbi"  # not a kernel of these sources
    for path in builds + [other]:
        path.write_bytes(b"build")
    assert forget_builds(cache, sources)  # no stamp yet: builds of unknown sources go
    assert not any(p.exists() for p in builds) and other.exists()
    assert (cache / SOURCES_STAMP).is_file()
    for path in builds:
        path.write_bytes(b"build")
    assert not forget_builds(cache, sources)  # the same sources: builds kept
    assert all(p.exists() for p in builds)
    sources[1].write_text("x = 2\n")  # the callee's file changed, not the caller's
    assert forget_builds(cache, sources)
    assert not any(p.exists() for p in builds) and other.exists()
    assert sorted(p.name for p in cache.iterdir()) == sorted([CACHE_LOCK, SOURCES_STAMP, other.name])


def test_kernels_are_locked_dispatchers_that_compile_as_numba_does(tmp_path):
    def twice(x):
        return 2 * x

    for options in ({"cache": True}, {"cache": True, "inline": "always"}, {}):
        kernel = njit(**options)(twice)
        assert isinstance(kernel, LockedDispatcher)
        assert kernel(3) == 6 and kernel(1.5) == 3.0
        assert len(kernel.signatures) == 2
    assert numba.njit(twice).targetoptions == njit(twice).targetoptions
    assert njit(twice, parallel=True).targetoptions == numba.njit(twice, parallel=True).targetoptions


def test_the_cache_lock_is_taken_once_per_process_and_nests(tmp_path):
    """A hold inside a hold goes straight through (a flock of the same file
    on a second descriptor would wait for this process itself)."""
    with cache_lock(tmp_path / "cache"):
        with cache_lock(tmp_path / "cache", exclusive=False):
            assert (tmp_path / "cache" / CACHE_LOCK).is_file()
    with cache_lock(tmp_path / "cache", exclusive=False):  # released: taken again
        pass
    unwritable = tmp_path / "file"
    unwritable.write_text("")
    with cache_lock(unwritable / "cache"):  # no directory there: unlocked, as numba has it
        pass


def test_a_file_system_that_refuses_locks_leaves_the_cache_unlocked(tmp_path, monkeypatch):
    """Some network file systems refuse flock (ENOLCK): the kernels still
    load and save, unlocked, as numba alone has them."""
    import errno
    import fcntl

    def refuse(handle, operation):
        raise OSError(errno.ENOLCK, "no locks available")

    monkeypatch.setattr(fcntl, "flock", refuse)
    entered = []
    with cache_lock(tmp_path / "cache"):
        entered.append(True)
    assert entered == [True]
