"""`foliofarm kcidb`: the results of real runs (tests/data/results/) as KCIDB
submissions, validated by kcidb-io; damaged inputs refused; --submit to a
receiver on loopback that validates and keeps what it gets."""

from __future__ import annotations

import json
import shutil
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from kcidb_io import schema as kcidb_schema

from foliofarm.results import read
from foliofarm.cli import main
from foliofarm.report import kcidb

DATA = Path(__file__).resolve().parent / "data" / "results"


def convert(tmp_path: Path, name: str, capsys) -> dict:
    out = tmp_path / f"{name}.kcidb.json"
    assert main(["kcidb", str(DATA / name), "-o", str(out)]) == 0, capsys.readouterr().err
    data = json.loads(out.read_text())
    kcidb_schema.LATEST.validate(data)               # the receiver's own check, again
    return data


def test_a_default_run_has_every_cell_check_and_selftest(tmp_path, capsys):
    doc = read.typed(read.load(DATA / "default-run-7.3.json"))
    data = convert(tmp_path, "default-run-7.3.json", capsys)
    assert data["version"] == {"major": kcidb_schema.LATEST.major, "minor": kcidb_schema.LATEST.minor}
    assert [c["id"] for c in data["checkouts"]] == [f"foliofarm:{doc.run_id}:7.3"]
    assert {b["config_name"] for b in data["builds"]} == {"4k-default", "16k-default", "64k-default"}
    assert all(b["architecture"] == "arm64" and b["status"] == "PASS" for b in data["builds"])
    tests = {t["id"]: t for t in data["tests"]}
    for cell in doc.cells:
        for check in cell.checks:
            tid = f"foliofarm:{doc.run_id}:{cell.id}:{kcidb.path_part(check.name)}"
            t = tests[tid]
            assert t["status"] == kcidb.STATUS[check.outcome] and t["misc"]["outcome"] == check.outcome
            assert t["environment"]["misc"]["page_size"] == cell.page_size
            assert t["environment"]["misc"]["fs"] == cell.fs
            assert t["build_id"].endswith(f":{cell.kernel}:{cell.page_size}:default")
            for sub in check.subtests:
                st = tests[f"{tid}.{kcidb.path_part(sub.name)}"]
                assert st["path"] == f"kselftest.mm.{kcidb.path_part(sub.name)}"
                assert st["misc"]["test"] == sub.name and st["misc"]["outcome"] == sub.outcome
    subtests = [t for t in data["tests"] if t["path"].startswith("kselftest.mm.")]
    assert len(subtests) == 387
    # a known failure is the kernel failing, told apart from a plain failure
    known = [t for t in subtests if t["misc"]["outcome"] == "xfail"]
    assert known and all(t["status"] == "FAIL" and t["misc"].get("reason") for t in known)
    # the headline figures, as numbers under their check
    aligned = [t for t in data["tests"] if t["path"] == "foliofarm.exec-text.aligned_pct"]
    assert len(aligned) == 9 and all(t["status"] == "DONE" and "value" in t["number"] for t in aligned)
    assert not [t for t in data["tests"] if t["path"].endswith("_seconds")]     # timing is no result


def test_a_series_run_has_both_checkouts_and_the_verdict_against_the_base(tmp_path, capsys):
    data = convert(tmp_path, "neg-exec-text-4k.json", capsys)
    assert [c["misc"]["kernel"] for c in data["checkouts"]] == ["7.3", "7.3+series"]
    series = [t for t in data["tests"] if ":7.3+series:" in t["build_id"] and t["path"] == "foliofarm.exec-text"]
    assert series and all(t["misc"]["verdict"] == "regression" and t["status"] == "FAIL" for t in series)
    broken = convert(tmp_path, "no-build-4k.json", capsys)
    assert [b["status"] for b in broken["builds"] if ":7.3+series:" in b["id"]] == ["FAIL"]
    assert [c["valid"] for c in broken["checkouts"]] == [True, False]


def test_damaged_inputs_exit_2_with_the_reason(tmp_path, capsys):
    cut = tmp_path / "cut.json"
    cut.write_text((DATA / "benign-4k.json").read_text()[:500])
    assert main(["kcidb", str(cut)]) == 2
    assert "cut.json: " in (err := capsys.readouterr().err) and ("cut short" in err or "not JSON" in err)
    wrong = json.loads((DATA / "benign-4k.json").read_text())
    wrong["cells"][0]["checks"][0]["outcome"] = "splendid"
    (tmp_path / "wrong.json").write_text(json.dumps(wrong))
    assert main(["kcidb", str(tmp_path / "wrong.json")]) == 2
    assert "outcome" in capsys.readouterr().err
    assert main(["kcidb", str(tmp_path / "missing")]) == 2
    assert main(["kcidb", str(DATA / "benign-4k.json"), "--origin", "Not Valid"]) == 2


class Receiver(BaseHTTPRequestHandler):
    """A KCIDB receiver: checks the token, validates with kcidb-io, keeps it."""
    got: list = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Authorization") != "Bearer sekrit":
            self.send_response(401)
            self.end_headers()
            return
        try:
            kcidb_schema.LATEST.validate(json.loads(body))
        except Exception as exc:                  # noqa: BLE001
            self.send_response(400)
            self.end_headers()
            self.wfile.write(str(exc)[:200].encode())
            return
        Receiver.got.append(json.loads(body))
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"accepted")

    def log_message(self, *a):
        pass


def test_submit_posts_it_with_the_token_and_says_what_the_receiver_said(tmp_path, capsys, monkeypatch):
    server = HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/submit"
    try:
        monkeypatch.delenv(kcidb.TOKEN_ENV, raising=False)
        assert main(["kcidb", str(DATA / "benign-4k.json"), "-o", str(tmp_path / "k.json"), "--submit", url]) == 2
        assert kcidb.TOKEN_ENV in capsys.readouterr().err
        monkeypatch.setenv(kcidb.TOKEN_ENV, "wrong")
        assert main(["kcidb", str(DATA / "benign-4k.json"), "-o", str(tmp_path / "k.json"), "--submit", url]) == 3
        assert "HTTP 401" in capsys.readouterr().err
        monkeypatch.setenv(kcidb.TOKEN_ENV, "sekrit")
        assert main(["kcidb", str(DATA / "benign-4k.json"), "-o", str(tmp_path / "k.json"), "--submit", url]) == 0
        assert "accepted" in capsys.readouterr().err
        assert Receiver.got[-1] == json.loads((tmp_path / "k.json").read_text())
    finally:
        server.shutdown()


def test_a_run_folder_is_read_like_report_reads_it(tmp_path, capsys):
    run = tmp_path / "20261126-000000-1"
    run.mkdir()
    shutil.copy(DATA / "benign-4k.json", run / "results.json")
    assert main(["kcidb", str(run)]) == 0
    assert json.loads(capsys.readouterr().out)["checkouts"]


@pytest.mark.parametrize("name", ["a b/c", "khugepaged -s 2", "", "..."])
def test_names_become_valid_path_segments(name):
    assert kcidb_schema.LATEST.path_re.fullmatch(kcidb.path_part(name))
