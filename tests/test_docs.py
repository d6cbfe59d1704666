"""The documentation against the project: every relative link of README.md
and docs/ leads to a file (and a heading) that is there, and every `make` and
`foliofarm` command line they quote names a real target, a real command and
options that command's --help knows."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from foliofarm.cli import parser

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
COMMAND = re.compile(r"(?:^|\s)((?:\S*/)?(?:\.venv/bin/)?foliofarm\s[^\n]*|make(?:\s[^\n]*)?$)")


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", page.read_text(), re.M)}


# `make` in prose that is not the project's: the kernel's own targets and
# options (`make headers`, `make -j2 Image`) and the host's Debian packages
# (`make bc flex bison`)
NOT_OURS = {"headers", "Image", "modules", "-k", "bc"}


def quoted(page: Path) -> list[str]:
    """The command lines a page quotes: in indented or fenced blocks, and in
    code spans (a span of the kernel's make or of package names aside)."""
    out = []
    fenced = False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.startswith("    "):
            out.append(line.strip())
        else:
            out += [c for c in CODE_SPAN.findall(line)
                    if not (c.startswith("make ") and NOT_OURS & set(c.split()[1:2] + c.split()[-1:])
                            or re.match(r"make -j", c))]
    cmds = []
    for text in out:
        text = text.split(" # ")[0]
        for part in re.split(r"\s*(?:\|\||&&|\||;)\s*", text):
            m = COMMAND.match(part.strip()) if part.strip().startswith(("foliofarm", ".venv", "make")) else None
            if m:
                cmds.append(m.group(1).strip())
    return cmds


def words(cmd: str) -> list[str]:
    try:
        return shlex.split(cmd)
    except ValueError:
        return cmd.split()


def test_the_pages_are_there_and_the_readme_is_short():
    assert len((ROOT / "README.md").read_text().splitlines()) < 250
    for name in ("user-guide", "checks", "following", "labs-and-ci", "internals", "performance"):
        assert (ROOT / "docs" / f"{name}.md").is_file(), name


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_leads_somewhere(page):
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        assert dest.exists(), f"{page.name}: link to {target}: no such file"
        if anchor:
            assert anchor in anchors(dest), f"{page.name}: link to {target}: no such heading in {dest.name}"


def _subcommands(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


def _check_foliofarm(argv: list[str], where: str) -> None:
    p = parser()
    options = set(p._option_string_actions)
    args = iter(argv)
    for w in args:
        if w.startswith("-"):
            name = w.split("=", 1)[0]
            known = options | set(p._option_string_actions)
            assert name in known or not name.startswith("--") and len(name) > 2, \
                f"{where}: `{' '.join(argv)}`: {name} is not an option of foliofarm {p.prog.split()[1:]}"
            continue
        subs = _subcommands(p)
        if subs:
            if w.isupper() or w in ("...", "..."):
                return
            assert w in subs, f"{where}: `{' '.join(argv)}`: no command {w} (of {sorted(subs)})"
            p = subs[w]


def _check_make(argv: list[str], where: str, targets: set[str]) -> None:
    for w in argv:
        assert not w.startswith("--"), (f"{where}: `make {' '.join(argv)}`: make takes foliofarm's "
                                        f"options as ARGS='{w}'")
        if "=" in w or w.startswith("-"):
            continue
        assert w in targets, f"{where}: `make {' '.join(argv)}`: no such target in the Makefile"


def test_every_quoted_command_is_one_the_project_has():
    targets = set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(), re.M))
    seen = 0
    for page in PAGES:
        for cmd in quoted(page):
            argv = words(cmd)
            if not argv:
                continue
            if argv[0] == "make":
                _check_make(argv[1:], page.name, targets)
            else:
                _check_foliofarm(argv[1:], page.name)
            seen += 1
    assert seen > 50       # the docs quote commands: they are all read


def test_the_checker_refuses_what_does_not_exist():
    targets = {"run", "test"}
    with pytest.raises(AssertionError, match="no such target"):
        _check_make(["tset"], "x", targets)
    with pytest.raises(AssertionError, match="ARGS="):
        _check_make(["run", "--fresh"], "x", targets)
    with pytest.raises(AssertionError, match="not an option"):
        _check_foliofarm(["run", "--seires", "x.mbox"], "x")
    with pytest.raises(AssertionError, match="no command"):
        _check_foliofarm(["rnu"], "x")
    _check_foliofarm(["run", "--series", "x.mbox", "--noise"], "x")
    assert quoted(ROOT / "README.md")[0].startswith("make run")


def test_the_checks_page_names_every_check_of_the_catalogue():
    """docs/checks.md's table has a row per check the catalogue holds, and no
    row for one it does not."""
    from foliofarm.judge import catalogue
    page = (ROOT / "docs" / "checks.md").read_text()
    table = page[page.index("| check | what it does"):page.index("Negative controls")]
    rows = {name for line in table.splitlines()[2:] if line.startswith("|")
            for name in re.findall(r"`([\w-]+)`", line.split("|")[1])}
    assert rows - {"console"} == set(catalogue.by_name()) - {"console"}, rows ^ set(catalogue.by_name())


FOLDERS = ("cli", "run", "measure", "boot", "disks", "kernel", "intake", "judge", "report", "results",
           "watch", "lava", "selfcheck")
MODULE_PATH = re.compile(r"\b(?:foliofarm/)?((?:" + "|".join(FOLDERS) + r")/[a-z_]+\.py)\b")


def named_module_paths(text: str) -> set[str]:
    return set(MODULE_PATH.findall(text))


def test_every_module_a_docstring_or_page_names_is_there():
    """After a module moves, a docstring, an error message or a page that
    still names its old place (measure/vng.py after it moved to boot/) is
    found here by name."""
    texts = [*(ROOT / "foliofarm").rglob("*.py"), *(ROOT / "docs").glob("*.md"), ROOT / "README.md"]
    stale = sorted(f"{p.relative_to(ROOT)}: {m}" for p in texts for m in named_module_paths(p.read_text())
                   if not (ROOT / "foliofarm" / m).is_file())
    assert stale == []


def test_the_module_path_finder_sees_an_old_place():
    assert named_module_paths("see foliofarm/measure/vng.py and cli/report.py") == {"measure/vng.py",
                                                                                     "cli/report.py"}
