"""Old kernels leave the cache (foliofarm/kernel/prune.py): by age, then the
least recently used while they take too much, never one in use; each with its
initramfs and base measurements; build directories and trees kept."""

from __future__ import annotations

import os
import time

from foliofarm.kernel import prune

MB = 1 << 20


def kernel(cache, name, mb, used):
    """A built kernel as the farm leaves it: artifacts, initramfs, base measurements."""
    d = cache / "artifacts" / name
    d.mkdir(parents=True)
    (d / "Image").write_bytes(os.urandom(mb * MB))
    (cache / "initramfs").mkdir(exist_ok=True)
    (cache / "initramfs" / f"{name}-0123456789abcdef.cpio").write_bytes(b"x" * 4096)
    (cache / "baseline").mkdir(exist_ok=True)
    (cache / "baseline" / f"{name[:60]}-0123456789abcdef0123.json").write_text("{}")
    (cache / "history").mkdir(exist_ok=True)
    (cache / "history" / f"{name[:60]}-0123456789abcdef0123.json").write_text("{}")
    os.utime(d, (used, used))
    return d


def test_kernels_unused_for_days_go_with_their_files(tmp_path):
    now = time.time()
    old = kernel(tmp_path, "7.3-4k-default-aaaa", 1, now - 20 * 86400)
    new = kernel(tmp_path, "7.3-4k-default-bbbb", 1, now - 86400)
    (tmp_path / "build" / "7.3-4k-default-tree").mkdir(parents=True)      # kept: per tree
    said = prune.prune(tmp_path, days=14, max_gb=100, now=now)
    assert len(said) == 1 and "7.3-4k-default-aaaa: not used for 20 days" in said[0]
    assert not old.exists() and new.exists()
    assert not list((tmp_path / "initramfs").glob("7.3-4k-default-aaaa-*"))
    assert not list((tmp_path / "baseline").glob("7.3-4k-default-aaaa-*"))
    assert not list((tmp_path / "history").glob("7.3-4k-default-aaaa-*"))
    assert list((tmp_path / "history").glob("7.3-4k-default-bbbb-*"))
    assert list((tmp_path / "baseline").glob("7.3-4k-default-bbbb-*"))
    assert (tmp_path / "build" / "7.3-4k-default-tree").is_dir()
    assert not [p for p in (tmp_path / "artifacts").iterdir() if p.name.startswith(".")]


def test_over_the_cap_the_least_recently_used_go_but_never_one_in_use(tmp_path):
    now = time.time()
    a = kernel(tmp_path, "a", 2, now - 3 * 86400)
    b = kernel(tmp_path, "b", 2, now - 2 * 86400)
    c = kernel(tmp_path, "c", 2, now - 3600)          # used an hour ago: a run may boot it
    d = kernel(tmp_path, "d", 2, now - 60)
    said = prune.prune(tmp_path, days=14, max_gb=3 * MB / prune.GB, now=now)
    # 8 MB against 3: a and b go (oldest first); c and d are busy and stay over the cap
    assert [s.split(":")[0] for s in said] == ["a", "b"]
    assert not a.exists() and not b.exists() and c.exists() and d.exists()
    assert "least recently used" in said[0]


def test_a_used_kernel_is_marked(tmp_path):
    d = kernel(tmp_path, "k", 1, time.time() - 30 * 86400)
    prune.mark_used(d)
    assert prune.prune(tmp_path, days=14, max_gb=100) == []
    assert d.exists()
