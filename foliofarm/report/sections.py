"""The report's sections, in order, from a results document: what a reader
needs first (the summary and verdicts) down to how to reproduce the run."""

from __future__ import annotations

import shlex

from foliofarm.report import finding
from foliofarm.report.tables import (Section, changed_figures, changes_table, check_names, check_table,
                                     crosscheck_tables, flaky_table, fmt, page_rank, verdict_matrix)
from foliofarm.results.schema import Results

Plots = dict[tuple[str, str], bytes]


def build(doc: Results, plots: Plots | None = None) -> tuple[str, list[Section]]:
    """The report's title and sections, in the order a reader wants them."""
    sides = doc.sides
    title = (f"foliofarm: {sides.base.kernel} vs {sides.series.kernel}" if sides
             else f"foliofarm run {doc.run_id}")
    secs = [summary(doc), *series(doc), *verdicts(doc), *flaky(doc),
            *(check(doc, name, plots or {}) for name in check_names(doc)),
            *checkpatch(doc), builds(doc), *lab_jobs(doc), *machine(doc), reproduce(doc)]
    return title, secs


def summary(doc: Results) -> Section:
    s = Section("Summary")
    if sides := doc.sides:
        verdicts = [r.verdict for r in doc.verdicts if not r.subtest_of]
        counts = ", ".join(f"{verdicts.count(v)} {v}" for v in dict.fromkeys(verdicts))
        s.blocks.append(("p", f"Base: {sides.base.origin} ({sides.base.kernel}). "
                              f"Against: {sides.series.origin} ({sides.series.kernel})."))
        s.blocks.append(("p", f"Verdicts: {counts or 'none'}."))
    s.blocks.append(("p", f"Run {doc.run_id}, started {doc.started}, "
                          f"{'complete' if doc.complete else 'INCOMPLETE'}."))
    if line := final_parts(doc):
        s.blocks.append(("p", line))
    for e in doc.errors:
        s.blocks.append(("pre", f"error ({e.stage}): {e.message}"))
    return s


def final_parts(doc: Results) -> str:
    """Which part of the verdict is final: the farm's own checks' comes first
    (measure/milestone.py), the whole verdict when the run ends."""
    if not doc.milestones:
        return ""
    said = []
    for m in doc.milestones:
        if m.tests:
            told = ", ".join(f"{n} {v}" for v, n in sorted(m.verdicts.items()))
            said.append(f"The verdict of the selftests the series touches ({', '.join(m.tests)}) was "
                        f"final {m.seconds:.0f} s after the run started ({told}).")
        elif m.checks:
            told = ", ".join(f"{n} {v}" for v, n in sorted(m.verdicts.items()))
            said.append(f"The farm's own checks' verdict ({', '.join(m.checks)}) was final "
                        f"{m.seconds:.0f} s after the run started ({told}"
                        + (f"; {m.to_confirm} with moved figures, confirmed later" if m.to_confirm else "")
                        + ").")
        else:
            said.append(f"The whole verdict was final after {m.seconds:.0f} s.")
    if not doc.finished:
        pending = doc.milestones[-1].pending
        said.append(f"Still running: {', '.join(pending)}; their verdicts are not final."
                    if pending else "The run has not finished.")
    return " ".join(said)


def series(doc: Results) -> list[Section]:
    if not (ser := doc.series):
        return []
    s = Section("Series")
    if ser.cover:
        s.blocks.append(("p", f"Cover letter: {ser.cover}"))
    if ser.base:
        s.blocks.append(("p", f"Base: {ser.base.text}."))
    s.blocks.append(("table", ["#", "subject", "files"],
                     [[str(p.number), p.subject, ", ".join(p.files)] for p in ser.patches]))
    for note in ser.intake_notes:
        s.blocks.append(("p", f"Intake: {note}."))
    if ser.touched_selftests:
        s.blocks.append(("p", "The mm selftests it touches (MAINTAINERS names them for the files it changes): "
                         + "; ".join(f"{t.program} ({', '.join(t.categories)}; {', '.join(t.named_by)})"
                                     for t in ser.touched_selftests) + "."))
    if ser.base_commit_note:
        s.blocks.append(("p", "Note: " + ser.base_commit_note))
    for line in reach_lines(doc):
        s.blocks.append(("p", line))
    left = [[r.page_size, t, why] for r in ser.reached for t, why in r.not_reached.items()]
    if left:
        s.blocks.append(("table", ["page size", "not reached", "why"], left[:REACH_ROWS]))
    if ser.patch_coverage:
        for line in patch_lines(doc, every=False):
            s.blocks.append(("p", line))
        s.blocks.append(("table", ["changed line", "ran on", "by"], patch_rows(doc)[:PATCH_ROWS]))
    return [s]


# changed lines listed in report.md/html, and not-run lines named per cell in report.txt
PATCH_ROWS = 80
NOT_RUN_NAMED = 12


