"""The debug variant (DEBUG_VM, page table check, pagealloc debugging, lockdep):
the same checks on a 4K debug kernel, where any splat fails the cell."""

import json

import pytest

from foliofarm import matrix
from foliofarm.intake import source

from foliofarm.kernel import build
from foliofarm.cli import main
from foliofarm.judge import catalogue
from foliofarm.paths import cache_dir

pytestmark = [pytest.mark.integration, pytest.mark.budget]

COLD_BUILD_S = 22 * 60


def test_debug_variant_4k_is_clean(budget, tmp_path):
    cache = cache_dir()
    src = source.resolve("debian:7.3", cache)
    if not build.Builder(cache).is_cached(src, matrix.page_sizes()["4k"], "debug"):
        budget(COLD_BUILD_S, "a 7.3 4K debug kernel")
    code = main(["run", "--variant", "debug", "--fresh", "--page-sizes", "4k", "--fs", "xfs",
                 "--checks", catalogue.own(), "--results", str(tmp_path)])
    doc = json.loads((tmp_path / "latest" / "results.json").read_text())
    (cell,) = doc["cells"]
    assert cell["id"] == "4k-xfs-7.3-debug"
    by = {c["name"]: c for c in cell["checks"]}
    assert by["console"]["outcome"] == "pass", by["console"]["reason"]
    for name, c in by.items():
        assert c["outcome"] == "pass", (name, c["reason"])
    assert code == 0
