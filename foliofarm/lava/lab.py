"""A LAVA lab on this machine, from Debian's own packages: lava-server (its
Django app under gunicorn, its scheduler) on the machine's PostgreSQL, and
lava-dispatcher's lava-worker, each worker with one `qemu` device. For the
tests and for a first try; a real lab is the same REST API at another URL.

    python -m foliofarm.lava.lab up [--workers 2] [--port 8900]   # prints the URL
    python -m foliofarm.lava.lab down

up:
1. PostgreSQL: the machine's first cluster (pg_lsclusters), started with
   pg_ctlcluster if it is down (and stopped again by `down`).
2. lava-server's database as Debian's postinst makes it (dpkg-reconfigure
   lava-server, once: it skips the database while PostgreSQL is down), migrated.
3. gunicorn on 127.0.0.1:PORT, lava-scheduler, and N lava-workers (w1..wN),
   each with a device qemu-wN: the qemu device type's template for arm64 with
   user networking; a job's context sets the CPU, memory and NUMA nodes.
4. A user `foliofarm` and its API token, in CACHE/lab/token (0600).
What it started is in CACHE/lab/lab.json; `down` stops that and nothing else.
Lava runs in the system Python (Debian's Django): its commands get the
system's PATH, never the farm's virtual environment."""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from foliofarm.errors import FarmError, InfraError, UsageError
from foliofarm.paths import cache_dir

SYSTEM = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C.UTF-8", "HOME": "/root"}
DEVICES = Path("/etc/lava-server/dispatcher-config/devices")
DATABASE = Path("/etc/lava-server/settings.d/00-database.yaml")
USER = "foliofarm"
# qemu's device-type template for the farm's guests: arm64, no tap device
# lava-server's own log folder: its services drop root for the lavaserver user
LOGS = Path("/var/log/lava-server")
DICTIONARY = "{% extends 'qemu.jinja2' %}\n{% set arch = 'arm64' %}\n{% set netdevice = 'user' %}\n"


def system(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(list(argv), capture_output=True, text=True, env={**SYSTEM, "DEBIAN_FRONTEND": "noninteractive"})
    if check and p.returncode:
        raise InfraError(f"{' '.join(argv[:4])}: exit {p.returncode}: {(p.stderr or p.stdout).strip()[-600:]}")
    return p


def manage(*args: str, check: bool = True) -> str:
    return system("lava-server", "manage", *args, check=check).stdout


def lab_dir() -> Path:
    return cache_dir() / "lab"


def cluster() -> tuple[str, str, bool]:
    """(version, name, online) of the machine's first PostgreSQL cluster."""
    rows = [ln.split() for ln in system("pg_lsclusters", "--no-header").stdout.splitlines() if ln.strip()]
    if not rows:
        raise InfraError("no PostgreSQL cluster on this machine (Debian's postgresql makes one)")
    return rows[0][0], rows[0][1], rows[0][3] == "online"


def spawn(argv: list[str], log: Path) -> int:
    with open(log, "ab") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=SYSTEM, start_new_session=True).pid


def wait_for(what, seconds: float, why: str):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            if got := what():
                return got
        except OSError:
            pass
        time.sleep(1)
    raise InfraError(f"the lab: waited {seconds:.0f}s for {why}")


