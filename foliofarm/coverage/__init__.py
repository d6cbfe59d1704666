"""Coverage: which kernel code each check and mm selftest executes on a base
(the coverage map, cmap.py, from a coverage kernel's gcov counters read by
gcda.py), what a series changes as a map sees it (reach.py), and the
selftests it can reach (select.py)."""
