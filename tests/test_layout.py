"""The package's floors import only downwards:
cli -> the services beside a run (watch, lava, selfcheck) -> run (plan, runner,
executor, bisect, shell) -> measure -> boot/disks -> kernel/report ->
intake/judge -> results (schema, writer, merge, read: no judging) -> the ground
(util, matrix, errors, paths, ...). A lower stage that imports a higher one (judging code
that reaches for the runner, a parser that needs a boot) is caught here, by reading
every module's imports, before it becomes a circle."""
from __future__ import annotations

import ast
import gc
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "foliofarm"

# Higher numbers may import lower ones and their own level, never higher.
LEVELS: dict[str, int] = {
    "__main__": 9, "cli": 9,
    "selfcheck": 8, "watch": 8,
    "run": 7,
    "measure": 6,
    # lava beside boot: a lab's client, its jobs and its boots, one of the
    # booters of boot/protocol.py that measuring calls
    "boot": 5, "disks": 5, "lava": 5,
    "kernel": 4, "report": 4, "coverage": 4,
    "intake": 3, "judge": 3,
    "results": 2,
    "util": 1, "matrix": 1, "errors": 1, "paths": 1, "datafiles": 1, "locks": 1,
    "hosttools": 1, "sandbox": 1, "cgroups": 1, "beneath": 1, "kept": 1, "shown": 1, "bounded": 1, "proc": 1,
}


def top(dotted: str) -> str:
    """The stage a module belongs to: foliofarm.boot.qemu -> boot."""
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else ""


def modules() -> list[tuple[str, Path]]:
    out = []
    for p in sorted(PKG.rglob("*.py")):
        rel = p.relative_to(PKG.parent).with_suffix("")
        name = ".".join(rel.parts)
        out.append((name.removesuffix(".__init__"), p))
    return out


def imports(path: Path) -> set[str]:
    """Every foliofarm module a file imports, at any depth (imports inside
    functions count: they run too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "foliofarm" or node.module.startswith("foliofarm."):
                for a in node.names:                    # a name is a module or a thing in one
                    sub = f"{node.module}.{a.name}"
                    found.add(sub if node.module == "foliofarm" or exists(sub) else node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("foliofarm.")}
    return found


def test_every_module_has_a_level():
    missing = sorted({top(m) for m, _ in modules() if top(m) and top(m) not in LEVELS})
    assert not missing, f"give these modules a level in tests/test_layout.py LEVELS: {missing}"


@pytest.mark.parametrize("name,path", modules(), ids=[m for m, _ in modules()])
def test_imports_run_downwards(name, path):
    if not top(name):
        return                                          # the package's own __init__
    mine = LEVELS[top(name)]
    upward = sorted(d for d in imports(path) if top(d) in LEVELS and LEVELS[top(d)] > mine)
    assert not upward, (f"{name} (level {mine}) imports a higher stage: "
                        + ", ".join(f"{d} (level {LEVELS[top(d)]})" for d in upward))


def exists(dotted: str) -> bool:
    rel = Path(*dotted.split(".")[1:])
    return (PKG / rel).with_suffix(".py").is_file() or (PKG / rel / "__init__.py").is_file()


@pytest.mark.parametrize("path", sorted(PKG.parent.glob("tests/*.py")) + sorted(PKG.parent.glob("tools/*.py"))
                         + [p for _, p in modules()], ids=lambda p: p.name)
def test_every_import_names_a_module_that_is_there(path):
    """After a module moves, an import of its old place fails here by name, even
    where an installed copy of the package could still answer it."""
    gone = sorted(d for d in imports(path) if not exists(d))
    assert not gone, f"{path.relative_to(PKG.parent)} imports modules that are not in foliofarm/: {gone}"


def test_the_check_sees_an_upward_import(tmp_path):
    """The reader finds the imports this test exists to refuse, in each spelling."""
    f = tmp_path / "m.py"
    f.write_text("from foliofarm.run import runner\n"
                 "def g():\n    import foliofarm.cli\n"
                 "from foliofarm.boot.session import x\n")
    assert imports(f) == {"foliofarm.run.runner", "foliofarm.cli", "foliofarm.boot.session"}


def test_the_check_sees_an_import_of_a_moved_module(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("from foliofarm import source\nfrom foliofarm.build import Builder\n"
                 "from foliofarm.intake import apt\nfrom foliofarm.kernel.build import Builder\n")
    assert {d for d in imports(f) if not exists(d)} == {"foliofarm.source", "foliofarm.build"}


def test_a_recipe_key_survives_a_move_but_not_a_change(tmp_path):
    """Cache keys made from a module's code (the selftests and thpmaps recipes)
    do not change when the module moves or its imports do: a move rebuilds
    nothing. A change to the code makes a new key."""
    from foliofarm.util import code_digest
    a = tmp_path / "selftests.py"
    a.write_text('"""Recipe."""\nfrom foliofarm import images\n\ndef build():\n    return 1  # one\n')
    moved = tmp_path / "guest" / "selftests_disk.py"
    moved.parent.mkdir()
    moved.write_text('"""Recipe."""\nfrom foliofarm.guest import images\nimport os\n\n\n'
                     'def build():\n    return 1    # the same\n')
    changed = tmp_path / "changed.py"
    changed.write_text('"""Recipe."""\nfrom foliofarm import images\n\ndef build():\n    return 2\n')
    assert code_digest(a) == code_digest(moved) != code_digest(changed)


class Cycle:
    """Garbage whose collection lets another thread run (a finalizer that
    gives up the GIL, as a subprocess's or a file's may in a run)."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        time.sleep(0)


