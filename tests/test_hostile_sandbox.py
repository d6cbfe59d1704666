"""Series written to attack the sandbox itself, built for real (one cell, the
farm run as whoever runs the tests: root in CI; tests/test_sandbox.py runs
the sandbox's own probes as root and as uid 65534). Each asserts that nothing
happened on the host and that the run ended with a verdict or a clear error:

- privilege: its mm/Makefile remounts its read-only tree and ccache
  read-write, mounts, makes a device node, writes a git hook: all refused,
  CapEff 0 inside, nothing planted in the tree, its .git or ccache;
- links where the host once kept its files in the build directory (the build
  log, its metadata) and at the probe's sources (ffprobe/Kbuild): the host
  files they name are untouched;
- a link to /etc/passwd as the build log, and a failing build: no line of it
  in results.json or report.txt;
- `--each-commit`: commit 1 turns the configuration's scratch folder into a
  link to a host folder, the tip reconfigures: the host folder stays empty;
- a link in place of the probe's whole folder: refused by name, no host file
  written;
- totals: a build that forks without end, one that allocates without end
  and one that fills its /tmp, each stopped with its reason in results.json.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from foliofarm import cgroups
from foliofarm.intake import source
from foliofarm.paths import ROOT, cache_dir

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_hostile_series import base_file, diff  # noqa: E402

pytestmark = pytest.mark.integration

RUN = ["--kernel", "debian:7.3", "--cells", "4k-ext4", "--checks", "exec-text"]


@pytest.fixture(scope="module")
def tree() -> Path:
    return source.resolve("debian:7.3", cache_dir()).tree


def mail(tree: Path, subject: str, changes: dict[str, str], n: int = 1, total: int = 1) -> str:
    prefix = "[PATCH]" if total == 1 else f"[PATCH {n}/{total}]"
    return ("From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
            "From: Mallory <mallory@evil.example>\nDate: Mon, 23 Nov 2026 00:00:00 +0000\n"
            f"Subject: {prefix} {subject}\n\n{subject}.\n\nSigned-off-by: Mallory "
            "<mallory@evil.example>\n---\n" + diff(tree, changes) + "-- \n2.39.5\n\n")


def makefile(tree: Path, *lines: str) -> dict[str, str]:
    """mm/Makefile with ``lines`` added: make functions run in the build's sandbox."""
    return {"mm/Makefile": base_file(tree, "mm/Makefile") + "\n" + "\n".join(lines) + "\n"}


def farm(tmp: Path, box: Path, *extra: str, env: dict[str, str] | None = None
         ) -> tuple[int, dict, str]:
    results = tmp / "results"
    p = subprocess.run([sys.executable, "-m", "foliofarm", "run", *RUN, *extra,
                        "--series", str(box), "--results", str(results)],
                       cwd=ROOT, env={**os.environ, **(env or {})}, capture_output=True, text=True,
                       timeout=3600)
    doc = json.loads((results / "latest" / "results.json").read_text())
    return p.returncode, doc, p.stderr


def series_kernel(doc: dict) -> dict:
    [k] = [k for k in doc["kernels"] if k["side"] == "series"]
    return k


def series_log(doc: dict) -> str:
    k = series_kernel(doc)
    assert not k.get("build_failed"), k.get("error")
    return (Path(k["artifacts"]) / "build.log").read_text(errors="replace")


def passed(doc: dict) -> bool:
    """Every verdict of the run is pass (exec-text and the boot's console), and there is one."""
    return bool(doc["verdicts"]) and all(v["verdict"] == "pass" for v in doc["verdicts"])


def untouched(files: dict[Path, str]) -> None:
    for f, text in files.items():
        assert f.read_text() == text, f"the host file {f} was written through a link"


