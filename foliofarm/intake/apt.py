"""A private apt configuration for fetching Debian packages (kernel sources, arm64
userland) without touching the machine's own apt state.

It reuses the mirror that the machine's apt sources name, switching only the
suite, and keeps apt's signature checking with Debian's archive keyring."""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from foliofarm.errors import InfraError
from foliofarm.util import run, sha256_text, write_json

KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
SOURCES_LIST = Path("/etc/apt/sources.list")
SOURCES_DIR = Path("/etc/apt/sources.list.d")
LISTS_MAX_AGE = 24 * 3600


@dataclass(frozen=True)
class AptSource:
    uri: str
    suites: tuple[str, ...]


def parse_sources(one_line: str, deb822: list[str]) -> list[AptSource]:
    """Binary sources from a sources.list text and deb822 .sources texts."""
    found: list[AptSource] = []
    for line in one_line.splitlines():
        line = re.sub(r"\[[^\]]*\]", " ", line.split("#", 1)[0]).split()
        if len(line) >= 3 and line[0] == "deb":
            found.append(AptSource(line[1].rstrip("/"), (line[2],)))
    for text in deb822:
        for stanza in re.split(r"\n\s*\n", text):
            fields: dict[str, str] = {}
            for raw in stanza.splitlines():
                if raw.startswith("#") or ":" not in raw or raw[0].isspace():
                    continue
                key, _, value = raw.partition(":")
                fields[key.strip().lower()] = value.strip()
            if fields.get("enabled", "yes").lower() == "no":
                continue
            if "deb" in fields.get("types", "").split() and fields.get("uris"):
                for uri in fields["uris"].split():
                    found.append(AptSource(uri.rstrip("/"), tuple(fields.get("suites", "").split())))
    return found


DEBIAN_SUITES = {"bullseye", "bookworm", "trixie", "forky", "sid", "unstable",
                 "testing", "stable", "oldstable"}


def pick_debian_mirror(sources: list[AptSource]) -> str:
    """The first source that serves a Debian suite (not the security archive)."""
    for src in sources:
        for suite in src.suites:
            base = suite.split("-")[0].split("/")[0]
            if base in DEBIAN_SUITES and "security" not in suite:
                return src.uri
    raise InfraError(
        "no Debian mirror found in this machine's apt sources "
        f"({SOURCES_LIST}, {SOURCES_DIR}/*.sources); foliofarm fetches kernel sources and "
        "arm64 packages from the Debian archive the machine already uses. "
        "Set FOLIOFARM_DEBIAN_MIRROR to a Debian mirror URI to override.")


def machine_mirror() -> str:
    override = os.environ.get("FOLIOFARM_DEBIAN_MIRROR")
    if override:
        return override.rstrip("/")
    one_line = SOURCES_LIST.read_text() if SOURCES_LIST.exists() else ""
    for extra in sorted(SOURCES_DIR.glob("*.list")) if SOURCES_DIR.is_dir() else []:
        one_line += "\n" + extra.read_text()
    deb822 = [p.read_text() for p in sorted(SOURCES_DIR.glob("*.sources"))] if SOURCES_DIR.is_dir() else []
    return pick_debian_mirror(parse_sources(one_line, deb822))