def test_recipe_keys_are_made_from_many_threads_at_once():
    """The disks' recipes are keyed from threads at once (a page size's
    each): CPython 3.11 raised SystemError ("AST constructor recursion depth
    mismatch") when a collection mid-parse let another thread parse too."""
    from foliofarm.util import code_digest
    paths = [p for _, p in modules()]

    def key(p: Path) -> str:
        for _ in range(2):
            _ = [Cycle() for _ in range(20)]
            digest = code_digest(p)
        return digest

    was = gc.get_threshold()
    gc.set_threshold(50, 5, 5)
    try:
        with ThreadPoolExecutor(8) as pool:
            keys = list(pool.map(key, paths))
    finally:
        gc.set_threshold(*was)
    assert keys == [code_digest(p) for p in paths]


def test_no_cache_key_is_made_from_a_module_path():
    """sha256_files() hashes file names: a module's own file must go through code_digest()."""
    offenders = [p.relative_to(PKG.parent) for _, p in modules()
                 if "sha256_files([Path(__file__)" in p.read_text()]
    assert not offenders


# The top level: the ground modules; every floor is a folder (the command line too)
# (intake, kernel, boot, disks, measure, judge, report, results, run) and the services
# beside a run (watch, lava) and the farm's own self-checks (selfcheck) too.
TOP_LEVEL = {"__init__", "__main__",
             "errors", "paths", "util", "locks", "sandbox", "cgroups", "beneath", "matrix", "datafiles",
             "hosttools", "kept", "shown", "bounded", "proc"}
STAGES = {"cli", "intake", "kernel", "boot", "disks", "measure", "judge", "report", "results", "run", "coverage",
          "selfcheck", "watch", "lava"}


