"""The probe modules are rebuilt only when what kbuild's own records say they
are made of changed: replayed on the .cmd records of a real build directory
(tests/data/kbuild, from a 7.3 4K build), moved under tmp_path."""

import os
import shutil
from pathlib import Path

import pytest

from foliofarm.kernel import modules
from foliofarm.kernel.build import Builder
from foliofarm.paths import VMTESTS
from foliofarm.kernel.modules import MODULE_STAMP, cmd_dependencies, module_inputs

DATA = Path(__file__).parent / "data" / "kbuild"
# where the recorded build lived
REC_BDIR = "/root/.cache/foliofarm/build/7.3-4k-default-e862df89-08e77de46314c801-8cb639e0"
REC_TREE = "/root/.cache/foliofarm/src/linux-source-7.3_7.3.4-1~bpo13+1/linux"


def test_dependencies_of_a_real_compile_record():
    deps = cmd_dependencies((DATA / "ffprobe.o.cmd").read_text())
    assert "ffprobe.c" in deps and "ffprobe.h" in deps
    assert f"{REC_TREE}/include/linux/mm.h" in deps
    # a Kconfig symbol's file: kbuild touches it when the symbol's value changes
    assert "include/config/CC_VERSION_TEXT" in deps
    assert not [d for d in deps if d.startswith(("$(", "\\")) or d.endswith(")")]


def test_dependencies_of_real_link_and_modpost_records():
    link = cmd_dependencies((DATA / "ffprobe.ko.cmd").read_text())
    assert f"{REC_BDIR}/scripts/module.lds" in link
    assert {"ffprobe.o", "ffprobe.mod.o", ".module-common.o"} <= set(link)
    post = cmd_dependencies((DATA / "Module.symvers.cmd").read_text())
    assert f"{REC_BDIR}/scripts/mod/modpost" in post and f"{REC_BDIR}/Module.symvers" in post


