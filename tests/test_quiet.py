"""A boot again for lockups has the host to itself (foliofarm/run/executor.py
Executor.quiet, measure/confirm.py): the run's queued builds end first, then
every guest slot of the host is held, so no other guest boots beside it."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

from foliofarm.locks import HostSlots
from foliofarm.run.executor import Executor


def test_quiet_waits_for_the_builds_queued_then_holds_every_host_slot(tmp_path, monkeypatch):
    monkeypatch.setenv("FOLIOFARM_HOST_GUESTS", "3")
    said: list[str] = []
    run = Executor.__new__(Executor)       # only what quiet reads: no kernel, no writer
    run.cache, run.opts, run.log = tmp_path, SimpleNamespace(memory_mb=2048), said.append
    ended = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        run.queued = [pool.submit(time.sleep, 0.4), pool.submit(ended.set)]
        with run.quiet():
            assert ended.is_set()           # both builds done before it
            got = threading.Event()

            def guest():
                with HostSlots(tmp_path, 3).slot():
                    got.set()

            other = threading.Thread(target=guest)
            other.start()
            assert not got.wait(0.5)        # every slot of the host held
        assert got.wait(5)                  # and free again after
        other.join(5)
    assert said and "waiting for 2 build(s) to end" in said[0]
