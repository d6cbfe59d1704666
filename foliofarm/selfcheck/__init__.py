"""The farm's checks of itself, beside the product (`foliofarm selfcheck`, and
make bench, make mutants, make faults): speed and memory as ratios against
their targets (bench.py); every mutant of 7.3 the farm keeps (tests/mutants/)
run as a series and caught in exactly its cells, the benign series clean
(mutants.py); and each fault injected into a real run, said and recovered
from (faults.py)."""
