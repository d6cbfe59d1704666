"""The kernel under test, built: its Kconfig fragments merged with the tree's
merge_config.sh and every requested symbol verified in the final .config
(kconfig.py), the build cached by source, page size and config with ccache
beneath (build.py), a series' build in a copy of its base's build directory
with a cap on what it writes (untrusted.py), the probe modules rebuilt only
when their sources changed (modules.py), and old kernels pruned from the cache
(prune.py)."""
