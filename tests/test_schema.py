"""results.json read back: a truncated, foreign, newer or damaged document gets
one line naming the file and what is wrong (exit 2), never a traceback; every
document the farm wrote is read."""

import copy
import json
from pathlib import Path

import pytest

from foliofarm.cli import main as cli_main
from foliofarm.results import read

DATA = Path(__file__).resolve().parent / "data" / "results"
RECORDED = sorted(DATA.glob("*.json"))


def paths(doc, prefix=(), depth=5):
    """Every place in ``doc``, lists by their first element only."""
    if depth == 0:
        return
    items = doc.items() if isinstance(doc, dict) else enumerate(doc[:1]) if isinstance(doc, list) else ()
    for key, value in items:
        here = (*prefix, key)
        yield here
        yield from paths(value, here, depth - 1)


def mutated(doc, path, value):
    d = copy.deepcopy(doc)
    parent = d
    for key in path[:-1]:
        parent = parent[key]
    if value is DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return d


DELETE = object()


def report_of(tmp_path, text, capsys):
    (tmp_path / "results.json").write_text(text)
    code = cli_main(["report", str(tmp_path)])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("recorded", RECORDED, ids=lambda p: p.stem)
def test_every_recorded_document_is_read(recorded, tmp_path, capsys):
    code, err = report_of(tmp_path, recorded.read_text(), capsys)
    assert code == 0, err


@pytest.mark.parametrize("text,says", [
    ("", "not JSON"),
    ('{"run_id": "x", "cells": [', "cut short"),
    ('[1, 2, 3]', "not a foliofarm results.json"),
    ('{"name": "package.json", "version": "1.0"}', "not a foliofarm results.json"),
    ('{"run_id": "x", "cells": [], "command": [], "complete": true, "schema_version": 99}',
     "newer foliofarm"),
    ('{"run_id": "x", "cells": {}, "command": [], "complete": true, "started": ""}',
     "cells: Input should be a valid list"),
    ("\u00ff", "not JSON"),
    ('{"run_id": "x", "cells": [{"id": "4k-xfs-7.3"}], "command": [], "complete": true, "started": ""}',
     "cells.0.page_size: Field required (and 3 more)"),
])
def test_bad_documents_get_one_line_and_exit_2(tmp_path, capsys, text, says):
    code, err = report_of(tmp_path, text, capsys)
    assert code == 2
    assert err.count("\n") == 1 and str(tmp_path / "results.json") in err and says in err, err


def test_bytes_that_are_not_text_are_refused(tmp_path, capsys):
    (tmp_path / "results.json").write_bytes(b"\xff\xfe{\x00")
    assert cli_main(["report", str(tmp_path)]) == 2
    assert "cannot read it as text" in capsys.readouterr().err


