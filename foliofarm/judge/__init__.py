"""The host judges what a guest measured; nothing here boots or builds. The
checks and their expectations as data (catalogue.py, tests/vmtests/), the
one record every boot path makes of a check (measurement.py), a dump read into
figures (smaps.py, metrics.py; thpmaps.py cross-checks them against the tree's
tools/mm/thpmaps), a selftests run's KTAP read with the kernel's own parser
(ktap.py) and judged test by test (selftests.py), a measurement of a cell
judged into its result (checks.py), the noise of each figure over clean boots
(noise.py, figures.py), base against series into verdicts (compare.py), and
results flaky by measurement (flaky.py)."""