def patch_lines(doc: Results, every: bool = True) -> list[str]:
    """Patch coverage (coverage/patch.py), per cell: how many changed lines
    ran, and (``every``) which did not."""
    ser = doc.series
    if ser is None or not ser.patch_coverage:
        return []
    out = ["Changed lines run (patch coverage: the series built with gcov; a line is code gcov lists):"]
    for pc in ser.patch_coverage:
        said = f"{pc.cell}: changed lines run: {pc.ran} of {pc.changed}"
        idle = [f"{c.file}:{c.line}" for c in pc.lines if not c.tests]
        if every and idle:
            said += "; not run: " + ", ".join(idle[:NOT_RUN_NAMED]) + (
                f" and {len(idle) - NOT_RUN_NAMED} more" if len(idle) > NOT_RUN_NAMED else "")
        if pc.lost:
            said += f"; {len(pc.lost)} test(s)' counters not read"
        out.append(said + ".")
    if unmeasured := ser.patch_coverage[0].unmeasured:
        out.append("Not measured (no profiled object the series compiled lists them): "
                   + ", ".join(unmeasured[:NOT_RUN_NAMED]) + ".")
    return out


def patch_rows(doc: Results) -> list[list[str]]:
    """Each changed line that is code: the cells where it ran, and by which tests."""
    ser = doc.series
    where: dict[tuple[str, int], tuple[list[str], set[str]]] = {}
    for pc in ser.patch_coverage if ser else []:
        for c in pc.lines:
            cells, tests = where.setdefault((c.file, c.line), ([], set()))
            if c.tests:
                cells.append(pc.cell)
                tests.update(c.tests)
    rows = []
    for (f, n), (cells, tests) in sorted(where.items()):
        names = sorted(tests)
        rows.append([f"{f}:{n}", ", ".join(cells) or "nowhere",
                     ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")])
    return rows


# not-reached rows listed in report.md/html (the rest counted)
REACH_ROWS = 60


def reach_lines(doc: Results) -> list[str]:
    """What the series reaches, per page size (coverage/select.py): how many
    selftests ran of those the base's coverage map knows, or why all ran."""
    ser = doc.series
    if ser is None or not ser.reached:
        return []
    out = ["The mm selftests it can reach, by the base's coverage map"
           + (f" (it changes {', '.join(ser.changed_functions[:6])}"
              + (f" and {len(ser.changed_functions) - 6} more" if len(ser.changed_functions) > 6 else "")
              + ")" if ser.changed_functions else "") + ":"]
    for r in ser.reached:
        if r.everything:
            out.append(f"{r.page_size}: every selftest ran: {r.everything}.")
        else:
            out.append(f"{r.page_size}: {len(r.run)} of {len(r.run) + len(r.not_reached)} mapped selftests ran; "
                       f"{len(r.not_reached)} not reached kept the base's result"
                       + (f" (the map {r.map})" if r.map else "") + ".")
    return out


def verdicts(doc: Results) -> list[Section]:
    """The verdict matrix and what changed; every moved figure; the moves a
    second boot did not repeat."""
    if not doc.verdicts:
        return []
    s = Section("Verdicts")
    s.blocks.append(("table", *verdict_matrix(doc)))
    header, rows = changes_table(doc)
    if rows:
        s.blocks.append(("p", "What changed, or did not pass:"))
        s.blocks.append(("table", header, rows))
    else:
        s.blocks.append(("p", "Every check passed on both sides with the same figures."))
    out = [s]
    header, rows = changed_figures(doc)
    if rows:
        s = Section("Changed figures")
        s.blocks.append(("p", "Every figure that moved beyond the noise measured by booting the "
                              "base twice; a regression moved the wrong way beyond the tolerance "
                              "declared in tests/vmtests/expectations/."))
        s.blocks.append(("table", header, rows))
        out.append(s)
    if doc.unconfirmed:
        s = Section("Unconfirmed moves")
        s.blocks.append(("p", "Figures that moved on the series' first boot but measured the "
                              "base's value on a second: timing, not the series. Each is counted "
                              "as that cell's noise for the figure."))
        s.blocks.append(("table", ["cell", "check", "figure", "base", "series", "second boot"],
                         [[u.cell, u.check, u.metric, fmt(u.base), fmt(u.series), fmt(u.confirm)]
                          for u in doc.unconfirmed]))
        out.append(s)
    return out


def flaky(doc: Results) -> list[Section]:
    """The results of the run that pass in some boots and fail in others."""
    header, rows = flaky_table(doc)
    if not rows:
        return []
    s = Section("Flaky results")
    s.blocks.append(("p", "Results that passed in some boots of a kernel and failed in others: "
                          "measured by the farm (every boot of a kernel is kept in its history in "
                          "the cache), or known rows of tests/vmtests/expectations/ with their "
                          "reason. A failure of one is judged flaky, never a failure of the run. "
                          "`foliofarm flaky` lists every kernel's; make one a known row with its "
                          "reason, or report it upstream."))
    s.blocks.append(("table", header, rows))
    return [s]


def check(doc: Results, name: str, plots: Plots) -> Section:
    s = Section(f"Check: {name}")
    if name == finding.CHECK:       # a reproducer's: which, and what it printed last
        s.blocks.append(("p", finding.headline(doc) + "."))
    s.blocks.append(("table", *check_table(doc, name)))
    if name == finding.CHECK:
        for cell, side in finding.shown_tails(finding.cell_runs(doc)):
            s.blocks.append(("p", f"Its last lines, {cell} {side.label}:"))
            s.blocks.append(("pre", side.tail))
    s.blocks += crosscheck_tables(doc, name)
    for (chk, page), png in sorted(plots.items(), key=lambda kv: (kv[0][0], page_rank(kv[0][1]))):
        if chk == name:
            s.blocks.append(("img", f"plots/{chk}-{page}.png", png,
                             f"{chk} on {page}: folio-size distribution"))
    return s


def checkpatch(doc: Results) -> list[Section]:
    if doc.checkpatch is None:
        return []
    s = Section("checkpatch.pl")
    cp = doc.checkpatch
    s.blocks.append(("table", ["#", "subject", "errors", "warnings", "checks"],
                     [[str(p.number), p.subject, str(p.errors), str(p.warnings), str(p.checks)]
                      for p in cp]))
    lines = [f"{p.number}: {f.level}:{f.type}: {f.message} (line {f.line})" for p in cp for f in p.findings]
    if lines:
        s.blocks.append(("pre", "\n".join(lines)))
    return [s]


def builds(doc: Results) -> Section:
    """Every kernel built or taken from the cache, each commit with
    --each-commit, and the base measurements reused."""
    s = Section("Builds")
    s.blocks.append(("table", ["side", "kernel", "page size", "build", "seconds"],
                     [[k.side or "", k.kernel, k.page_size,
                       "BROKEN" if k.build_failed else ("built" if k.built_now else "cached"),
                       fmt(k.build_seconds) if k.built_now else ""]
                      for k in doc.kernels]))
    for k in doc.kernels:
        if k.build_failed:
            s.blocks.append(("pre", f"{k.kernel} {k.page_size}:\n{k.error}"))
    if doc.each_commit:
        s.blocks.append(("p", "Every commit (--each-commit):"))
        s.blocks.append(("table", ["#", "commit", "subject", "page size", "builds"],
                         [[str(e.number), e.commit[:12], e.subject, e.page_size,
                           "yes" if e.ok else "NO"] for e in doc.each_commit]))
        for e in doc.each_commit:
            if not e.ok:
                s.blocks.append(("p", f"First commit that does not build: {e.number} "
                                      f"{e.subject!r} ({e.page_size})"))
                s.blocks.append(("pre", e.errors))
    for b in doc.boots:
        if b.reused:
            s.blocks.append(("p", f"{b.kernel} {b.page_size}: base measurements reused from run "
                                  f"{b.measured_by} (same kernel, guest programs, images and checks)"))
    if doc.schedule:
        sc = doc.schedule
        s.blocks.append(("p", f"Guests: {sc.parts} timed, {sc.own_guests} of the own checks' and "
                              f"{sc.tree_guests} of the tree's at once on {sc.cores} cores; the last ended "
                              f"{fmt(sc.real_s)} s into the run (planned {fmt(sc.planned_s)} s, its own "
                              f"times replayed {fmt(sc.replayed_s)} s: `foliofarm run --plan-cores`)."))
    return s


def lab_jobs(doc: Results) -> list[Section]:
    """Each cell's LAVA job (run --lab): the job that ran it, and where."""
    rows = [[f"{b.page_size}-{b.fs}-{b.kernel}", str(b.attempt or 1), b.device or "", b.lab_job or "",
             *(fmt(x) for x in (b.lab_seconds or ["", ""])), "; ".join(b.lab_faults) or "-"]
            for b in doc.boots if b.lab_job or b.lab_faults]
    if not rows:
        return []
    s = Section("LAVA jobs")
    s.blocks.append(("table", ["cell", "attempt", "device", "job", "queued s", "ran s",
                               "the lab's faults before it"], rows))
    return [s]


def machine(doc: Results) -> list[Section]:
    if not (m := doc.machine):
        return []
    s = Section("Machine")
    s.blocks.append(("table", ["", ""], [[k, str(v)] for k, v in m.items()]))
    return [s]


def reproduce(doc: Results) -> Section:
    s = Section("Reproduce")
    shards = doc.shard_commands
    if shards:
        s.blocks.append(("p", f"Merged from {len(shards)} shards; each ran:"))
        s.blocks += [("pre", shlex.join(c)) for c in shards]
    else:
        s.blocks.append(("pre", shlex.join(doc.command)))
    for k in doc.kernels:
        if k.reproduce:
            s.blocks.append(("pre", f"# {k.kernel} {k.page_size}\n{k.reproduce}"))
    return s
