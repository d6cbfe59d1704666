"""What goes into a run, refused early when it is wrong: the kernel source
(source.py: Debian's linux-source packages fetched through the farm's private
apt configuration, apt.py; local trees and worktrees), a series from an mbox,
a patch directory or a range (series.py), mail and threads read with git's
mailsplit and mailinfo (mail.py), applied with git am on a work branch
(apply.py) on the base it was written for in a followed tree (bases.py), its
style checked with the tree's checkpatch.pl (checkpatch.py), and every git
call through one helper (git.py)."""
