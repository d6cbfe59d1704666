"""A run's results: the schema of results.json (schema.py), the writer that
writes it as results arrive (writer.py, with junit.xml: junit.py), shards of a
CI matrix merged (merge.py) and the one reader (read.py)."""
