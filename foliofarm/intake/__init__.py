"""What goes into a run: mail and series intake."""