def test_the_top_level_holds_the_stages_and_the_ground():
    modules_here = {p.stem for p in PKG.glob("*.py")}
    folders = {p.name for p in PKG.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert modules_here <= TOP_LEVEL, f"put these in a stage folder: {sorted(modules_here - TOP_LEVEL)}"
    assert folders == STAGES


def test_no_module_over_400_lines_and_no_function_over_60():
    long_modules, long_functions = [], []
    for _, path in modules():
        text = path.read_text()
        if len(text.splitlines()) > 400:
            long_modules.append(f"{path.relative_to(PKG.parent)} ({len(text.splitlines())})")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > 60:
                    long_functions.append(f"{path.relative_to(PKG.parent)}:{node.lineno} {node.name} ({n})")
    assert not long_modules and not long_functions, (long_modules, long_functions)


def test_the_runner_is_a_short_loop():
    assert len((PKG / "run" / "runner.py").read_text().splitlines()) <= 150


def graph() -> dict[str, set[str]]:
    """module -> the foliofarm modules it imports (a package's __init__ by its name)."""
    names = {m for m, _ in modules()}
    out: dict[str, set[str]] = {}
    for name, path in modules():
        deps = set()
        for d in imports(path):
            while d not in names and "." in d:      # a thing in a module: the module
                d = d.rpartition(".")[0]
            if d in names and d != name:
                deps.add(d)
        out[name] = deps
    return out


def circles(g: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``g``: its strongly connected parts of more than
    one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return found


def test_no_import_circle():
    """Not even within a floor, and not for a type only: a circle means two
    modules that are one, or a name that lives in the wrong one."""
    assert circles(graph()) == []


def test_the_circle_check_finds_one():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def folder_lines() -> dict[str, int]:
    lines: dict[str, int] = {}
    for p in PKG.rglob("*.py"):
        folder = p.parent.relative_to(PKG).as_posix()
        lines[folder] = lines.get(folder, 0) + len(p.read_text().splitlines())
    return lines


def test_no_folder_holds_more_than_twice_the_next():
    """No room that is a quarter of the house: the largest folder of the
    package (its top level counted as one) at most twice the next largest."""
    sizes = sorted(folder_lines().items(), key=lambda kv: -kv[1])
    (big, n), (second, m) = sizes[0], sizes[1]
    assert n <= 2 * m, f"foliofarm/{big} holds {n} lines, more than twice foliofarm/{second}'s {m}: split it"


def test_one_meaning_per_name():
    """A class name or a module name says one thing in the package: two
    Series, two Outcomes or two command.py make a reader stop and ask which."""
    classes: dict[str, list[str]] = {}
    stems: dict[str, list[str]] = {}
    for name, path in modules():
        if path.stem not in ("__init__", "__main__"):
            stems.setdefault(path.stem, []).append(name)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                classes.setdefault(node.name, []).append(name)
    assert {k: v for k, v in classes.items() if len(v) > 1} == {}
    assert {k: v for k, v in stems.items() if len(v) > 1} == {}


def test_every_git_call_goes_through_the_one_helper():
    """git runs one way (intake/git.py: its environment, its identity, its
    errors): no module starts it on its own."""
    helper = PKG / "intake" / "git.py"
    offenders = []
    for _, path in modules():
        if path == helper:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.List) and node.elts and isinstance(node.elts[0], ast.Constant) \
                    and node.elts[0].value == "git":
                offenders.append(f"{path.relative_to(PKG.parent)}:{node.lineno}")
    assert not offenders, f"call git through foliofarm.intake.git: {offenders}"


def test_the_git_check_sees_a_git_call(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('import subprocess\nsubprocess.run(["git", "-C", "x", "log"])\n')
    assert any(isinstance(n, ast.List) and n.elts[0].value == "git" for n in ast.walk(ast.parse(f.read_text()))
               if isinstance(n, ast.List) and n.elts and isinstance(n.elts[0], ast.Constant))


def test_only_the_writer_touches_its_document():
    """The run writes results through the writer's typed methods and reads
    them as models (results()): no module reaches into the writer's dict."""
    import re
    offenders = [f"{path.relative_to(PKG.parent)}:{n}" for _, path in modules()
                 if path != PKG / "results" / "writer.py"
                 for n, line in enumerate(path.read_text().splitlines(), 1)
                 if re.search(r"\b(writer|w)\.doc\b", line)]
    assert not offenders, offenders