def test_a_build_holds_no_privilege_whoever_runs_the_farm(tmp_path, tree):
    token = secrets.token_hex(6)
    ccache = cache_dir() / "ccache"
    box = tmp_path / "privilege.mbox"
    box.write_text(mail(tree, "mm: a series that tries to be root", makefile(
        tree,
        "$(info FF-CAPS=[$(shell grep CapEff /proc/self/status)])",
        "$(info FF-NNP=[$(shell grep NoNewPrivs /proc/self/status)])",
        "$(info FF-REMOUNT-TREE=[$(shell mount -o remount,bind,rw $(srctree) >/dev/null 2>&1 "
        "&& echo done || echo refused)])",
        "$(info FF-REMOUNT-CCACHE=[$(shell mount -o remount,bind,rw $(CCACHE_DIR) >/dev/null 2>&1 "
        "&& echo done || echo refused)])",
        "$(info FF-MOUNT=[$(shell mkdir -p $(objtree)/ffmnt; mount -t tmpfs none $(objtree)/ffmnt "
        ">/dev/null 2>&1 && echo done || echo refused)])",
        "$(info FF-MKNOD=[$(shell mknod $(objtree)/ffmem c 1 1 >/dev/null 2>&1 && echo done || echo refused)])",
        f"$(info FF-HOOK=[$(shell echo 'touch /tmp/ff-hook-{token}' > $(srctree)/.git/hooks/post-checkout "
        "2>/dev/null && echo done || echo refused)])",
        f"$(info FF-TREE=[$(shell touch $(srctree)/ff-{token} 2>/dev/null && echo done || echo refused)])",
        f"$(info FF-CCACHE=[$(shell touch $(CCACHE_DIR)/ff-{token} 2>/dev/null && echo done || echo refused)])",
    )))
    rc, doc, err = farm(tmp_path, box)
    assert rc == 0, err[-3000:]
    log = series_log(doc)
    assert "FF-CAPS=[CapEff:\t0000000000000000]" in log, log[-3000:]
    assert "FF-NNP=[NoNewPrivs:\t1]" in log
    for what in ("REMOUNT-TREE", "REMOUNT-CCACHE", "MOUNT", "MKNOD", "HOOK", "TREE", "CCACHE"):
        assert f"FF-{what}=[refused]" in log, (what, log[-3000:])
    assert not (tree / f"ff-{token}").exists() and not (ccache / f"ff-{token}").exists()
    assert not (tree / ".git" / "hooks" / "post-checkout").exists()
    assert passed(doc)


def test_links_planted_in_the_build_directory_steer_no_host_write(tmp_path, tree):
    host = tmp_path / "host"
    host.mkdir()
    files = {host / n: f"the host's {n}\n" for n in ("log", "json", "kbuild", "key")}
    for f, text in files.items():
        f.write_text(text)
    box = tmp_path / "links.mbox"
    box.write_text(mail(tree, "mm: a series that plants links", makefile(
        tree,
        f"$(shell ln -sfn {host}/log $(objtree)/foliofarm-build.log)",
        f"$(shell ln -sfn {host}/json $(objtree)/foliofarm-build.json)",
        f"$(shell ln -sfn {host}/key $(objtree)/foliofarm-kconfig.key)",
        f"$(shell mkdir -p $(objtree)/ffprobe; ln -sfn {host}/kbuild $(objtree)/ffprobe/Kbuild)",
        f"$(shell ln -sfn {host}/key $(objtree)/ffprobe/foliofarm-modules.key)",
    )))
    rc, doc, err = farm(tmp_path, box)
    assert rc == 0, err[-3000:]
    untouched(files)
    assert sorted(p.name for p in host.iterdir()) == sorted(f.name for f in files)
    assert passed(doc)


def test_a_failing_build_with_its_log_linked_to_passwd_publishes_no_host_line(tmp_path, tree):
    box = tmp_path / "passwd.mbox"
    box.write_text(mail(tree, "mm: a series that fails with its log a link", makefile(
        tree,
        "$(shell ln -sfn /etc/passwd $(objtree)/foliofarm-build.log)",
        "$(shell ln -sfn /etc/passwd $(objtree)/.config.old)",
        "$(error FF-FAILS on purpose)",
    )))
    rc, doc, err = farm(tmp_path, box)
    assert rc == 1, err[-3000:]
    k = series_kernel(doc)
    assert k["build_failed"] and "FF-FAILS on purpose" in k["error"]
    run_dir = (tmp_path / "results" / "latest").resolve()
    passwd = Path("/etc/passwd").read_text().splitlines()[0]
    for name in ("results.json", "report.txt"):
        assert passwd not in (run_dir / name).read_text(), f"/etc/passwd's first line in {name}"


