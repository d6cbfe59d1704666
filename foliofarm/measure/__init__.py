"""One built kernel measured on its cells: its passes of boots, each
measurement judged as it arrives (passes.py), its cells' guests and saved
measurements (cells.py, saved.py), results booted again before they count
(confirm.py), the history of its results over its boots (history.py), split
selftests (split.py), KTAP read with the kernel's parser (ktap.py), checks run in
a guest no host drives (framed.py) and a cell under virtme-ng (vng.py)."""
