"""Command-line usage errors: exit 2 and a message listing the valid values."""

from pathlib import Path

import pytest

from foliofarm import locks
from foliofarm.cli import options
from foliofarm.cli import main


@pytest.mark.parametrize("argv,msg", [
    (["run", "--kernel", "debian:9.9"], "valid: debian:6.12, debian:7.2, debian:7.3"),
    (["run", "--kernel", "/nonexistent/tree"], "not a path"),
    (["run", "--page-sizes", "4k,8k"], "unknown page size 8k; valid: 4k, 16k, 64k"),
    (["run", "--fs", "btrfs"], "unknown filesystem btrfs; valid: ext4, xfs, erofs"),
    (["run", "--checks", "nope"], "unknown check nope"),
    (["run", "--variant", "fast"], "unknown variant fast"),
])
def test_usage_errors(argv, msg, capsys):
    assert main(argv) == 2
    assert msg in capsys.readouterr().err


def test_not_a_kernel_tree(tmp_path, capsys):
    assert main(["run", "--kernel", str(tmp_path)]) == 2
    assert "is not a kernel tree" in capsys.readouterr().err


def test_bad_option_is_usage_error(capsys):
    assert main(["run", "--bogus"]) == 2


def test_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "exec-text" in out and "debian:7.3" in out


@pytest.mark.parametrize("argv,msg", [
    (["run", "--series", "/nonexistent/s.mbox"], "is not a file, a directory or a git range"),
    (["run", "--series", "v7.2..v7.3"], "needs --kernel PATH"),
    (["run", "--series", "x.mbox", "--compare", "debian:6.12"], "give one"),
    (["run", "--each-commit"], "need --series"),
    (["run", "--compare", "debian:1.0"], "unknown kernel"),
])
def test_series_usage_errors(argv, msg, capsys):
    assert main(argv) == 2
    assert msg in capsys.readouterr().err


def test_empty_mbox_is_refused_before_anything_runs(tmp_path, capsys):
    box = tmp_path / "empty.mbox"
    box.write_text("")
    assert main(["run", "--series", str(box), "--results", str(tmp_path / "r")]) == 2
    assert "is empty" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_the_checks_page_has_the_guarded_figures_table_as_the_data_says():
    from foliofarm.cli import figures_table
    page = (Path(__file__).resolve().parent.parent / "docs" / "checks.md").read_text()
    assert figures_table() in page, "docs/checks.md's guarded-figures table is stale: paste `foliofarm figures`"


@pytest.mark.parametrize("case,argv,msg", [
    ("guests zero", ["run", "--guests", "0"], "not a whole number of at least 1"),
    ("guests text", ["run", "--guests", "two"], "not a whole number of at least 1"),
    ("boot timeout negative", ["run", "--boot-timeout", "-5"], "not a number of seconds above 0"),
    ("boot timeout nan", ["run", "--boot-timeout", "nan"], "not a number of seconds above 0"),
    ("boot timeout text", ["run", "--boot-timeout", "soon"], "not a number of seconds above 0"),
    ("accel", ["run", "--accel", "hvf"], "invalid choice"),
    ("numa nodes zero", ["run", "--numa-nodes", "0"], "not a whole number of at least 1"),
    ("numa nodes past memory", ["run", "--numa-nodes", "4", "--memory", "1024"],
     "4 NUMA nodes need at least 2048 MB of guest memory"),
    ("results is a file", ["run", "--results", "{file}"], "a file is in the way"),
    ("results under a file", ["run", "--results", "{file}/sub"], "part of the path is a file"),
    ("series dir of non-patches", ["run", "--series", "{dir}"], "has no .patch/.diff/.mbox"),
    ("series fifo", ["run", "--series", "{fifo}"], "is not a file, a directory or a git range"),
    ("series not a patch", ["run", "--series", "{file}"], "is not an mbox, a mail or a diff"),
    ("coverage without a series", ["run", "--coverage"], "--coverage measures which of a series' lines ran"),
    ("coverage with another variant", ["run", "--coverage", "--variant", "debug", "--series",
                                       "examples/series/benign.mbox"], "drop --variant debug"),
])
def test_bad_option_values_exit_2_and_say_what_to_fix(case, argv, msg, tmp_path, capsys):
    """Each option's bad value: exit 2 before anything is built, with what to fix."""
    import os
    (tmp_path / "notes.txt").write_text("not a patch\n")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "README").write_text("hello\n")
    os.mkfifo(tmp_path / "fifo")
    fill = {"file": str(tmp_path / "notes.txt"), "dir": str(tmp_path / "dir"),
            "fifo": str(tmp_path / "fifo")}
    argv = [a.format(**fill) for a in argv]
    if "--results" not in argv:
        argv += ["--results", str(tmp_path / "results")]
    assert main(argv) == 2, case
    assert msg in capsys.readouterr().err, case
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("foliofarm ")


