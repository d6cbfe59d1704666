"""The objects a coverage build profiles alone (kernel/profiled.py): by
directory, never an object built outside the kernel proper, and make sees
them through the sandbox's cleared environment."""

from __future__ import annotations

import gzip
import tarfile
from pathlib import Path

import pytest

from foliofarm import matrix, sandbox
from foliofarm.errors import FarmError
from foliofarm.paths import KERNEL_CONFIGS
from foliofarm.kernel import build, profiled
from foliofarm.util import sha256_files


def sample(root: Path) -> Path:
    for f in ("mm/filemap.c", "mm/vma.c", "mm/gettimeofday.c", "mm/damon/core.c", "mm/README",
              "lib/string.c", "lib/xarray.c", "lib/vdso/gettimeofday.c",
              "arch/arm64/kernel/pi/map_range.c", "arch/arm64/mm/contpte.c",
              "arch/arm64/mm/map_range.c", "drivers/firmware/efi/libstub/string.c",
              "arch/x86/entry/vdso/vma.c"):
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text("int x;\n")
    return root


def test_each_directory_s_own_c_files_are_profiled_not_those_below(tmp_path):
    tree = sample(tmp_path)
    got = profiled.stems(tree, ["mm", "lib", "arch/arm64/mm"], "")
    assert "filemap" in got and "xarray" in got and "contpte" in got
    assert "core" not in got, "mm/damon is below mm, not listed"
    assert "README" not in got


def test_a_name_an_object_outside_the_kernel_shares_is_never_profiled(tmp_path):
    tree = sample(tmp_path)
    got = profiled.stems(tree, ["mm", "lib", "arch/arm64/mm"], "CONFIG_MMU=y\n")
    assert "gettimeofday" not in got, "the vDSO builds a gettimeofday.o"
    assert "map_range" not in got, "the early code (pi) builds a map_range.o"
    assert "vma" in got, "another architecture's vDSO is not built here"
    assert "string" in got, "no EFI stub in this config"
    with_stub = profiled.stems(tree, ["mm", "lib"], "CONFIG_MMU=y\nCONFIG_EFI_STUB=y\n")
    assert "string" not in with_stub and "filemap" in with_stub


def test_a_makefile_s_own_no_is_kept_and_another_architecture_s_is_not_read(tmp_path):
    tree = sample(tmp_path)
    (tree / "lib/test_bitmap.c").write_text("int y;\n")
    (tree / "lib/Makefile").write_text("obj-y += xarray.o\nGCOV_PROFILE_test_bitmap.o := n\n")
    (tree / "arch/x86/entry/vdso/Makefile").write_text("GCOV_PROFILE_filemap.o := n\n")
    got = profiled.stems(tree, ["mm", "lib"], "")
    assert "test_bitmap" not in got and "xarray" in got and "filemap" in got


def test_make_s_sub_makes_see_the_profiled_objects_through_the_sandbox(tmp_path):
    """Kbuild builds each directory in a sub-make: the variables reach it."""
    tree = sample(tmp_path / "tree")
    (tmp_path / "Makefile").write_text("all:\n\t@$(MAKE) -s -f sub.mk\n")
    (tmp_path / "sub.mk").write_text(
        "all:\n\t@echo '[$(GCOV_PROFILE_filemap.o)][$(GCOV_PROFILE_gettimeofday.o)]'\n")
    made = profiled.make_vars(tree, ["mm", "lib"], "")
    assert "GCOV_PROFILE_filemap.o=y" in made
    done = sandbox.run(["make", "-s", "-C", str(tmp_path), *made], read=[tmp_path], write=[],
                       what="make")
    assert done.stdout.decode().strip() == "[y][]"


def test_the_coverage_variant_s_key_holds_its_directories_and_the_default_s_is_unchanged():
    b = build.Builder.__new__(build.Builder)
    b.extra = None
    page = matrix.page_sizes()["4k"]
    assert b.config_key(page, "default") == sha256_files(build.fragments(page, "default"))[:16]
    dirs = profiled.dirs("coverage")
    assert "mm" in dirs and "arch/arm64/mm" in dirs
    assert b.config_key(page, "coverage") != sha256_files(build.fragments(page, "coverage"))[:16]
    assert profiled.config_key("x", "coverage") != profiled.config_key("x", "default")


def test_the_coverage_fragment_sets_nothing_the_base_lacks():
    """Same .config, same autoconf.h: the coverage build compiles only the
    objects it profiles and takes the rest from the default build's ccache."""
    def symbols(name):
        text = (KERNEL_CONFIGS / name).read_text()
        return {ln.strip() for ln in text.splitlines() if ln.startswith("CONFIG_")}
    extra = symbols("coverage.config") - symbols("base.config")
    assert not extra, f"coverage.config sets {sorted(extra)}: put them in base.config too"


def test_a_series_keeps_the_notes_it_compiled_again_and_no_link(tmp_path):
    note = gzip.decompress((Path(__file__).parent / "data/gcov/mremap.gcno.gz").read_bytes())
    base, series = tmp_path / "base", tmp_path / "series"
    for d in (base, series):
        (d / "mm").mkdir(parents=True)
        (d / "mm/mremap.gcno").write_bytes(note)
        (d / "mm/filemap.gcno").write_bytes(note)
    (series / "mm/filemap.gcno").write_bytes(note + b"\0\0\0\0")     # compiled again
    (series / "mm/new.gcno").write_bytes(note)                        # not in the base at all
    into = tmp_path / profiled.NOTES
    assert profiled.keep_notes(series, base, ["mm", "lib"], into) == 2
    with tarfile.open(into) as tar:
        assert sorted(tar.getnames()) == ["mm/filemap.gcno", "mm/new.gcno"]
    (series / "mm/filemap.gcno").unlink()
    (series / "mm/filemap.gcno").symlink_to("/etc/passwd")
    with pytest.raises(FarmError, match="filemap.gcno"):
        profiled.keep_notes(series, base, ["mm"], into)
