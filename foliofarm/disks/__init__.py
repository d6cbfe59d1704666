"""What a guest is given: the cells' ext4, XFS and EROFS images made with the
mkfs tools (images.py), the initramfs of busybox and the guest programs
(rootfs.py, written by cpio.py), Debian arm64 roots (debroot.py), the thpmaps
disk (pyroot.py) and the tree's mm selftests built static (selftests_disk.py)."""
