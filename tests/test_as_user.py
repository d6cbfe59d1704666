"""tools/as-user.sh (`make hostile-as-user`): root runs the tests as an
unprivileged uid with a home and cache of its own, so the suites that attack
the sandbox hold whoever runs the farm. Here it runs the sandbox's privilege
probe that way: the probe passes with the farm as that user, and the case
that wants the farm to be root says it is not."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from foliofarm.paths import ROOT

pytestmark = pytest.mark.integration


@pytest.fixture
def home():
    d = Path(tempfile.mkdtemp(prefix="foliofarm-as-user-"))
    d.chmod(0o755)          # the user's home below it: a folder every uid may enter
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.skipif(os.geteuid() != 0, reason="the farm already runs as a user here: "
                                               "as-user.sh runs the tests as this user")
def test_root_runs_the_tests_as_an_unprivileged_uid_with_a_home_of_its_own(home):
    readable = subprocess.run(["setpriv", "--reuid", "64001", "--regid", "64001", "--clear-groups",
                               "test", "-r", str(ROOT / "foliofarm" / "__init__.py")])
    if readable.returncode:         # as-user.sh says so and exits 2: a checkout under /root, say
        pytest.skip(f"uid 64001 cannot read the checkout {ROOT}: as-user.sh needs one every user may read")
    env = {**os.environ, "FOLIOFARM_USER_HOME": str(home / "user"), "FOLIOFARM_USER_UID": "64001"}
    p = subprocess.run([str(ROOT / "tools" / "as-user.sh"), "-ra", "-k", "privilege",
                        "tests/test_sandbox.py"], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=1200)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out[-3000:]
    assert "1 passed, 1 skipped" in out, out[-3000:]
    assert "the farm already runs as a user here" in out, out[-3000:]
    assert (home / "user").stat().st_uid == 64001
    assert oct((home / "user").stat().st_mode & 0o777) == "0o700"


@pytest.mark.skipif(os.geteuid() != 0, reason="only root picks the uid")
@pytest.mark.parametrize("uid,where,said", [
    ("0", "user", "FOLIOFARM_USER_UID is 0: give the uid of an unprivileged user"),
    ("64001", "closed/user", "cannot reach"),
], ids=["uid-0", "home-below-a-closed-folder"])
def test_what_cannot_work_is_refused_with_what_to_give(home, uid, where, said):
    (home / "closed").mkdir(mode=0o700)
    p = subprocess.run([str(ROOT / "tools" / "as-user.sh"), "--co"], cwd=ROOT,
                       env={**os.environ, "FOLIOFARM_USER_UID": uid, "FOLIOFARM_USER_HOME": str(home / where)},
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stdout + p.stderr
    assert said in p.stderr
