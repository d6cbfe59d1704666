"""configs/watch.toml: what the watcher tests and how it replies, read and
checked like the project's other data files."""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from foliofarm import datafiles
from foliofarm.datafiles import Strict
from foliofarm.errors import ConfigError
from foliofarm.paths import CONFIGS

DEFAULT = CONFIGS / "watch.toml"


class Interest(Strict):
    paths: list[str] = Field(default_factory=list)
    lists: list[str] = Field(default_factory=list)

    def touches(self, files: list[str]) -> list[str]:
        """The files of ``files`` that make a series interesting."""
        return [f for f in files if any(fnmatchcase(f, p) for p in self.paths)]

    def addressed(self, recipients: list[str]) -> bool:
        if not self.lists:
            return True
        want = {a.lower() for a in self.lists}
        return any(r.lower() in want for r in recipients)


class RunPart(Strict):
    kernel: str = "debian:7.3"
    cells: list[str] = Field(default_factory=list)
    checks: list[str] = Field(default_factory=list)
    args: list[str] = Field(default_factory=list)

    def argv(self) -> list[str]:
        """The `foliofarm run` options of every series' run."""
        out = ["--kernel", self.kernel]
        if self.cells:
            out += ["--cells", ",".join(self.cells)]
        if self.checks:
            out += ["--checks", ",".join(self.checks)]
        return out + self.args


class RoutePart(Strict):
    """What a series' subject tags say of the tree it is for ([PATCH 6.12.y],
    [PATCH AUTOSEL 6.1], [PATCH net-next]): globs of tags (lower case) whose
    series are not for this base and are ignored."""
    ignore: list[str] = Field(default_factory=lambda: list(ROUTE_IGNORE))

    def ignored(self, tags: list[str]) -> str:
        """The first tag an ignore glob matches, or ""."""
        return next((t for t in tags for g in self.ignore if fnmatchcase(t, g.lower())), "")


# stable backports, AUTOSEL, a kernel version, and other trees' own branches
ROUTE_IGNORE = ("*.y", "stable", "autosel", "[0-9]*.[0-9]*", "[0-9].[0-9]*", "net", "net-next",
                "bpf", "bpf-next", "wireless*", "drm-*")


class SeriesPart(Strict):
    settle_minutes: float = Field(default=5, ge=0)
    incomplete_hours: float = Field(default=2, ge=0)
    max_patches: int = Field(default=50, ge=1)
    max_message_kb: int = Field(default=1024, ge=1)
    max_series_kb: int = Field(default=4096, ge=1)
    backlog_days: float = Field(default=2, ge=0)
    # a series still incomplete this long after its first patch is given up
    give_up_days: float = Field(default=7, gt=0)
    attempts: int = Field(default=3, ge=1)
    # one series' whole run (its process group killed after), and each build in it
    run_minutes: float = Field(default=120, gt=0)
    build_minutes: float = Field(default=60, gt=0)


class ReplyPart(Strict):
    from_: str = Field(default="foliofarm <foliofarm@localhost>", alias="from")
    domain: str = "foliofarm.localhost"
    cc: Literal["all", "lists", "none"] = "lists"
    max_recipients: int = Field(default=10, ge=1)
    # "news": a reply only for a regression, a build break, a new splat or a
    # figure that moved beyond noise; "always": every judged series
    when: Literal["news", "always"] = "news"
    on_not_applied: bool = False
    on_not_built: bool = True
    # who runs this bot (a reply's footer names them; --send needs it), the status
    # page's address, and a file of addresses and Message-IDs never answered
    owner: str = ""
    status_url: str = ""
    opt_out: str = ""
    per_hour: int = Field(default=20, ge=1)
    recipients_per_hour: int = Field(default=100, ge=1)
    # a reply whose sending failed is tried this many times in all
    attempts: int = Field(default=3, ge=1)


class SmtpPart(Strict):
    host: str = "localhost"
    port: int = Field(default=587, ge=1, le=65535)
    starttls: bool = True
    interval_seconds: float = Field(default=10, ge=0)
    # "user" and "password" lines; relative to $CREDENTIALS_DIRECTORY (systemd's
    # LoadCredential=) when that is set; empty: no login
    login_file: str = ""


class StatusPart(Strict):
    # the status page shows this many days; older series are on a page per month
    days: float = Field(default=14, gt=0)


class CachePart(Strict):
    # built kernels (base or series) not used this long are removed; then the
    # least recently used while they take more than max_gb (kernel/prune.py)
    keep_days: float = Field(default=14, gt=0)
    max_gb: float = Field(default=40, gt=0)


class KcidbPart(Strict):
    # a KCIDB receiver every tested series is submitted to (all-pass ones too);
    # empty: none. The token: token_file's first line (as [smtp] login_file)
    url: str = ""
    token_file: str = ""


class ReproPart(Strict):
    # a reply in a tested series' thread asking "foliofarm: repro" with a
    # reproducer (watch/asked.py): run on that series' base and series in
    # every cell of [run]; at most this many runs an hour, and per sender
    enabled: bool = True
    per_hour: int = Field(default=6, ge=0)
    per_sender_hour: int = Field(default=2, ge=0)
    # each guest kills it after this long; the whole run is stopped after run_minutes
    seconds: int = Field(default=120, ge=1)
    run_minutes: float = Field(default=60, gt=0)


class WatchConfig(Strict):
    interest: Interest = Field(default_factory=Interest)
    route: RoutePart = Field(default_factory=RoutePart)
    status: StatusPart = Field(default_factory=StatusPart)
    run: RunPart = Field(default_factory=RunPart)
    series: SeriesPart = Field(default_factory=SeriesPart)
    reply: ReplyPart = Field(default_factory=ReplyPart)
    smtp: SmtpPart = Field(default_factory=SmtpPart)
    cache: CachePart = Field(default_factory=CachePart)
    kcidb: KcidbPart = Field(default_factory=KcidbPart)
    repro: ReproPart = Field(default_factory=ReproPart)


def load(path: Path | None = None) -> WatchConfig:
    """The watcher's configuration: configs/watch.toml, with ``path`` over it
    (a key it leaves out keeps the default); ConfigError names the file and
    the field that is wrong."""
    data = datafiles.load(DEFAULT, WatchConfig)
    if path is not None:
        mine = datafiles.load(path, WatchConfig)
        for table, values in mine.items():
            data[table] = {**data.get(table, {}), **values}
        try:
            return WatchConfig.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"{path}: {datafiles.describe(exc)}") from None
    return WatchConfig.model_validate(data)
