"""The state a series version is in when it is sorted, and why: refused,
old, routed away, expired, waiting, ignored, or queued to be tested."""

from __future__ import annotations

from foliofarm.intake import bases
from foliofarm.watch import threads
from foliofarm.watch.config import WatchConfig


def assess(v: threads.Version, cfg: WatchConfig, now: float, first: float, last: float
           ) -> tuple[str, str]:
    """The state a series version is in, and why."""
    s = cfg.series
    if v.total > s.max_patches:
        return "refused", f"{v.total} patches, over the {s.max_patches} the watcher takes"
    size = sum(m.size for m in v.messages)
    if size > s.max_series_kb * 1024:
        return "refused", f"{size // 1024} kB in all, over the {s.max_series_kb} kB a series may have"
    if v.trouble:
        m = v.trouble[0]
        return "refused", f"{m.n}/{m.total}: {m.why or m.kind}"
    if v.last_arrival < now - s.backlog_days * 86400:
        return "old", f"dated before the {s.backlog_days:g}-day backlog window"
    if tag := cfg.route.ignored(bases.tags(v.anchor.subject)):
        return "ignored", f"a {tag} series, not for this base ([route] ignore)"
    if not v.complete and now - first > s.give_up_days * 86400:
        return "expired", f"{len(v.patches)} of {v.total} patches after {s.give_up_days:g} days: given up"
    if not v.complete:
        if now - first > s.incomplete_hours * 3600:
            missing = ", ".join(f"{n}/{v.total}" for n in v.missing[:10])
            return "incomplete", f"{missing} missing after {s.incomplete_hours:g} h"
        return "waiting", f"{len(v.patches)} of {v.total} patches so far"
    recipients = [r for m in v.messages for r in m.recipients]
    if not cfg.interest.addressed(recipients):
        return "ignored", "not sent to " + ", ".join(cfg.interest.lists)
    hits = cfg.interest.touches(v.files)
    if not hits:
        return "ignored", "touches no path of interest (" + ", ".join(v.files[:3]) + \
            (", ..." if len(v.files) > 3 else "") + ")"
    if now - last < s.settle_minutes * 60:
        return "waiting", "settling"
    return "queued", "touches " + ", ".join(hits[:3]) + (", ..." if len(hits) > 3 else "")
