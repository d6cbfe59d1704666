"""Fuzzing every input the farm reads, seeded from its real examples and recorded
results: each generated or mutated input is accepted or refused with the farm's
own error (FarmError: exit 2 or 3), never any other exception.

Targets: mbox and patch-file intake, results.json loading (and the report of
whatever is accepted), build.json loading, the KTAP parser, the guest dump
parsers (every check's) and the console splat scanner.

FOLIOFARM_FUZZ_EXAMPLES sets the inputs per target (500 in `make test`, with a
fixed seed so that CI runs the same inputs each time; `make fuzz` runs 5000 with
fresh ones). The counts are printed at the end of the test run."""

import functools
import json
import os
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from foliofarm.matrix import cell_of
from foliofarm import report
from foliofarm.results import schema
from foliofarm.results.outcome import OUTCOMES
from foliofarm.judge.measurement import Measurement
from foliofarm.intake import series
from foliofarm.intake import source
from foliofarm.kernel.build import Builder
from foliofarm.errors import FarmError
from foliofarm.judge import ktap
from foliofarm.boot import splat
from foliofarm.boot.session import parse_ktap
from foliofarm.judge import catalogue, checks
from foliofarm.paths import cache_dir
from foliofarm.report import render, sections, text
from foliofarm.results.junit import junit_xml

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
EXAMPLES = int(os.environ.get("FOLIOFARM_FUZZ_EXAMPLES", "500"))
FIXED = os.environ.get("FOLIOFARM_FUZZ_RANDOM", "") == ""
COUNTS: dict[str, int] = {}

FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=FIXED, database=None,
                suppress_health_check=list(HealthCheck))


def seeds(*globs: str) -> list[bytes]:
    out = []
    for g in globs:
        out += [p.read_bytes() for p in sorted(ROOT.glob(g)) if p.is_file()]
    assert out, globs
    return out


def mutate(data: bytes, rnd: random.Random) -> bytes:
    """A few edits of the kinds a damaged copy shows: cut, flipped bytes, lines
    dropped, doubled or swapped, random bytes inserted."""
    b = bytearray(data)
    for _ in range(rnd.randint(1, 4)):
        op = rnd.randrange(6)
        if not b:
            b += bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 40)))
            continue
        i = rnd.randrange(len(b))
        if op == 0:
            del b[i:]
        elif op == 1:
            for _ in range(rnd.randint(1, 8)):
                b[rnd.randrange(len(b))] = rnd.randrange(256)
        elif op == 2:
            b[i:i] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 64)))
        else:
            lines = bytes(b).split(b"\n")
            j = rnd.randrange(len(lines))
            if op == 3:
                del lines[j]
            elif op == 4:
                lines.insert(j, lines[rnd.randrange(len(lines))])
            else:
                k = rnd.randrange(len(lines))
                lines[j], lines[k] = lines[k], lines[j]
            b = bytearray(b"\n".join(lines))
    return bytes(b)


def inputs(seed_data: list[bytes]):
    """A seed mutated, or bytes generated from nothing."""
    mutated = st.tuples(st.sampled_from(seed_data), st.randoms(use_true_random=False)).map(
        lambda t: mutate(t[0], t[1]))
    return st.one_of(mutated, mutated, mutated, st.binary(max_size=2000),
                     st.text(max_size=500).map(str.encode))


def counted(target: str) -> None:
    COUNTS[target] = COUNTS.get(target, 0) + 1


MAILS = seeds("examples/series/*.mbox", "examples/series/*/*.patch", "tests/mutants/*.patch")


@FUZZ
@given(inputs(MAILS))
def test_fuzz_mbox_intake(data):
    counted("mbox intake")
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "series.mbox"
        f.write_bytes(data)
        try:
            s = series.load(str(f))
        except FarmError:
            return
        assert s.patches and all(p.raw for p in s.patches)


@FUZZ
@given(inputs(seeds("examples/series/*/*.patch", "tests/mutants/*.patch")))
def test_fuzz_patch_directory_intake(data):
    counted("patch directory intake")
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "0001-x.patch").write_bytes(data)
        try:
            series.load(tmp)
        except FarmError:
            return


RESULTS = seeds("tests/data/results/*.json")


def json_damage(doc, rnd: random.Random):
    """A structural edit of a results document: a value replaced by one of another
    type, a key dropped, a list emptied."""
    doc = json.loads(json.dumps(doc))
    for _ in range(rnd.randint(1, 3)):
        node, path = doc, []
        while isinstance(node, (dict, list)) and node and rnd.random() < 0.8:
            key = rnd.choice(list(node)) if isinstance(node, dict) else rnd.randrange(len(node))
            path.append((node, key))
            node = node[key]
        if not path:
            continue
        parent, key = path[-1]
        choice = rnd.randrange(7)
        if choice == 0 and isinstance(parent, dict):
            del parent[key]
        else:
            parent[key] = [None, "x", -1, 1.5, [], {}, True][choice]
    return doc


