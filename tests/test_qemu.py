"""The guest's QEMU command line: NUMA nodes as the kernel must see them."""

import pytest

from foliofarm.errors import UsageError
from foliofarm.guest.qemu import Machine, numa_argv, numa_layout


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