@pytest.mark.parametrize("globs,want", [
    ("64k-*", {"64k-ext4", "64k-xfs", "64k-erofs"}),
    ("*-xfs", {"4k-xfs", "16k-xfs", "64k-xfs"}),
    ("4k-ext4,16k-erofs", {"4k-ext4", "16k-erofs"}),
    ("*", None),
])
def test_cell_globs(globs, want):
    from foliofarm import matrix
    pages, fss, cells = matrix.select_cells(globs, list(matrix.page_sizes().values()),
                                            list(matrix.filesystems().values()))
    all9 = {f"{p}-{f}" for p in ("4k", "16k", "64k") for f in ("ext4", "xfs", "erofs")}
    assert cells == (want or all9)
    assert {p.name for p in pages} == {c.split("-")[0] for c in cells}
    assert {f.name for f in fss} == {c.split("-")[1] for c in cells}


@pytest.mark.parametrize("argv,msg", [
    (["run", "--cells", "128k-*"], "matches no cell; cells: 4k-ext4"),
    (["run", "--page-sizes", "4k", "--cells", "64k-xfs"], "matches no cell; cells: 4k-ext4, 4k-xfs, 4k-erofs"),
    (["run", "-K", "CONFIG_FOO"], "write it CONFIG_NAME=VALUE"),
    (["run", "-K", "FOO=y"], "write it CONFIG_NAME=VALUE"),
    (["run", "--cpus", "0"], "not a whole number of at least 1"),
    (["run", "--memory", "lots"], "not a whole number of at least 1"),
    (["run", "--jobs", "-2"], "not a whole number of at least 1"),
])
def test_selection_and_machine_options_bad_values(argv, msg, capsys, tmp_path):
    assert main(argv + ["--results", str(tmp_path / "r")]) == 2
    assert msg in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_dry_run_says_what_it_would_do_and_does_nothing(capsys, tmp_path):
    code = main(["run", "--dry-run", "--cells", "64k-*,4k-xfs", "-K", "CONFIG_KASAN=y",
                 "--cpus", "2", "--results", str(tmp_path / "r")])
    assert code == 0
    out = capsys.readouterr()
    text = " ".join((out.out + out.err).split())
    assert "cells: 4k-xfs, 64k-ext4, 64k-xfs, 64k-erofs" in text
    assert "16k" not in text.split("cells:")[0].split("kernel debian:7.3")[1]
    assert "2 vCPU(s)" in text and "CONFIG_KASAN=y" in text
    assert not (tmp_path / "r").exists()


CORRUPT = """From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: A Developer <dev@example.org>
Subject: [PATCH {n}/2] mm/filemap: {what}

Words.
---
 mm/filemap.c | 1 +
 1 file changed, 1 insertion(+)

diff --git a/mm/filemap.c b/mm/filemap.c
{diff}
--
2.39.5

"""
GOOD_DIFF = "--- a/mm/filemap.c\n+++ b/mm/filemap.c\n@@ -1,3 +1,4 @@\n a\n+b\n c\n d\n"


