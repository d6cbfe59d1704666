"""The host judges: dumps to figures (smaps, checks), figures to outcomes
(expectations), base against series (compare)."""
