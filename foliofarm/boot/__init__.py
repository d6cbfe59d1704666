"""A guest booted and driven: one way to boot a group of checks, whoever boots
it (protocol.py: the farm's QEMU here, virtme-ng in vng.py, a LAVA lab in
lava/remote.py), the machine's QEMU command line (qemu.py), the boots of one
group of checks with their deadlines, hangs and retries (session.py), the
console spoken over pexpect with framed commands, taint and the kernel log
read after each (console.py, banner.py), checks run framed in a guest no host
drives (framed.py), kernel reports found on a console (splat.py), and the
guests' share of the host's cores (priority.py)."""