class PrivateApt:
    """apt-get/apt-cache against one suite and architecture, state kept in ``root``."""

    def __init__(self, root: Path, suite: str, arch: str | None = None) -> None:
        # Architecture-independent packages (linux-source-X.Y) are listed under every
        # architecture: the host's own serves for them.
        arch = arch or host_arch()
        if not KEYRING.exists():
            raise InfraError(f"{KEYRING} is missing: install Debian package debian-archive-keyring")
        self.root = root / f"{suite}-{arch}"
        self.suite = suite
        self.arch = arch
        self.conf = self.root / "apt.conf"
        for d in ("lists/partial", "archives/partial", "preferences.d"):
            (self.root / d).mkdir(parents=True, exist_ok=True)
        (self.root / "sources.list").write_text(
            f"deb [signed-by={KEYRING}] {machine_mirror()} {suite} main\n")
        self.conf.write_text("\n".join([
            f'Dir::Etc::SourceList "{self.root}/sources.list";',
            'Dir::Etc::SourceParts "/nonexistent";',
            'Dir::Etc::Preferences "/nonexistent";',
            f'Dir::Etc::PreferencesParts "{self.root}/preferences.d";',
            f'Dir::State "{self.root}";',
            f'Dir::State::Lists "{self.root}/lists";',
            'Dir::State::status "/dev/null";',
            f'Dir::Cache "{self.root}";',
            f'Dir::Cache::Archives "{self.root}/archives";',
            f'APT::Architecture "{arch}";',
            f'APT::Architectures {{ "{arch}"; }};',
            # Downloads go to our own folders; the _apt sandbox user may not reach them.
            'APT::Sandbox::User "root";' if os.geteuid() == 0 else "",
            "",
        ]))

    def _env(self) -> dict[str, str]:
        return {"APT_CONFIG": str(self.conf), "LC_ALL": "C"}

    def update(self, force: bool = False) -> None:
        stamp = self.root / "updated"
        if not force and stamp.exists() and time.time() - stamp.stat().st_mtime < LISTS_MAX_AGE:
            return
        run(["apt-get", "-q", "update"], env=self._env(), what=f"apt-get update ({self.suite})")
        stamp.touch()

    def lists_state(self) -> str:
        """What apt's answers depend on: the package lists as the last update left them."""
        lists = self.root / "lists"
        return sha256_text(*sorted(f"{p.name} {st.st_size} {st.st_mtime_ns}"
                                   for p in lists.iterdir() if p.is_file() and (st := p.stat())))

    def _answer(self, question: str, ask: Callable[[], Any]) -> Any:
        """apt's answer to ``question``, asked once per state of the lists: a
        run's sysroots ask apt the same questions (half a second to two
        seconds each) before a series' first build, and their answers change
        only with the lists (apt-get update, once a day)."""
        self.update()
        lists = self.lists_state()
        memo = self.root / "answers.json"
        try:
            kept = json.loads(memo.read_text())
        except (OSError, ValueError):
            kept = {}
        # only the answers for the lists as they are now are kept
        answers = kept.get("answers", {}) if isinstance(kept, dict) and kept.get("lists") == lists else {}
        if question in answers:
            return answers[question]
        answers[question] = answer = ask()
        write_json(memo, {"lists": lists, "answers": answers}, durable=False)   # lost: asked again
        return answer

    def version(self, package: str) -> str:
        return self._answer(f"version {package}", lambda: self._version(package))

    def _version(self, package: str) -> str:
        out = run(["apt-cache", "show", "--no-all-versions", package], env=self._env(),
                  what=f"apt-cache show {package} ({self.suite})").stdout.decode()
        m = re.search(r"^Version:\s*(\S+)", out, re.M)
        if not m:
            raise InfraError(f"{package} not found in Debian {self.suite}/{self.arch}")
        return m.group(1)

    def closure(self, packages: list[str]) -> list[tuple[str, str]]:
        """(package, version) of every package installing ``packages`` into an
        empty root would install (their Depends and Pre-Depends, recursively;
        no Recommends), as apt itself resolves them."""
        found = self._answer(f"closure {' '.join(packages)}", lambda: self._closure(packages))
        return [(name, version) for name, version in found]

    def _closure(self, packages: list[str]) -> list[tuple[str, str]]:
        out = run(["apt-get", "-q", "-s", "--no-install-recommends", "install", *packages],
                  env=self._env(), what=f"apt-get -s install {' '.join(packages)} ({self.suite})")
        found = simulated_installs(out.stdout.decode())
        if not found:
            raise InfraError(f"apt resolves nothing to install for {' '.join(packages)} in "
                             f"Debian {self.suite}/{self.arch}")
        return found

    def download(self, package: str, dest: Path) -> Path:
        """Download ``package`` (signature-checked) into ``dest``; return the .deb."""
        dest.mkdir(parents=True, exist_ok=True)
        version = self.version(package)
        qualified = f"{package}:{self.arch}"
        for deb in dest.glob(f"{package}_*.deb"):
            if _deb_version(deb) == version:
                return deb
        run(["apt-get", "-q", "download", qualified], cwd=dest, env=self._env(),
            what=f"apt-get download {qualified} ({self.suite})")
        debs = [d for d in dest.glob(f"{package}_*.deb") if _deb_version(d) == version]
        if not debs:
            raise InfraError(f"apt-get download {qualified} left no .deb in {dest}")
        return debs[0]


def simulated_installs(text: str) -> list[tuple[str, str]]:
    """(package, version) of each ``Inst`` line of ``apt-get -s install``, in
    apt's order, the architecture qualifier dropped:
    ``Inst libc6:arm64 (2.41-12 Debian:13.1/stable [arm64])``. ``Conf`` and
    ``Remv`` lines, and the notes apt prints before them, are not installs."""
    found = re.findall(r"^Inst (\S+) (?:\[\S+\] )?\((\S+)", text, re.M)
    return [(name.split(":")[0], version) for name, version in found]


def host_arch() -> str:
    return run(["dpkg", "--print-architecture"], what="dpkg").stdout.decode().strip()


def _deb_version(deb: Path) -> str:
    from urllib.parse import unquote
    # package_version_arch.deb, with ':' of an epoch escaped as %3a
    return unquote(deb.name.split("_")[1])