@pytest.mark.parametrize("diff,says", [
    ("asdkjh qweqwe\nzzzz", "No valid patches in input"),       # a header, then garbage
    ("", "No valid patches in input"),                          # a header and nothing else
    ("--- a/mm/filemap.c\n+++ b/mm/filemap.c\n@@ -1,3 +1,4 @@\n a\n+b\ngarbage\n", "corrupt patch"),
])
def test_a_corrupt_patch_is_refused_at_intake_naming_it(tmp_path, capsys, diff, says):
    """Known with no tree: refused before any download, in --dry-run too,
    with the patch's number and subject."""
    box = tmp_path / "s.mbox"
    box.write_text(CORRUPT.format(n=1, what="fine", diff=GOOD_DIFF)
                   + CORRUPT.format(n=2, what="broken", diff=diff))
    for extra in ([], ["--dry-run"]):
        assert main(["run", "--series", str(box), "--results", str(tmp_path / "r"), *extra]) == 2
        err = capsys.readouterr().err
        assert "patch 2/2 'mm/filemap: broken'" in err and says in err, err
        assert not (tmp_path / "r").exists()


def test_dry_run_shows_the_series_as_read(capsys, tmp_path):
    box = tmp_path / "s.mbox"
    box.write_text(CORRUPT.format(n=2, what="second", diff=GOOD_DIFF)
                   + CORRUPT.format(n=1, what="first", diff=GOOD_DIFF)
                   + CORRUPT.format(n=1, what="first", diff=GOOD_DIFF).replace("[PATCH 1/2]", "Re: [PATCH 1/2]"))
    assert main(["run", "--dry-run", "--series", str(box), "--results", str(tmp_path / "r")]) == 0
    out = capsys.readouterr()
    text = " ".join((out.out + out.err).split())
    assert "1/2 mm/filemap: first (touches mm/filemap.c) 2/2 mm/filemap: second" in text, text
    assert "left out: 1 reply left out" in text
    assert "base-commit: none given" in text
    assert "would build base + series" in text


@pytest.mark.parametrize("cores,gib,memory_mb,want", [
    (2, 24, 4096, 3),      # this farm's machines: cores + 1
    (1, 24, 4096, 2),
    (16, 64, 4096, 9),     # no fixed cap: 64 GiB less 17 own guests' and 16 make jobs' holds nine
    (32, 256, 4096, 33),   # cores + 1 where the memory holds them
    (2, 16, 4096, 3),      # 16 GiB: 12 GiB left beside the own guests and a build
    (2, 24, 8192, 2),      # large guests: memory decides
    (2, 4, 8192, 1),       # never below one
])
def test_tree_guests_default_follows_cores_and_memory(monkeypatch, cores, gib, memory_mb, want):
    monkeypatch.setattr(options.os, "cpu_count", lambda: cores)
    monkeypatch.setattr(locks.os, "sysconf", lambda name: {"SC_PHYS_PAGES": gib << 18,
                                                        "SC_PAGE_SIZE": 4096}[name])
    assert options.default_tree_guests(memory_mb) == want
    assert options.default_guests() == cores + 1      # the own checks' guests touch little memory


def test_boot_with_picks_the_booter_and_runner_is_its_old_name():
    from foliofarm.cli import parser
    ap = parser()
    assert ap.parse_args(["run"]).boot_with == "qemu"
    assert ap.parse_args(["run", "--boot-with", "vng"]).boot_with == "vng"
    assert ap.parse_args(["run", "--runner", "vng"]).boot_with == "vng"     # a repro.sh of before
    with pytest.raises(SystemExit):
        ap.parse_args(["run", "--boot-with", "lava"])                   # a lab is --lab URL
    assert "--runner" not in ap._subparsers._group_actions[0].choices["run"].format_help()


def test_a_lab_and_vng_are_two_booters_not_one(capsys):
    """--lab boots the own checks in a lab, --boot-with vng here: both is refused,
    before the lab is asked anything."""
    code = main(["run", "--lab", "http://127.0.0.1:9/", "--boot-with", "vng", "--dry-run"])
    assert code == 2
    assert "--lab boots the farm's own checks in the lab: give it without --boot-with" in capsys.readouterr().err
