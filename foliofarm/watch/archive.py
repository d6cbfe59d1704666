"""A public-inbox archive read as its own clients read it: through git.

A v2 inbox keeps its messages in git "epochs" (INBOX/git/0.git, 1.git, ...),
each commit adding one message as the blob `m` (`d` records a removal); a v1
inbox is one git repository with a file per message. From an HTTP URL (as lore
serves an inbox) the epochs are listed by the inbox's manifest.js.gz, as
`public-inbox-clone` and grokmirror list them, and mirrored with `git clone
--mirror` / `git fetch`; only the newest epochs are mirrored (new messages land
there), the first time no deeper than the backlog window. A local inbox is read
in place. Reading is incremental: each epoch's commits after its cursor, oldest
first."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from foliofarm.bounded import remove_tree
from foliofarm.errors import InfraError, UsageError
from foliofarm.intake import git

EPOCH = re.compile(r"/git/(\d+)\.git$")
V1_PATH = re.compile(r"^[0-9a-f]{2}/[0-9a-f]{38}$")
BATCH = 200


class Unreachable(InfraError):
    """The archive could not be reached or read just now: wait and try again."""


@dataclass(frozen=True)
class Epoch:
    name: str          # "0", "1", ... ("v1" for a v1 inbox)
    gitdir: Path


@dataclass(frozen=True)
class Batch:
    epoch: str
    commit: str                       # the cursor once these are taken
    messages: list[tuple[str, bytes]]  # (blob id, raw message)


def is_url(where: str) -> bool:
    return where.startswith(("http://", "https://"))


class Archive:
    def __init__(self, where: str, mirror: Path, timeout: float = 60) -> None:
        self.where = where.rstrip("/")
        self.mirror = mirror
        self.timeout = timeout
        if not is_url(where):
            path = Path(where).expanduser()
            if not path.is_dir():
                raise UsageError(f"{where} is neither an http(s) URL nor a folder: give the URL of "
                                 "an inbox (https://lore.kernel.org/linux-mm) or a public-inbox folder")
            if not self.local_epochs():
                raise UsageError(f"{where} holds no public-inbox archive: expected a v2 inbox "
                                 "(git/0.git inside) or a v1 one (a git repository)")

    # -- which epochs

    def local_epochs(self) -> list[Epoch]:
        root = Path(self.where).expanduser()
        found = sorted((int(m.group(1)), p) for p in (root / "git").glob("*.git")
                       if (m := re.match(r"(\d+)\.git$", p.name)))
        if found:
            return [Epoch(str(n), p) for n, p in found]
        if (root / "objects").is_dir() or (root / ".git").exists():
            return [Epoch("v1", root)]
        return []

    def remote_epochs(self) -> list[int]:
        """The epochs the server lists in its manifest (lore's and public-inbox's
        own); a server without one is asked for git/0.git, 1.git, ... in turn."""
        try:
            with urllib.request.urlopen(f"{self.where}/manifest.js.gz", timeout=self.timeout) as r:
                manifest = json.loads(gzip.decompress(r.read()))
            return sorted(int(m.group(1)) for k in manifest if (m := EPOCH.search(k)))
        except urllib.error.HTTPError as exc:
            if exc.code != 404:
                raise Unreachable(f"{self.where}/manifest.js.gz: HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError, ValueError, EOFError) as exc:
            raise Unreachable(f"{self.where}: {getattr(exc, 'reason', exc)}") from None
        found = []
        while self._ls_remote(f"{self.where}/git/{len(found)}.git"):
            found.append(len(found))
        if not found:
            raise Unreachable(f"{self.where}: no manifest.js.gz and no git/0.git")
        return found

    def _ls_remote(self, url: str) -> bool:
        p = git.git(None, "ls-remote", url, check=False, environment="user")
        return p.returncode == 0

    def epochs(self, cursors: dict[str, str], since_days: float) -> list[Epoch]:
        """The epochs to read, brought up to date: a local inbox's all; a
        remote one's newest and any newer than those read before."""
        if not is_url(self.where):
            return self.local_epochs()
        names = self.remote_epochs()
        read = [int(e) for e in cursors if e.isdigit()]
        start = min(max(read), names[-1]) if read else names[-1]
        out = []
        for n in names:
            if n < start:
                continue
            out.append(Epoch(str(n), self._mirrored(n, since_days if not read else None)))
        return out

    def _mirrored(self, n: int, since_days: float | None) -> Path:
        dest = self.mirror / f"{n}.git"
        url = f"{self.where}/git/{n}.git"
        if dest.is_dir():
            p = git.git(dest, "fetch", "--quiet", "origin", check=False, environment="user")
            if p.returncode:
                raise Unreachable(f"git fetch {url}: {p.stderr.strip()}")
            return dest
        tmp = dest.with_suffix(".partial")
        remove_tree(tmp)
        self.mirror.mkdir(parents=True, exist_ok=True)
        # a week deeper than the backlog: what is older than the backlog is
        # then still seen, and recorded as old, not silently missed
        depth = ([f"--shallow-since={int(time.time() - (since_days + 7) * 86400)}"]
                 if since_days is not None else [])
        p = git.git(None, "clone", "--quiet", "--mirror", *depth, url, str(tmp), check=False,
                    environment="user")
        if p.returncode and depth:       # nothing that recent: the newest message will do
            remove_tree(tmp)
            p = git.git(None, "clone", "--quiet", "--mirror", "--depth=1", url, str(tmp),
                        check=False, environment="user")
        if p.returncode:
            remove_tree(tmp)
            raise Unreachable(f"git clone {url}: {p.stderr.strip()}")
        tmp.rename(dest)
        return dest

    # -- reading

    def read(self, epoch: Epoch, cursor: str | None) -> Iterator[Batch]:
        """The messages ``epoch`` gained after ``cursor``, oldest first, in
        batches that each end at a commit (the next cursor)."""
        head = git.git(epoch.gitdir, "rev-parse", "--verify", "-q", "HEAD", check=False).stdout.strip()
        if not head or head == cursor:
            return
        rng = [head]
        if cursor and git.git(epoch.gitdir, "cat-file", "-e", f"{cursor}^{{commit}}",
                              check=False).returncode == 0:
            rng.append(f"^{cursor}")
        log = git.git(epoch.gitdir, "log", "--reverse", "--format=%x00%H", "--raw", "--no-abbrev",
                      "--no-renames", "-r", "--root", *rng, text=False).stdout
        commits = []
        for chunk in log.split(b"\0")[1:]:
            lines = chunk.decode(errors="replace").splitlines()
            blobs = [f.split()[3] for ln in lines[1:] if ln.startswith(":")
                     for f, path in [ln.split("\t", 1)]
                     if f.split()[4] in ("A", "M") and (path == "m" or V1_PATH.match(path))]
            commits.append((lines[0].strip(), blobs))
        with _Blobs(epoch.gitdir) as blobs:
            for i in range(0, len(commits), BATCH):
                part = commits[i:i + BATCH]
                yield Batch(epoch.name, part[-1][0], [(b, blobs.get(b)) for _, bs in part for b in bs])


class _Blobs:
    """`git cat-file --batch`: many blobs through one process."""

    def __init__(self, gitdir: Path) -> None:
        self.proc = git.popen(gitdir, "cat-file", "--batch", stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def __enter__(self) -> "_Blobs":
        return self

    def __exit__(self, *exc) -> None:
        self.proc.stdin.close()
        self.proc.wait()

    def get(self, oid: str) -> bytes:
        self.proc.stdin.write(oid.encode() + b"\n")
        self.proc.stdin.flush()
        head = self.proc.stdout.readline().split()
        if len(head) < 3 or head[1] != b"blob":
            raise InfraError(f"archive object {oid} is missing ({b' '.join(head).decode()})")
        data = self.proc.stdout.read(int(head[2]))
        self.proc.stdout.read(1)
        return data
