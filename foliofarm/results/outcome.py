"""One check's outcome on one cell as the judge gives it and the writer records
it (results/writer.py record: checked against CheckResult of the schema)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Outcome:
    name: str
    outcome: str
    reason: str = ""
    metrics: dict[str, Any] = field(default_factory=dict)
    subtests: list[dict[str, Any]] = field(default_factory=list)   # a selftests run's tests
    rows: list[dict[str, Any]] = field(default_factory=list)       # a cross-check's rows
    boot_failed: bool = False      # not measured: the kernel died or hung while booting

    def as_dict(self) -> dict[str, Any]:
        d = {"name": self.name, "outcome": self.outcome, "reason": self.reason,
             "metrics": self.metrics}
        if self.subtests:
            d["subtests"] = self.subtests
        if self.rows:
            d["rows"] = self.rows
        if self.boot_failed:
            d["boot_failed"] = True
        return d
