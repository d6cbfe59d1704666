"""git, the one way the farm runs it: in a tree (or none), with a clean
environment (the developer's configuration neither read nor needed) or the
user's own (where a command must see it: their checkout, `git bisect run`),
with the farm's fixed identity for the commits it makes, optionally in the
sandbox; a failure raises InfraError naming the command and the tree."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any, Literal

from foliofarm import sandbox
from foliofarm.errors import InfraError

# The farm's commits (git am on a work branch, worktrees) carry this identity
# and date: the same series applied twice makes the same commits.
IDENTITY = {
    "GIT_AUTHOR_NAME": "foliofarm", "GIT_AUTHOR_EMAIL": "foliofarm@localhost",
    "GIT_COMMITTER_NAME": "foliofarm", "GIT_COMMITTER_EMAIL": "foliofarm@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}
CLEAN = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1", "LC_ALL": "C"}
# A sandboxed git command (git am of a series' patch) may take this long.
SANDBOXED_SECONDS = 600
SANDBOXED_LIMITS = sandbox.Limits(seconds=SANDBOXED_SECONDS)


def env(kind: Literal["clean", "user"] = "clean") -> dict[str, str]:
    return {**(CLEAN if kind == "clean" else os.environ), **IDENTITY}


def git(tree: Path | None, *args: str, check: bool = True, text: bool = True, stdin: Any = None,
        sandboxed: list[Path] | None = None, environment: Literal["clean", "user"] = "clean",
        what: str = "", extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[Any]:
    """git ``args`` (in ``tree``); with ``sandboxed`` (paths it may read), in the
    sandbox, writing only the tree and its repository's object store; ``extra``:
    variables for git (GIT_INDEX_FILE)."""
    argv = ["git", *(["-C", str(tree)] if tree is not None else []), *args]
    if sandboxed is not None and tree is not None:
        common = subprocess.run(["git", "-C", str(tree), "rev-parse", "--path-format=absolute",
                                 "--git-common-dir"], capture_output=True, text=True, check=False)
        write = [tree] + ([Path(common.stdout.strip())] if common.returncode == 0 else [])
        # the sandbox's limits (a wall clock, memory and tasks in all): killed
        # whole past one, TimedOut with the reason
        done = sandbox.run(argv, read=sandboxed, write=write, limits=SANDBOXED_LIMITS,
                           env={**env(environment), **(extra or {})}, check=False,
                           input=stdin.encode() if isinstance(stdin, str) else stdin,
                           what=f"git {' '.join(args[:2])} in {tree}")
        proc = subprocess.CompletedProcess(
            done.args, done.returncode, done.stdout.decode(errors="replace") if text else done.stdout,
            done.stderr.decode(errors="replace") if text else done.stderr)
        return _checked(proc, tree, args, check, text)
    try:
        proc = subprocess.run(argv, input=stdin, capture_output=True, text=text,
                              env={**env(environment), **(extra or {})}, check=False)
    except FileNotFoundError:
        raise InfraError(f"git is not installed ({what or args[0]}): install Debian's git") from None
    return _checked(proc, tree, args, check, text)


def _checked(proc: subprocess.CompletedProcess[Any], tree: Path | None, args: tuple[str, ...],
             check: bool, text: bool) -> subprocess.CompletedProcess[Any]:
    if check and proc.returncode:
        err = proc.stderr if text else proc.stderr.decode(errors="replace")
        raise InfraError(f"git {' '.join(args)}" + (f" in {tree}" if tree else "")
                         + f" failed: {err.strip()}")
    return proc


def popen(tree: Path, *args: str, **kwargs: Any) -> subprocess.Popen[Any]:
    """A long-lived git process in ``tree`` (`git cat-file --batch`), in the
    clean environment; ``kwargs`` go to Popen (its pipes)."""
    return subprocess.Popen(["git", "-C", str(tree), *args], env=env(), **kwargs)


def out(tree: Path, *args: str, environment: Literal["clean", "user"] = "user") -> str:
    """The output of a git command that must succeed (in the user's environment
    by default: it reads their checkout)."""
    return git(tree, *args, environment=environment).stdout
