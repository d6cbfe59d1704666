"""LAVA: a run's cells as LAVA job definitions (jobs.py) whose guests run the
farm's programs by themselves, printing their output and dumps framed on the
console (measure/framed.py), and a LAVA job's log read back into measurements the farm
judges like its own boots' (log.py)."""
