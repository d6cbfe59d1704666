"""junit.xml: a run's results as CI servers read them (Jenkins, GitHub's test
reporters): one test suite per cell, a case per check, and for a two-sided run
a suite of the verdicts. Written beside results.json by the writer, and for a
merged report from CI shards."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from foliofarm import shown
from foliofarm.results.outcome import Outcome, Verdict
from foliofarm.results.schema import CheckResult, Results


def junit_class(name: str) -> str:
    """A classname CI servers group as one class under the package "foliofarm":
    Jenkins splits classnames at their dots, and "4k-xfs-7.3" has one."""
    return "foliofarm." + name.replace(".", "_")


# Verdicts as test cases: which fail the run (failure), which are the farm's
# own trouble (error), which are not a result (skipped).
VERDICT_FAILURE = {Verdict.REGRESSION, Verdict.BUILD_BROKEN}
VERDICT_ERROR = {Outcome.ERROR, Verdict.INCOMPLETE}
VERDICT_SKIPPED = {Outcome.SKIP, Outcome.XFAIL, Verdict.NOT_REACHED}


def junit_xml(doc: Results) -> str:
    """One test suite per cell (a case per check, with its guest time), and for a
    two-sided run one suite of the verdicts (a case per cell and check)."""
    suites = ET.Element("testsuites", name="foliofarm", id=str(doc.run_id))
    for cell in doc.cells:
        checks = cell.checks
        suite = ET.SubElement(suites, "testsuite", name=cell.id, tests=str(len(checks)),
                              failures=str(sum(c.outcome == Outcome.FAIL for c in checks)),
                              errors=str(sum(c.outcome == Outcome.ERROR for c in checks)),
                              skipped=str(sum(c.outcome in (Outcome.SKIP, Outcome.XFAIL) for c in checks)),
                              time=_seconds(sum(_guest_seconds(c) for c in checks)))
        for c in checks:
            case = ET.SubElement(suite, "testcase", classname=junit_class(cell.id), name=c.name,
                                 time=_seconds(_guest_seconds(c)))
            msg = c.reason or str(c.outcome)
            if c.outcome == Outcome.FAIL:
                ET.SubElement(case, "failure", message=msg).text = msg
            elif c.outcome == Outcome.ERROR:
                ET.SubElement(case, "error", message=msg).text = c.excerpt or msg
            elif c.outcome in (Outcome.SKIP, Outcome.XFAIL):
                ET.SubElement(case, "skipped", message=f"{c.outcome}: {msg}")
            elif c.outcome == Outcome.FLAKY:
                # passed in some boots, failed in others: surefire's rerun
                # element, which Jenkins' JUnit plugin shows as flaky
                ET.SubElement(case, "flakyFailure", message=msg).text = msg
            out = ET.SubElement(case, "system-out")
            out.text = " ".join(f"{k}={v}" for k, v in c.metrics.items() if not isinstance(v, dict))
    if doc.verdicts:
        _verdicts(suites, doc)
    _visible(suites)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _visible(root: ET.Element) -> None:
    """Every text and attribute made visible (shown.py): a reason or an
    excerpt from a guest holds what XML 1.0 cannot carry and a CI page must
    not show raw."""
    for el in root.iter():
        if el.text:
            el.text = shown.bounded(el.text)
        for k, v in el.attrib.items():
            el.attrib[k] = shown.bounded(v)


def _verdicts(suites: ET.Element, doc: Results) -> None:
    """The suite of a two-sided run's verdicts: a case per cell and check."""
    verdicts = doc.verdicts
    sides = doc.sides
    name = f"verdicts {sides.base.kernel if sides else None} -> {sides.series.kernel if sides else None}"
    suite = ET.SubElement(suites, "testsuite", name=name, tests=str(len(verdicts)),
                          failures=str(sum(r.verdict in VERDICT_FAILURE for r in verdicts)),
                          errors=str(sum(r.verdict in VERDICT_ERROR for r in verdicts)),
                          skipped=str(sum(r.verdict in VERDICT_SKIPPED for r in verdicts)))
    for r in verdicts:
        case = ET.SubElement(suite, "testcase", classname=junit_class(f"verdicts.{r.page_size}-{r.fs}"),
                             name=r.check)
        figs = r.changed or [f for f in r.figures if f.base != f.series]
        moved = "; ".join(f"{f.metric} {f.base} -> {f.series}" for f in figs[:8])
        msg = f"{r.verdict}: base {r.base}, series {r.series}" + (f"; {moved}" if moved else "")
        if r.verdict in VERDICT_FAILURE:
            ET.SubElement(case, "failure", message=msg).text = r.series_reason or msg
        elif r.verdict in VERDICT_ERROR:
            ET.SubElement(case, "error", message=msg).text = msg
        elif r.verdict in VERDICT_SKIPPED:
            why = f": {r.series_reason}" if r.verdict == Verdict.NOT_REACHED and r.series_reason else ""
            ET.SubElement(case, "skipped", message=msg + why)
        else:
            ET.SubElement(case, "system-out").text = msg


def _guest_seconds(c: CheckResult) -> float:
    v = c.metrics.get("guest_seconds")
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


def _seconds(x: float) -> str:
    return f"{x:.3f}"
