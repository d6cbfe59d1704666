"""`foliofarm run --lab URL`: the builds stay here, the farm's own checks'
boots go to a LAVA lab. Each cell's boot (of each side) becomes the LAVA job
of jobs.py, made from the very QEMU command line the farm would have run
(cells.machine): its kernel, initramfs, disks and job disk served to the
lab's workers with their sha256 (serve.py), submitted through the REST API
(rest.py), followed with back-off until it ends, its log fetched into the
run's folder and read by the reader `report --lava` uses (framed.py), then
judged by the run like any boot of its own: LabBoots is one implementation of
boot/protocol.py, which measuring calls in place of the farm's QEMU. The
tree's checks (the kernel's selftests, thpmaps) stay on the farm's QEMU, as
under vng: they need the outbox disk.

A lab's faults are the lab's: a job that ends Incomplete for anything but
the guest's own doing (LAVA's error type Test: a check that exited non-zero,
a panic), Canceled, a job whose worker went offline while it ran, a job past
its time, a lab that does not answer: the cell's boot is tried again, up to
``attempts`` jobs, then its checks are `error` with the lab's words, never a
verdict. A token the lab refuses stops the run as a usage error. Stopping
the run (--timeout, SIGTERM, ^C) cancels its jobs in the lab."""

from __future__ import annotations

import argparse
import os
import shlex
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import yaml

from foliofarm.results.schema import BootEntry
from foliofarm.errors import UsageError
from foliofarm.boot import banner, splat
from foliofarm.boot import framed
from foliofarm.boot.protocol import Booted, Reports, Say, Status
from foliofarm.boot.session import BootPlan, Measured
from foliofarm.judge import measurement
from foliofarm.judge.catalogue import Check
from foliofarm.lava import jobs, log
from foliofarm.lava.rest import LabAPI, LabFault, token_from
from foliofarm.lava.serve import ArtifactServer
from foliofarm.matrix import Cell

WORKER_CHECK_S = 15        # how often a running job's worker is asked after


def add_arguments(ap: argparse.ArgumentParser) -> None:
    g = ap.add_argument_group("a LAVA lab (docs/labs-and-ci.md: Running on a LAVA lab)")
    g.add_argument("--lab", default=None, metavar="URL",
                   help="boot the farm's own checks in this LAVA lab (its REST API, v0.2) instead of here")
    g.add_argument("--lab-token", default=None, metavar="FILE",
                   help="the file holding the lab's API token (else FOLIOFARM_LAB_TOKEN)")
    g.add_argument("--lab-device-type", default="qemu", metavar="NAME",
                   help="the lab's device type for the jobs (LAVA's qemu type; default qemu)")
    g.add_argument("--lab-serve", default="127.0.0.1:0", metavar="HOST:PORT",
                   help="where the farm's artifact server listens for the lab's workers (default "
                        "127.0.0.1, any free port: a lab on this machine)")
    g.add_argument("--lab-artifacts", default=None, metavar="URL",
                   help="the address the workers fetch artifacts from (default the server's own)")
    g.add_argument("--lab-publish", default=None, type=Path, metavar="DIR",
                   help="copy artifacts into DIR, which a web server serves at --lab-artifacts URL, "
                        "instead of serving them")
    g.add_argument("--lab-jobs", type=int, default=6, metavar="N",
                   help="at most N of the run's jobs queued or running in the lab at once (default 6)")
    g.add_argument("--lab-attempts", type=int, default=3, metavar="N",
                   help="jobs tried per boot before its checks are `error` with the lab's words (default 3)")
    g.add_argument("--lab-patience", type=float, default=120, metavar="S",
                   help="how long a lab that does not answer is waited for, per call (default 120)")


@dataclass
class LabJob:
    """One job of the run, as the lab ran it."""
    id: int
    page: str
    device: str = ""
    state: str = "Submitted"
    health: str = "Unknown"
    said: str = ""               # the lab's words, if it failed
    seconds: list[float] = field(default_factory=list)   # queued, then running: the lab's own times


