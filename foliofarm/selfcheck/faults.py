"""make faults: what goes wrong on a real host, done to real runs on purpose.

Each fault is injected into a real `foliofarm run` on the warm cache (one cell,
4k-xfs, two checks, to keep it short), and is survived when:
- the run that met it ends with a clear message and the exit status it should
  (3 where it cannot finish; 0 where the farm can repair what it found), never
  a traceback and never a wrong verdict;
- what it measured before is still in its results.json, readable;
- the next run, with nothing cleaned up by hand, finishes with exit 0 and every
  verdict `pass`, and nothing of the killed run is left in temporary folders.

Faults: kill -9 at each stage (source, config, build, image creation, boot,
check, report); ^C (SIGINT to the run's process group) mid-check, which ends
the run at once (not when its guests finish); QEMU killed mid-check; a truncated cached kernel image, a
damaged disk image and damaged saved measurements; a full disk under the
results folder and under the cache (tmpfs mounts: root only). Prints faults
tried / survived, and writes RESULTS/faults.json.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from foliofarm.paths import ROOT, cache_dir
from foliofarm.results.schema import Results
from foliofarm.run import child
from foliofarm.util import write_json
from foliofarm.results.outcome import Outcome

SCOPE = ["--kernel", "debian:7.3", "--page-sizes", "4k", "--fs", "xfs", "--checks", "exec-text,mmap-miss"]
QEMU_NAME = "qemu-system-aarch64"


@dataclass
class Attempt:
    name: str
    survived: bool = False
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def note(self, ok: bool, what: str) -> bool:
        self.notes.append(("ok: " if ok else "FAILED: ") + what)
        return ok


@dataclass
class Proc:
    code: int
    out: str
    results: Path
    stopping_s: float | None = None     # from the signal to the run's end
    pid: int = 0

    def doc(self) -> Results | None:
        """What the run recorded, read back (child.py); None if nothing."""
        return child.read_back(self.results / "latest")


def farm(args: list[str], results: Path, env: dict[str, str] | None = None,
         kill_when: Callable[[str, float, int], bool] | None = None, timeout: float = 1800,
         signum: int = signal.SIGKILL) -> Proc:
    """Run foliofarm; with ``kill_when(output so far, seconds, its pid)``, send
    ``signum`` (SIGKILL) to it and its process group the first time that says so."""
    results.mkdir(parents=True, exist_ok=True)
    proc = child.start(args, results, env=dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200", **(env or {})),
                       output=subprocess.PIPE, text=True).proc
    out: list[str] = []
    t0 = time.monotonic()
    killed = threading.Event()
    sent: list[float] = []

    def watch() -> None:
        while proc.poll() is None and not killed.is_set():
            if kill_when is not None and kill_when("".join(out), time.monotonic() - t0, proc.pid):
                killed.set()
                sent.append(time.monotonic())
                os.killpg(proc.pid, signum)
                return
            time.sleep(0.05)

    w = threading.Thread(target=watch, daemon=True)
    w.start()
    assert proc.stdout is not None
    for line in proc.stdout:
        out.append(line)
        if time.monotonic() - t0 > timeout:
            os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    ended = time.monotonic()
    killed.set()
    w.join()
    return Proc(proc.returncode, "".join(out), results, round(ended - sent[0], 1) if sent else None, proc.pid)


def said(text: str, pattern: str) -> bool:
    """``pattern`` in the output, read as one line: the progress log's wrapping,
    timestamps and source locations taken out."""
    text = re.sub(r"\[\d\d:\d\d:\d\d\]|\b\w+\.py:\d+\b", " ", text)
    return re.search(pattern, " ".join(text.split())) is not None


def no_traceback(a: Attempt, p: Proc) -> bool:
    return a.note("Traceback" not in p.out, "no traceback")


def recovers(a: Attempt, work: Path, args: list[str] | None = None) -> bool:
    """The next run, with nothing cleaned up by hand: exit 0, every verdict pass."""
    p = farm(args or SCOPE, work / "again")
    doc = p.doc()
    outcomes = [c.outcome for cell in doc.cells for c in cell.checks] if doc else []
    verdicts = [r.verdict for r in doc.verdicts] if doc else []
    ok = p.code == 0 and outcomes and all(o == Outcome.PASS for o in outcomes) \
        and all(v == Outcome.PASS for v in verdicts)
    return a.note(bool(ok), f"next run exit {p.code}, outcomes {sorted(set(outcomes))}"
                  + (f", verdicts {sorted(set(verdicts))}" if verdicts else ""))


def kept_results(a: Attempt, p: Proc) -> bool:
    """The killed run's results.json says it is incomplete, and `foliofarm
    report` reads it (its verdicts judged from the cells it kept)."""
    doc = p.doc()
    if doc is None:
        # killed before its results folder was made: nothing to keep
        return a.note(not (p.results / "latest").exists(), "no results written yet, none half-written")
    rendered = subprocess.run([sys.executable, "-m", "foliofarm", "report", str(p.results / "latest")],
                              capture_output=True, text=True)
    return a.note(doc.complete is False and rendered.returncode == 0,
                  f"killed run's results.json incomplete, {len(doc.cells)} cells kept, "
                  f"`foliofarm report` exit {rendered.returncode} {rendered.stderr.strip()[-200:]}")


def no_leftover_tmp(a: Attempt) -> bool:
    left = [p for p in Path(tempfile.gettempdir()).glob("foliofarm-*-*")
            if p.name.split("-")[1].isdigit() and not Path(f"/proc/{p.name.split('-')[1]}").exists()]
    return a.note(not left, f"no temporary folders of dead runs left ({len(left)})")


# -- the faults ------------------------------------------------------------------

def unique_series(work: Path) -> Path:
    """A one-file series unique to this attempt, so that the series side builds."""
    from foliofarm.selfcheck.patches import unique_mm_patch
    return unique_mm_patch(work / "series")


def kill_at(stage: str, when: Callable[[str, float], bool], series: bool = False,
            prepare: Callable[[], None] | None = None) -> Callable[[Attempt, Path], None]:
    def fault(a: Attempt, work: Path) -> None:
        if prepare is not None:
            prepare()
        args = SCOPE + (["--series", str(unique_series(work))] if series else ["--fresh"])
        p = farm(args, work / "killed", kill_when=when)
        a.note(p.code == -signal.SIGKILL, f"killed at {stage} (exit {p.code})")
        kept = kept_results(a, p)
        again = recovers(a, work, args)
        a.survived = p.code == -signal.SIGKILL and kept and again and no_leftover_tmp(a)
    return fault


def saw(pattern: str, delay: float = 0.0) -> Callable[[str, float, int], bool]:
    first: list[float] = []

    def check(out: str, t: float, pid: int) -> bool:
        if not first and said(out, pattern):
            first.append(t)
        return bool(first) and t - first[0] >= delay
    return check


def running(pattern: str) -> Callable[[str, float, int], bool]:
    """True while a process of the farm's session runs a command line matching
    ``pattern`` (the sandbox's bwrap carries the command it runs): the kill
    lands inside that step however fast it has become."""
    return lambda out, t, pid: subprocess.run(["pgrep", "-s", str(pid), "-f", pattern],
                                              stdout=subprocess.DEVNULL, check=False).returncode == 0


def forget_kconfig() -> None:
    """Make the next build configure again (it skips configuration when the
    fragments and the tree's Kconfig files are unchanged)."""
    for stamp in (cache_dir() / "build-host").glob("7.3-4k-default-*/kconfig.key"):
        stamp.unlink()


def staging_appears(parent: Path) -> Callable[[str, float, int], bool]:
    return lambda out, t, pid: any(parent.glob(".*.tmp-*"))


def unseal_images() -> None:
    for stamp in (cache_dir() / "images").glob("xfs-*/disk.img.sha256"):
        stamp.unlink()


def qemu_killed(a: Attempt, work: Path) -> None:
    """QEMU dies mid-check (killed from outside): an error, exit 3, not a verdict.
    It is killed as soon as results.json has the first check's outcome (written
    before the second check starts), so the kill lands inside the second check
    (about half a second of guest time) however fast the guest is."""
    done: list[bool] = []

    def kill_qemu(out: str, t: float, pid: int) -> bool:
        docs = list((work / "run").glob("*/results.json"))
        if done or not any('"exec-text"' in p.read_text(errors="replace") for p in docs):
            return False
        # this run's QEMU only (the farm's child), never another run's
        subprocess.run(["pkill", "-9", "-P", str(pid), "-f", QEMU_NAME], check=False)
        done.append(True)
        return False        # the farm itself runs on
    p = farm(SCOPE + ["--fresh"], work / "run", kill_when=kill_qemu)
    doc = p.doc()
    reasons = [c.reason for cell in doc.cells for c in cell.checks] if doc else []
    outcomes = [c.outcome for cell in doc.cells for c in cell.checks] if doc else []
    ok = a.note(p.code == 3, f"exit {p.code} (3: could not finish)")
    ok &= a.note(Outcome.FAIL not in outcomes, f"no verdict on the kernel from it: {sorted(set(outcomes))}")
    ok &= a.note(any("killed by signal 9" in r for r in reasons), "says QEMU was killed")
    ok &= no_traceback(a, p)
    a.survived = ok and recovers(a, work)


def interrupted(a: Attempt, work: Path) -> None:
    """^C while a guest runs a check: the run ends within seconds (its guest
    killed, not waited for), exit 3, results.json saying it was interrupted
    and keeping what it had measured, no QEMU of it left."""
    args = SCOPE + ["--fresh"]
    p = farm(args, work / "interrupted", kill_when=saw(r"4k-xfs-7\.3 exec-text:", 0.2),
             signum=signal.SIGINT)
    doc = p.doc()
    errors = [e for e in doc.errors if e.stage == "interrupted"] if doc else []
    ok = a.note(p.code == 3, f"exit {p.code} (3: could not finish)")
    ok &= a.note(p.stopping_s is not None and p.stopping_s < 2,
                 f"ended {p.stopping_s} s after the ^C (under 2 s: its guests are not waited for)")
    ok &= a.note(bool(errors) and "SIGINT" in errors[0].message, "results.json says it was interrupted")
    ok &= kept_results(a, p)
    left = subprocess.run(["pgrep", "-f", f"foliofarm-{p.pid}-"], capture_output=True, text=True)
    ok &= a.note(left.stdout == "", f"no guest of it left running {left.stdout.strip()}")
    ok &= no_traceback(a, p)
    a.survived = ok and recovers(a, work, args) and no_leftover_tmp(a)


def damaged(what: str, damage: Callable[[], Path | None], expect: str,
            args: list[str] | None = None) -> Callable[[Attempt, Path], None]:
    def fault(a: Attempt, work: Path) -> None:
        path = damage()
        if path is None:
            a.note(False, f"nothing cached to damage ({what}): run `make run` first")
            return
        a.notes.append(f"damaged {path}")
        p = farm(args or SCOPE, work / "run")
        doc = p.doc()
        outcomes = [c.outcome for cell in doc.cells for c in cell.checks] if doc else []
        ok = a.note(p.code == 0 and outcomes and all(o == Outcome.PASS for o in outcomes),
                    f"run over it: exit {p.code}, outcomes {sorted(set(outcomes))}")
        ok &= a.note(said(p.out, expect), f"said: {expect}")
        a.survived = bool(ok) and no_traceback(a, p)
    return fault


def truncate_image() -> Path | None:
    """The Image the SCOPE run boots (not merely the newest 7.3 4K one: bisect
    and series runs leave others), cut to a third."""
    from foliofarm import matrix
    from foliofarm.intake import source
    from foliofarm.kernel import build
    cache = cache_dir()
    art = build.Builder(cache).artifact_dir(source.resolve("debian:7.3", cache),
                                            matrix.page_sizes()["4k"], "default")
    if art is None or not (art / "Image").is_file():
        return None
    data = (art / "Image").read_bytes()
    (art / "Image").write_bytes(data[: len(data) // 3])
    return art / "Image"


def damage_disk() -> Path | None:
    """The XFS image the SCOPE run attaches, its first 4 KiB zeroed."""
    from foliofarm.disks import images
    img = images.image(cache_dir(), "xfs")
    with open(img, "r+b") as f:
        f.seek(0)
        f.write(b"\0" * 4096)
    return img


def damage_saved() -> Path | None:
    saved = sorted((cache_dir() / "baseline").glob("7.3-4k-*.json"), key=lambda p: p.stat().st_mtime)
    if not saved:
        return None
    text = saved[-1].read_text()
    saved[-1].write_text(text[: len(text) // 2])
    return saved[-1]


def full_disk(where: str) -> Callable[[Attempt, Path], None]:
    def fault(a: Attempt, work: Path) -> None:
        if os.geteuid() != 0:
            a.note(False, "not tried: mounting a small tmpfs needs root")
            return
        mnt = work / "small"
        mnt.mkdir(parents=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)], check=True)
        try:
            if where == "results":
                # fill it, so that the first results.json does not fit
                (mnt / "filler").write_bytes(b"\0" * (250 << 10))
                p = farm(SCOPE, mnt / "results")
            else:
                p = farm(SCOPE, work / "results", env={"FOLIOFARM_CACHE": str(mnt / "cache")})
        finally:
            subprocess.run(["umount", "-l", str(mnt)], check=False)
        ok = a.note(p.code == 3, f"exit {p.code}")
        ok &= a.note(said(p.out, r"disk full|GiB free|free some space|free space"),
                     "says the disk is full and what to do")
        ok &= no_traceback(a, p)
        a.survived = ok and recovers(a, work)
    return fault


def faults() -> dict[str, Callable[[Attempt, Path], None]]:
    cache = cache_dir()
    return {
        "kill -9 at source": kill_at("source", saw(r"results in")),
        "kill -9 at config": kill_at("config", running(r"make .*(allnoconfig|olddefconfig)|merge_config"),
                                     series=True, prepare=forget_kconfig),
        "kill -9 at build": kill_at("build", running(r"make .*Image modules"), series=True),
        "kill -9 at image creation": kill_at("image creation", staging_appears(cache / "images"),
                                             prepare=unseal_images),
        "kill -9 at boot": kill_at("boot", saw(r"booting 4k", 0.3)),
        "kill -9 at check": kill_at("check", saw(r"4k-xfs-7\.3 exec-text:", 0.2)),
        "kill -9 at report": kill_at("report", saw(r"4k-xfs-7\.3 mmap-miss:", 0.05)),
        "^C at check": interrupted,
        "QEMU killed mid-check": qemu_killed,
        "truncated kernel image": damaged("kernel image", truncate_image, r"damaged or incomplete: building"),
        "damaged disk image": damaged("disk image", damage_disk, r"damaged or unsealed: making it again"),
        "damaged saved measurements": damaged("saved measurements", damage_saved,
                                              r"damaged or incomplete: measuring again"),
        "full disk under the results": full_disk("results"),
        "full disk under the cache": full_disk("cache"),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="foliofarm selfcheck faults", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", type=Path, default=ROOT / "results" / "faults")
    ap.add_argument("--only", default="", help="comma-separated fault names (substrings)")
    args = ap.parse_args(argv)
    table = faults()
    names = [n for n in table if not args.only or any(o.strip() in n for o in args.only.split(","))]
    # warm the cache first: every fault is tried against a warm base
    print("faults: warming the cache (one plain run)", flush=True)
    farm(SCOPE, Path(tempfile.mkdtemp(prefix="foliofarm-faults-warm-")))
    attempts = []
    args.results.mkdir(parents=True, exist_ok=True)
    for name in names:
        a = Attempt(name)
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="ffault-") as tmp:
            try:
                table[name](a, Path(tmp))
            except Exception as exc:          # the harness's own trouble: not survived
                a.note(False, f"harness: {type(exc).__name__}: {exc}")
        a.seconds = round(time.monotonic() - t0, 1)
        attempts.append(a)
        print(f"{'survived' if a.survived else 'NOT SURVIVED'}: {name} ({a.seconds} s)", flush=True)
        for n in a.notes:
            print(f"    {n}", flush=True)
        write_json(args.results / "faults.json",
                   {"tried": len(attempts), "survived": sum(x.survived for x in attempts),
                    "faults": [x.__dict__ for x in attempts]})
    ok = sum(x.survived for x in attempts)
    print(f"faults tried {len(attempts)}, survived {ok}")
    return 0 if ok == len(attempts) else 1


if __name__ == "__main__":
    raise SystemExit(main())
