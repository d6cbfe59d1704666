"""A run's outputs, one list (report/outputs.py): every file a run's folder
holds is one of them, each is written by its own function, one that fails
leaves the others written, and a new format is one line."""

import fnmatch
import json
from pathlib import Path

from foliofarm.report import outputs
from foliofarm.results import read
from foliofarm.results.arriving import Moment, Output
from foliofarm.results.writer import ResultsWriter

DOC = Path(__file__).resolve().parent / "data" / "results" / "neg-exec-text-4k.json"


def listed(rel: str) -> bool:
    pats = [o.name.replace("<cell>", "*") + ("*" if o.name.endswith("/") else "") for o in outputs.OUTPUTS]
    return any(fnmatch.fnmatch(rel, p) for p in pats)


def run_folder(tmp_path):
    w = ResultsWriter(tmp_path, ["foliofarm", "run"], run_id="r")
    w.doc = read.typed(json.loads(DOC.read_text()))
    w.flush(final=True)
    return w


def test_every_file_of_a_run_folder_is_a_listed_output(tmp_path):
    w = run_folder(tmp_path)
    failed = []
    done = outputs.write_end(w.dir, w.results(), Moment(final=True), lambda o, e: failed.append((o.name, e)))
    assert not failed
    assert set(done) == {"plots/", "report.md", "report.html", "report.txt", "cells/<cell>/repro.sh"}
    files = sorted(str(p.relative_to(w.dir)) for p in w.dir.rglob("*") if p.is_file())
    assert "results.json" in files and "junit.xml" in files and "report.html" in files
    assert any(f.startswith("plots/") for f in files)
    assert [f for f in files if not listed(f)] == []
    read.read(w.dir)                          # and the document reads back


def test_one_output_failing_leaves_the_others_and_a_new_one_is_one_line(tmp_path, monkeypatch):
    w = run_folder(tmp_path)

    def broken(run_dir, doc, at):
        raise OSError("disk full")

    def counts(run_dir, doc, at):
        (f := run_dir / "counts.txt").write_text(f"{len(doc.cells)} cells\n")
        return [f]

    monkeypatch.setattr(outputs, "OUTPUTS", (outputs.OUTPUTS[0], Output("report.md", "broken", broken),
                                             *outputs.OUTPUTS[1:], Output("counts.txt", "new", counts)))
    failed = []
    done = outputs.write_end(w.dir, w.results(), Moment(final=True), lambda o, e: failed.append(o.what))
    assert failed == ["broken"]
    assert (w.dir / "counts.txt").read_text() == "4 cells\n" and "report.html" in done
