"""A bounded sample of `make faults` (foliofarm/selfcheck/faults.py) on the warm 4K 7.3
kernel, for real: QEMU killed mid-check, the run killed -9 during a check, and
damaged saved measurements. The whole suite is `make faults`."""


import pytest

from foliofarm.selfcheck import faults

pytestmark = [pytest.mark.integration, pytest.mark.budget]

SAMPLE = ("QEMU killed mid-check", "kill -9 at check", "damaged saved measurements")


@pytest.mark.parametrize("name", SAMPLE)
def test_fault_is_survived(name, tmp_path, budget):
    from foliofarm import matrix
    from foliofarm.intake import source
    from foliofarm.kernel import build
    from foliofarm.paths import cache_dir
    src = source.resolve("debian:7.3", cache_dir())
    warm = build.Builder(cache_dir()).is_cached(src, matrix.page_sizes()["4k"])
    budget((3 if warm else 12) * 60, f"fault {name!r}")
    faults.farm(faults.SCOPE, tmp_path / "warm")            # a clean base to damage
    a = faults.Attempt(name)
    faults.faults()[name](a, tmp_path / "work")
    assert a.survived, a.notes
