"""A run: resolve the kernel, build one kernel per page size, boot each once with
every filesystem attached, run the checks per filesystem, judge on the host."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from foliofarm import checks, hosttools, images, matrix, rootfs, series, source
from foliofarm.build import Artifacts, Builder
from foliofarm.checks import Check, Outcome
from foliofarm.console import GuestSession
from foliofarm.errors import FarmError, GuestError, InfraError
from foliofarm.matrix import Cell
from foliofarm.paths import cache_dir
from foliofarm.qemu import QEMU, Machine
from foliofarm.results import ResultsWriter

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
    series: Path | None = None
    accel: str = "auto"
    boot_timeout: float = 300
    command: list[str] = field(default_factory=list)


class Run:
    def __init__(self, opts: RunOptions, console: Console | None = None) -> None:
        self.opts = opts
        self.ui = console or Console(stderr=True)
        self.cache = cache_dir()
        self.writer: ResultsWriter | None = None
        self.kernel_xy = ""     # "X.Y" of the kernel under test, for expectations

    def log(self, msg: str) -> None:
        self.ui.log(msg)

    def execute(self) -> int:
        o = self.opts
        hosttools.require("aarch64-linux-gnu-gcc", QEMU, "dpkg-deb", "git")
        self.writer = w = ResultsWriter(o.results, o.command)
        self.log(f"results in {w.dir}")
        complete = True
        try:
            with self.ui.status(f"preparing kernel source {o.kernel}"):
                src = source.resolve(o.kernel, self.cache)
            self.log(f"kernel {src.spec}: {src.origin} ({src.tree})")
            with self.ui.status("making disk images"):
                disks = {fs.name: images.image(self.cache, fs.name) for fs in o.filesystems}
            builder = Builder(self.cache, log=self.log)
            self.kernel_xy = src.xy
            if o.series is not None:
                with series.applied(src, o.series) as patched:
                    self.log(f"applied {o.series} to {src.origin}")
                    for page in o.page_sizes:
                        complete &= self._page_size(builder, patched, page, disks)
            else:
                for page in o.page_sizes:
                    complete &= self._page_size(builder, src, page, disks)
        except FarmError as exc:
            w.add("errors", {"stage": "setup", "message": str(exc)})
            self.ui.print(f"[red]error:[/red] {exc}")
            complete = False
        code = w.finish(complete)
        self.print_table(w.doc)
        self.log(f"results: {w.dir / 'results.json'} (exit {code})")
        return code

    def _page_size(self, builder: Builder, src: source.KernelSource, page: matrix.PageSize,
                   disks: dict[str, Path]) -> bool:
        assert self.writer is not None
        w = self.writer
        label = src.label + ("" if self.opts.variant == "default" else f"-{self.opts.variant}")
        cells = [Cell(page, fs, label) for fs in self.opts.filesystems]
        try:
            with self.ui.status(f"building {label} {page.name} (make Image modules)"):
                arts = builder.build(src, page, self.opts.variant)
            meta = arts.meta()
            w.add("kernels", {"page_size": page.name, "kernel": label, "artifacts": str(arts.dir),
                              "built_now": arts.built, "build_seconds": meta.get("seconds"),
                              "reproduce": meta.get("reproduce"),
                              "absent_optional": meta.get("absent_optional", [])})
            self.log(f"kernel {label} {page.name}: {'built' if arts.built else 'cached'} {arts.dir.name}")
            initrd = rootfs.initramfs(self.cache, arts)
        except FarmError as exc:
            self._error_cells(cells, f"build failed: {exc}")
            return False
        return self._boot(arts, initrd, cells, disks)

    def _boot(self, arts: Artifacts, initrd: Path, cells: list[Cell], disks: dict[str, Path]) -> bool:
        assert self.writer is not None
        w = self.writer
        page = cells[0].page
        machine = Machine(kernel=arts.image, initrd=initrd,
                          disks={c.fs.name: disks[c.fs.name] for c in cells},
                          scratch={f"{c.fs.name}-rw": disks[c.fs.name] for c in cells
                                   if c.fs.rw_mount_options},
                          accel=self.opts.accel)
        log = w.dir / "boots" / f"{page.name}-{cells[0].kernel}.console.log"
        boot = {"page_size": page.name, "kernel": cells[0].kernel, "console_log": str(log),
                "qemu": shlex.join(machine.argv())}
        pending = [(c, chk) for c in cells for chk in self.opts.checks]
        cell_splats: dict[str, list[str]] = {c.id: [] for c in cells}
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
                        outcome, splats = self._run_check(session, cell, chk)
                    pending.pop(0)
                    cell_splats[cell.id].extend(splats)
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
            self.log(f"[red]{page.name}: {exc}[/red]")
            return False
        w.add("boots", boot)
        return True

    def _verify_guest(self, session: GuestSession, page: matrix.PageSize) -> None:
        b = session.banner
        if b.get("page_size") != str(page.bytes):
            raise GuestError(f"guest reports page size {b.get('page_size')}, expected {page.bytes}: "
                             "the kernel was not built for this page size")
        if b.get("probe") != "loaded":
            raise GuestError("the page-table probe module did not load", session._excerpt())

    def _run_check(self, g: GuestSession, cell: Cell, chk: Check) -> tuple[Outcome, list[str]]:
        assert self.writer is not None
        cdir = self.writer.cell_dir(cell)
        dev = g.banner.get(f"mount:{cell.fs.name}")
        if not dev or dev == "FAILED":
            return Outcome(chk.name, "error", f"{cell.fs.name} is not mounted in the guest"), []
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
                return Outcome(chk.name, "error", f"setup {line!r} exited {pre.status}: {pre.output[-300:]}"), []
        res = g.run(shlex.join([program, *(a.format(**fmt) for a in chk.args)]), timeout=chk.timeout)
        (cdir / f"{chk.name}.ktap").write_text(res.output)
        splats = [s.line for s in res.splats]
        ktap = parse_ktap(res.output)
        if res.status != 0 or ktap.get("not_ok"):
            return Outcome(chk.name, "error", f"guest program exited {res.status}: "
                           + "; ".join(ktap.get("diag", [])[-3:])), splats
        if ktap.get("skip"):
            return Outcome(chk.name, "skip", ktap["skip"]), splats
        text = g.read_file(dump)
        (cdir / f"{chk.name}.dump").write_text(text)
        outcome = checks.evaluate(chk, text, self.kernel_xy, cell.page.name, cell.fs.name)
        outcome.metrics["guest_seconds"] = round(res.seconds, 2)
        return outcome, splats

    def _error_cells(self, cells: list[Cell], message: str) -> None:
        assert self.writer is not None
        for cell in cells:
            for chk in self.opts.checks:
                self.writer.record(cell, Outcome(chk.name, "error", message))
        self.log(f"[red]{message}[/red]")

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