def moved_build(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The recorded records in a build directory under tmp_path, their tree
    there too, with the files they name that these tests change."""
    bdir, tree = tmp_path / "build", tmp_path / "linux"
    mdir = bdir / "ffprobe"
    mdir.mkdir(parents=True)
    for f in DATA.glob("*.cmd"):
        text = f.read_text().replace(REC_BDIR, str(bdir)).replace(REC_TREE, str(tree))
        (mdir / f".{f.name}").write_text(text)
    for rel in ("include/linux/mm.h", "include/linux/kconfig.h"):
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(f"/* {rel} */\n")
    (mdir / "ffprobe.c").write_text("/* probe */\n")
    (mdir / "ffprobe.h").write_text("/* probe header */\n")
    (bdir / "scripts").mkdir()
    (bdir / "scripts/module.lds").write_text("SECTIONS {}\n")
    (bdir / "Module.symvers").write_text("0x00000000\tfilemap_get_folio\tvmlinux\tEXPORT_SYMBOL\t\n")
    (bdir / ".config").write_text("CONFIG_MODULES=y\n")
    return bdir, mdir, tree


def later(path: Path) -> None:
    """Rewrite a file as a checkout does: same content, a new modification time."""
    st = path.stat()
    path.write_bytes(path.read_bytes())
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_inputs_key_stays_while_nothing_the_modules_use_changes(tmp_path):
    bdir, mdir, tree = moved_build(tmp_path)
    key = module_inputs(bdir, mdir, "gcc 12")
    assert key == module_inputs(bdir, mdir, "gcc 12")
    # a kernel build rewrites Module.symvers and relinks: same content, same key
    later(bdir / "Module.symvers")
    # a file of the kernel the modules do not include (the series' mm/filemap.c)
    (tree / "mm").mkdir()
    (tree / "mm/filemap.c").write_text("changed\n")
    # the outputs themselves are not inputs
    (mdir / "ffprobe.ko").write_bytes(b"\x7fELF new")
    (mdir / "ffprobe.o").write_bytes(b"\x7fELF new")
    assert module_inputs(bdir, mdir, "gcc 12") == key


@pytest.mark.parametrize("change", ["header", "own header", "symbol file", "symvers", "config",
                                    "linker script", "record", "toolchain"])
def test_inputs_key_moves_with_each_input(tmp_path, change):
    bdir, mdir, tree = moved_build(tmp_path)
    toolchain = "gcc 12"
    key = module_inputs(bdir, mdir, toolchain)
    if change == "header":
        later(tree / "include/linux/mm.h")
    elif change == "own header":
        later(mdir / "ffprobe.h")
    elif change == "symbol file":      # syncconfig creates it when CC_VERSION_TEXT changes
        (bdir / "include/config").mkdir(parents=True)
        (bdir / "include/config/CC_VERSION_TEXT").write_text("")
    elif change == "symvers":
        with open(bdir / "Module.symvers", "a") as f:
            f.write("0x00000000\tnew_export\tvmlinux\tEXPORT_SYMBOL\t\n")
    elif change == "config":
        (bdir / ".config").write_text("CONFIG_MODULES=y\nCONFIG_NUMA=y\n")
    elif change == "linker script":
        (bdir / "scripts/module.lds").write_text("SECTIONS { .x : {} }\n")
    elif change == "record":       # a different command line (say, another -D)
        cmd = mdir / ".ffprobe.o.cmd"
        cmd.write_text(cmd.read_text().replace("-nostdinc", "-nostdinc -DFOO", 1))
    else:
        toolchain = "gcc 13"
    assert module_inputs(bdir, mdir, toolchain) != key


def test_no_records_no_key(tmp_path):
    (tmp_path / "ffprobe").mkdir()
    assert module_inputs(tmp_path, tmp_path / "ffprobe", "gcc") is None


class Made(Exception):
    pass


def test_build_probe_runs_make_only_when_inputs_changed(tmp_path, monkeypatch):
    bdir, mdir, tree = moved_build(tmp_path)
    builder = Builder(tmp_path / "cache")
    makes = []

    def make(source, bdir_, env, logf, *targets, jobs_=None):
        makes.append(targets)
        for m in modules.MODULES:
            (mdir / m).write_bytes(b"\x7fELF")

    monkeypatch.setattr(builder, "_make", make)
    logf = tmp_path / "build.log"
    builder._build_probe(None, bdir, {}, logf)          # never built with a stamp: make
    assert len(makes) == 1 and (builder.host_dir(bdir) / MODULE_STAMP).is_file()
    builder._build_probe(None, bdir, {}, logf)          # nothing changed: kept
    assert len(makes) == 1
    later(tree / "include/linux/mm.h")                  # a header it includes: make
    builder._build_probe(None, bdir, {}, logf)
    assert len(makes) == 2
    (mdir / "ffsplat.ko").unlink()                      # an output gone: make
    builder._build_probe(None, bdir, {}, logf)
    assert len(makes) == 3


def test_a_failed_make_leaves_no_stamp(tmp_path, monkeypatch):
    bdir, mdir, tree = moved_build(tmp_path)
    builder = Builder(tmp_path / "cache")
    monkeypatch.setattr(builder, "_make", lambda *a, **k: None)
    builder._build_probe(None, bdir, {}, tmp_path / "log")
    for m in modules.MODULES:
        (mdir / m).write_bytes(b"\x7fELF")
    builder._build_probe(None, bdir, {}, tmp_path / "log")    # make ran before: stamp now
    assert (builder.host_dir(bdir) / MODULE_STAMP).is_file()
    later(mdir / "ffprobe.h")

    def fails(*a, **k):
        raise Made("make killed")

    monkeypatch.setattr(builder, "_make", fails)
    with pytest.raises(Made):
        builder._build_probe(None, bdir, {}, tmp_path / "log")
    assert not (builder.host_dir(bdir) / MODULE_STAMP).exists()


def test_links_a_build_planted_never_steer_the_probes_sources(tmp_path, monkeypatch):
    """A series' build may leave a link where the host writes the probe's
    sources: the link is replaced, the host file it named is untouched; a link
    in place of the probe's folder itself is refused, naming it."""
    from foliofarm.errors import InfraError
    bdir, mdir, tree = moved_build(tmp_path)
    builder = Builder(tmp_path / "cache")
    monkeypatch.setattr(builder, "_make", lambda *a, **k: None)
    host_file = tmp_path / "host-file"
    host_file.write_text("the host's\n")
    (mdir / "Kbuild").symlink_to(host_file)
    builder._build_probe(None, bdir, {}, tmp_path / "log")
    assert host_file.read_text() == "the host's\n"
    assert not (mdir / "Kbuild").is_symlink() and (mdir / "Kbuild").read_bytes() == (
        VMTESTS / "Kbuild").read_bytes()
    host_dir = tmp_path / "host-dir"
    host_dir.mkdir()
    shutil.rmtree(mdir)
    mdir.symlink_to(host_dir)
    with pytest.raises(InfraError, match="symbolic link"):
        builder._build_probe(None, bdir, {}, tmp_path / "log")
    assert list(host_dir.iterdir()) == []
