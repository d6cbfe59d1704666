"""The kernel's mm selftests built from the tree under test (foliofarm/disks/selftests_disk.py)."""

import pytest

from foliofarm.disks import selftests_disk
from foliofarm.intake import source
from foliofarm.paths import cache_dir

# Real output of the first builds of 7.3's mm selftests here: libnuma from a newer
# Debian suite than the cross toolchain's libc, and a header the scratch tree lacked.
LOG = """\
  CC       migration
/usr/lib/gcc-cross/aarch64-linux-gnu/12/../../../../aarch64-linux-gnu/bin/ld: libnuma.a(libnuma.o): in function `read_mask':
(.text+0x88): undefined reference to `__isoc23_strtoul'
collect2: error: ld returned 1 exit status
make: *** [../lib.mk:225: /cache/selftests/.7.3-84ba.tmp-23877/bin/migration] Error 1
  CC       process_madv
In file included from process_madv.c:18:
../pidfd/pidfd.h:29:10: fatal error: ../clone3/clone3_selftests.h: No such file or directory
   29 | #include "../clone3/clone3_selftests.h"
compilation terminated.
make: *** [../lib.mk:225: /cache/selftests/.7.3-84ba.tmp-23877/bin/process_madv] Error 1
"""


def test_first_error_names_each_tests_own_error():
    assert "__isoc23_strtoul" not in selftests_disk.first_error(LOG, "process_madv")
    assert "undefined reference to `__isoc23_strtoul'" in selftests_disk.first_error(LOG, "migration")
    assert "clone3_selftests.h" in selftests_disk.first_error(LOG, "process_madv")
    assert selftests_disk.first_error(LOG, "cow").startswith("not built")


def test_a_series_that_touches_nothing_they_read_reuses_the_selftests(tmp_path):
    """The build's key is the content of what it reads: a change to mm/*.c
    (most mm series) keeps it; a selftest, a header it includes from mm/, a
    uapi header or the syscall table changes it."""
    files = {"tools/testing/selftests/mm/cow.c": "int main(void){}",
             "tools/testing/selftests/lib.mk": "all:",
             "mm/internal.h": "#define X 1", "mm/filemap.c": "void f(void){}",
             "include/uapi/linux/mman.h": "#define MAP_X 1",
             "arch/arm64/tools/syscall_64.tbl": "0 common io_setup",
             "include/linux/pagemap.h": "static inline void g(void){}",
             "Makefile": "VERSION = 7"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    key = selftests_disk.inputs_digest(tmp_path)
    for name in ("mm/filemap.c", "include/linux/pagemap.h"):
        (tmp_path / name).write_text(files[name] + "\n/* a series */")
        assert selftests_disk.inputs_digest(tmp_path) == key, name
    for name in ("tools/testing/selftests/mm/cow.c", "mm/internal.h", "include/uapi/linux/mman.h",
                 "arch/arm64/tools/syscall_64.tbl", "Makefile"):
        (tmp_path / name).write_text(files[name] + "\n/* a series */")
        assert selftests_disk.inputs_digest(tmp_path) != key, name
        (tmp_path / name).write_text(files[name])
        assert selftests_disk.inputs_digest(tmp_path) == key, name
    (tmp_path / "tools/testing/selftests/mm/new_test.c").write_text("")
    assert selftests_disk.inputs_digest(tmp_path) != key


@pytest.mark.integration
def test_mm_selftests_build_static_arm64_and_are_cached():
    """7.3's mm selftests, every one the Makefile lists, static arm64 programs;
    the second call takes them from the cache."""
    src = source.resolve("debian:7.3", cache_dir())
    st = selftests_disk.build(cache_dir(), src)
    assert st.missing == {}, st.missing
    for name in ("cow", "khugepaged", "split_huge_page_test", "guard-regions", "run_vmtests.sh",
                 "ksft_thp.sh"):
        assert (st.bin / name).is_file(), name
    elf = (st.bin / "cow").read_bytes()
    assert elf[:4] == b"\x7fELF" and int.from_bytes(elf[18:20], "little") == 183   # EM_AARCH64
    phoff = int.from_bytes(elf[32:40], "little")
    phentsize, phnum = int.from_bytes(elf[54:56], "little"), int.from_bytes(elf[56:58], "little")
    types = [int.from_bytes(elf[phoff + i * phentsize:][:4], "little") for i in range(phnum)]
    assert 3 not in types     # no PT_INTERP: static
    again = selftests_disk.build(cache_dir(), src)
    assert not again.built and again.dir == st.dir
