"""A run as a KCIDB submission: KernelCI's common reporting schema, in the
latest version kcidb-io knows, checked by kcidb-io before it is written.

- checkouts: one per kernel of the run (the base; base+series with its
  patchset hash, over each patch's sha256 as KCIDB defines it, and the
  thread's Message-ID; or the two kernels of a --compare run);
- builds: one per kernel and page size (arm64, the compiler, the config
  fragments by name, PASS or FAIL, how long the build took);
- tests: one per cell and check, at `foliofarm.<check>` (the kernel's mm
  selftests at `kselftest.mm`, each test at `kselftest.mm.<test>`), and under
  each check its headline figures as DONE tests with their numbers
  (`foliofarm.exec-text.aligned_pct`); page size, filesystem, guest and
  accelerator in the environment; the farm's own outcome (xfail, known and
  flaky failures stay told apart from plain failures), its reason and the
  verdict against the base in misc.

    foliofarm kcidb RESULTS/latest [-o kcidb.json] [--submit URL]
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from foliofarm import shown
from foliofarm.errors import InfraError, UsageError
from foliofarm.judge import figures
from foliofarm.results.schema import CellResult, CheckResult, Results, Subtest

ORIGIN = "foliofarm"
TOKEN_ENV = "FOLIOFARM_KCIDB_TOKEN"
# The farm's outcomes as KCIDB statuses: a known failure is still the kernel
# failing (FAIL; misc says xfail); "error" is the farm not measuring (MISS),
# unless the kernel died booting (FAIL: the code under test is to blame).
# flaky (failed in some boots, passed in others): done, neither a pass nor a
# fail, its counts in misc
STATUS = {"pass": "PASS", "xpass": "PASS", "fail": "FAIL", "xfail": "FAIL", "skip": "SKIP",
          "error": "MISS", "flaky": "DONE"}
SELFTESTS = "mm-selftests"
EXCERPT = 16000


def path_part(name: str) -> str:
    """A name as one segment of a KCIDB test path ([A-Za-z0-9_-])."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_") or "unnamed"


def _variant(doc: Results) -> str:
    cmd = doc.command
    return cmd[cmd.index("--variant") + 1] if "--variant" in cmd[:-1] else "default"


def _accel(doc: Results) -> str:
    m = re.search(r"accel (\w+)", str(doc.machine.get("guest", "")))
    accel = m.group(1) if m else "auto"
    if accel == "auto":
        accel = "kvm" if "aarch64" in str(doc.machine.get("host", "")) else "tcg"
    return accel


