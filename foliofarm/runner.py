"""A run: resolve the kernel, build one kernel per page size, boot each once with
every filesystem attached, run the checks per filesystem, judge on the host."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from foliofarm import checks, hosttools, images, matrix, report, rootfs, series, source
from foliofarm.build import Artifacts, Builder
from foliofarm.checks import Check, Outcome
from foliofarm.console import GuestSession
from foliofarm.errors import BuildError, FarmError, GuestError, UsageError
from foliofarm.matrix import Cell
from foliofarm.paths import cache_dir
from foliofarm.qemu import QEMU, Machine
from foliofarm.results import ResultsWriter
from foliofarm.util import sha256_text, write_json

# Figures shown in the summary table, per check.
SUMMARY = {
    "exec-text": (("aligned_pct", "aligned {}%"), ("pte_cont_pct", "cont {}%"),
                  ("folio_kb_hist", "{}")),
    "mmap-miss": (("exec_ra_touches", "exec {}"), ("control_ra_touches", "ctrl {}")),
    "force-thp-ra": (("folio_kb_hist", "{}"), ("pte_cont_pct", "cont {}%"),
                     ("pmd_mapped_pct", "pmd {}%")),
    "anon-mthp": (("folio_kb_hist", "{}"), ("pte_cont_pct", "cont {}%")),
    "elf-text": (("aligned_pct", "aligned {}%"), ("pte_cont_pct", "cont {}%"),
                 ("first_folio_kb", "first {}K")),
    "elf-text-2m": (("aligned_pct", "aligned {}%"), ("pte_cont_pct", "cont {}%"),
                    ("first_folio_kb", "first {}K")),
    "file-collapse": (("file_pmd_mapped_kb", "pmd {}K"),
                      ("file_pmd_mapped_kb_after_write_open", "after write-open {}K"),
                      ("collapse_errno", "errno {}")),
    "sparse-read": (("plain_first_without_ra", "stop@{}"), ("huge_first_without_ra", "huge stop@{}"),
                    ("huge_max_order", "huge order {}")),
}


@dataclass
class RunOptions:
    kernel: str
    page_sizes: list[matrix.PageSize]
    filesystems: list[matrix.Filesystem]
    checks: list[Check]
    results: Path
    variant: str = "default"
    series: str | None = None        # an mbox, a patch directory or BASE..TIP
    compare: str | None = None       # a second kernel, run and judged against --kernel
    each_commit: bool = False
    strict_style: bool = False
    fresh_base: bool = False         # measure the base again even if its results are cached
    accel: str = "auto"
    boot_timeout: float = 300
    command: list[str] = field(default_factory=list)


class Run:
    def __init__(self, opts: RunOptions, console: Console | None = None) -> None:
        self.opts = opts
        self.ui = console or Console(stderr=True)
        self.cache = cache_dir()
        self.writer: ResultsWriter | None = None
        self.kernel_xy = ""     # "X.Y" of the kernel being measured, for expectations
        self.kernel_side: str | None = None

    def log(self, msg: str, style: str | None = None) -> None:
        """Log plain text: kernel and compiler messages are full of [brackets]
        that must not be read as markup."""
        self.ui.log(Text(msg, style=style or ""))

    def execute(self) -> int:
        o = self.opts
        hosttools.require("aarch64-linux-gnu-gcc", QEMU, "dpkg-deb", "git")
        self.writer = w = ResultsWriter(o.results, o.command, strict_style=o.strict_style)
        self.log(f"results in {w.dir}")
        complete = True
        usage = False
        try:
            with self.ui.status(f"preparing kernel source {o.kernel}"):
                src = source.resolve(o.kernel, self.cache)
            self.log(f"kernel {src.spec}: {src.origin} ({src.tree})")
            with self.ui.status("making disk images"):
                disks = {fs.name: images.image(self.cache, fs.name) for fs in o.filesystems}
            builder = Builder(self.cache, log=self.log)
            if o.compare is not None:
                complete = self._compare(builder, src, disks)
            elif o.series is not None:
                complete = self._series(builder, src, disks)
            else:
                complete = self._side(builder, src, disks, side=None)
        except UsageError as exc:
            w.add("errors", {"stage": "input", "message": str(exc)})
            self.ui.print(Text("error: ", style="red") + Text(str(exc)))
            complete, usage = False, True
        except FarmError as exc:
            w.add("errors", {"stage": "setup", "message": str(exc)})
            self.ui.print(Text("error: ", style="red") + Text(str(exc)))
            complete = False
        code = w.finish(complete)
        if w.doc["cells"]:
            self.print_table(w.doc)
        if w.doc.get("verdicts"):
            self.print_verdicts(w.doc)
        try:
            paths = report.write(w.dir, w.doc)
            self.log(f"report: {paths[0]} and {paths[1]}")
        except Exception as exc:   # a report that fails to render must not hide the results
            self.log(f"report not written: {exc}", "red")
        if usage:
            code = 2
        self.log(f"results: {w.dir / 'results.json'} (exit {code})")
        return code

    # -- the two-sided runs ------------------------------------------------------

    def _compare(self, builder: Builder, src: source.KernelSource, disks: dict[str, Path]) -> bool:
        assert self.writer is not None and self.opts.compare is not None
        with self.ui.status(f"preparing kernel source {self.opts.compare}"):
            other = source.resolve(self.opts.compare, self.cache)
        if other.label == src.label:
            raise UsageError(f"--compare {self.opts.compare} is the same kernel version as --kernel "
                             f"{self.opts.kernel} ({src.label}); compare two versions, or use --series")
        self._set_sides(src, other)
        ok = self._side(builder, src, disks, side="base")
        return self._side(builder, other, disks, side="series") and ok

    def _series(self, builder: Builder, src: source.KernelSource, disks: dict[str, Path]) -> bool:
        o = self.opts
        w = self.writer
        assert w is not None and o.series is not None
        ser = series.load(o.series, None if src.spec.startswith("debian:") else src.tree)
        if not src.spec.startswith("debian:"):
            # Never apply in the developer's checkout: use a worktree in the cache.
            if ser.kind != "range" and src.versioned and source.is_dirty(src.tree):
                self.log(f"{src.tree} has uncommitted changes; the base is its HEAD commit", "yellow")
            if not src.versioned:
                raise UsageError(f"{src.tree} is not a git tree: a series needs one (git am)")
            src = source.worktree(src, self.cache, ser.base_rev or "HEAD")
        self.log(f"series: {ser.describe()}")
        w.doc["series"] = {"spec": ser.spec, "kind": ser.kind, "cover": ser.cover,
                           "base_commit": ser.base_commit, "base_under_test": src.origin,
                           "patches": [{"number": p.number, "subject": p.subject, "name": p.name,
                                        "files": list(p.files + p.new_files)} for p in ser.patches]}
        if note := series.base_commit_note(ser, src):
            w.doc["series"]["base_commit_note"] = note
            self.log(note, "yellow")
        w.flush()
        # Apply once before anything is built, so a series that does not apply stops here.
        with self.ui.status("applying the series (trial)"):
            with series.applied(src, ser) as ap:
                w.doc["series"]["commits"] = ap.commits
        with self.ui.status("checkpatch.pl"):
            w.doc["checkpatch"] = series.checkpatch(src.tree, ser)
        w.flush()
        for p in w.doc["checkpatch"]:
            self.log(f"checkpatch {p['number']}/{len(ser.patches)} {p['subject']}: "
                     f"{p['errors']} errors, {p['warnings']} warnings, {p['checks']} checks")
        ok = self._side(builder, src, disks, side="base")
        with series.applied(src, ser) as ap:
            self._set_sides(src, ap.source)
            if o.each_commit:
                self._each_commit(builder, ap)
            ok = self._side(builder, ap.source, disks, side="series") and ok
        return ok

    def _set_sides(self, base: source.KernelSource, new: source.KernelSource) -> None:
        assert self.writer is not None
        self.writer.doc["sides"] = {
            "base": {"kernel": self._label(base), "origin": base.origin},
            "series": {"kernel": self._label(new), "origin": new.origin}}
        self.writer.flush()

    def _label(self, src: source.KernelSource) -> str:
        return src.label + ("" if self.opts.variant == "default" else f"-{self.opts.variant}")

    def _each_commit(self, builder: Builder, ap: series.Applied) -> None:
        """Build every commit before the tip for every page size (the tip is the
        series side's own build); stop at the first that breaks."""
        w = self.writer
        assert w is not None
        try:
            for k, commit in enumerate(ap.commits[:-1], 1):
                series.checkout(ap.source, commit)
                subject = w.doc["series"]["patches"][k - 1]["subject"]
                for page in self.opts.page_sizes:
                    entry = {"number": k, "commit": commit, "subject": subject, "page_size": page.name}
                    try:
                        with self.ui.status(f"--each-commit: building {k}/{len(ap.commits)} {page.name}"):
                            arts = builder.build(ap.source, page, self.opts.variant)
                        entry.update(ok=True, built_now=arts.built)
                        w.add("each_commit", entry)
                    except BuildError as exc:
                        entry.update(ok=False, errors=str(exc))
                        w.add("each_commit", entry)
                        self.log(f"commit {k}/{len(ap.commits)} {subject!r} does not build "
                                 f"for {page.name}\n{exc}", "red")
                        return
                self.log(f"commit {k}/{len(ap.commits)} builds for every page size")
        finally:
            series.checkout(ap.source, ap.commits[-1])

    def _tip_built(self, page: matrix.PageSize, error: str | None) -> None:
        """With --each-commit, the series' last commit is the series side's own build."""
        w = self.writer
        assert w is not None
        commits = (w.doc.get("series") or {}).get("commits") or []
        if not self.opts.each_commit or not commits or self.kernel_side != "series":
            return
        if any(not e["ok"] for e in w.doc.get("each_commit", [])):
            return    # an earlier commit already broke
        entry = {"number": len(commits), "commit": commits[-1],
                 "subject": w.doc["series"]["patches"][-1]["subject"], "page_size": page.name,
                 "ok": error is None}
        if error is not None:
            entry["errors"] = error
        w.add("each_commit", entry)

    # -- one kernel, every page size ----------------------------------------------

    def _side(self, builder: Builder, src: source.KernelSource, disks: dict[str, Path],
              side: str | None) -> bool:
        self.kernel_xy = src.xy
        self.kernel_side = side
        ok = True
        pages = self.opts.page_sizes
        # The next page size builds while this one boots and runs its checks: a
        # TCG guest mostly keeps one thread busy, so make gets the rest.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="build") as pool:
            nxt = pool.submit(self._build, builder, src, pages[0])
            for i, page in enumerate(pages):
                if not nxt.done():
                    with self.ui.status(f"building {self._label(src)} {page.name} (make Image modules)"):
                        built = nxt.result()
                else:
                    built = nxt.result()
                if i + 1 < len(pages):
                    nxt = pool.submit(self._build, builder, src, pages[i + 1])
                ok = self._page_size(built, src, page, disks, side) and ok
        return ok

    def _build(self, builder: Builder, src: source.KernelSource, page: matrix.PageSize
               ) -> tuple[Artifacts | None, Path | None, FarmError | None]:
        """Build one kernel and its initramfs (in the build thread: no writer, no status)."""
        try:
            arts = builder.build(src, page, self.opts.variant)
            return arts, rootfs.initramfs(self.cache, arts), None
        except FarmError as exc:
            return None, None, exc

    def _page_size(self, built: tuple[Artifacts | None, Path | None, FarmError | None],
                   src: source.KernelSource, page: matrix.PageSize, disks: dict[str, Path],
                   side: str | None) -> bool:
        assert self.writer is not None
        w = self.writer
        label = self._label(src)
        cells = [Cell(page, fs, label) for fs in self.opts.filesystems]
        entry: dict[str, Any] = {"page_size": page.name, "kernel": label, "side": side}
        arts, initrd, exc = built
        if isinstance(exc, BuildError):
            entry.update(build_failed=True, error=str(exc))
            w.add("kernels", entry)
            self._tip_built(page, str(exc))
            self._error_cells(cells, f"build failed: {exc}")
            return side == "series"   # a series that breaks the build is a verdict, not an incomplete run
        if exc is not None or arts is None or initrd is None:
            self._error_cells(cells, f"build failed: {exc}")
            return False
        meta = arts.meta()
        entry.update(artifacts=str(arts.dir), built_now=arts.built,
                     build_seconds=meta.get("seconds"), reproduce=meta.get("reproduce"),
                     absent_optional=meta.get("absent_optional", []))
        w.add("kernels", entry)
        self._tip_built(page, None)
        self.log(f"kernel {label} {page.name}: {'built' if arts.built else 'cached'} {arts.dir.name}")
        reuse = side == "base" and not self.opts.fresh_base
        return self._boot(arts, initrd, cells, disks, reuse_baseline=reuse)

    def _baseline_path(self, arts: Artifacts, initrd: Path, cells: list[Cell],
                       disks: dict[str, Path]) -> Path:
        """Where a boot's measurements are kept, keyed by everything that makes them:
        the kernel artifacts, the initramfs (guest programs), the disk images, the
        checks' definitions and the accelerator. Judging is redone from the dumps."""
        defs = [(c.name, c.program, c.args, c.timeout, sorted(c.options.items(), key=str))
                for c in self.opts.checks]
        key = sha256_text(arts.dir.name, initrd.name, repr(sorted((c.fs.name, str(disks[c.fs.name]))
                                                               for c in cells)),
                          repr(defs), self.opts.accel, str(self.opts.boot_timeout))[:20]
        return self.cache / "baseline" / f"{arts.dir.name[:60]}-{key}.json"

    def _boot(self, arts: Artifacts, initrd: Path, cells: list[Cell], disks: dict[str, Path],
              reuse_baseline: bool = False) -> bool:
        assert self.writer is not None
        w = self.writer
        page = cells[0].page
        machine = Machine(kernel=arts.image, initrd=initrd,
                          disks={c.fs.name: disks[c.fs.name] for c in cells},
                          scratch={f"{c.fs.name}-rw": disks[c.fs.name] for c in cells
                                   if c.fs.rw_mount_options},
                          accel=self.opts.accel)
        log = w.dir / "boots" / f"{page.name}-{cells[0].kernel}.console.log"
        boot: dict[str, Any] = {"page_size": page.name, "kernel": cells[0].kernel,
                                "console_log": str(log), "qemu": shlex.join(machine.argv())}
        baseline = self._baseline_path(arts, initrd, cells, disks)
        if reuse_baseline and baseline.is_file():
            saved = json.loads(baseline.read_text())
            for cell in cells:
                for chk in self.opts.checks:
                    w.record(cell, self._judge(cell, chk, saved["measurements"][f"{cell.fs.name}/{chk.name}"]),
                             flush=False)
                w.record(cell, console_outcome([]), flush=False)
            boot.update(reused=str(baseline), measured_by=saved.get("run_id"),
                        console_log=saved.get("console_log"))
            w.add("boots", boot)
            self.log(f"{page.name} {cells[0].kernel}: base measurements reused from run "
                     f"{saved.get('run_id')} ({baseline.name}); --fresh-base measures again")
            return True
        pending = [(c, chk) for c in cells for chk in self.opts.checks]
        cell_splats: dict[str, list[str]] = {c.id: [] for c in cells}
        measured: dict[str, dict[str, Any]] = {}
        self.log(f"booting {page.name} {cells[0].kernel}: console log {log}")
        try:
            with GuestSession(machine.argv(), log, self.opts.boot_timeout) as session:
                boot["boot_seconds"] = round(session.boot_seconds, 2)
                boot["banner"] = session.banner
                self._verify_guest(session, page)
                boot_splats = [s.line for s in session.splats]
                self.log(f"booted {page.name} in {session.boot_seconds:.1f}s "
                         f"({session.banner.get('uname', '?')})")
                while pending:
                    cell, chk = pending[0]
                    with self.ui.status(f"{cell.id}: {chk.name}"):
                        m = self._measure(session, cell, chk)
                    outcome = self._judge(cell, chk, m)
                    pending.pop(0)
                    measured[f"{cell.fs.name}/{chk.name}"] = m
                    cell_splats[cell.id].extend(m["splats"])
                    w.record(cell, outcome)
                    self.log(f"{cell.id} {chk.name}: {outcome.outcome} {outcome.reason}")
                for cell in cells:
                    w.record(cell, console_outcome(boot_splats + cell_splats[cell.id]))
        except GuestError as exc:
            for cell, chk in pending:
                w.record(cell, Outcome(chk.name, "error", str(exc)), excerpt=exc.excerpt)
            for cell in cells:
                w.record(cell, Outcome("console", "fail" if exc.excerpt else "error",
                                       str(exc)), excerpt=exc.excerpt)
            boot["error"] = str(exc)
            w.add("boots", boot)
            self.log(f"{page.name}: {exc}", "red")
            return False
        w.add("boots", boot)
        clean = not boot_splats and all(m["kind"] != "error" and not m["splats"] for m in measured.values())
        if clean:   # only a clean boot's measurements can serve as a base later
            write_json(baseline, {"run_id": w.run_id, "console_log": str(log), "measurements": measured})
        return True

    def _verify_guest(self, session: GuestSession, page: matrix.PageSize) -> None:
        b = session.banner
        if b.get("page_size") != str(page.bytes):
            raise GuestError(f"guest reports page size {b.get('page_size')}, expected {page.bytes}: "
                             "the kernel was not built for this page size")
        if b.get("probe") != "loaded":
            raise GuestError("the page-table probe module did not load", session._excerpt())

    def _measure(self, g: GuestSession, cell: Cell, chk: Check) -> dict[str, Any]:
        """Run one check's guest program and fetch its dump: what the guest saw,
        not yet judged. kind: "dump", "skip" or "error"."""
        dev = g.banner.get(f"mount:{cell.fs.name}")
        if not dev or dev == "FAILED":
            return {"kind": "error", "reason": f"{cell.fs.name} is not mounted in the guest", "splats": []}
        dump = f"/tmp/out/{chk.name}-{cell.fs.name}.dump"
        fmt = {"mnt": f"/mnt/{cell.fs.name}", "fs": cell.fs.name, "dev": dev, "dump": dump,
               "anon_mthp_kb": cell.page.anon_mthp_kb,
               # the stub file on the writable attachment, "-" where there is none (erofs)
               "wfile": (f"/mnt/{cell.fs.name}-rw/stubs.bin"
                         if g.banner.get(f"mount:{cell.fs.name}-rw", "FAILED") != "FAILED" else "-")}
        # a program with a path runs from the filesystem under test, others from the initramfs
        program = chk.program.format(**fmt) if "/" in chk.program else f"/ff/{chk.program}"
        for line in chk.options.get("setup", []):
            pre = g.run(line.format(**fmt), timeout=60)
            if pre.status != 0:
                return {"kind": "error", "splats": [s.line for s in pre.splats],
                        "reason": f"setup {line!r} exited {pre.status}: {pre.output[-300:]}"}
        res = g.run(shlex.join([program, *(a.format(**fmt) for a in chk.args)]), timeout=chk.timeout)
        m: dict[str, Any] = {"ktap": res.output, "splats": [s.line for s in res.splats],
                             "seconds": round(res.seconds, 2)}
        ktap = parse_ktap(res.output)
        if res.status != 0 or ktap.get("not_ok"):
            return {**m, "kind": "error", "reason": f"guest program exited {res.status}: "
                    + "; ".join(ktap.get("diag", [])[-3:])}
        if ktap.get("skip"):
            return {**m, "kind": "skip", "reason": ktap["skip"]}
        return {**m, "kind": "dump", "dump": g.read_file(dump)}

    def _judge(self, cell: Cell, chk: Check, m: dict[str, Any]) -> Outcome:
        """The host's judgement of one measurement; its KTAP and dump are kept."""
        assert self.writer is not None
        cdir = self.writer.cell_dir(cell)
        if "ktap" in m:
            (cdir / f"{chk.name}.ktap").write_text(m["ktap"])
        if m["kind"] != "dump":
            return Outcome(chk.name, m["kind"], m["reason"])
        (cdir / f"{chk.name}.dump").write_text(m["dump"])
        outcome = checks.evaluate(chk, m["dump"], self.kernel_xy, cell.page.name, cell.fs.name)
        outcome.metrics["guest_seconds"] = m["seconds"]
        return outcome

    def _error_cells(self, cells: list[Cell], message: str) -> None:
        assert self.writer is not None
        for cell in cells:
            for chk in self.opts.checks:
                self.writer.record(cell, Outcome(chk.name, "error", message))
        self.log(message, "red")

    def print_table(self, doc: dict[str, Any]) -> None:
        names = [c.name for c in self.opts.checks] + ["console"]
        table = Table(title=f"foliofarm {doc['run_id']}")
        table.add_column("cell")
        for n in names:
            table.add_column(n)
        colour = {"pass": "green", "fail": "red", "error": "red", "xfail": "yellow",
                  "xpass": "magenta", "skip": "dim"}
        for cell in doc["cells"]:
            row = [cell["id"]]
            by_name = {c["name"]: c for c in cell["checks"]}
            for n in names:
                c = by_name.get(n)
                if c is None:
                    row.append("-")
                    continue
                figs = " ".join(fmt.format(_short(c["metrics"][k])) for k, fmt in SUMMARY.get(n, ())
                                if k in c["metrics"])
                row.append(f"[{colour.get(c['outcome'], 'white')}]{c['outcome']}[/] {figs}".strip())
            table.add_row(*row)
        Console().print(table)


    def print_verdicts(self, doc: dict[str, Any]) -> None:
        sides = doc["sides"]
        table = Table(title=f"{sides['base']['kernel']} -> {sides['series']['kernel']}: verdicts")
        for col in ("cell", "check", "verdict", "figures (base -> series)"):
            table.add_column(col)
        colour = {"pass": "green", "regression": "bold red", "build-broken": "bold red",
                  "fixed": "cyan", "fail": "red", "xfail": "yellow", "error": "red", "skip": "dim"}
        for r in doc.get("verdicts", []):
            figs = ", ".join(f"{f['metric']} {f['base']}->{f['series']}" for f in r["figures"]
                             if f["base"] != f["series"])
            table.add_row(f"{r['page_size']}-{r['fs']}", r["check"],
                          f"[{colour.get(r['verdict'], 'white')}]{r['verdict']}[/]", figs or "same")
        Console().print(table)


def _short(v: Any) -> str:
    if isinstance(v, dict):   # folio size histogram: "64K:100%"
        total = sum(v.values()) or 1
        return ",".join(f"{k}K:{100 * n // total}%" for k, n in v.items())
    return str(v)


def console_outcome(splats: list[str]) -> Outcome:
    if splats:
        return Outcome("console", "fail", f"{len(splats)} splat(s): " + " | ".join(splats[:3]),
                       {"splats": len(splats)})
    return Outcome("console", "pass", "", {"splats": 0})


KTAP_RESULT = re.compile(r"^(not ok|ok) (\d+) (\S+)(?: # (.*))?$")


def parse_ktap(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {"results": [], "diag": []}
    for line in text.splitlines():
        line = line.strip()
        if m := KTAP_RESULT.match(line):
            ok = m.group(1) == "ok"
            directive = m.group(4) or ""
            out["results"].append((ok, m.group(3), directive))
            if not ok:
                out["not_ok"] = True
            elif directive.upper().startswith("SKIP"):
                out["skip"] = directive[4:].strip() or "skipped"
        elif line.startswith("# "):
            out["diag"].append(line[2:])
    return out
