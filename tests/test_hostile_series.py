"""A series written to attack the farm, built and booted for real (one cell):

- its usr/gen_init_cpio.c writes a file under /tmp when the program runs: the
  farm never runs it (the initramfs is packed in Python), and the build's own
  run of it stays in the sandbox's /tmp, so no file appears on the host;
- its mm/Makefile prints $(FOLIOFARM_SMTP_PASSWORD), $(FOLIOFARM_LAB_TOKEN) and $(HOME): the build
  starts from a cleared environment, so the secrets the run was started with are
  in no file under the results or the cache, and HOME is the sandbox's;
- its mm/Makefile plants an object for a file it does not change
  (mm/mempool.o, a section with a marker added): the marker is in its own
  kernel, and not in the kernel of the series built after it, which builds in a
  fresh copy of the base's build directory;
- the cell's checks still run on both kernels."""

from __future__ import annotations

import difflib
import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from foliofarm.intake import source
from foliofarm.paths import ROOT, cache_dir

pytestmark = pytest.mark.integration

RUN = ["--kernel", "debian:7.3", "--cells", "4k-ext4", "--checks", "exec-text"]
EX = ROOT / "examples" / "series"


def base_file(tree: Path, name: str) -> str:
    return (tree / name).read_text()


def diff(tree: Path, changes: dict[str, str]) -> str:
    """A git diff changing each file of ``changes`` (path -> new text) in ``tree``."""
    diffs = []
    for name, new in changes.items():
        old = base_file(tree, name)
        body = "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                            f"a/{name}", f"b/{name}", n=3))
        diffs.append(f"diff --git a/{name} b/{name}\n{body}")
    return "".join(diffs)


def patch_mail(tree: Path, subject: str, changes: dict[str, str]) -> str:
    """A `git format-patch` mail of diff()."""
    return ("From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
            "From: Mallory <mallory@evil.example>\nDate: Mon, 23 Nov 2026 00:00:00 +0000\n"
            f"Subject: [PATCH] {subject}\n\n{subject}.\n\nSigned-off-by: Mallory "
            "<mallory@evil.example>\n---\n" + diff(tree, changes) + "-- \n2.39.5\n\n")


def hostile(tree: Path, escaped: Path, token: str) -> str:
    cpio = base_file(tree, "usr/gen_init_cpio.c")
    main = "int main (int argc, char *argv[])\n{\n"
    assert cpio.count(main) == 1
    cpio = cpio.replace(main, "__attribute__((constructor)) static void ff_escape(void)\n{\n"
                        f"\tFILE *f = fopen(\"{escaped}\", \"w\");\n\tif (f) {{ fputs(\"escaped\\n\", f); "
                        "fclose(f); }\n}\n\n" + main)
    mk = base_file(tree, "mm/Makefile")
    mk += ("\n$(info FF-SECRET=[$(FOLIOFARM_SMTP_PASSWORD)] FF-LAB=[$(FOLIOFARM_LAB_TOKEN)] FF-HOME=[$(HOME)])\n"
           f"$(shell printf 'FOLIOFARM-%s-{token}' PLANTED > mm/.ffplant; $(OBJCOPY) --add-section "
           ".rodata.ffplant=mm/.ffplant --set-section-flags .rodata.ffplant=alloc,load,readonly,data "
           "mm/mempool.o >/dev/null 2>&1)\n")
    return patch_mail(tree, "mm: a series that tries its luck",
                      {"usr/gen_init_cpio.c": cpio, "mm/Makefile": mk})


def farm(results: Path, series: Path, env: dict[str, str]) -> dict:
    p = subprocess.run([sys.executable, "-m", "foliofarm", "run", *RUN,
                        "--series", str(series), "--results", str(results)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    doc = json.loads((results / "latest" / "results.json").read_text())
    assert p.returncode in (0, 1), p.stderr[-3000:]
    return doc


def series_image(doc: dict) -> Path:
    [k] = [k for k in doc["kernels"] if k["side"] == "series"]
    assert not k.get("build_failed"), k.get("error")
    return Path(k["artifacts"]) / "Image"


def holding(root: Path, needle: str) -> list[str]:
    p = subprocess.run(["grep", "-rlF", "--binary-files=text", "--", needle, str(root)],
                       capture_output=True, text=True)
    return p.stdout.split()


def test_a_hostile_series_stays_in_the_sandbox_and_out_of_the_next_kernel(tmp_path):
    tree = source.resolve("debian:7.3", cache_dir()).tree
    token = secrets.token_hex(6)
    escaped = Path("/tmp") / f"foliofarm-escaped-{token}"
    password = f"smtp-password-{secrets.token_hex(8)}"
    box = tmp_path / "hostile.mbox"
    box.write_text(hostile(tree, escaped, token))
    lab_token = f"lab-token-{secrets.token_hex(8)}"     # what `run --lab` reads its token from
    env = {**os.environ, "FOLIOFARM_SMTP_PASSWORD": password, "FOLIOFARM_LAB_TOKEN": lab_token}

    doc = farm(tmp_path / "hostile", box, env)
    assert not escaped.exists(), "the series' gen_init_cpio ran on the host"
    ran = [v for v in doc["verdicts"] if v["check"] == "exec-text"]
    assert ran and all(v["verdict"] == "pass" for v in ran), ran
    image = series_image(doc)
    log = (image.parent / "build.log").read_text(errors="replace")
    assert "FF-SECRET=[] FF-LAB=[] FF-HOME=[/nonexistent]" in log   # its $(info) ran, empty
    assert f"FOLIOFARM-PLANTED-{token}".encode() in image.read_bytes()  # the plant took, here

    benign = farm(tmp_path / "next", EX / "benign.mbox", env)
    assert f"FOLIOFARM-PLANTED-{token}".encode() not in series_image(benign).read_bytes()
    assert not escaped.exists()
    for where in (tmp_path, cache_dir()):
        assert holding(where, password) == [], f"the secret is in files under {where}"
        assert holding(where, lab_token) == [], f"the lab's token is in files under {where}"


def test_a_run_past_its_timeout_is_stopped_with_the_reason_recorded(tmp_path):
    """--timeout: the whole run's wall clock. Past it, what the run started
    (its guest here) is killed, the reason is in results.json, exit 3."""
    from foliofarm.judge import catalogue
    p = subprocess.Popen([sys.executable, "-m", "foliofarm", "run", "--kernel", "debian:7.3",
                          "--cells", "4k-*", "--checks", catalogue.own(), "--fresh", "--timeout", "8",
                          "--results", str(tmp_path)], cwd=ROOT, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    _, err = p.communicate(timeout=300)
    assert p.returncode == 3, err[-2000:]
    doc = json.loads((tmp_path / "latest" / "results.json").read_text())
    assert any(e["stage"] == "limit" and "its limit of 8 s" in e["message"] for e in doc["errors"])
    assert doc["complete"] is False
    left = subprocess.run(["pgrep", "-f", f"foliofarm-{p.pid}-"], capture_output=True, text=True)
    assert left.stdout == "", f"the run's guests were left running: {left.stdout}"
