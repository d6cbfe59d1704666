"""A run: resolve the kernel, make the disk images, then a plain loop over the
plan's steps (plan.py), each carried out by the executor (executor.py) and timed as
a named stage; then the verdicts and the exit status (closing.py), repro.sh, the
terminal table and the report; results written as they arrive (results/writer.py)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

from rich.console import Console
from rich.text import Text

from foliofarm import hosttools, shown
from foliofarm.boot.qemu import QEMU
from foliofarm.errors import FarmError, UsageError
from foliofarm.intake import source
from foliofarm.measure import schedule
from foliofarm.paths import cache_dir
from foliofarm.report import outputs, summary
from foliofarm.results.arriving import Moment
from foliofarm.results.writer import ResultsWriter
from foliofarm.run.closing import close, on_interrupt
from foliofarm.run.executor import Executor
from foliofarm.run import dry
from foliofarm.run.plan import Measure, RunOptions, Steps, steps
from foliofarm.util import ConsoleLog, clean_stale_tmp, deadline


class Runner:
    def __init__(self, opts: RunOptions, console: Console | None = None) -> None:
        self.opts = opts
        self.ui = console or Console(stderr=True)
        self.cache = cache_dir()
        self.writer: ResultsWriter       # set by execute()
        self.log = ConsoleLog(self.ui)

    @contextmanager
    def stage(self, name: str, status: str | None = None) -> Iterator[None]:
        """Time a named stage of the run into results.json's ``stages``
        (``<name>_s``, summed over repeats), under a status line if given."""
        t0 = time.monotonic()
        try:
            with self.ui.status(status) if status else nullcontext():
                yield
        finally:
            self.writer.add_seconds(name, time.monotonic() - t0)

    def dry_run(self) -> int:
        for line in dry.dry_run(self.opts, self.cache):
            self.ui.print(shown.rich_text(line), highlight=False)
        return 0

    def execute(self) -> int:
        o = self.opts
        hosttools.require("aarch64-linux-gnu-gcc", QEMU, "dpkg-deb", "git")
        clean_stale_tmp()
        self.writer = w = ResultsWriter(o.results, o.command)
        w.set_machine(**hosttools.machine(), guest=(
            f"{o.cpus} vCPU(s), {o.memory_mb} MB, {o.numa_nodes} NUMA node(s), accel {o.accel}, "
            f"TCG threads {o.tcg_threads}, TCG CPU {o.tcg_cpu}" + (f", own checks booted by {o.boot_with}" if o.boot_with != "qemu" else "")))
        self.log(f"results in {w.dir}")
        self.executor = ex = Executor(o, w, self.cache, self.log, self.ui.status)
        if o.timeout:       # then all the run started is killed, exit 3
            deadline(o.timeout, lambda: self.stopped(f"the run was stopped at its limit of "
                                                      f"{o.timeout:g} s (--timeout)"))
        complete, usage = True, False
        restore = on_interrupt(self.stopped)     # ^C: as --timeout, at once
        try:
            # a lab's artifact server up (SIGTERM cancels its jobs), vng's guest root made
            ex.booter.open(self.log, w.run_id)
            if o.lab is not None:
                w.set_machine(lab=o.lab.describe())
            with self.stage("source", f"preparing kernel source {o.kernel}"):
                src = source.resolve(o.kernel, self.cache)
            self.log(f"kernel {src.spec}: {src.origin} ({src.tree})")
            with self.stage("images", "making disk images"):
                ex.make_disks()
            with self.stage("ktap_parser", "the KTAP parser"):
                ex.fetch_ktap_parser(src)
            with source.states_kept():      # the run holds its trees (source.py)
                complete = self.loop(ex, steps(ex.ground(), o, src))
        except UsageError as exc:
            w.add_error("input", str(exc))
            self.ui.print(Text("error: ", style="red") + shown.rich_text(exc))
            complete, usage = False, True
        except FarmError as exc:
            w.add_error("setup", str(exc))
            self.ui.print(Text("error: ", style="red") + shown.rich_text(exc))
            complete = False
        finally:
            ex.close()
            for booter in {id(b): b for b in (ex.booter, ex.qemu)}.values():
                booter.close()          # its guests, the run's jobs left in a lab, ended
            restore()
        plan = schedule.record_of(w.results().boots, os.cpu_count() or 1, o.guests, o.tree_guests or o.guests)
        if plan is not None:
            w.set_schedule(plan)
        code = close(w, complete, o.strict_style)
        if usage:
            code = 2
        self.finish(ex, code)
        return code

    def stopped(self, why: str, stage: str = "limit") -> None:
        """The run stopped from outside the loop (--timeout, ^C): said, its
        boots (a lab's jobs too) ended."""
        for booter in self.executor.booters():
            booter.cancel(why)
        self.writer.add_error(stage, why)
        close(self.writer, False, self.opts.strict_style)
        self.ui.print(Text("error: ", style="red") + shown.rich_text(why))

    def loop(self, ex: Executor, steps: Steps) -> bool:
        """Carry out each step of the plan, timed; True if every measurement
        could be made. Whatever stops the loop, the builds are settled before
        the plan unwinds (a series tree is reverted only after its builds)."""
        complete, reply = True, None
        try:
            while True:
                try:
                    step = steps.send(reply)
                except StopIteration:
                    return complete
                with self.stage(step.stage):
                    reply = ex.do(step)
                if isinstance(step, Measure):
                    complete = reply and complete
        finally:
            ex.close()
            steps.close()

    def finish(self, ex: Executor, code: int) -> None:
        """repro.sh, the terminal tables and the report, from what was recorded."""
        w = self.writer
        doc = w.results()
        try:        # the terminal's tables, never in the way of the report
            doc.cells and summary.print_table(doc, [c.name for c in self.opts.checks])
            doc.verdicts and summary.print_verdicts(doc)
        except Exception as exc:      # noqa: BLE001 - said; the report is written all the same
            self.log(f"the terminal's tables not shown: {exc}", "red")
        with self.stage("report"):     # every output written at the end (report/outputs.py)
            done = outputs.write_end(w.dir, doc, Moment(final=True, opts=self.opts, drawn=ex.drawn),
                                     lambda o, exc: self.log(f"{o.name} not written: {exc}", "red"))
        w.flush(final=True)
        if "report.md" in done and "report.html" in done:
            self.log(f"report: {w.dir / 'report.md'} and {w.dir / 'report.html'}")
        self.log(f"results: {w.dir / 'results.json'} (exit {code})")