@dataclass
class LabBoots:
    """The run's side of a lab: its API, its artifacts, its live jobs (a
    booter of boot/protocol.py)."""
    api: LabAPI
    device_type: str
    attempts: int
    queue: int
    artifacts: ArtifactServer | None = None
    serve: tuple[str, str | None, Path | None] = ("127.0.0.1:0", None, None)
    live: set[int] = field(default_factory=set)
    stopping: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    log: Any = None
    run_id: str = ""
    name = "lava"
    tree_checks = False           # they need the outbox disk and a deadline per test

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "LabBoots | None":
        if not args.lab:
            return None
        if args.boot_with != "qemu":
            raise UsageError("--lab boots the farm's own checks in the lab: give it without --boot-with")
        if args.lab_jobs < 1 or args.lab_attempts < 1:
            raise UsageError("--lab-jobs and --lab-attempts are at least 1")
        api = LabAPI(args.lab, token_from(args.lab_token, dict(os.environ)), args.lab_patience)
        api.check(args.lab_device_type)       # refused now, before anything builds
        return cls(api, args.lab_device_type, args.lab_attempts, args.lab_jobs,
                   serve=(args.lab_serve, args.lab_artifacts, args.lab_publish))

    def describe(self) -> str:
        return f"LAVA lab {self.api.url} (device type {self.device_type})"

    def open(self, say: Say, run_id: str) -> None:
        """Start serving artifacts; SIGTERM cancels the run's jobs first."""
        self.log, self.run_id, self.stopping = say, run_id, False
        self.artifacts = ArtifactServer(*self.serve)
        say(f"artifacts for the lab at {self.artifacts.url}" + (" (published)" if self.serve[2] else ""), None)
        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGTERM)

            def on_term(signum, frame):
                self.cancel("the run was stopped (SIGTERM)")
                signal.signal(signal.SIGTERM, previous if callable(previous) else signal.SIG_DFL)
                raise KeyboardInterrupt
            signal.signal(signal.SIGTERM, on_term)

    def close(self) -> None:
        self.cancel("the run ended")
        if self.artifacts is not None:
            self.artifacts.close()

    def cancel(self, why: str) -> None:
        """Cancel every job of the run still in the lab (the run is stopping)."""
        self.stopping = True
        with self.lock:
            live = sorted(self.live)
        for job_id in live:
            try:
                self.api.patience = min(self.api.patience, 10)
                self.api.cancel(job_id)
                if self.log:
                    self.log(f"LAVA job {job_id} canceled: {why}", "yellow")
            except Exception:      # the lab may be what stopped: its jobs end with it
                pass

    # -- one cell's boot ---------------------------------------------------

    def boot(self, plan: BootPlan, status: Status | None = None) -> Iterator[Booted]:
        """The cell's own checks in one LAVA job (tried again on the lab's
        faults), read back as the farm's own boot of them is."""
        measured, boot, reports = self.boot_group(plan)
        yield Reports(plan.pairs[0][0], reports, "before the first check")
        yield boot
        yield from measured

    def boot_group(self, plan: BootPlan) -> tuple[list[Measured], BootEntry, list[str]]:
        pairs, stem = plan.pairs, plan.log_stem
        cell = pairs[0][0]
        where = stem.parent.parent / "lava" / stem.name
        definition = self.job_for(plan, where)
        faults: list[str] = []
        for attempt in range(1, self.attempts + 1):
            try:
                job = self.run_job(definition, cell, stem.name, attempt)
            except LabFault as exc:
                faults.append(str(exc))
                self.log(f"{stem.name}: attempt {attempt} of {self.attempts} failed: {exc}", "yellow")
                if self.stopping:
                    break
                continue
            path = where / f"job-{job.id}.lava.log"
            try:
                path.write_bytes(self.api.logs(job.id))
                records = log.entries(path)
            except (LabFault, UsageError) as exc:
                faults.append(f"job {job.id}: its log: {exc}")
                continue
            kind, why = job_error(records)
            if job.health != "Complete" and kind != "Test":
                said = job.said or (f"{kind} error: {why}" if kind else "no reason given")
                faults.append(f"LAVA job {job.id} on {job.device or 'no device'} ended {job.health}: {said}")
                self.log(f"{stem.name}: {faults[-1]}", "yellow")
                continue
            measured, boot, reports = read_job(records, job, self.api.job_page(job.id), str(path), cell, pairs,
                                               attempt)
            boot.lab_faults = faults
            return measured, boot, reports
        reason = "the lab: " + "; then ".join(faults or ["the run was stopped"])
        boot = BootEntry(page_size=cell.page.name, kernel=cell.kernel, console_log="", fs=cell.fs.name,
                         qemu=f"LAVA {self.device_type} at {self.api.url}", attempt=len(faults), error=reason,
                         lab_faults=faults, taint=0)
        return [(c, chk, measurement.error(reason)) for c, chk in pairs], boot, []

    def job_for(self, plan: BootPlan, where: Path) -> str:
        """The job: the QEMU guest the farm would have booted, its files served."""
        if plan.machine is None:
            raise UsageError("a lab boots the farm's guest: the plan gave none")
        cell, checks = plan.pairs[0][0], [chk for _, chk in plan.pairs]
        b = jobs.parse_qemu(shlex.join(plan.machine.argv()))
        disk = framed.job_disk(where / "job-disk.erofs", cell, checks, [d.serial for d in b.drives])
        minutes = max(10, int(sum(ch.timeout for ch in checks) // 60) + 5)
        jd = jobs.job(cell.id, b, checks, disk, self.run_id, minutes, plan.labels)
        jd["device_type"] = self.device_type
        assert self.artifacts is not None, "open() first"
        for image in jd["actions"][0]["deploy"]["images"].values():
            image["url"], image["sha256sum"], packed = self.artifacts.add(Path(image["url"].removeprefix("file://")))
            if packed:
                image["compression"] = packed
        text = yaml.safe_dump(jd, sort_keys=False, width=1000)
        (where / "job.yaml").write_text(text)
        return text

    def run_job(self, definition: str, cell: Cell, name: str, attempt: int) -> LabJob:
        """Submit, then follow until the job ends (2 s apart, then up to 30 s)."""
        limit = (yaml.safe_load(definition)["timeouts"]["job"]["minutes"] + 5) * 60
        if self.stopping:
            raise LabFault("the run was stopped")
        job = LabJob(self.api.submit(definition), cell.page.name)
        with self.lock:
            self.live.add(job.id)
        self.log(f"{name}: LAVA job {job.id} submitted (attempt {attempt}): {self.api.job_page(job.id)}", None)
        try:
            return self.follow(job, name, limit)
        finally:
            with self.lock:
                self.live.discard(job.id)

    def follow(self, job: LabJob, name: str, limit: float) -> LabJob:
        """Until the job ends; one running past ``limit`` seconds (its own
        timeout and a margin: the lab should have ended it) is canceled and
        the lab's fault. Queued, it waits as long as the lab is busy (the
        run's --timeout bounds that)."""
        delay, asked_worker, began = 2.0, 0.0, 0.0
        while True:
            if self.stopping:
                self.api.cancel(job.id)
                raise LabFault(f"job {job.id} canceled: the run was stopped")
            got = self.api.job(job.id)
            seen = (got["state"], got.get("actual_device") or "")
            if seen != (job.state, job.device):
                job.state, job.device = seen
                self.log(f"{name}: LAVA job {job.id} {job.state}" + (f" on {job.device}" if job.device else ""),
                         None)
                delay = 2.0
                began = time.monotonic() if job.state == "Running" else began
            if job.state == "Running" and time.monotonic() - began > limit:
                self.api.cancel(job.id)
                raise LabFault(f"LAVA job {job.id} on {job.device} ran past {limit / 60:.0f} minutes "
                               "(its timeout, and the lab did not end it): canceled")
            if job.state == "Finished":
                job.health, job.said = got["health"], (got.get("failure_comment") or "").strip()
                job.seconds = lab_times(got)
                return job
            if job.state == "Running" and job.device and time.monotonic() - asked_worker > WORKER_CHECK_S:
                asked_worker = time.monotonic()
                worker, state = self.api.worker_state(job.device)
                if state != "Online":
                    try:
                        self.api.cancel(job.id)
                    except LabFault:
                        pass
                    raise LabFault(f"LAVA job {job.id}: worker {worker} of {job.device} went "
                                   f"{state.lower()} while the job ran")
            time.sleep(delay)
            delay = min(delay * 1.5, 30.0)


def lab_times(got: dict[str, Any]) -> list[float]:
    """[seconds queued, seconds running] of a finished job, by the lab's clock."""
    from datetime import datetime
    try:
        t = [datetime.fromisoformat(got[k]) for k in ("submit_time", "start_time", "end_time")]
    except (KeyError, TypeError, ValueError):
        return []
    return [round((t[1] - t[0]).total_seconds(), 1), round((t[2] - t[1]).total_seconds(), 1)]


def job_error(records: list[dict[str, Any]]) -> tuple[str, str]:
    """LAVA's (error type, message) of a failed job, from its log. Type Test
    is the guest's own doing (the farm's failure patterns: a check that
    exited non-zero, a panic): the log is then the guest's to judge; any
    other (Job, Infrastructure, Bug, Configuration, Canceled) is the lab's."""
    for r in records:
        msg = r.get("msg")
        if r.get("lvl") == "results" and isinstance(msg, dict) and msg.get("definition") == "lava" \
                and msg.get("case") == "job" and msg.get("result") == "fail":
            return str(msg.get("error_type", "")), str(msg.get("error_msg", ""))
    return "", ""


def read_job(records: list[dict[str, Any]], job: LabJob, page_url: str, console_log: str, cell: Cell,
             pairs: list[tuple[Cell, Check]], attempt: int
             ) -> tuple[list[Measured], BootEntry, list[str]]:
    """A finished job's log read back: each check's measurement from its
    framed output (as `report --lava` reads it), the boot's record (the
    guest's banner; an error where it is not of the cell's page size), and the
    reports the kernel printed before the first check."""
    lines = log.console(records)
    first = next((i for i, ln in enumerate(lines) if ln.startswith("FOLIOFARM-BEGIN")), len(lines))
    seen, _ = banner.parse("\n".join(lines[:first]))
    right = seen.get("page_size") == str(cell.page.bytes)
    error = None if right else (f"LAVA job {job.id}: the guest reports page size {seen.get('page_size')}, "
                                f"expected {cell.page.bytes}")
    boot = BootEntry(page_size=cell.page.name, kernel=cell.kernel, console_log=console_log, fs=cell.fs.name,
                     qemu=f"LAVA job {job.id} on {job.device}", attempt=attempt, banner=seen, error=error,
                     lab_job=page_url, device=job.device, lab_seconds=job.seconds, taint=0)
    measured = [(c, chk, framed.measurement(lines, chk, None) if right else measurement.error(error or ""))
                for c, chk in pairs]
    reports = list(dict.fromkeys(f"{r.kind}: {r.line}" for r in splat.scan("\n".join(lines[:first]))))
    return measured, boot, reports
