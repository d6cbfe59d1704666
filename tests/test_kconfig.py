"""Fragment parsing and verification against a tiny fake kernel tree."""

from pathlib import Path

import pytest

from foliofarm.kernel import kconfig
from foliofarm.errors import ConfigError
from foliofarm.paths import KERNEL_CONFIGS


def fake_tree(tmp_path: Path) -> Path:
    (tmp_path / "fs" / "erofs").mkdir(parents=True)
    (tmp_path / "Kconfig").write_text("config EXT4_FS\n\ttristate \"ext4\"\n"
                                      "config MISC_FILESYSTEMS\n\tbool \"misc\"\n")
    (tmp_path / "fs" / "erofs" / "Kconfig").write_text(
        "config EROFS_FS\n\ttristate \"EROFS\"\n\tdepends on BLOCK\n\tdepends on MISC_FILESYSTEMS\n"
        "menuconfig PROC_SYSCTL\n\tbool \"sysctl\"\n")
    return tmp_path


def fragment(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "frag.config"
    p.write_text(text)
    return p


def test_parse_fragment_reads_values_and_optional(tmp_path):
    reqs = kconfig.parse_fragment(fragment(tmp_path, (
        "# comment\nCONFIG_EXT4_FS=y\n# CONFIG_SWAP is not set\n"
        "# foliofarm: optional CONFIG_GONE removed in 7.x\nCONFIG_GONE=y\nCONFIG_HZ=250\n")))
    assert [(r.symbol, r.value, r.optional) for r in reqs] == [
        ("CONFIG_EXT4_FS", "y", None), ("CONFIG_SWAP", "n", None),
        ("CONFIG_GONE", "y", "removed in 7.x"), ("CONFIG_HZ", "250", None)]


def test_parse_fragment_rejects_garbage(tmp_path):
    with pytest.raises(ConfigError, match="frag.config:2"):
        kconfig.parse_fragment(fragment(tmp_path, "CONFIG_A=y\nEXT4=y\n"))


def test_optional_for_unset_symbol_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match="CONFIG_NOPE"):
        kconfig.parse_fragment(fragment(tmp_path, "# foliofarm: optional CONFIG_NOPE x\n"))


def test_verify_names_dropped_symbol_fragment_and_dependency(tmp_path):
    tree = fake_tree(tmp_path / "tree")
    reqs = kconfig.parse_fragment(fragment(tmp_path, "CONFIG_EXT4_FS=y\nCONFIG_EROFS_FS=y\n"))
    final = "CONFIG_EXT4_FS=y\n# CONFIG_EROFS_FS is not set\n"
    with pytest.raises(ConfigError) as exc:
        kconfig.verify(final, reqs, tree)
    msg = str(exc.value)
    assert "CONFIG_EROFS_FS=y from frag.config" in msg
    assert "depends on BLOCK && MISC_FILESYSTEMS" in msg
    assert "CONFIG_EXT4_FS" not in msg


def test_verify_unknown_symbol_without_optional_is_an_error(tmp_path):
    tree = fake_tree(tmp_path / "tree")
    reqs = kconfig.parse_fragment(fragment(tmp_path, "CONFIG_READ_ONLY_THP_FOR_FS=y\n"))
    with pytest.raises(ConfigError, match="no such symbol"):
        kconfig.verify("", reqs, tree)


def test_verify_optional_symbol_absent_from_kernel_is_reported_not_fatal(tmp_path):
    tree = fake_tree(tmp_path / "tree")
    reqs = kconfig.parse_fragment(fragment(
        tmp_path, "# foliofarm: optional CONFIG_READ_ONLY_THP_FOR_FS gone in 7.x\n"
                  "CONFIG_READ_ONLY_THP_FOR_FS=y\n"))
    v = kconfig.verify("", reqs, tree)
    assert [r.symbol for r in v.absent_optional] == ["CONFIG_READ_ONLY_THP_FOR_FS"]


def test_verify_optional_symbol_present_but_dropped_is_still_an_error(tmp_path):
    tree = fake_tree(tmp_path / "tree")
    reqs = kconfig.parse_fragment(fragment(
        tmp_path, "# foliofarm: optional CONFIG_PROC_SYSCTL gone in 7.x\nCONFIG_PROC_SYSCTL=y\n"))
    with pytest.raises(ConfigError, match="CONFIG_PROC_SYSCTL"):
        kconfig.verify("", reqs, tree)


def test_project_fragments_parse():
    for frag in KERNEL_CONFIGS.glob("*.config"):
        assert kconfig.parse_fragment(frag), frag


def test_configuration_inputs_digest_follows_kconfig_not_code(tmp_path):
    """A series that edits code keeps the digest (the configuration steps are
    skipped); one that edits a Kconfig file, the kconfig programs or a script
    Kconfig runs changes it (they run again)."""
    from foliofarm.kernel.kconfig import inputs_digest
    files = {"Kconfig": "source \"mm/Kconfig\"\n", "mm/Kconfig": "config MMU\n\tbool\n",
             "mm/filemap.c": "int x;\n", "scripts/kconfig/conf.c": "int main;\n",
             "scripts/cc-version.sh": "echo 14\n", "scripts/Kconfig.include": "cc := gcc\n",
             "scripts/checkpatch.pl": "1;\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    first = inputs_digest(tmp_path)
    for name in ("mm/filemap.c", "scripts/checkpatch.pl"):
        (tmp_path / name).write_text("changed\n")
        assert inputs_digest(tmp_path) == first, name
    for name in ("mm/Kconfig", "scripts/kconfig/conf.c", "scripts/cc-version.sh",
                 "scripts/Kconfig.include"):
        before = inputs_digest(tmp_path)
        (tmp_path / name).write_text(files[name] + "# changed\n")
        assert inputs_digest(tmp_path) != before, name
    (tmp_path / "arch" / "arm64").mkdir(parents=True)
    before = inputs_digest(tmp_path)
    (tmp_path / "arch" / "arm64" / "Kconfig").write_text("config ARM64\n\tdef_bool y\n")
    assert inputs_digest(tmp_path) != before


def test_configuration_inputs_walked_once_per_tree_state(tmp_path, monkeypatch):
    """The page sizes of a series build at once from one tree: its Kconfig
    files are walked once, and again after a commit changes them."""
    import subprocess
    from foliofarm.intake.source import KernelSource
    from foliofarm.kernel import build, kconfig
    t = tmp_path / "linux"
    (t / "mm").mkdir(parents=True)
    (t / "mm" / "Kconfig").write_text("config MMU\n\tbool\n")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}

    def git(*args):
        subprocess.run(["git", "-C", str(t), *args], check=True, capture_output=True, env=env)
    git("init", "-q")
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    walks = []
    real = kconfig.inputs_digest
    monkeypatch.setattr(kconfig, "inputs_digest", lambda tree: walks.append(tree) or real(tree))
    src = KernelSource(spec="debian:7.3", tree=t, version="7.3.4", origin="test")
    b = build.Builder(tmp_path / "cache")
    first = {b.config_inputs(src) for _ in range(3)}
    assert len(first) == 1 and len(walks) == 1
    (t / "mm" / "Kconfig").write_text("config MMU\n\tdef_bool y\n")
    git("commit", "-q", "-am", "mm: MMU always")
    assert b.config_inputs(src) not in first and len(walks) == 2
