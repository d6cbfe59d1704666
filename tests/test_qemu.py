"""The guest's QEMU command line: NUMA nodes as the kernel must see them."""

from pathlib import Path

import pytest

from foliofarm.errors import UsageError
from foliofarm.boot.qemu import Machine, numa_argv, numa_layout


def test_two_nodes_split_memory_and_deal_the_cpus():
    assert numa_layout(4096, 2, 2) == [(2048, [0]), (2048, [1])]
    assert numa_layout(4096, 3, 2) == [(2048, [0, 2]), (2048, [1])]
    # memory in 512 MB steps (a 64K kernel's sparsemem section), the rest to the last node
    assert numa_layout(3000, 2, 2) == [(1024, [0]), (1976, [1])]
    # more nodes than CPUs: memory-only nodes
    assert numa_layout(2048, 1, 2) == [(1024, [0]), (1024, [])]
    assert numa_layout(700, 2, 1) == [(700, [0, 1])]


def test_a_node_needs_memory():
    with pytest.raises(UsageError, match="raise --memory or lower --numa-nodes"):
        numa_layout(1000, 2, 2)


def test_qemu_gets_a_ram_backend_per_node():
    assert numa_argv(4096, 2, 1) == []
    assert numa_argv(4096, 3, 2) == [
        "-object", "memory-backend-ram,id=ffnode0,size=2048M",
        "-numa", "node,nodeid=0,memdev=ffnode0,cpus=0,cpus=2",
        "-object", "memory-backend-ram,id=ffnode1,size=2048M",
        "-numa", "node,nodeid=1,memdev=ffnode1,cpus=1"]
    argv = Machine(kernel="Image", initrd="initrd", memory_mb=4096, cpus=2, numa_nodes=2,
                   accel="tcg").argv()
    assert argv[argv.index("-m") + 1] == "4096" and argv.count("-numa") == 2


def test_the_selftests_hugetlb_pages_are_reserved_on_the_command_line():
    """hugetlb_mb of checks.toml in pages of a PMD's size: 2M, 32M, 512M; at
    least one (a 512M page for 256 MB); none where no selftests run."""
    from foliofarm.judge.catalogue import by_name, select
    from foliofarm.measure.cells import boot_hugepages
    st = [by_name()["mm-selftests"]]
    mb = int(st[0].options["hugetlb_mb"])
    assert boot_hugepages(st, 4096) == mb // 2
    assert boot_hugepages(st, 16384) == mb // 32
    assert boot_hugepages(st, 65536) == 1
    assert boot_hugepages(select("exec-text"), 65536) == 0
    assert "hugepages=8" in Machine(kernel="Image", initrd="initrd", extra_append="hugepages=8").append()


def test_every_boot_has_an_early_console():
    """A kernel that dies before its PL011 driver registers still says why."""
    from foliofarm.boot.qemu import Machine
    m = Machine(kernel=Path("/k"), initrd=Path("/i"))
    assert m.append().split()[0] == "earlycon" and "console=ttyAMA0" in m.append().split()


def test_last_words_of_a_kernel_that_died_booting():
    from foliofarm.boot.session import last_words
    assert last_words("a\nkernel BUG at mm/filemap.c:1102!\npanic", ["bug: kernel BUG at mm/filemap.c:1102!",
                                                                      "panic: Kernel panic"]) \
        == "bug: kernel BUG at mm/filemap.c:1102!"
    assert last_words("Booting Linux\n  [    0.1] Unpacking initramfs  \n\n", []) == "[    0.1] Unpacking initramfs"
    assert "printed nothing" in last_words("", [])


def test_tcg_runs_the_vcpus_in_turns_unless_asked_for_a_thread_each():
    """TCG's vCPUs take turns on one host thread by default (faster on a busy
    host: qemu.TCG_THREADS); --tcg-threads multi gives each its own; KVM
    takes neither."""
    def accel(**kw):
        argv = Machine(kernel="Image", initrd="initrd", cpus=2, **kw).argv()
        return argv[argv.index("-accel") + 1]
    assert accel(accel="tcg") == "tcg,thread=single"
    assert accel(accel="tcg", tcg_threads="multi") == "tcg,thread=multi"
    assert accel(accel="kvm") == "kvm"


def test_the_race_parts_boot_with_a_thread_per_vcpu():
    """The selftests' race parts (a bare guest) hold the tests that need
    their vCPUs at once: a thread each whatever --tcg-threads says; the other
    boots (the cells', the rest of the page parts) take the run's choice."""
    from foliofarm.measure.cells import Context, boot_threads
    def ctx(threads):
        return Context(writer=None, cache=Path("/c"), checks=[], accel="tcg", boot_timeout=300,
                       log=lambda *a: None, status=lambda *a: None, tcg_threads=threads)
    assert boot_threads(ctx("single"), at_once=True) == "multi"
    assert boot_threads(ctx("single"), at_once=False) == "single"
    assert boot_threads(ctx("multi"), at_once=False) == "multi"
