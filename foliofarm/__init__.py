"""foliofarm: a test farm for arm64 memory-management patch series."""

__version__ = "0.1.0"
