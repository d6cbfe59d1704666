"""One boundary for untrusted text (foliofarm/shown.py): every string a run
records came from a series, a mail, a guest, a compiler or a reproducer, or
could have. Each recorded results.json is made hostile (every string in it
that the schema lets hold any text carries terminal escapes, rich markup,
Markdown and HTML) and every output the farm makes of it is rendered: the
terminal's tables, report.txt/md/html, junit.xml, KCIDB, the follower's reply
and status page. A path from a recorded string to an output that skips the
boundary shows here as a control character in that output, named by the
field it came from."""
from __future__ import annotations

import ast
import copy
import gzip
import io
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from pydantic import ValidationError
from rich.console import Console

from foliofarm import shown
from foliofarm.report import render, sections, summary, text
from foliofarm.report.kcidb import convert
from foliofarm.results import read
from foliofarm.results.junit import junit_xml
from foliofarm.judge import compare
from foliofarm.util import ConsoleLog
from foliofarm.watch import config, reply, status, threads

DATA = Path(__file__).parent / "data" / "results"
DOCS = sorted(p.name for p in DATA.glob("*.json*"))

# What an attacker puts in a Subject, a console line or a reproducer's output:
# OSC 52 (write the clipboard), OSC 0 (the window title), a screen clear and a
# cursor move, a C1 CSI, a bidi override, rich markup that closes a tag never
# opened, Markdown and HTML. {} is the field's path, so a leak names its source.
PAYLOAD = ("\x1b]52;c;{}\x07\x1b]0;pwned\x07\x1b[2J\x1b[10;10H\x9b31m\u202e"
           " [/] [bold]x[/bold] [link=http://x]y[/link] `|*_<script>&amp;")
SGR = re.compile(r"\x1b\[[0-9;]*m")      # rich's own colours on a terminal


def _load(name: str) -> dict:
    raw = (DATA / name).read_bytes()
    return json.loads(gzip.decompress(raw) if name.endswith(".gz") else raw)


