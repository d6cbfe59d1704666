"""The planner (measure/schedule.py) and the parts' recorded times
(measure/durations.py): the simulated schedule against figures worked by
hand, its bounds for any jobs (Hypothesis), and the records kept in the cache."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from foliofarm import locks
from foliofarm.judge.catalogue import by_name, select
from foliofarm.measure import durations, schedule
from foliofarm.measure.durations import GuestWork
from foliofarm.measure.schedule import Job, simulate


def test_two_tree_guests_share_two_cores_behind_the_own_checks():
    jobs = [Job("a", 100), Job("b", 100), Job("o", 10, own=True)]
    p = simulate(jobs, cores=2, own_guests=3, tree_guests=3)
    # the own guest takes a core for 10 s: a and b share the other (5 s each), then a core each
    assert p.ends["o"] == pytest.approx(10)
    assert p.ends["a"] == pytest.approx(105) and p.wall == pytest.approx(105)
    assert p.own_wall == pytest.approx(10)


def test_one_core_runs_the_own_checks_first_then_longest_first():
    jobs = [Job("short", 10), Job("long", 100), Job("o", 10, own=True)]
    p = simulate(jobs, cores=1, own_guests=1, tree_guests=1)
    assert p.ends == pytest.approx({"o": 10, "long": 110, "short": 120})


def test_longest_first_shortens_the_tail():
    jobs = [Job(f"s{i}", 10) for i in range(8)] + [Job("long", 80)]
    # two cores, two slots: the long one first ends at 80, the eight short ones on the other core at 80
    assert simulate(jobs, 2, 1, 2).wall == pytest.approx(80)
    # taken last, it would start at 40 and end at 120: the planner's order is not the list's
    assert schedule.in_line(jobs)[0].name == "long"


def test_a_race_part_keeps_two_cores_busy():
    p = simulate([Job("race", 50, load=2), Job("t", 50)], cores=2, own_guests=1, tree_guests=2)
    # three threads on two cores: each at 2/3 until the race part ends at 75, then t alone
    assert p.ends["race"] == pytest.approx(75)
    assert p.ends["t"] == pytest.approx(75)


def test_a_job_waits_for_its_kernel():
    p = simulate([Job("o", 10, own=True, ready=30), Job("t", 5)], cores=4, own_guests=1, tree_guests=1)
    assert p.ends == pytest.approx({"t": 5, "o": 40})


def test_more_guests_than_cores_share_them():
    p = simulate([Job(str(i), 60) for i in range(6)], cores=2, own_guests=1, tree_guests=6)
    assert p.wall == pytest.approx(180)


jobs_st = st.lists(st.tuples(st.floats(1, 1000), st.sampled_from([1, 2]), st.booleans(), st.floats(0, 100)),
                   min_size=1, max_size=30)


@settings(max_examples=200, deadline=None)
@given(jobs_st, st.integers(1, 32), st.integers(1, 40), st.integers(1, 40))
def test_no_plan_beats_the_bound_or_loses_a_job(raw, cores, own, tree):
    jobs = [Job(f"j{i}", s, t, o, (i,), r) for i, (s, t, o, r) in enumerate(raw)]
    p = simulate(jobs, cores, own, tree)
    assert set(p.ends) == {j.name for j in jobs}
    for j in jobs:      # no job ends before it could have, alone on its cores
        assert p.ends[j.name] >= j.ready + j.seconds * max(1.0, j.load / cores) - 1e-6
    assert p.wall >= p.bound(jobs) - 1e-6
    # the own checks never wait for the tree's: their verdict is theirs alone
    mine = [j for j in jobs if j.own]
    if mine:
        assert p.own_wall == pytest.approx(simulate(mine, cores, own, tree).own_wall)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(1, 1000), min_size=1, max_size=40), st.integers(1, 32))
def test_with_a_guest_per_core_no_core_idles_while_a_job_waits(secs, cores):
    # Graham: a list schedule that leaves no core idle while a job waits ends
    # by the work over the cores plus the longest job
    jobs = [Job(f"j{i}", s) for i, s in enumerate(secs)]
    p = simulate(jobs, cores, 1, cores)
    assert p.wall <= sum(secs) / cores + max(secs) + 1e-6


def test_records_are_kept_read_back_and_a_damaged_file_is_started_again(tmp_path):
    work = GuestWork("7.3", "4k", "tree", "ext4", ("thpmaps", "mm-selftests"), "2 cpus 4096 MB auto qemu")
    chk = [by_name()["thpmaps"], by_name()["mm-selftests"]]
    records = durations.read(durations.path_of(tmp_path))
    secs, measured = durations.expected(records, work, chk).seconds, durations.expected(records, work, chk).measured
    assert not measured and secs == 12 + 90       # the catalogue's estimates, the cell part's
    for wall, cpu in [(120, 110), (100, 90), (130, 95)]:
        durations.record(tmp_path, work, wall, cpu)
    records = durations.read(durations.path_of(tmp_path))
    assert durations.expected(records, work, chk) == durations.Expected(95, 1, True)    # the median CPU time
    race = GuestWork("7.3", "4k", "race", "", ("mm-selftests",), "2 cpus 4096 MB auto qemu")
    durations.record(tmp_path, race, 60, 100)
    assert durations.expected(durations.read(durations.path_of(tmp_path)), race, chk) == durations.Expected(50, 2, True)
    for _ in range(durations.KEEP + 3):
        durations.record(tmp_path, work, 1, 1)
    assert len(json.loads(durations.path_of(tmp_path).read_text())["parts"][work.key]["cpu"]) == durations.KEEP
    durations.path_of(tmp_path).write_text("{not json")
    assert durations.read(durations.path_of(tmp_path))["parts"] == {}
    durations.record(tmp_path, work, 5, None)
    assert durations.expected(durations.read(durations.path_of(tmp_path)), work, chk) == durations.Expected(5, 1, True)
    # with what it waited for a core: its time alone, and the share of a core it kept busy then
    for wall, cpu, waited in [(100, 40, 50), (90, 40, 40), (120, 40, 70)]:
        durations.record(tmp_path, work, wall, cpu, waited)
    got = durations.expected(durations.read(durations.path_of(tmp_path)), work, chk)
    assert got.seconds == 50 and got.load == pytest.approx(40 / 50) and got.measured
    # and how many times longer than alone it took: the median wall (5, 90, 100, 120) over it
    assert got.slowdown == pytest.approx(95 / 50)
    # never under 1: a part that waited for no core took its time alone
    durations.record(tmp_path, race, 60, 100, 0)
    assert durations.expected(durations.read(durations.path_of(tmp_path)), race, chk).slowdown == 1.0


def test_planned_jobs_group_as_the_run_does():
    checks = select(None)
    cells = [(p, f) for p in ("4k", "16k", "64k") for f in ("ext4", "xfs", "erofs")]
    jobs = schedule.planned_jobs({}, "7.3", cells, checks, "m")
    parts = sorted(j.name for j in jobs)
    assert len([n for n in parts if " own " in n]) == 9 and len([n for n in parts if " tree " in n]) == 9
    assert sorted(n for n in parts if n.endswith(" ")) == ["16k page ", "16k race ", "4k page ", "4k race ",
                                                            "64k page ", "64k race "]
    # the farm's checks only: one guest a cell, no tree guests
    assert len(schedule.planned_jobs({}, "7.3", cells, [c for c in checks if c.tree is None], "m")) == 9


def test_the_planner_sizes_guests_as_the_farm_would():
    jobs = [Job(f"t{i}", 100) for i in range(32)]
    plans = schedule.for_hosts(jobs, 4096, (2, 16), mb_per_core=12 << 10)
    assert [(p.own_guests, p.tree_guests) for p in plans] == [locks.guests_for(2, 24 << 10, 4096),
                                                              locks.guests_for(16, 192 << 10, 4096)]
    assert plans[1].wall < plans[0].wall
    lines = schedule.plan_lines(jobs, 4096, (2, 4))
    assert "32 guests, 3200 guest core-seconds" in lines[0] and lines[2].split()[0] == "2"


def test_a_real_runs_schedule_reads_back_and_replays_to_what_it_recorded():
    """A --fresh --noise run of the default checks on the 3x3 (2 cores,
    three own and three tree guests): its boots read back as 24 parts, and
    replaying them gives the figures its schedule record holds."""
    from foliofarm.results.read import read
    from foliofarm.selfcheck import bench
    doc = read(Path(__file__).parent / "data" / "results" / "scheduled-run-7.3.json")
    jobs = schedule.jobs_of(doc.boots)
    kinds = sorted(j.name.split()[2] for j in jobs)
    assert {k: kinds.count(k) for k in set(kinds)} == {"own": 9, "tree": 9, "page": 3, "race": 3}
    sc = doc.schedule
    assert (sc.cores, sc.own_guests, sc.tree_guests, sc.parts) == (2, 3, 3, 24)
    assert simulate(jobs, 2, 3, 3).wall == pytest.approx(sc.replayed_s, abs=0.1)
    assert schedule.real_wall(doc.boots) == pytest.approx(sc.real_s, abs=0.1)
    # the replay is of the work the guests did: within a fifth of what really happened
    assert 0.8 <= sc.replayed_s / sc.real_s <= 1.2
    plans = schedule.for_hosts(jobs, 4096, mb_per_core=12 << 10)
    walls = [p.wall for p in plans]
    assert walls == sorted(walls, reverse=True) and all(p.wall >= p.bound(jobs) - 1e-6 for p in plans)
    limit = bench.work_limit(doc, sc.real_s)
    assert limit["guest_cpu_seconds"] == pytest.approx(sum(b.cpu_seconds for b in doc.boots if b.cpu_seconds), abs=0.1)
    assert limit["ratio_to_work_limit"] >= 1.0
    assert [r[0] for r in limit["planner"][1:]] == ["2", "4", "8", "16", "32"]
    from foliofarm.report import sections
    said = [b[1] for b in sections.builds(doc).blocks if b[0] == "p" and str(b[1]).startswith("Guests:")]
    assert said and "the last ended 521.7 s into the run (planned 1315.5 s" in said[0]
