"""A reproducer (`foliofarm run --repro FILE`): a review finding as a file,
run in every selected cell's guest. FILE is a C source, compiled here for
arm64 (static, with the farm's cross compiler) inside the sandbox, for a
reproducer is someone else's code like a series, and what it builds runs only
in guests; or a shell script the guest's shell runs. Either is put on a small
EROFS disk of its own (serial ``ffrepro``, mounted at /mnt/ffrepro), keyed by
its content, so that the cells' initramfs and disks stay what they were.

Refused with what to fix: a file of neither kind, one over SIZE_CAP, C that
does not compile (the compiler's own lines)."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from foliofarm import hosttools, sandbox
from foliofarm.disks import images
from foliofarm.disks.rootfs import DRIVER    # what runs it: /mnt/ffrepro/run, writing a farm dump
from foliofarm.kernel.build import CROSS_COMPILE
from foliofarm.errors import UsageError
from foliofarm.paths import VMTESTS
from foliofarm.sandbox import Limits
from foliofarm.util import sha256_text, tmp_dir

SIZE_CAP = 256 * 1024           # a reproducer is a page or two of C, not a program
PROGRAM = "repro"               # what the disk holds, run as /mnt/ffrepro/repro
# static, for the guest has no libc of its own; warnings shown, not fatal: a
# reviewer's reproducer is not the farm's code
CFLAGS = ["-static", "-O2", "-g0", "-Wall", "-pthread"]
COMPILE_SECONDS = 120
ERROR_HEAD = 64 << 10           # bytes of each compiler stream read for its error lines
# the farm's headers a reproducer may include, offered beside its source: the
# contpte programs' helpers (PTE_CONT through the probe, an mTHP size) and the
# folio programs' (folio sizes from pagemap and kpageflags, mTHP sizes and
# stats), so that tests/vmtests/contpte-*.c, mthp-swap.c, shmem-mthp.c and
# write-folios.c run as reproducers as they are
HEADERS = (VMTESTS / "ffcontpte.h", VMTESTS / "fffolio.h")


@dataclass(frozen=True)
class Reproducer:
    """A reproducer as given: its name, its kind ("c" or "sh") and its text,
    and the seconds it may run in a guest before it is killed (None: the
    check's own deadline)."""
    name: str
    kind: str
    text: str
    seconds: int | None = None

    @property
    def digest(self) -> str:
        return sha256_text(self.kind, self.text, " ".join(CFLAGS), DRIVER.read_text(),
                           *(h.read_text() for h in HEADERS), str(self.seconds))[:16]


def load(path: Path, seconds: int | None = None) -> Reproducer:
    """``path`` read as a reproducer (killed in a guest after ``seconds``),
    or refused saying what to fix."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"--repro {path}: {exc.strerror or exc}") from None
    if len(raw) > SIZE_CAP:
        raise UsageError(f"--repro {path}: {len(raw)} bytes, over the {SIZE_CAP // 1024} KB a reproducer "
                         "may be: give the few lines that show the finding")
    try:
        text = raw.decode()
    except UnicodeDecodeError:
        raise UsageError(f"--repro {path}: not text (a C source or a shell script, not a binary)") from None
    if path.suffix == ".c":
        kind = "c"
    elif path.suffix == ".sh" or text.startswith("#!"):
        kind = "sh"
    else:
        raise UsageError(f"--repro {path}: name a C source FILE.c or a shell script (FILE.sh, or a #! line)")
    return Reproducer(path.name, kind, text, seconds)


def compiled(repro: Reproducer, out: Path) -> Path:
    """``repro``'s C built for arm64 at ``out``, in the sandbox (nothing of the
    host but the toolchain, no network, a deadline); a reproducer that does
    not compile is the user's to fix, with the compiler's lines."""
    hosttools.require(CROSS_COMPILE + "gcc")
    with tmp_dir("repro-src") as src_dir, tmp_dir("repro-out") as out_dir:
        src = Path(src_dir) / "repro.c"
        src.write_text(repro.text)
        for h in HEADERS:
            shutil.copyfile(h, Path(src_dir) / h.name)
        built = Path(out_dir) / PROGRAM
        proc = sandbox.run([CROSS_COMPILE + "gcc", *CFLAGS, "-o", str(built), str(src)],
                           read=[Path(src_dir)], write=[Path(out_dir)], check=False,
                           limits=Limits(seconds=COMPILE_SECONDS), what="the reproducer's compiler",
                           system=sandbox.toolchain())
        if proc.returncode != 0:
            # 40 lines of at most 500 characters: the head of each stream is enough
            said = b"\n".join(s[:ERROR_HEAD] for s in (proc.stdout, proc.stderr or b""))
            said = said.decode(errors="replace").replace(str(src), repro.name)
            lines = [ln[:500] for ln in said.splitlines() if ln.strip()][:40]
            raise UsageError(f"--repro {repro.name} does not compile for arm64 "
                             f"({CROSS_COMPILE}gcc {' '.join(CFLAGS)}):\n" + "\n".join(lines))
        if built.is_symlink() or not built.is_file():
            raise UsageError(f"--repro {repro.name}: the compiler made no program")
        shutil.copyfile(built, out)
    out.chmod(0o755)
    return out


def disk(cache: Path, repro: Reproducer) -> Path:
    """The reproducer's disk (EROFS: /repro, a program or a script), made once
    per content."""
    final = cache / "repro" / f"{repro.digest}.erofs"
    if final.is_file():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    with tmp_dir("repro-disk") as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        if repro.kind == "c":
            compiled(repro, root / PROGRAM)
        else:
            (root / PROGRAM).write_text(repro.text)
            (root / PROGRAM).chmod(0o755)
        (root / "name").write_text(repro.name + "\n")
        (root / "kind").write_text(repro.kind + "\n")
        if repro.seconds:
            (root / "seconds").write_text(f"{repro.seconds}\n")
        shutil.copyfile(DRIVER, root / "run")
        (root / "run").chmod(0o755)
        part = final.with_name(f".{final.name}.part-{os.getpid()}")
        images.make_erofs(part, root)
        os.replace(part, final)         # whole, or not there
    return final
