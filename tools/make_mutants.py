#!/usr/bin/env python3
"""Write tests/mutants/<name>.patch for every row of tests/mutants/mutants.toml,
against a kernel tree (default: the cached Debian linux-source-7.3): each row's
`old` text must occur exactly once in its file. The patches are mails as
`git format-patch` writes them, so `git am` and `foliofarm run --series` take them.

    tools/make_mutants.py [--kernel debian:7.3] [--check]
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from foliofarm.intake import source  # noqa: E402
from foliofarm.paths import ROOT, cache_dir  # noqa: E402
from foliofarm.selfcheck import patches  # noqa: E402

MUTANTS = ROOT / "tests" / "mutants"


def patch_text(tree: Path, row: dict) -> str:
    before, after = patches.rewritten(tree, row)
    return patches.mail(row["file"], before, after, row["subject"],
                        f"Mutant {row['name']} of the foliofarm mutation set: {row['why']}.\n"
                        f"Expected to regress: {', '.join(row['cells'])}.\n")


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
