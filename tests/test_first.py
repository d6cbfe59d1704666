"""The selftests a series touches, first (measure/first.py, split.py's
"touched" part): which programs run apart, on which side, and the parts a
page part then waits for."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from foliofarm.judge.catalogue import by_name
from foliofarm.measure import first, split
from foliofarm.results.read import read
from foliofarm.results.schema import Role, TouchedSelftest

DATA = Path(__file__).parent / "data" / "results"
MM = by_name()["mm-selftests"]


def test_the_programs_a_check_runs_of_those_touched():
    touched = [("khugepaged", ["thp"]), ("cow", ["cow"]), ("test_hmm.sh", ["hmm"]),
               ("hugetlb_fault_after_madv", ["hugetlb"])]
    # hmm is not among the default categories; hugetlb_fault_after_madv is left out of them
    assert split.touched_programs(MM, touched) == "khugepaged cow"
    every = dataclasses.replace(MM, options={**MM.options, "categories": "all", "left_out": ""})
    assert split.touched_programs(every, touched) == "khugepaged cow test_hmm.sh hugetlb_fault_after_madv"
    assert split.touched_programs(MM, []) == ""


def test_the_page_and_touched_parts_leave_each_others_tests_out_and_the_race_part_is_as_it_was():
    page, tch, race = (split.part(MM, w, "khugepaged") for w in (split.PAGE, split.TOUCHED, split.RACE))
    assert page.options["touched"] == tch.options["touched"] == "khugepaged"
    assert race.options["touched"] == "-" and split.part_of(tch) == split.TOUCHED
    assert split.page_parts(MM) == {split.PAGE, split.RACE}
    assert split.page_parts(MM, "khugepaged") == {split.PAGE, split.RACE, split.TOUCHED}
    assert MM.options["touched"] == "-" and "{touched}" in MM.args


def test_only_the_series_side_runs_its_touched_tests_apart():
    doc = read(DATA / "benign-4k.json")
    assert first.programs(doc, Role.SERIES, [MM]) == {}          # it touches none
    doc.series.touched_selftests = [TouchedSelftest(program="khugepaged", categories=["thp"],
                                                    named_by=["MEMORY MANAGEMENT - THP (TRANSPARENT HUGE PAGE)"])]
    assert first.programs(doc, Role.SERIES, [MM]) == {"mm-selftests": "khugepaged"}
    assert first.programs(doc, Role.BASE, [MM]) == {} and first.programs(doc, None, [MM]) == {}
    assert first.programs(doc, Role.SERIES, [by_name()["exec-text"]]) == {}