class Submission:
    def __init__(self, doc: Results, origin: str = ORIGIN) -> None:
        self.doc, self.origin = doc, origin
        self.run = f"{origin}:{doc.run_id}"
        self.variant = _variant(doc)
        self.verdicts = {(v.page_size, v.fs, v.check): v for v in doc.verdicts}
        self.series_kernel = doc.sides.series.kernel if doc.sides else None

    # -- checkouts and builds

    def kernels(self) -> list[str]:
        seen = [k.kernel for k in self.doc.kernels] + [c.kernel for c in self.doc.cells]
        return list(dict.fromkeys(seen))

    def origin_of(self, kernel: str) -> str:
        if self.doc.sides:
            for side in (self.doc.sides.base, self.doc.sides.series):
                if side.kernel == kernel:
                    return side.origin
        return kernel

    def checkout(self, kernel: str) -> dict[str, Any]:
        broken = any(k.build_failed for k in self.doc.kernels if k.kernel == kernel)
        c: dict[str, Any] = {
            "id": f"{self.run}:{kernel}", "origin": self.origin,
            "tree_name": kernel.split("+")[0], "comment": self.origin_of(kernel),
            "start_time": self.doc.started, "valid": not broken, "misc": {"kernel": kernel}}
        ser = self.doc.series
        if ser is not None and kernel == self.series_kernel:
            hashes = [p.sha256 for p in ser.patches]
            if hashes and all(hashes):
                c["patchset_hash"] = hashlib.sha256("".join(f"{h}\n" for h in hashes).encode()).hexdigest()
            if ser.message_id and "@" in ser.message_id:
                c["message_id"] = ser.message_id
            c["misc"].update({"series": ser.spec, "cover": ser.cover, "base_commit": ser.base_commit,
                              "patches": [p.subject for p in ser.patches], "commits": ser.commits})
        return c

    def build_id(self, kernel: str, page: str) -> str:
        return f"{self.run}:{kernel}:{page}:{self.variant}"

    def builds(self) -> list[dict[str, Any]]:
        out = []
        for k in self.doc.kernels:
            b: dict[str, Any] = {
                "id": self.build_id(k.kernel, k.page_size), "checkout_id": f"{self.run}:{k.kernel}",
                "origin": self.origin, "architecture": "arm64",
                "config_name": f"{k.page_size}-{self.variant}",
                "status": "FAIL" if k.build_failed else "PASS",
                "misc": {"page_size": k.page_size, "built_now": bool(k.built_now)}}
            if self.doc.machine.get("compiler"):
                b["compiler"] = str(self.doc.machine["compiler"])
            if k.build_seconds is not None:
                b["duration"] = float(k.build_seconds)
            if k.reproduce:
                b["command"] = k.reproduce
            if k.error:
                b["log_excerpt"] = k.error[-EXCERPT:]
            out.append(b)
        return out

    # -- tests

    def environment(self, cell: CellResult) -> dict[str, Any]:
        m = self.doc.machine
        return {"comment": f"QEMU arm64 virt ({_accel(self.doc)}), {cell.page_size} pages, {cell.fs}",
                "misc": {"page_size": cell.page_size, "fs": cell.fs, "accel": _accel(self.doc),
                         "guest": str(m.get("guest", "")), "qemu": str(m.get("qemu", "")),
                         "host": str(m.get("host", ""))}}

    def tests(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for cell in self.doc.cells:
            for check in cell.checks:
                out += self.check_tests(cell, check)
        return out

    def check_tests(self, cell: CellResult, check: CheckResult) -> list[dict[str, Any]]:
        base_id = f"{self.run}:{cell.id}:{path_part(check.name)}"
        selftests = check.name == SELFTESTS
        path = "kselftest.mm" if selftests else f"foliofarm.{path_part(check.name)}"
        common = {"build_id": self.build_id(cell.kernel, cell.page_size), "origin": self.origin,
                  "environment": self.environment(cell)}
        status = "FAIL" if check.boot_failed else STATUS[check.outcome]
        misc = {"outcome": check.outcome, "check": check.name, "boot_failed": check.boot_failed,
                **self.verdict_misc(cell, check.name)}
        if check.reason:
            misc["reason"] = check.reason
        head = {**common, "id": base_id, "path": path, "status": status, "misc": misc}
        if check.excerpt:
            head["log_excerpt"] = check.excerpt[-EXCERPT:]
        out = [head]
        for name, value in self.headline(check).items():
            out.append({**common, "id": f"{base_id}.{path_part(name)}", "path": f"{path}.{path_part(name)}",
                        "status": "DONE", "number": {"value": value}, "misc": {"figure": name}})
        for t in check.subtests:
            out.append(self.subtest(common, base_id, path, cell, check, t))
        return out

    def subtest(self, common: dict[str, Any], base_id: str, path: str, cell: CellResult,
                check: CheckResult, t: Subtest) -> dict[str, Any]:
        misc: dict[str, Any] = {"outcome": t.outcome, "test": t.name, "inner": t.inner,
                                **self.verdict_misc(cell, f"{check.name}: {t.name}")}
        for key, value in {"reason": t.reason, "failed": t.failed, "flaky": t.flaky,
                           "flaky_failed": t.flaky_failed}.items():
            if value:
                misc[key] = value
        out = {**common, "id": f"{base_id}.{path_part(t.name)}", "path": f"{path}.{path_part(t.name)}",
               "status": STATUS[t.outcome], "misc": misc}
        if t.seconds is not None:
            out["duration"] = float(t.seconds)
        return out

    def headline(self, check: CheckResult) -> dict[str, float]:
        """The check's judged behaviour figures that are numbers."""
        out = {}
        for name, value in figures.flatten(check.metrics, check.name).items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            if figures.kind_of(check.name, name) == "behaviour" and figures.spec_for(check.name, name):
                out[name] = float(value)
        return out

    def verdict_misc(self, cell: CellResult, check: str) -> dict[str, Any]:
        """Base against series, on the series' side of a two-sided run."""
        if cell.kernel != self.series_kernel:
            return {}
        v = self.verdicts.get((cell.page_size, cell.fs, check))
        if v is None:
            return {}
        out: dict[str, Any] = {"verdict": v.verdict, "base_outcome": v.base}
        if v.changed:
            out["changed"] = [c.metric for c in v.changed]
        return out

    def document(self) -> dict[str, Any]:
        from kcidb_io import schema as kcidb_schema
        latest = kcidb_schema.LATEST
        return {"version": {"major": latest.major, "minor": latest.minor},
                "checkouts": [self.checkout(k) for k in self.kernels()],
                "builds": self.builds(), "tests": self.tests()}


def validated(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` checked by kcidb-io against the schema it names; InfraError
    (a fault of the farm's, not of the input) if it does not hold."""
    import jsonschema
    from kcidb_io import schema as kcidb_schema
    try:
        kcidb_schema.LATEST.validate(data)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        raise InfraError(f"the KCIDB document the farm made is not valid at {where}: "
                         f"{exc.message[:300]}") from None
    return data


def convert(docs: list[Results], origin: str = ORIGIN) -> dict[str, Any]:
    """Several runs (CI shards, or runs of one series) as one submission."""
    merged: dict[str, Any] = {}
    for doc in docs:
        part = Submission(doc, origin).document()
        if not merged:
            merged = part
            continue
        for kind in ("checkouts", "builds", "tests"):
            have = {o["id"] for o in merged[kind]}
            merged[kind] += [o for o in part[kind] if o["id"] not in have]
    # a reason, an excerpt, a Subject: visible and bounded (shown.py)
    return validated(shown.data(merged))


def submit(url: str, data: dict[str, Any], token: str | None = None) -> str:
    """POST the submission with ``token`` (else FOLIOFARM_KCIDB_TOKEN's); the
    receiver's answer."""
    token = token or os.environ.get(TOKEN_ENV)
    if not token:
        raise UsageError(f"--submit needs a token in {TOKEN_ENV} (the KCIDB submitter's own)")
    req = urllib.request.Request(url, data=json.dumps(data).encode(), method="POST",
                                 headers={"Content-Type": "application/json",
                                          "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        body = exc.read().decode(errors="replace")[:500]
        raise InfraError(f"KCIDB receiver {url} refused the submission: HTTP {exc.code} {body}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise InfraError(f"KCIDB receiver {url} unreachable: {getattr(exc, 'reason', exc)}") from None


def read(where: Path) -> Results:
    """A run's results (its folder or its results.json), verdicts judged again."""
    from foliofarm.report import readback
    return readback(where)
