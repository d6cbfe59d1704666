"""`foliofarm watch`: follow a public-inbox archive, test each new series that
touches memory management, reply in its thread.

- archive.py reads the archive as public-inbox's own clients do: the git epochs
  of a v2 inbox (cloned and fetched over HTTP from a URL such as lore serves,
  or read in place from a local inbox), each commit one message;
- threads.py sorts messages into series versions (cover, `[PATCH n/N]`,
  replies left out) and says whether a series is complete and of interest;
- state.py keeps the queue and the history in SQLite, so that a watcher killed
  at any moment resumes with nothing lost and nothing done twice;
- tester.py runs `foliofarm run --series` on a series as a child process;
- reply.py writes the reply (a maildir outbox, or SMTP with `--send`);
- status.py writes the status page;
- loop.py ties them together; config.py reads what to test (configs/watch.toml).
"""
