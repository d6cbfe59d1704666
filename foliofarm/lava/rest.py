"""A LAVA lab's REST API (v0.2, as lava-server 2023.01 serves it and KernelCI
submits to it): a job submitted (POST jobs/, its ids from ``job_ids``),
followed (jobs/ID/), its log fetched (jobs/ID/logs/), canceled
(jobs/ID/cancel/), and the workers behind its devices (devices/NAME/,
workers/NAME/). Every call carries ``Authorization: Token ...``.

What goes wrong is sorted by whose it is: a token the lab refuses is the
user's (UsageError: exit 2, nothing is retried); a lab that does not answer
for ``patience`` seconds, or answers with a server error, is the lab's
(LabFault: the cell's attempt failed, retried, then its `error`)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from typing import Any

from foliofarm.errors import InfraError, UsageError


class LabFault(InfraError):
    """The lab could not do its part; the message is the lab's words."""


def token_from(file: str | None, environ: dict[str, str]) -> str:
    """The lab's API token: from a file (0600, never the command line, where
    ps shows it) or FOLIOFARM_LAB_TOKEN."""
    if file:
        try:
            token = open(file, encoding="utf-8").read().strip()
        except OSError as exc:
            raise UsageError(f"--lab-token {file}: {exc.strerror}: give the file holding the lab's "
                             "API token (lava-server manage tokens add --user USER)") from None
    else:
        token = environ.get("FOLIOFARM_LAB_TOKEN", "").strip()
    if not token:
        raise UsageError("--lab needs the lab's API token: --lab-token FILE or FOLIOFARM_LAB_TOKEN "
                         "(a token on the command line would be in ps and in repro.sh)")
    return token


class LabAPI:
    def __init__(self, url: str, token: str, patience: float = 120) -> None:
        if not url.startswith(("http://", "https://")):
            raise UsageError(f"--lab {url}: give the lab's address, http(s)://HOST[:PORT]/")
        self.url = url.rstrip("/") + "/"
        self.token = token
        self.patience = patience

    def job_page(self, job_id: int) -> str:
        return f"{self.url}scheduler/job/{job_id}"

    def call(self, path: str, data: dict[str, Any] | None = None, raw: bool = False) -> Any:
        """One call, tried again while the lab does not answer, for ``patience``
        seconds in all (2 s, 4 s, ... 30 s apart)."""
        req = urllib.request.Request(
            f"{self.url}api/v0.2/{path}", method="POST" if data is not None else "GET",
            data=json.dumps(data).encode() if data is not None else None,
            headers={"Content-Type": "application/json", "Authorization": f"Token {self.token}"})
        end, delay = time.monotonic() + self.patience, 2.0
        while True:
            try:
                with urllib.request.urlopen(req, timeout=60) as r:
                    body = r.read()
                return body if raw else json.loads(body)
            except urllib.error.HTTPError as exc:
                said = said_by(exc)
                if exc.code in (401, 403):
                    raise UsageError(f"the lab at {self.url} refused the token (HTTP {exc.code}: {said}): "
                                     "give a token of a user who may submit jobs (--lab-token FILE or "
                                     "FOLIOFARM_LAB_TOKEN)") from None
                if exc.code == 400:
                    raise LabFault(f"the lab at {self.url} refused {path} (HTTP 400): {said}") from None
                if exc.code == 404:
                    raise LabFault(f"the lab at {self.url} has no {path} (HTTP 404)") from None
                last = f"HTTP {exc.code}: {said}"
            except (OSError, ValueError) as exc:      # refused, reset, timed out, not JSON
                last = str(getattr(exc, "reason", None) or exc)
            if time.monotonic() + delay > end:
                raise LabFault(f"the lab at {self.url} did not answer for {self.patience:g} s "
                               f"({path}: {last})")
            time.sleep(delay)
            delay = min(delay * 2, 30)

    def check(self, device_type: str) -> None:
        """Before anything builds: the lab answers, takes the token, and has
        the device type (each a usage error to fix, the lab's address and all)."""
        try:
            self.call("jobs/?limit=1")
            self.call(f"devicetypes/{device_type}/")
        except LabFault as exc:
            raise UsageError(f"--lab: {exc}" + (f"; is {device_type!r} the lab's device type name "
                                                "(--lab-device-type)?" if "404" in str(exc) else "")) from None

    def submit(self, definition: str) -> int:
        return int(self.call("jobs/", {"definition": definition})["job_ids"][0])

    def job(self, job_id: int) -> dict[str, Any]:
        return self.call(f"jobs/{job_id}/")

    def logs(self, job_id: int) -> bytes:
        return self.call(f"jobs/{job_id}/logs/", raw=True)

    def cancel(self, job_id: int) -> None:
        self.call(f"jobs/{job_id}/cancel/")

    def worker_state(self, device: str) -> tuple[str, str]:
        """(worker, its state: "Online" or "Offline") of ``device``."""
        worker = self.call(f"devices/{device}/")["worker_host"]
        return worker, self.call(f"workers/{worker}/")["state"]


def said_by(exc: urllib.error.HTTPError) -> str:
    """What the lab said with an HTTP error, in a line."""
    try:
        body = exc.read().decode(errors="replace")
    except OSError:
        return exc.reason or ""
    try:
        doc = json.loads(body)
        body = doc.get("detail") or doc.get("message") or body if isinstance(doc, dict) else body
    except ValueError:
        pass
    return " ".join(str(body).split())[:300]