def _strings(obj, path=()):
    """(path, value) of every string in a JSON document."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _strings(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _strings(v, (*path, i))
    elif isinstance(obj, str):
        yield path, obj


def _set(doc, path, value):
    for p in path[:-1]:
        doc = doc[p]
    doc[path[-1]] = value


# What the farm itself writes and KCIDB checks the form of: the run's clock.
FARM_OWN = {"started", "finished"}


def hostile(doc: dict) -> tuple[dict, int]:
    """``doc`` with the payload appended to every string the schema takes
    any text in (an enum, a date or an id it checks is left as it was);
    how many strings carry it."""
    bad = copy.deepcopy(doc)
    paths = [p for p, _ in _strings(doc) if p[-1] not in FARM_OWN]
    for p in paths:
        _set(bad, p, f"{_get(doc, p)}{PAYLOAD.format('/'.join(map(str, p)))}")
    for _ in range(50):
        try:
            read.typed(read.upgrade(copy.deepcopy(bad)))
            break
        except ValidationError as exc:
            for err in exc.errors():
                loc = tuple(err["loc"])
                for p in paths:          # the field the schema refused (its loc may stop above it)
                    if p[:len(loc)] == loc or loc[:len(p)] == p:
                        _set(bad, p, _get(doc, p))
    carried = sum(1 for _, v in _strings(bad) if "\x1b]52" in v)
    return bad, carried


def _get(doc, path):
    for p in path:
        doc = doc[p]
    return doc


def leaks(out: str, medium: str) -> list[str]:
    """What in an output is a control character, with the field it came from
    where the payload names one (rich's own colours on a terminal are not)."""
    if medium == "terminal":
        out = SGR.sub("", out)
    found = []
    for m in shown.CONTROL.finditer(out):
        near = out[m.start(): m.start() + 120]
        found.append(f"{medium}: {near!r}")
    return found[:5]


def outputs_of(doc) -> dict[str, str]:
    """Every output the farm renders from a results document, as text."""
    out: dict[str, str] = {}
    term = io.StringIO()
    console = Console(file=term, force_terminal=True, width=200, color_system="truecolor")
    summary.print_table(doc, [c.name for cell in doc.cells for c in cell.checks], console)
    narrow = Console(file=term, force_terminal=True, width=80)
    summary.print_table(doc, [c.name for cell in doc.cells for c in cell.checks], narrow)
    if doc.verdicts:
        summary.print_verdicts(doc, console)
    out["terminal"] = term.getvalue()
    title, secs = sections.build(doc, {})
    out["report.md"] = render.to_markdown(title, secs)
    out["report.html"] = render.to_html(title, secs)
    out["report.txt"] = text.render(doc)
    out["junit.xml"] = junit_xml(doc)
    out["kcidb.json"] = json.dumps(convert([doc]), ensure_ascii=False)
    return out


@pytest.mark.parametrize("name", DOCS)
def test_no_control_character_reaches_any_output_from_a_hostile_results_document(name):
    bad, carried = hostile(_load(name))
    assert carried > 20, "the payload must reach the document's free-text fields"
    doc = compare.judged(read.typed(read.upgrade(bad)))
    found = [leak for medium, out in outputs_of(doc).items() for leak in leaks(out, medium)]
    assert not found, "\n".join(found)


def test_the_payload_is_shown_not_dropped():
    """The boundary shows what was sent (a reader sees the escape), it does
    not hide it: the OSC 52 reaches report.txt as the text \\x1b]52."""
    bad, _ = hostile(_load("neg-exec-text-4k.json"))
    doc = compare.judged(read.typed(read.upgrade(bad)))
    out = outputs_of(doc)
    assert "\\x1b]52;c;" in out["report.txt"]
    assert "\\x1b]52;c;" in out["report.html"] and "<script>" not in out["report.html"]
    assert "\\x1b\\]52;c;" in out["report.md"] or "\\x1b]52;c;" in out["report.md"]
    assert "[/]" in out["terminal"] or "\\[/]" in out["terminal"]


def _anchor(subject: str) -> threads.Message:
    return threads.Message(msgid="a@x", blob="0", date=0, subject=subject, author='"A" <a@x.org>',
                           recipients=("list@x.org",), refs=(), kind="patch")


def test_a_reply_carries_no_control_character_from_the_subject_or_the_report():
    """An RFC 2047 Subject holding OSC 52 and a report.txt holding a
    reproducer's escapes: the reply's headers and body show them as text."""
    subject = "[PATCH] mm: \x1b]52;c;SGVsbG8=\x07\x1b]0;title\x07 x\r\nBcc: evil@x"
    report = "foliofarm: base vs series\nReproducer repro\n  \x1b[2J\x9b31m [/] hostile\n\nReproduce:\n"
    msg = reply.compose(_anchor(subject), "k", reply.judged_body(report, 1, 1, _anchor(subject), ["x"]),
                        config.load())
    raw = msg.as_string()
    assert "\x1b" not in raw and "\x9b" not in raw
    headers = raw.split("\n\n")[0].splitlines()
    assert not [h for h in headers if h.lower().startswith("bcc")]      # a header of its own: never
    assert "\\x1b]52" in str(msg["Subject"])
    assert "\\x1b[2J" in msg.get_content()


def test_the_run_log_shows_escapes_from_a_subject():
    """run/plan.py's record_series logs the Subject through the run's log
    (util.ConsoleLog): the terminal gets the escape as text."""
    term = io.StringIO()
    log = ConsoleLog(Console(file=term, force_terminal=True, width=300, log_path=False))
    log("series: [PATCH] \x1b]52;c;AAAA\x07 mm: [/] fix \x1b[1A\x1b[2K")
    out = SGR.sub("", term.getvalue())
    assert not leaks(out, "terminal")
    assert "\\x1b]52;c;AAAA" in out and "[/]" in out


def test_a_console_line_with_rich_markup_never_stops_the_verdict_table():
    """`BUG: ... [/]` as a verdict's reason: print_verdicts() prints it."""
    bad, _ = hostile(_load("neg-exec-text-4k.json"))
    doc = compare.judged(read.typed(read.upgrade(bad)))
    term = io.StringIO()
    summary.print_verdicts(doc, Console(file=term, width=200))
    assert "[/]" in term.getvalue()


def test_the_status_page_escapes_a_subject(tmp_path):
    assert status.shown.html("<b>\x1b]0;t\x07</b>") == "&lt;b&gt;\\x1b]0;t\\x07&lt;/b&gt;"


# -- the boundary itself -------------------------------------------------------

@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
def test_every_medium_is_clean_whatever_the_text(s):
    for out in (shown.visible(s), shown.bounded(s), shown.terminal(s), shown.markdown(s),
                shown.markdown_cell(s), "\n".join(shown.markdown_pre(s)), shown.html(s), shown.mail(s),
                shown.header(s), shown.rich_markup(s)):
        assert shown.is_clean(out), repr(out)
    assert "\n" not in shown.markdown_cell(s) and "\n" not in shown.header(s)
    assert "<" not in shown.html(s) and "&" not in shown.html(s).replace("&lt;", "").replace(
        "&gt;", "").replace("&amp;", "").replace("&quot;", "").replace("&#x27;", "")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_rich_never_parses_untrusted_text(s):
    from rich.text import Text
    term = io.StringIO()
    c = Console(file=term, width=100)
    c.print(shown.rich_text(s))
    c.print(Text.from_markup(shown.rich_markup(s)))     # escaped markup renders as the text
    assert shown.rich_text(s).plain == shown.bounded(s).replace("\t", "\t")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="`ab\n", max_size=60))
def test_a_markdown_block_is_never_closed_by_its_text(s):
    fence, body, close = shown.markdown_pre(s)
    assert fence == close and fence not in body


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 5000), st.integers(0, 3000))
def test_lines_and_line_counts_are_capped(n_lines, width):
    s = "\n".join("x" * width for _ in range(n_lines))
    out = shown.bounded(s, line=500, lines=100).split("\n")
    assert len(out) <= 100
    assert all(len(ln) <= 500 + 60 for ln in out)


