"""KTAP output of the kernel's selftests, read with the kernel's own parser
(tools/testing/kunit/kunit_parser.py).

The parser is taken from one pinned, trusted tree (PARSER_KERNEL: Debian's
linux-source package, its pristine "base" commit), never from the tree under
test: a series is someone else's code, and judging runs on the host unsandboxed.
Its two files are copied once into the cache (parser_dir) and loaded as modules
of their own (load_parser).

run_vmtests.sh prints TAP 13 with its plan "1..N" at the end, each program's
own KTAP nested under "# " between "# running X" and "ok N X". kunit_parser.py
wants the plan before the results (with it at the end the parser reports "No
more test results!" and an empty extra test), so the plan is moved after the
version line; a run cut short (the guest crashed or hung inside a test) has no
plan, and the test it was inside is reported as having no result. Each
program's own KTAP lands in that test's log and is parsed again, giving its
inner results."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from foliofarm.bounded import remove_tree
from foliofarm.intake import git
from foliofarm.judge.measurement import TestResult
from foliofarm.results.outcome import Status

PARSER_KERNEL = "7.3"          # whose tools/testing/kunit parser judges KTAP
PARSER_FILES = ("kunit_parser.py", "kunit_printer.py")
KUNIT = "tools/testing/kunit"

_loaded: dict[Path, ModuleType] = {}
_load_lock = threading.Lock()


def copy_parser(tree: Path, dest: Path, ref: str | None = "base") -> Path:
    """Copy the parser's files of ``tree`` (at git ``ref`` where the tree is a
    git repository with it, else as checked out) into ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in PARSER_FILES:
        text = None
        if ref and (tree / ".git").exists():
            proc = git.git(tree, "show", f"{ref}:{KUNIT}/{name}", check=False, text=False,
                           environment="user")
            if proc.returncode == 0:
                text = proc.stdout
        if text is None:
            text = (tree / KUNIT / name).read_bytes()
        (dest / name).write_bytes(text)
    return dest


def load_parser(directory: Path) -> ModuleType:
    """kunit_parser from ``directory`` (with its kunit_printer), loaded once as
    modules private to it: two trees' parsers never mix."""
    directory = directory.resolve()
    with _load_lock:
        if directory in _loaded:
            return _loaded[directory]
        tag = f"_ff_kunit_{len(_loaded)}"
        printer = _module(f"{tag}_printer", directory / "kunit_printer.py")
        # kunit_parser imports "kunit_printer" by that name: give it this one
        saved = sys.modules.get("kunit_printer")
        sys.modules["kunit_printer"] = printer
        try:
            parser = _module(f"{tag}_parser", directory / "kunit_parser.py")
        finally:
            if saved is None:
                sys.modules.pop("kunit_printer", None)
            else:
                sys.modules["kunit_printer"] = saved
        _loaded[directory] = parser
        return parser


