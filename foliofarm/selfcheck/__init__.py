"""What checks the farm itself, apart from the product: make bench (bench.py),
make mutants (mutants.py) and make faults (faults.py)."""
