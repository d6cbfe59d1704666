"""One built kernel measured on its cells: its passes of boots, each
measurement judged as it arrives (passes.py), its cells' guests and saved
measurements (cells.py, saved.py), results booted again before they count
(confirm.py), the history of its results over its boots (history.py) and split
selftests (split.py). Whatever boots a group of checks (the farm's QEMU, vng, a
LAVA lab) is the run's booter (boot/protocol.py)."""