def test_each_commit_a_link_to_a_host_folder_is_never_bound_into_the_next_build(tmp_path, tree):
    host = tmp_path / "host-dir"
    host.mkdir()
    one = mail(tree, "mm: plant a link for the next commit", makefile(
        tree, "$(shell rm -rf $(objtree)/foliofarm-kconfig; "
              f"ln -sfn {host} $(objtree)/foliofarm-kconfig)"), 1, 2)
    kconfig = base_file(tree, "mm/Kconfig") + "\n# a comment: the tip configures again\n"
    two = mail(tree, "mm: a Kconfig comment", {"mm/Kconfig": kconfig}, 2, 2)
    # the second patch applies over the first (its Makefile change stays)
    box = tmp_path / "each.mbox"
    box.write_text(one + two)
    rc, doc, err = farm(tmp_path, box, "--each-commit")
    assert rc == 0, err[-3000:]
    assert list(host.iterdir()) == [], "the host folder was bound into a build and written"
    assert passed(doc)


def test_a_link_in_place_of_the_probes_folder_is_refused_by_name(tmp_path, tree):
    host = tmp_path / "host-dir"
    host.mkdir()
    box = tmp_path / "probe.mbox"
    box.write_text(mail(tree, "mm: a series that swaps the probe's folder", makefile(
        tree, f"$(shell rm -rf $(objtree)/ffprobe; ln -sfn {host} $(objtree)/ffprobe)")))
    rc, doc, err = farm(tmp_path, box)
    assert rc in (1, 3), err[-3000:]
    assert list(host.iterdir()) == []
    said = json.dumps(doc)
    assert "ffprobe" in said and "symbolic link" in said, said[-3000:]


LIMITED = [
    ("forks", {"FOLIOFARM_SANDBOX_TASKS": "300"},
     ["$(shell sh -c 'while :; do sleep 1000 & done' >/dev/null 2>&1)"],
     "limit of 300 tasks"),
    ("allocates", {"FOLIOFARM_SANDBOX_MEMORY_MB": "1536"},
     ["$(shell for i in 1 2 3 4; do python3 -c 'import time; a = b\"x\" * (700 << 20); "
      "time.sleep(600)' & done; wait)"],
     "memory limit of 1536 MB"),
    ("fills-tmp", {"FOLIOFARM_SANDBOX_TMP_MB": "64"},
     ["FF_FILL := $(shell head -c 256M /dev/zero 2>&1 > /tmp/ff-fill || echo full)",
      "$(if $(FF_FILL),$(error FF /tmp: $(FF_FILL)))"],
     "filled its /tmp"),
    # 300,000 empty files: a limit of inodes (a file system of its own as root,
    # counted by the walk as a user); the C file's object cannot be written
    ("inodes", {"FOLIOFARM_SERIES_INODES": "20000"},
     ["$(shell mkdir -p $(objtree)/ffbomb && cd $(objtree)/ffbomb && seq 1 300000 | xargs touch "
      ">/dev/null 2>&1)"],
     "files and directories"),
    # five 2 GB files, unlinked and held open by processes left running: no
    # walk finds them; the file system (root) or the disk's free space (a user) does
    ("unlinked", {"FOLIOFARM_SERIES_DISK_MB": "1024"},
     ["$(shell for i in 1 2 3 4 5; do (exec 3>$(objtree)/ffbig$$i; rm -f $(objtree)/ffbig$$i; "
      "head -c 2G /dev/zero >&3; sleep 1000) >/dev/null 2>&1 & done; sleep 20)"],
     "MB of disk"),
]