def api(url: str, path: str, token: str = "") -> dict:
    """GET a REST API path of the lab (with the token, if given), as JSON."""
    req = urllib.request.Request(f"{url.rstrip('/')}/api/v0.2/{path}",
                                 headers={"Authorization": f"Token {token}"} if token else {})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def up(workers: int = 2, port: int = 8900) -> dict:
    for tool in ("lava-server", "lava-worker", "pg_lsclusters", "gunicorn3"):
        if system("which", tool, check=False).returncode:
            raise UsageError(f"the lab needs {tool} (Debian's lava-server, lava-dispatcher and "
                             "postgresql: make setup installs them)")
    d = lab_dir()
    d.mkdir(parents=True, exist_ok=True)
    if (d / "lab.json").exists():
        down()
    state: dict = {"pids": [], "url": f"http://127.0.0.1:{port}/", "started_cluster": ""}
    version, name, online = cluster()
    if not online:
        system("pg_ctlcluster", version, name, "start")
        state["started_cluster"] = f"{version} {name}"
    (d / "lab.json").write_text(json.dumps(state))
    if not DATABASE.exists():
        system("dpkg-reconfigure", "lava-server")
    manage("migrate", "--no-input")
    if "qemu" not in manage("device-types", "list"):
        manage("device-types", "add", "qemu")
    fail_left()
    listed = manage("workers", "list")
    for i in range(1, workers + 1):
        w = f"w{i}"
        if not re.search(rf"\b{w}\b", listed):
            manage("workers", "add", w)
        token = re.search(r"token\s*:\s*(\S+)", manage("workers", "details", w)).group(1)
        secret = d / f"{w}.token"                 # a file: a token on a command line is in ps
        secret.touch(mode=0o600)
        secret.write_text(token + "\n")
        (DEVICES / f"qemu-{w}.jinja2").write_text(DICTIONARY)
        if f"qemu-{w}" not in manage("devices", "list"):
            manage("devices", "add", "--device-type", "qemu", "--worker", w, f"qemu-{w}")
        (d / w).mkdir(exist_ok=True)
        state.setdefault("workers", {})[w] = spawn(["lava-worker", "--name", w, "--url", state["url"], "--token-file", str(secret),
                                    "--worker-dir", str(d / w), "--log-file", str(d / f"{w}.log"),
                                    "--level", "INFO"], d / f"{w}.out")
        state["pids"].append(state["workers"][w])
    state["pids"].append(spawn(["gunicorn3", "lava_server.wsgi", "--bind", f"127.0.0.1:{port}",
                                "--workers", "2", "--worker-class", "eventlet", "-u", "lavaserver",
                                "-g", "lavaserver", "--log-file", str(LOGS / "foliofarm-gunicorn.log")], d / "gunicorn.out"))
    state["pids"].append(spawn(["lava-server", "manage", "lava-scheduler", "--level", "INFO",
                                "--log-file", str(LOGS / "foliofarm-scheduler.log")], d / "scheduler.out"))
    (d / "lab.json").write_text(json.dumps(state))
    if f"{USER}" not in manage("users", "list", check=False):
        manage("users", "add", USER, "--superuser", "--staff", "--passwd", os.urandom(12).hex())
    listed_tokens = manage("tokens", "list", "--user", USER)
    token = next((m for m in re.findall(r"^\* (\S+)", listed_tokens, re.M)), "")
    if not token:
        token = manage("tokens", "add", "--user", USER).split()[-1]
    tf = d / "token"
    tf.touch(mode=0o600)
    tf.write_text(token + "\n")
    wait_for(lambda: api(state["url"], "workers/"), 120, "lava-server's REST API")
    cancel_left(state["url"], token)
    wait_for(lambda: sum(w["state"] == "Online" for w in api(state["url"], "workers/")["results"]
                         if re.fullmatch(r"w\d+", w["hostname"])) >= workers, 120,
             f"{workers} workers to come online")
    return state


def fail_left() -> None:
    """Jobs an earlier session of the lab left scheduled, running or being
    canceled (a lab stopped mid-job) are finished as incomplete before any
    worker starts: a new worker told to cancel a job its empty folder never
    held exits, and its device takes no job again."""
    for st in ("SCHEDULED", "RUNNING", "CANCELING"):
        for job in re.findall(r"- (\d+)@", manage("jobs", "list", "--state", st)):
            manage("jobs", "fail", job)


def cancel_left(url: str, token: str) -> None:
    """Jobs an earlier session of the lab left queued or running are canceled:
    the devices are the new session's."""
    for j in api(url, "jobs/?limit=200&ordering=-id", token)["results"]:
        if j["state"] not in ("Finished", "Canceling"):
            try:
                api(url, f"jobs/{j['id']}/cancel/", token)
            except (OSError, ValueError):       # gone meanwhile, or an answer not in JSON
                pass


def stop_worker(name: str) -> None:
    """Stop worker ``name`` as a machine that died would: it and the job it
    runs (lava-run, QEMU) killed, no word to the server."""
    from foliofarm.util import kill_descendants, kill_group
    pid = json.loads((lab_dir() / "lab.json").read_text())["workers"][name]
    kill_descendants(pid)
    kill_group(pid)


def down() -> list[str]:
    """Stop what `up` started; returns what it stopped."""
    path = lab_dir() / "lab.json"
    if not path.exists():
        return []
    state = json.loads(path.read_text())
    said = []
    for pid in state.get("workers", {}).values():     # their jobs' lava-run and QEMU too
        from foliofarm.util import kill_descendants
        kill_descendants(pid)
    for pid in state.get("pids", []):
        try:
            os.killpg(pid, signal.SIGTERM)
            said.append(str(pid))
        except (ProcessLookupError, PermissionError):
            pass
    time.sleep(2)
    for pid in state.get("pids", []):
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if state.get("started_cluster"):
        system("pg_ctlcluster", *state["started_cluster"].split(), "stop", check=False)
        said.append(f"PostgreSQL {state['started_cluster']}")
    path.unlink()
    return said


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="foliofarm lab", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("up", "down"))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--port", type=int, default=8900)
    args = ap.parse_args(argv)
    try:
        if args.what == "up":
            state = up(args.workers, args.port)
            print(f"LAVA lab at {state['url']} ({args.workers} workers, a qemu device each); "
                  f"API token in {lab_dir() / 'token'}")
        else:
            print("stopped: " + (", ".join(down()) or "nothing was running"))
        return 0
    except FarmError as exc:
        print(f"foliofarm lab: {exc}", file=sys.stderr)
        return exc.exit_status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
