"""A LAVA lab, beside boot/ on its floor: a run's cells as LAVA job
definitions (jobs.py) whose guests run the farm's programs by themselves,
printing their output and dumps framed on the console (boot/framed.py); a job's
log read back (log.py); a run's own checks booted as the lab's jobs through its
REST API with their artifacts served (remote.py, one booter of
boot/protocol.py; rest.py, serve.py); and a lab on this machine (lab.py)."""