@pytest.mark.parametrize("name,env,lines,said", LIMITED, ids=[x[0] for x in LIMITED])
def test_a_build_over_a_total_is_stopped_with_its_reason(tmp_path, tree, name, env, lines, said):
    if name == "allocates" and not cgroups.available():   # without one, per process only
        pytest.skip(f"no cgroup for the farm on this host: {cgroups.why_not()}")
    box = tmp_path / f"{name}.mbox"
    changes = makefile(tree, *lines)
    # a C file changed too: its object is written after the Makefile's functions ran
    changes["mm/mempool.c"] = base_file(tree, "mm/mempool.c") + f"\n/* foliofarm: {name} */\n"
    box.write_text(mail(tree, f"mm: a series that {name}", changes))
    rc, doc, err = farm(tmp_path, box, env=env)
    assert rc == 1, err[-3000:]
    k = series_kernel(doc)
    assert k["build_failed"] and said in k["error"], k["error"][-2000:]
    if name == "inodes":        # the limit named, not "disk or inodes"
        assert "MB of disk" not in k["error"].split("\n")[0], k["error"][:600]
    left = subprocess.run(["pgrep", "-f", "sleep 1000|time.sleep\\(600\\)"], capture_output=True,
                          text=True).stdout.split()
    assert left == [], f"the build's processes were left running: {left}"
    # the series' copy is gone with its file system; nothing of it is mounted
    pid = doc["run_id"].rsplit("-", 1)[-1]          # a run's id ends with its process id
    assert not list((cache_dir() / "build" / "series").glob(f"*-{pid}"))
    # nothing of the cache lost: the base's kernel whole, as it was published
    from foliofarm.util import file_digest
    [base] = [k for k in doc["kernels"] if k["side"] == "base"]
    art = Path(base["artifacts"])
    sealed = json.loads((art / "build.json").read_text())["sha256"]
    assert sealed and all(file_digest(art / f) == d for f, d in sealed.items())
    assert "/build/series/" not in Path("/proc/self/mountinfo").read_text()


def test_qemu_runs_confined_under_seccomp_its_own_uid_and_an_empty_root(tmp_path):
    """While a guest runs a series' kernel, its QEMU is under its seccomp
    filter, in a cgroup of its own where the host gives one, and, the farm
    being root, a uid of its own (no capability) chrooted into an empty folder."""
    p = subprocess.Popen([sys.executable, "-m", "foliofarm", "run", *RUN, "--fresh",
                          "--results", str(tmp_path)], cwd=ROOT, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    seen: dict[str, str] = {}
    import time
    while p.poll() is None and not seen:
        for pid in subprocess.run(["pgrep", "-f", f"qemu-system-aarch64 .*foliofarm-{p.pid}-outbox"],
                                  capture_output=True, text=True).stdout.split():
            try:
                status = Path(f"/proc/{pid}/status").read_text()
                if "Seccomp:\t2" not in status or (os.geteuid() == 0 and "Uid:\t0\t" in status):
                    continue        # not yet past QEMU's start-up (its images opened, then the drop)
                seen = {"status": status, "root": os.readlink(f"/proc/{pid}/root"),
                        "cgroup": Path(f"/proc/{pid}/cgroup").read_text()}
            except OSError:
                continue
        time.sleep(0.05)
    _, err = p.communicate(timeout=600)
    assert p.returncode == 0, err[-3000:]
    assert seen, "no QEMU of the run was seen running"
    status = dict(ln.split(":\t", 1) for ln in seen["status"].splitlines() if ":\t" in ln)
    assert status["Seccomp"] == "2" and status["NoNewPrivs"] == "1"
    if os.geteuid() == 0:
        uid = int(status["Uid"].split()[0])
        assert uid >= 1_610_612_736, status["Uid"]
        assert status["CapEff"] == "0000000000000000"
        assert seen["root"].endswith("qemu-root") and not any(Path(seen["root"]).iterdir())
    if cgroups.available():
        assert "/foliofarm-" in seen["cgroup"], seen["cgroup"]