def test_a_cut_copy_of_a_real_document_is_refused_at_every_length(tmp_path, capsys):
    text = RECORDED[0].read_text()
    for n in range(0, len(text), max(1, len(text) // 40)):
        code, err = report_of(tmp_path, text[:n], capsys)
        assert code == 2 and "results.json" in err, (n, err)


def test_one_damaged_field_anywhere_is_refused_or_read_never_a_traceback(tmp_path, capsys):
    """Each place of recorded series documents, deleted or replaced by a value
    of another type: the report is made (the field was optional or the value
    fits) or refused with one line; no other exception."""
    tried = refused = 0
    for recorded in (DATA / "benign-4k.json", DATA / "no-build-4k.json"):
        doc = json.loads(recorded.read_text())
        for path in paths(doc):
            for value in (DELETE, "x", None, []):
                code, err = report_of(tmp_path, json.dumps(mutated(doc, path, value)), capsys)
                tried += 1
                assert code in (0, 2), (path, value, err)
                if code == 2:
                    refused += 1
                    assert err.count("\n") == 1, err
    assert tried > 400 and refused > 100
    print(f"{tried} damaged documents, {refused} refused, the rest read")


def test_a_document_with_thpmaps_rows_among_the_figures_is_read(tmp_path, capsys):
    """Before rows had a field, thpmaps wrote them into metrics, and the reader
    refused every default run's results.json: such documents are read now."""
    doc = json.loads((DATA / "default-run-7.3.json").read_text())
    moved = 0
    for cell in doc["cells"]:
        for c in cell["checks"]:
            if c.get("rows"):
                c["metrics"]["rows"] = c.pop("rows")
                moved += 1
    assert moved == 9
    code, err = report_of(tmp_path, json.dumps(doc), capsys)
    assert code == 0, err
    assert "| counter | farm kB | thpmaps kB |" in (tmp_path / "report.md").read_text()


def test_the_judge_and_the_writer_refuse_what_the_reader_would(tmp_path):
    """A result the schema would refuse (a farm's fault) is an error that says
    so and holds what was given: made so by the judge, or, changed after it was
    made, kept aside by the writer. The document stays readable."""
    from foliofarm.results.outcome import Outcome
    from foliofarm.matrix import Cell, filesystems, page_sizes
    from foliofarm.results.writer import ResultsWriter
    from foliofarm.run.closing import close
    w = ResultsWriter(tmp_path, ["foliofarm", "run"])
    cell = Cell(page_sizes()["4k"], filesystems()["xfs"], "7.3")
    from foliofarm.results import judged
    made = judged.result("thpmaps", Outcome.PASS, "", {"rows": [{"counter": "x"}]})
    assert made.outcome == Outcome.ERROR and "schema refuses" in made.reason and '"counter": "x"' in made.reason
    w.record(cell, made)
    changed = judged.result("exec-text", Outcome.PASS, "", {"faults": 3})
    changed.metrics["faults"] = {"not": "a figure"}
    w.record(cell, changed)
    entries = read.written(w.doc)["cells"][0]["checks"]
    assert [e["outcome"] for e in entries] == ["error", "error"]
    assert "schema refuses" in entries[1]["reason"]
    assert (w.dir / "cells" / cell.id / "exec-text.refused.json").is_file()
    close(w, True)
    read.load(w.dir / "results.json")


# Each shape of results.json an earlier farm wrote, read by this one: before
# schema_version (thpmaps' rows among its figures), and version 1.
VERSIONS = {
    "before schema_version": lambda d: {k: v for k, v in d.items() if k != "schema_version"},
    "1": lambda d: {**d, "schema_version": 1},
}


@pytest.mark.parametrize("version", list(VERSIONS))
def test_each_earlier_version_is_read(version, tmp_path, capsys):
    doc = VERSIONS[version](json.loads((DATA / "default-run-7.3.json").read_text()))
    if version == "before schema_version":       # what that farm wrote: the rows among the figures
        for cell in doc["cells"]:
            for c in cell["checks"]:
                if c.get("rows"):
                    c["metrics"]["rows"] = c.pop("rows")
    code, err = report_of(tmp_path, json.dumps(doc), capsys)
    assert code == 0, err
    assert read.load(tmp_path / "results.json")["schema_version"] == 1


def test_a_field_the_farm_does_not_know_is_refused_naming_it(tmp_path, capsys):
    """Models the farm writes forbid unknown fields: a misspelt one is refused
    where it is written, and a document holding one is refused naming it."""
    from pydantic import ValidationError
    from foliofarm.results.schema import BootEntry
    doc = json.loads((DATA / "default-run-7.3.json").read_text())
    doc["boots"][0]["boot_secnds"] = 3.0
    code, err = report_of(tmp_path, json.dumps(doc), capsys)
    assert code == 2 and "boots.0.boot_secnds: Extra inputs are not permitted" in err, err
    with pytest.raises(ValidationError, match="boot_secnds"):
        BootEntry(page_size="4k", kernel="7.3", boot_secnds=3.0)


def test_every_field_the_farm_gives_a_model_is_one_of_its_own():
    """With unknown fields forbidden, a keyword the package gives a results
    model that the model lacks would fail a run only on the path that makes
    it (--extra-config, --each-commit...): every such call is read here."""
    import ast
    from pydantic import BaseModel
    from foliofarm.results import schema
    models = {n: c for n, c in vars(schema).items() if isinstance(c, type) and issubclass(c, BaseModel)}
    wrong = []
    for path in sorted((Path(__file__).resolve().parent.parent / "foliofarm").rglob("*.py")):
        for n in ast.walk(ast.parse(path.read_text())):
            if isinstance(n, ast.Call):
                name = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", None)
                if name in models:
                    wrong += [f"{path.name}:{n.lineno} {name}({k.arg}=)" for k in n.keywords
                              if k.arg and k.arg not in models[name].model_fields]
    assert not wrong, wrong
