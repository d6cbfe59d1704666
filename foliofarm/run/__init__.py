"""A run from its options to its exit status: the plan of builds and boots
(plan.py), carried out (executor.py: builds every page size, makes the disks,
picks the booter of boot/protocol.py and measures; runner.py: the loop over
the plan's steps) and closed (closing.py: the verdicts judged, the document
written for the last time); `foliofarm bisect` (bisect.py), one cell's shell
(shell.py), child runs (child.py: the watcher's, bisect's, the self-checks'),
and LAVA jobs' logs judged into a results folder (lab_jobs.py)."""
