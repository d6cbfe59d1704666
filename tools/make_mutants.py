#!/usr/bin/env python3
"""Write tests/mutants/<name>.patch for every row of tests/mutants/mutants.toml,
against a kernel tree (default: the cached Debian linux-source-7.3): each row's
`old` text must occur exactly once in its file. The patches are mails as
`git format-patch` writes them, so `git am` and `foliofarm run --series` take them.

    tools/make_mutants.py [--kernel debian:7.3] [--check]
"""

from __future__ import annotations

import argparse
import difflib
import subprocess
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from foliofarm.intake import source  # noqa: E402
from foliofarm.paths import ROOT, cache_dir  # noqa: E402

MUTANTS = ROOT / "tests" / "mutants"


def base_file(tree: Path, name: str) -> str:
    """The file as the tree's first commit has it (Debian's source as shipped),
    not as a series run may have left the work tree meanwhile."""
    root = subprocess.run(["git", "-C", str(tree), "rev-list", "--max-parents=0", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.split()[0]
    return subprocess.run(["git", "-C", str(tree), "show", f"{root}:{name}"],
                          capture_output=True, text=True, check=True).stdout


def patch_text(tree: Path, row: dict) -> str:
    text = base_file(tree, row["file"])
    n = text.count(row["old"])
    if n != 1:
        raise SystemExit(f"make_mutants: {row['name']}: the old text occurs {n} times in {row['file']}")
    new = text.replace(row["old"], row["new"], 1)
    diff = list(difflib.unified_diff(text.splitlines(keepends=True), new.splitlines(keepends=True),
                                     f"a/{row['file']}", f"b/{row['file']}", n=3))
    added = sum(1 for ln in diff[2:] if ln.startswith("+"))
    removed = sum(1 for ln in diff[2:] if ln.startswith("-"))
    body = "".join(diff)
    return (f"From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\n"
            f"From: foliofarm mutants <mutants@foliofarm.invalid>\n"
            f"Date: Mon, 23 Nov 2026 00:00:00 +0000\n"
            f"Subject: [PATCH] {row['subject']}\n\n"
            f"Mutant {row['name']} of the foliofarm mutation set: {row['why']}.\n"
            f"Expected to regress: {', '.join(row['cells'])}.\n---\n"
            f" {row['file']} | {added + removed} {'+' * added}{'-' * removed}\n"
            f" 1 file changed, {added} insertions(+), {removed} deletions(-)\n\n"
            f"diff --git a/{row['file']} b/{row['file']}\n{body}-- \n2.39.5\n\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernel", default="debian:7.3")
    ap.add_argument("--check", action="store_true", help="only check that the kept patches are current")
    args = ap.parse_args()
    rows = tomllib.loads((MUTANTS / "mutants.toml").read_text())["mutant"]
    tree = source.resolve(args.kernel, cache_dir()).tree
    stale = []
    for row in rows:
        text = patch_text(tree, row)
        out = MUTANTS / f"{row['name']}.patch"
        if args.check:
            if not out.is_file() or out.read_text() != text:
                stale.append(out.name)
        else:
            out.write_text(text)
    if stale:
        print("make_mutants: out of date: " + ", ".join(stale), file=sys.stderr)
        return 1
    print(f"{len(rows)} mutants {'checked' if args.check else 'written'} in {MUTANTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
