"""rsrank._kernels.build: builds of changed kernel sources are forgotten."""


from rsrank._kernels.build import SOURCES_STAMP, forget_builds


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
    assert sorted(p.name for p in cache.iterdir()) == [SOURCES_STAMP, other.name]
