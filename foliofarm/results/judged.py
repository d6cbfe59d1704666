"""A check's result as the judge makes it: one record, the schema's
CheckResult, from the judge to the writer to the reader."""

from __future__ import annotations

import json
from typing import Any, Optional

from pydantic import ValidationError

from foliofarm.datafiles import describe
from foliofarm.results.outcome import Outcome
from foliofarm.results.schema import CheckResult


def check_entry(entry: dict[str, Any]) -> str:
    """"" if ``entry`` is a check's result the reader admits, else what is wrong."""
    try:
        CheckResult.model_validate(entry)
    except ValidationError as exc:
        return describe(exc)
    return ""


def result(name: str, outcome: Outcome, reason: str = "", metrics: Optional[dict[str, Any]] = None,
           subtests: Any = (), rows: Any = (), boot_failed: bool = False) -> CheckResult:
    """A check's result as the judge gives it. One the reader would refuse (a
    fault of the farm, not of the kernel: a figure of no known shape) is an
    error that says what was wrong and holds what the judge gave, so the
    document stays readable and the run goes on."""
    fields = {"name": name, "outcome": outcome, "reason": reason, "metrics": metrics or {},
              "subtests": list(subtests), "rows": list(rows), "boot_failed": boot_failed}
    try:
        return CheckResult.model_validate(fields)
    except ValidationError as exc:
        given = json.dumps(fields, default=repr)
        return CheckResult(name=name, outcome=Outcome.ERROR, metrics={}, boot_failed=boot_failed,
                           reason=f"the judge gave a result the results schema refuses "
                                  f"({describe(exc)}); as given: {given[:2000]}")