@FUZZ
@given(st.one_of(
    inputs(RESULTS),
    st.tuples(st.sampled_from(RESULTS), st.randoms(use_true_random=False)).map(
        lambda t: json.dumps(json_damage(json.loads(t[0]), t[1])).encode())))
def test_fuzz_results_json_and_its_report(data):
    counted("results.json")
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "results.json"
        f.write_bytes(data)
        try:
            doc = report.readback(f)
        except FarmError:
            return
        # what is accepted renders: every report and the JUnit file
        title, secs = sections.build(doc)
        render.to_markdown(title, secs)
        render.to_html(title, secs)
        text.render(doc)
        junit_xml(doc)


@FUZZ
@given(inputs([json.dumps({"state": "complete", "seconds": 1.0, "sha256": {"Image": "0" * 64}}).encode()]))
def test_fuzz_build_json(data):
    counted("build.json")
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "build.json").write_bytes(data)
        (Path(tmp) / "Image").write_bytes(b"kernel")
        assert Builder._complete(Path(tmp)) in (True, False)


KTAP = seeds("tests/data/**/*.ktap") if list(ROOT.glob("tests/data/**/*.ktap")) else [
    b"KTAP version 1\n1..1\n# exec-text: mapped 1024 pages\nok 1 exec-text\n",
    b"KTAP version 1\n1..1\nok 1 anon-mthp # SKIP no /sys/kernel/mm/transparent_hugepage\n",
    b"KTAP version 1\n1..1\n# mmap: Invalid argument\nnot ok 1 exec-text\n"]


@FUZZ
@given(inputs(KTAP))
def test_fuzz_ktap_parser(data):
    counted("KTAP parser")
    out = parse_ktap(data.decode("utf-8", "replace"))
    assert isinstance(out["results"], list)


SELFTESTS_KTAP = seeds("tests/data/ktap/*.txt")


@functools.cache
def kunit_parser():
    cache = cache_dir()
    return ktap.load_parser(ktap.parser_dir(
        cache, lambda: source.resolve(f"debian:{ktap.PARSER_KERNEL}", cache).tree))


@FUZZ
@given(inputs(SELFTESTS_KTAP))
def test_fuzz_selftests_ktap_and_judging(data):
    """run_vmtests.sh output, damaged: the kernel's parser and the judging
    give outcomes the schema takes, never a traceback."""
    counted("selftests KTAP (kernel's parser) and judging")
    run = ktap.parse(data.decode("utf-8", "replace"), kunit_parser())
    m = Measurement.model_validate({"kind": "ktap", "tests": {"results": list(run.results),
                                                              "complete": run.complete}})
    out = checks.judge_measurement(catalogue.by_name()["mm-selftests"], m, cell_of("16k", "xfs", "7.3"), "7.3")
    schema.CheckResult.model_validate(out.written())


DUMPS = sorted((DATA / "dumps").glob("*.dump"))


@FUZZ
@given(st.sampled_from(DUMPS), st.randoms(use_true_random=False), st.booleans())
def test_fuzz_dump_parsers(path, rnd, generated):
    """Every check's dump parser and figures, on a damaged recorded dump of it."""
    counted("dump parsers")
    cell, check_name = path.name.removesuffix(".dump").rsplit(".", 1)    # 4k-xfs-7.3, exec-text
    check = catalogue.by_name()[check_name]
    page, fs, kernel = cell.split("-")
    data = bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 400))) if generated and rnd.random() < 0.2 \
        else mutate(path.read_bytes(), rnd)
    out = checks.evaluate(check, data.decode("utf-8", "replace"), cell_of(page, fs, kernel), kernel)
    assert out.outcome in OUTCOMES


CONSOLES = seeds("tests/data/consoles/*.log", "tests/data/consoles/*.txt",
                 "tests/data/consoles/splats/*/*.log")


@FUZZ
@given(inputs(CONSOLES))
def test_fuzz_console_splat_scanner(data):
    counted("console splat scanner")
    found = splat.scan(data.decode("utf-8", "replace"))
    for s in found:
        assert s.kind in splat.kinds() and isinstance(s.excerpt, str)
    splat.is_fatal(found)


def test_fuzz_counts_are_reported():
    """Runs last in this module: every target ran its budget."""
    if not COUNTS:
        pytest.skip("run with the fuzz targets")
    for target, n in COUNTS.items():
        assert n >= min(EXAMPLES, 100), (target, n)
