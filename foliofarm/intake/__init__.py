"""What goes into a run: the kernel source (source: Debian packages, local trees),
the private apt the farm fetches with (apt), mail and series intake (mail)."""
