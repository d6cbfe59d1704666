"""The tree's own scripts/checkpatch.pl on every patch of a series,
sandboxed (it sees the tree and the patch only), its findings parsed from
`--terse --show-types` output."""

from __future__ import annotations

import re
from pathlib import Path

from foliofarm import sandbox
from foliofarm.errors import InfraError, TimedOut
from foliofarm.intake import git
from foliofarm.intake.series import Series
from foliofarm.util import tmp_dir

# checkpatch.pl on one patch may take this long (seconds are usual), and this much.
SECONDS = 300
LIMITS = sandbox.Limits(seconds=SECONDS, memory_mb=2048, file_mb=64)
CHECKPATCH_LINE = re.compile(r"^(?P<file>[^:]*):(?P<line>\d+): (?P<level>ERROR|WARNING|CHECK):"
                             r"(?P<type>[A-Z0-9_]+): (?P<msg>.*)$")


def parse(text: str) -> dict[str, object]:
    """Findings from `checkpatch.pl --terse --show-types` output."""
    findings = []
    for line in text.splitlines():
        if m := CHECKPATCH_LINE.match(line.strip()):
            findings.append({"line": int(m["line"]), "level": m["level"], "type": m["type"],
                             "message": m["msg"]})
    return {"errors": sum(f["level"] == "ERROR" for f in findings),
            "warnings": sum(f["level"] == "WARNING" for f in findings),
            "checks": sum(f["level"] == "CHECK" for f in findings),
            "findings": findings}


def check(tree: Path, ser: Series) -> list[dict[str, object]]:
    """Run the tree's own scripts/checkpatch.pl on every patch."""
    script = tree / "scripts" / "checkpatch.pl"
    if not script.is_file():
        raise InfraError(f"{tree} has no scripts/checkpatch.pl")
    out = []
    with tmp_dir("checkpatch") as tmp:
        for p in ser.patches:
            f = Path(tmp) / f"{p.number:04d}.patch"
            f.write_bytes(p.mbox())
            # the tree's own script: sandboxed, seeing the tree and the patch only,
            # with the sandbox's limits (a wall clock, memory, tasks)
            try:
                proc = sandbox.run(["perl", str(script), "--terse", "--no-summary", "--show-types",
                                    f"--root={tree}", str(f)], read=[tree, Path(tmp)], cwd=tree,
                                   env=git.env(), limits=LIMITS, check=False,
                                   what=f"checkpatch.pl on patch {p.number} ({p.name})")
            except TimedOut as exc:
                raise InfraError(str(exc)) from None
            stdout = proc.stdout.decode(errors="replace")
            res = parse(stdout)
            if proc.returncode not in (0, 1) or (proc.returncode and not res["findings"]):
                raise InfraError(f"checkpatch.pl failed on patch {p.number} ({p.name}): "
                                 f"{(proc.stderr.decode(errors='replace') or stdout).strip()[-500:]}")
            out.append({"number": p.number, "subject": p.subject, "name": p.name, **res})
    return out
