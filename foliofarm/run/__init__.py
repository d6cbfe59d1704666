"""A run from its options to its exit status: the plan of builds and boots
(plan.py), carried out (executor.py, runner.py) and closed (closing.py: the
verdicts judged, the document written for the last time); bisect.py, one
cell's shell (shell.py), and child runs (child.py: the watcher's, bisect's)."""
