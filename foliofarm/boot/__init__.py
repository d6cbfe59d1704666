"""A guest booted and driven: the machine's QEMU command line (qemu.py), the
boots of one group of checks with their deadlines, hangs and retries
(session.py), the console spoken over pexpect with framed commands, taint and
the kernel log read after each (console.py, banner.py), kernel reports found on
a console (splat.py), and the guests' share of the host's cores (priority.py)."""