def _module(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@dataclass
class Parsed:
    results: list[TestResult]
    planned: int | None          # the plan's count; None where the run never printed it
    complete: bool               # a plan was printed and every result is there
    errors: list[str]            # what the parser found wrong with the output


STATUS = {"SUCCESS": Status.PASS, "FAILURE": Status.FAIL, "SKIPPED": Status.SKIP, "TEST_CRASHED": Status.CRASH,
          "NO_TESTS": Status.CRASH, "FAILURE_TO_PARSE_TESTS": Status.CRASH}
TAP_VERSION = re.compile(r"^\s*(K?TAP version \d+)\s*$")
PLAN = re.compile(r"^\s*1\.\.(\d+)\s*$")
SKIP_PLAN = re.compile(r"^\s*1\.\.0\s*# SKIP\b\s*(.*)$", re.I)
RESULT = re.compile(r"^\s*(ok|not ok) (\d+) ?(?:- )?([^#]*?)\s*(?:# (.*))?$")
RUNNING = re.compile(r"^# running (.*)$")
# What tests/vmtests/mm-selftests.sh adds to each test's output.
TOOK = re.compile(r"^#? ?foliofarm: took (\d+)s$")
TIMEOUT = re.compile(r"^#? ?foliofarm: (TIMEOUT: .*)$")
LEFT_OUT = re.compile(r"^#? ?foliofarm: SKIP: (.*)$")
# A SKIP of a test that runs in the other part of a split run (measure/split.py).
ELSEWHERE = "elsewhere:"
# A SKIP of a test the series cannot reach (coverage/select.py): not run on the
# series' side, the base's result stands (judge/compare.py: "not-reached").
NOT_REACHED = "not reached:"


SKIPPED_UNRUN = re.compile(r"^# \[SKIP\] (\./.*)$")


def normalise(lines: list[str]) -> tuple[list[str], int | None, bool]:
    """run_vmtests.sh's output made what kunit_parser.py reads: the top-level
    plan, which TAP 13 lets it print at the end, moved after the version line
    and counting every test that has a result line, plus one where the run was
    cut short inside a test (the parser reports that one as crashed, with the
    lines it printed); a test run_vmtests.sh counts but reports only as
    "# [SKIP] ./X" (khugepaged all:file without a writable directory) gets a
    SKIP result line. Returns the lines, the run's own plan count (None where
    it never printed one) and whether it was cut short."""
    start = next((i for i, ln in enumerate(lines) if TAP_VERSION.match(ln)), None)
    if start is None:
        return lines, None, False
    body: list[str] = []
    planned = None
    last_result = last_running = -1
    n = 0
    for ln in lines[start + 1:]:
        if m := PLAN.match(ln):
            if not ln.startswith((" ", "#")):
                planned = int(m.group(1))
                continue
        if m := SKIPPED_UNRUN.match(ln):
            n += 1
            ln = f"ok {n} {_pretty(m.group(1))} # SKIP counted by run_vmtests.sh, not run"
        elif (m := RESULT.match(ln)) and not ln.startswith((" ", "#")):
            n = int(m.group(2))
        if RESULT.match(ln) and not ln.startswith((" ", "#")):
            last_result = len(body)
        elif RUNNING.match(ln):
            last_running = len(body)
        body.append(ln)
    results = sum(1 for ln in body if RESULT.match(ln) and not ln.startswith((" ", "#")))
    cut = last_running > last_result
    plan = f"1..{results + (1 if cut else 0)}"
    return lines[:start + 1] + [plan] + body, planned, cut


def parse(text: str, parser: ModuleType) -> Parsed:
    """A run_vmtests.sh (or any kselftest) output: one TestResult per top-level
    test, each with its program's inner results."""
    lines, planned, cut = normalise(text.replace("\r", "").splitlines())
    errors: list[str] = []
    main = _parse(parser, lines, errors)
    results = []
    for t in main.subtests:
        r = _result(t, parser, errors, lines)
        if r.status == Status.CRASH and not r.name:
            title = [RUNNING.match(ln) for ln in t.log if RUNNING.match(ln)]
            r.name = _pretty(title[-1].group(1)) if title else "(unnamed)"
            r.reason = "no result: the run ended inside this test"
        results.append(r)
    complete = (not cut and planned is not None and len(results) == planned
                and all(r.status != Status.CRASH for r in results))
    return Parsed(results, planned, complete, errors)


def _parse(parser: ModuleType, lines: list[str], errors: list[str]) -> Any:
    """The parser's main test; where it gives up on the output (it raises on
    some malformed input), an empty one, with the reason among the errors."""
    try:
        return parser.parse_run_tests(lines, _Collect(errors))
    except (ValueError, IndexError, AttributeError, TypeError, RecursionError) as exc:
        errors.append(f"the parser gave up: {type(exc).__name__}: {exc}")
        return parser.Test()


class _Collect:
    """A kunit_printer.Printer that prints nothing and keeps the parser's
    [ERROR] messages (the Printer interface: print, print_with_timestamp,
    red/yellow/green, color_len)."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors

    def print(self, message: str) -> None:
        pass

    def print_with_timestamp(self, message: str) -> None:
        if "[ERROR]" in message:
            self.errors.append(message.split("[ERROR]", 1)[1].strip())

    def red(self, text: str) -> str:
        return text

    yellow = green = red

    def color_len(self) -> int:
        return 0


def _pretty(command: str) -> str:
    """run_vmtests.sh's name for a test: the command without "./" or "bash ./"."""
    return re.sub(r"^(bash )?\./", "", command.strip())


def _result(t: Any, parser: ModuleType, errors: list[str], lines: list[str]) -> TestResult:
    status = STATUS.get(t.status.name, Status.CRASH)
    reason = getattr(t, "skip_reason", "") if status == Status.SKIP else ""
    if status == Status.FAIL:
        reason = _directive(t.name, lines) or ""
    inner_lines = [ln[2:] if ln.startswith("# ") else ln[1:] if ln == "#" else ln for ln in t.log]
    inner: list[TestResult] = []
    if not any(TAP_VERSION.match(ln) for ln in inner_lines):
        # a program that prints its plan without the version line (mremap_test)
        first = next((i for i, ln in enumerate(inner_lines) if PLAN.fullmatch(ln)), None)
        if first is not None and any(RESULT.match(ln) for ln in inner_lines[first:]):
            inner_lines = inner_lines[:first] + ["TAP version 13"] + inner_lines[first:]
    if any(TAP_VERSION.match(ln) for ln in inner_lines):
        sub = _parse(parser, inner_lines, [])
        numbered = {}
        for ln in inner_lines:
            if (m := RESULT.match(ln)) and not ln.startswith((" ", "#")):
                numbered.setdefault(int(m.group(2)), m)
        inner = [_inner(n, s, numbered.get(n)) for n, s in enumerate(sub.subtests, 1)]
        ran = [ln for ln in inner_lines if RESULT.match(ln)]
        plan = next((int(m.group(1)) for ln in inner_lines if (m := PLAN.match(ln))), None)
        if plan is not None and len(ran) < plan and status == Status.FAIL:
            reason = (reason + "; " if reason else "") + f"{len(ran)} of {plan} inner results"
    bail = [ln for ln in inner_lines if ln.startswith("Bail out!")]
    if bail and status in (Status.FAIL, Status.CRASH):
        reason = (reason + "; " if reason else "") + bail[-1][:200]
    took = [int(m.group(1)) for ln in t.log if (m := TOOK.match(ln))]
    killed = [m.group(1) for ln in t.log if (m := TIMEOUT.match(ln))]
    if killed and status == Status.FAIL:
        reason = killed[-1] + (f" ({reason})" if reason else "")
    left_out = [m.group(1) for ln in t.log if (m := LEFT_OUT.match(ln))]
    if left_out and status == Status.SKIP and (not reason or left_out[-1].startswith(ELSEWHERE)):
        reason = left_out[-1]
    if status == Status.SKIP and not reason:
        reason = _own_skip(inner_lines, inner)
    return TestResult(name=t.name.strip(), status=status, reason=reason.strip(), inner=inner,
                  seconds=took[-1] if took else None)


def _inner(n: int, t: Any, line: Any) -> TestResult:
    """Inner result ``n`` of a program's KTAP: the parser's status and name,
    where it has no name the one its result line gives ("ok 3 # XFAIL text",
    kselftest's expected failure), and a result that never came named by its
    number."""
    status = STATUS.get(t.status.name, Status.CRASH)
    name, why = t.name.strip(), getattr(t, "skip_reason", "") or ""
    directive = (line.group(4) or "").strip() if line else ""
    if status == Status.CRASH and not name:
        return TestResult(name=f"(no result #{n})", status=Status.CRASH, reason="no result line")
    if not name and directive:
        word, _, text = directive.partition(" ")
        name = text.strip() or directive
        if word.upper() == "XFAIL":
            status, why = Status.XFAIL, "expected by the test"
    elif not why and directive and status != Status.PASS:
        why = directive[4:].strip() if directive.upper().startswith("SKIP") else directive
    return TestResult(name=name or f"(unnamed #{n})", status=status, reason=why)


def _own_skip(lines: list[str], inner: list[TestResult]) -> str:
    """Why a program skipped, in its own words, where run_vmtests.sh's result
    line gives none: its plan's directive ("1..0 # SKIP Not enough 524288 Kb
    pages") or the reasons of its skipped results."""
    for ln in lines:
        if m := SKIP_PLAN.match(ln):
            return m.group(1).strip()
    why = dict.fromkeys(i.reason or i.name for i in inner if i.status == Status.SKIP)
    return "; ".join(w for w in why if w and not w.startswith("(unnamed"))[:200]


def _directive(name: str, lines: list[str]) -> str | None:
    """The "# ..." after a result line of ``name`` (its SKIP reason or a
    failure's exit code), where the parser keeps none."""
    for ln in lines:
        m = RESULT.match(ln)
        if m and m.group(3).strip() == name.strip() and m.group(4):
            d = m.group(4).strip()
            return d[4:].strip() if d.upper().startswith("SKIP") else d
    return None


def parser_dir(cache: Path, tree: Callable[[], Path]) -> Path:
    """Where the pinned parser lives in the cache, copied the first time from
    ``tree()`` (the pinned kernel's pristine source, fetched if need be)."""
    dest = cache / "ktap" / f"linux-{PARSER_KERNEL}"
    if all((dest / f).is_file() for f in PARSER_FILES):
        return dest
    tmp = dest.with_name(f"{dest.name}.tmp-{os.getpid()}")
    remove_tree(tmp)
    copy_parser(tree(), tmp)
    try:
        tmp.rename(dest)
    except OSError:     # another run put it there first
        remove_tree(tmp)
    return dest
