"""`foliofarm coverage make --if-missing` (make run's way): only the page
sizes whose map of the base is not made, or was cut short."""

from __future__ import annotations

import argparse
from types import SimpleNamespace

from foliofarm.cli import cmd_coverage
from foliofarm.coverage import cmap


def made(cache, page, boots):
    m = cmap.CoverageMap("7.3", "tree-state", page)
    m.tests["mm-selftests: mremap_test"] = cmap.Reach(boots=set(boots))
    m.tests["exec-text"] = cmap.Reach(boots={"a", "b"})
    cmap.save(cache, m)


def test_only_the_page_sizes_without_a_whole_map_are_made(tmp_path, monkeypatch):
    monkeypatch.setattr(cmd_coverage, "cache_dir", lambda: tmp_path)
    monkeypatch.setattr(cmd_coverage, "_base", lambda args: SimpleNamespace(xy="7.3", state=lambda: "tree-state"))
    made(tmp_path, "4k", {"4k-1", "4k-2"})
    made(tmp_path, "16k", {"16k-1"})             # its second run was cut short
    cmap.path(tmp_path, "7.3", "tree-state", "64k").parent.mkdir(parents=True, exist_ok=True)
    cmap.path(tmp_path, "7.3", "tree-state", "64k").write_bytes(b"not gzip")
    args = argparse.Namespace(boots=2, kernel="debian:7.3")
    assert cmd_coverage.missing(args, ["4k", "16k", "64k"]) == ["16k", "64k"]
    assert cmd_coverage.missing(argparse.Namespace(boots=1, kernel="debian:7.3"), ["4k", "16k"]) == []


def test_nothing_is_run_when_every_map_is_made(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cmd_coverage, "cache_dir", lambda: tmp_path)
    monkeypatch.setattr(cmd_coverage, "_base", lambda args: SimpleNamespace(xy="7.3", state=lambda: "tree-state"))
    monkeypatch.setattr(cmd_coverage.child, "run_to_end", lambda *a, **k: (_ for _ in ()).throw(AssertionError))
    made(tmp_path, "4k", {"4k-1", "4k-2"})
    args = argparse.Namespace(boots=2, kernel="debian:7.3", page_sizes="4k", if_missing=True,
                              results=tmp_path / "r")
    assert cmd_coverage.cmd_make(args, []) == 0
    assert "the map of debian:7.3 on 4k is made" in capsys.readouterr().out