def test_markdown_keeps_the_farms_own_words():
    assert shown.markdown_cell("4k-xfs") == "4k-xfs"
    assert shown.markdown_cell("moved_cont_pct") == "moved_cont_pct"
    assert shown.markdown("# not a heading") == "\\# not a heading"
    assert shown.markdown_cell("a|b") == "a\\|b"


# -- the paths, read from the code ------------------------------------------------

PKG = Path(__file__).resolve().parent.parent / "foliofarm"
RICH_CALLS = {"print", "log", "add_row", "add_column", "status", "Table", "rule"}
ESCAPERS = {"html.escape", "escape", "from_markup"}


def _calls(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            yield node, name


def test_rich_is_never_handed_a_string_built_from_data():
    """A rich print, log, table row, column or title given an f-string or a
    joined string parses it as markup: each must be a Text (shown.rich_text)
    or a constant. (The farm's status lines are its own words.)"""
    found = []
    for path in sorted(PKG.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node, name in _calls(tree):
            if name not in RICH_CALLS or name == "status":
                continue
            if name in ("print", "log") and not (isinstance(node.func, ast.Attribute) and any(
                    w in ast.unparse(node.func.value) for w in ("console", "ui", "Console"))):
                continue
            args = [*node.args, *(k.value for k in node.keywords if k.arg in ("title", "caption"))]
            for a in args:
                if isinstance(a, ast.BinOp) and any(w in ast.unparse(a) for w in ("Text(", "shown.")):
                    continue        # Texts added together: nothing in them is markup
                if isinstance(a, (ast.JoinedStr, ast.BinOp)) or (
                        isinstance(a, ast.Call) and getattr(a.func, "attr", "") in ("join", "format")):
                    found.append(f"{path.relative_to(PKG.parent)}:{node.lineno}: {ast.unparse(a)[:80]}")
    assert not found, "\n".join(found)


def test_only_the_boundary_escapes():
    """Escaping is done in one place: no module but shown.py calls an
    escaper of its own (html.escape, rich.markup.escape), so none can escape
    for the wrong medium or forget the control characters."""
    found = []
    for path in sorted(PKG.rglob("*.py")):
        if path.name == "shown.py":
            continue
        for node, name in _calls(ast.parse(path.read_text())):
            if name in ("escape", "from_markup") and "re.escape" not in ast.unparse(node.func):
                found.append(f"{path.relative_to(PKG.parent)}:{node.lineno}: {ast.unparse(node)[:80]}")
    assert not found, "\n".join(found)


# Every module that writes to an output medium, and so must pass what it
# writes through the boundary: a new writer is added here with its test above.
WRITERS = ("report/render.py", "report/text.py", "report/summary.py", "report/kcidb.py", "results/junit.py",
           "watch/reply.py", "watch/status.py", "watch/loop.py", "util.py", "cli/__init__.py",
           "run/runner.py")


def test_every_writer_goes_through_the_boundary():
    missing = [w for w in WRITERS if "shown" not in (PKG / w).read_text()]
    assert not missing


# -- a report is always written, and the follower answers without one ------------

def test_the_follower_answers_from_results_json_when_report_txt_is_missing(tmp_path):
    """A run whose report.txt could not be rendered: the reply is made from
    its results.json (report.txt again), and from its verdicts alone where
    even that fails; never a series marked failed for a rendering error."""
    from foliofarm.watch import tester
    run = tmp_path / "run"
    run.mkdir()
    bad, _ = hostile(_load("neg-exec-text-4k.json"))
    (run / "results.json").write_text(json.dumps(bad))
    said: list[str] = []
    made = tester.report_text(run, said.append)
    assert "exec-text" in made and shown.is_clean(made)
    assert said and "made from its results.json" in said[0]
    # a renderer that fails: the verdicts alone, from results.json
    (run / "results.json").write_text(json.dumps(_load("neg-exec-text-4k.json")))
    said.clear()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(text, "render", lambda doc: 1 / 0)
        alone = tester.report_text(run, said.append)
    assert "the verdicts that are not a pass" in alone and "regression" in alone, alone
    assert "verdicts from results.json" in said[-1]


def test_a_failing_output_never_stops_the_others(tmp_path, monkeypatch):
    """The terminal's tables raising (as rich's MarkupError did on a guest's
    `[/]`) leave report.txt/md/html written: report/outputs.py writes each
    whatever another did, and the runner catches the tables."""
    from foliofarm.report import outputs
    from foliofarm.results.arriving import Moment
    doc = compare.judged(read.typed(read.upgrade(_load("neg-exec-text-4k.json"))))
    failed = []

    def broken(*a, **k):
        raise RuntimeError("a renderer that fails")
    monkeypatch.setattr(outputs.render, "to_html", broken)
    done = outputs.write_end(tmp_path, doc, Moment(final=True), lambda o, e: failed.append(o.name))
    assert failed == ["report.html"]
    assert {"report.md", "report.txt"} <= set(done)
