"""The kernel under test: its Kconfig fragments merged and verified (kconfig),
and the build cached by source and config (build)."""
