"""What the cache holds is checked before it is trusted: a kernel artifact, a
disk image or an initramfs that was truncated or damaged after it was made is
made again, never booted or judged."""

import json

from foliofarm import util
from foliofarm.kernel.build import ARTIFACT_FILES, Builder


def test_a_sealed_file_detects_damage(tmp_path):
    f = tmp_path / "initramfs.cpio"
    f.write_bytes(b"\x07" * 100_000)
    util.seal(f)
    assert util.sealed(f)
    f.write_bytes(b"\x07" * 99_999)                          # truncated
    assert not util.sealed(f)
    assert not util.sealed(tmp_path / "missing.cpio")


def test_a_sampled_seal_sees_a_damaged_image_block(tmp_path):
    img = tmp_path / "disk.img"
    with open(img, "wb") as out:
        out.truncate(64 << 20)                               # 64 MB, sparse
    util.seal(img, sample=True)
    assert util.sealed(img, sample=True)
    with open(img, "r+b") as out:                            # one chunk the sample reads
        out.seek(0)
        out.write(b"damage")
    assert not util.sealed(img, sample=True)


def test_artifacts_are_trusted_only_with_their_digests(tmp_path):
    art = tmp_path / "artifacts" / "7.3-4k"
    art.mkdir(parents=True)
    for name in ARTIFACT_FILES:
        (art / name).write_bytes(name.encode() * 1000)
    meta = {"sha256": {n: util.file_digest(art / n) for n in ARTIFACT_FILES}}
    (art / "build.json").write_text(json.dumps(meta))
    assert Builder._complete(art)
    image = (art / "Image").read_bytes()
    (art / "Image").write_bytes(image[: len(image) // 2])    # a truncated kernel image
    assert not Builder._complete(art)
    (art / "Image").write_bytes(image)
    (art / "build.json").write_text("{\"sha256\": ")         # a cut build.json
    assert not Builder._complete(art)


def test_a_full_disk_is_named_as_such(tmp_path):
    """A tool that fails because the disk is full (apt, tar, make) gets an error
    that says so and what to do, not just its own exit status."""
    import pytest
    from foliofarm.errors import InfraError
    with pytest.raises(InfraError, match=r"^disk full: free space where the cache is"):
        util.run(["sh", "-c", "echo 'write (28: No space left on device)' >&2; exit 100"],
                 what="apt-get update")


def test_a_content_keyed_directory_made_twice_at_once_keeps_the_first(tmp_path):
    """Two producers of one content-keyed directory (the guest programs, made
    by each page size's thread when only they changed): the second to finish
    leaves the first's in place, for a reader may be in it; a directory made
    again because it was damaged (replace=True, the default) is replaced."""
    final = tmp_path / "bin-key"
    with util.StagingDir(final, replace=False) as first:
        (first / "prog").write_text("one")
    reading = list(final.iterdir())                          # a reader, mid-way
    with util.StagingDir(final, replace=False) as second:
        (second / "prog").write_text("two")
    assert [p.read_text() for p in reading] == ["one"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin-key"]   # the second's staging gone
    with util.StagingDir(final) as again:
        (again / "prog").write_text("three")
    assert (final / "prog").read_text() == "three"
