"""The farm's words are spelt in one place (foliofarm/results/outcome.py):
an outcome, a verdict or a test's printed status is named by its enum member
everywhere else, never as a bare string. A misspelt word ("regresion") then
fails where it is written, not silently in a comparison that is never true."""
from __future__ import annotations

import ast
from pathlib import Path

from foliofarm.results.outcome import OUTCOMES, VERDICTS, Outcome, Status, Verdict

PKG = Path(__file__).resolve().parent.parent / "foliofarm"
HOME = PKG / "results" / "outcome.py"
WORDS = {str(w) for w in (*OUTCOMES, *VERDICTS)}

# The same spelling in another vocabulary, with why it is not the farm's word.
OTHERS = {
    ("lava/remote.py", "fail"): "LAVA's own result word for a job",
    ("lava/lab.py", "fail"): "lava-server manage jobs fail: LAVA's command that finishes a job",
    ("watch/assess.py", "incomplete"): "a thread's state (watch/state.py)",
    ("watch/loop.py", "incomplete"): "a thread's state (watch/state.py)",
    ("watch/state.py", "incomplete"): "a thread's state (watch/state.py)",
    ("cli/cmd_list.py", "flaky"): "the name of the `foliofarm flaky` command",
}


def _exempt(node: ast.Constant, parents: dict[ast.AST, ast.AST]) -> bool:
    """Where a word is a name, not a value: a key of a dict or a field
    (``d["error"]``, ``d.get("skip")``), a command's or an XML element's name, part of an
    f-string, or an enum's own definition."""
    par = parents.get(node)
    if isinstance(par, ast.JoinedStr):
        return True
    if isinstance(par, ast.Subscript) and par.slice is node:
        return True
    if isinstance(par, ast.Dict) and node in par.keys:
        return True
    if (isinstance(par, ast.Call) and isinstance(par.func, ast.Attribute)
            and par.func.attr in ("get", "pop", "setdefault", "add_parser") and par.args and par.args[0] is node):
        return True
    if (isinstance(par, ast.Call) and isinstance(par.func, ast.Attribute) and par.func.attr == "SubElement"
            and len(par.args) > 1 and par.args[1] is node):
        return True         # an XML element's tag (JUnit's <error>)
    while par is not None:
        if isinstance(par, ast.ClassDef) and any(getattr(b, "attr", getattr(b, "id", "")) in ("Enum", "StrEnum")
                                                  for b in par.bases):
            return True
        par = parents.get(par)
    return False


def bare_words(path: Path, rel: str) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    parents = {c: n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    return [f"{rel}:{n.lineno}: {n.value!r}" for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in WORDS
            and not _exempt(n, parents) and (rel, n.value) not in OTHERS]


def test_no_outcome_or_verdict_word_is_spelt_outside_its_enum():
    found = []
    for path in sorted(PKG.rglob("*.py")):
        if path != HOME:
            found += bare_words(path, str(path.relative_to(PKG)))
    assert not found, ("name these by their member of foliofarm.results.outcome (Outcome, Verdict, "
                       f"Status), or say in OTHERS why the word is another vocabulary's: {found}")


def test_the_check_sees_a_bare_word_and_leaves_names_alone(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('def f(r, d):\n'
                 '    if r.verdict == "regression":\n'          # a value: caught
                 '        return ("fail", d["error"], d.get("skip"))\n'   # "fail" caught, names not
                 '    return f"{r} pass"\n')
    assert [x.split(": ", 1)[1] for x in bare_words(f, "m.py")] == ["'regression'", "'fail'"]


def test_every_word_is_its_own_string():
    """A member is its word: documents written before the enums read the
    same, and JSON carries the word."""
    import json
    assert Outcome.FLAKY == "flaky" and Verdict.BUILD_BROKEN == "build-broken" and Status.CRASH == "crash"
    assert json.dumps({Outcome.PASS: [Verdict.REGRESSION]}) == '{"pass": ["regression"]}'
    assert f"{Verdict.CHANGED}" == "changed"
    assert set(OUTCOMES) < set(VERDICTS) | {Outcome.FLAKY}


# What carries a measurement, a verdict or the results document is named so;
# such a thing is a model (Measurement, VerdictRow, Results...), never a dict.
CARRIERS = {"m", "measurement", "measured", "measurements", "page_m", "cell_m", "race_m",
            "doc", "docs", "verdict", "verdicts", "saved", "earlier"}
MAKERS = {"measure", "measurement", "verdicts", "subtest_rows", "figures", "merge", "judged", "result",
          "new_saved", "load_saved", "readback"}
# Where a dict is the thing's true form, and why.
BOUNDARIES = {
    "results/read.py": "the JSON boundary: a document as parsed JSON before it is a model, and as written",
    "run/bisect.py": "a bisection step's record (git bisect's good, bad, skip), kept as a line of JSON",
}


def untyped(path: Path, rel: str) -> list[str]:
    found = []
    for n in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for a in n.args.args + n.args.kwonlyargs:
            if a.arg in CARRIERS and a.annotation is not None and "dict[str, Any]" in ast.unparse(a.annotation):
                found.append(f"{rel}:{n.lineno} {n.name}({a.arg}: {ast.unparse(a.annotation)})")
        if n.name in MAKERS and n.returns is not None and "dict[str, Any]" in ast.unparse(n.returns):
            found.append(f"{rel}:{n.lineno} {n.name} -> {ast.unparse(n.returns)}")
    return found


def test_no_measurement_verdict_or_document_travels_as_a_dict():
    found = []
    for path in sorted(PKG.rglob("*.py")):
        rel = str(path.relative_to(PKG))
        if rel not in BOUNDARIES:
            found += untyped(path, rel)
    assert not found, f"type these (judge/measurement.py, results/schema.py): {found}"


def test_the_dict_check_sees_one(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("from typing import Any\n"
                 "def judge(m: dict[str, Any], page: str) -> None: ...\n"
                 "def verdicts(doc: object) -> list[dict[str, Any]]: ...\n"
                 "def fine(row: dict[str, Any]) -> dict[str, Any]: ...\n")
    assert [x.split(" ", 1)[1] for x in untyped(f, "m.py")] == [
        "judge(m: dict[str, Any])", "verdicts -> list[dict[str, Any]]"]
