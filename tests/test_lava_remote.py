"""`run --lab`'s parts that need no lab: the token, the artifact server, the
REST client's word on a lab that does not answer, and the logs a real lab
wrote (tests/data/lava/lab: jobs of `foliofarm run --lab` on the lab of
foliofarm/lava/lab.py, 4k-ext4, exec-text and mmap-miss) read back: one
Complete, one the lab failed (a disk whose sha256 did not match)."""

from __future__ import annotations

import gzip
import hashlib
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml

from foliofarm import matrix
from foliofarm.errors import UsageError
from foliofarm.judge import catalogue
from foliofarm.judge.catalogue import Kind
from foliofarm.lava import log, remote
from foliofarm.lava.rest import LabAPI, LabFault, token_from
from foliofarm.lava.serve import ArtifactServer
from foliofarm.matrix import Cell

DATA = Path(__file__).parent / "data" / "lava" / "lab"


def test_the_token_comes_from_a_file_or_the_environment_never_empty(tmp_path):
    f = tmp_path / "token"
    f.write_text("abc123\n")
    assert token_from(str(f), {}) == "abc123"
    assert token_from(None, {"FOLIOFARM_LAB_TOKEN": " xyz "}) == "xyz"
    with pytest.raises(UsageError, match="FOLIOFARM_LAB_TOKEN"):
        token_from(None, {})
    with pytest.raises(UsageError, match="--lab-token .*nope"):
        token_from(str(tmp_path / "nope"), {})
    f.write_text("\n")
    with pytest.raises(UsageError, match="needs the lab's API token"):
        token_from(str(f), {})


def test_the_artifact_server_serves_the_runs_files_by_checksum_and_nothing_else(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("not served")
    img = tmp_path / "disk.img"
    img.write_bytes(b"\x00disk" * 1000)
    a = ArtifactServer("127.0.0.1:0")
    try:
        url, digest, packed = a.add(img)
        assert packed is None and digest == hashlib.sha256(img.read_bytes()).hexdigest()
        assert url.startswith(a.url) and url.endswith(f"{digest[:16]}-disk.img")
        with urllib.request.urlopen(url, timeout=10) as r:
            assert r.read() == img.read_bytes()
        for other in ("", "secret", "../secret", f"..%2F{secret.name}", str(secret), "disk.img"):
            with pytest.raises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(a.url + other, timeout=10)
            assert e.value.code == 404, other
    finally:
        a.close()


def test_published_artifacts_are_copied_once_under_their_checksum(tmp_path):
    pub = tmp_path / "www"
    pub.mkdir()
    img = tmp_path / "Image"
    img.write_bytes(b"kernel")
    a = ArtifactServer(url="https://files.example.test/ff", publish=pub)
    url, digest, _ = a.add(img)
    assert url == f"https://files.example.test/ff/{digest[:16]}-Image"
    assert (pub / f"{digest[:16]}-Image").read_bytes() == b"kernel"
    with pytest.raises(UsageError, match="--lab-artifacts"):
        ArtifactServer(publish=pub)
    with pytest.raises(UsageError, match="HOST:PORT"):
        ArtifactServer("nowhere")


def test_a_lab_that_does_not_answer_is_the_labs_fault_after_its_patience():
    with socket.socket() as s:          # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    api = LabAPI(f"http://127.0.0.1:{port}/", "t", patience=3)
    t0 = time.monotonic()
    with pytest.raises(LabFault, match=r"did not answer for 3 s \(jobs/7/: .*refused"):
        api.job(7)
    assert time.monotonic() - t0 < 10
    with pytest.raises(UsageError, match="--lab: the lab at"):
        api.check("qemu")
    with pytest.raises(UsageError, match="http"):
        LabAPI("127.0.0.1:8900", "t")


def read(name: str, tmp_path: Path) -> list[dict]:
    p = DATA / name
    if p.suffix == ".gz":
        out = tmp_path / p.stem
        out.write_bytes(gzip.decompress(p.read_bytes()))
        p = out
    return log.entries(p)


def test_the_labs_own_failure_is_told_from_the_guests(tmp_path):
    kind, why = remote.job_error(read("sha256-mismatch.lava.log", tmp_path))
    assert kind == "Job" and "sha256" in why and "does not match" in why
    assert remote.job_error(read("complete.lava.log.gz", tmp_path)) == ("", "")


def pairs(cell: Cell):
    known = catalogue.by_name()
    return [(cell, known["exec-text"]), (cell, known["mmap-miss"])]


def test_a_complete_jobs_log_is_read_as_the_farms_own_boot(tmp_path):
    job_def = yaml.safe_load((DATA / "job.yaml").read_text())
    assert all(i["sha256sum"] and i["url"].startswith("http://")
               for i in job_def["actions"][0]["deploy"]["images"].values())
    cell = Cell(matrix.page_sizes()["4k"], matrix.filesystems()["ext4"], "7.3")
    job = remote.LabJob(12, "4k", device="qemu-w2", health="Complete")
    measured, boot, reports = remote.read_job(read("complete.lava.log.gz", tmp_path), job,
                                              "http://lab/scheduler/job/12", "x.log", cell, pairs(cell), 1)
    assert boot.error is None and boot.banner["page_size"] == "4096"
    assert boot.lab_job == "http://lab/scheduler/job/12" and boot.device == "qemu-w2"
    assert [chk.name for _, chk, _ in measured] == ["exec-text", "mmap-miss"]
    assert all(m.kind != Kind.ERROR for _, _, m in measured), measured
    assert reports == []
    # the same log offered as a 16K cell's: the guest says otherwise, every check an error
    c16 = Cell(matrix.page_sizes()["16k"], matrix.filesystems()["ext4"], "7.3")
    measured, boot, _ = remote.read_job(read("complete.lava.log.gz", tmp_path), job, "u", "x.log",
                                        c16, pairs(c16), 1)
    assert "page size 4096, expected 16384" in boot.error
    assert {m.kind for _, _, m in measured} == {Kind.ERROR}


def test_a_large_image_goes_packed_with_zstd_and_unpacks_to_itself(tmp_path, monkeypatch):
    import subprocess
    monkeypatch.setenv("FOLIOFARM_CACHE", str(tmp_path / "cache"))
    img = tmp_path / "swap.raw"
    with open(img, "wb") as f:          # sparse, as the farm's swap disk: mostly zeros
        f.truncate(40 << 20)
        f.seek(5 << 20)
        f.write(b"data" * 1000)
    a = ArtifactServer("127.0.0.1:0")
    try:
        url, digest, packed = a.add(img)
        assert packed == "zstd" and url.endswith("-swap.raw.zst")
        with urllib.request.urlopen(url, timeout=10) as r:
            body = r.read()
        assert hashlib.sha256(body).hexdigest() == digest      # what LAVA checks: the bytes it fetched
        assert len(body) < 1 << 20
        assert subprocess.run(["zstd", "-d", "-c"], input=body, capture_output=True, check=True).stdout \
            == img.read_bytes()
    finally:
        a.close()
