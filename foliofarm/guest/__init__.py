"""One boot of a guest: its QEMU command line, the console session, and what
the kernel reported (splats, taint)."""
