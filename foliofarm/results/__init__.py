"""A run's results, no judging: the words (outcome.py: Outcome, Verdict, a
test's Status as str enums), the models of results.json with unknown fields
refused (schema.py), a check's result as the judge makes it (judged.py), the
writer that keeps a Results model and writes it as results arrive (writer.py;
arriving.py, the outputs rewritten with every result: results.json and
junit.xml, junit.py), shards of a CI matrix merged (merge.py) and the one
reader, tolerant of each earlier version (read.py)."""
