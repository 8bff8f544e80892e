"""`aerie bench compare`: two navigation result files, task by task — what changed, and what did not.

A change to the code that flies must leave the benchmark's figures as they were or say, task by
task, which moved and how. This reads two `aerie bench nav --json` files of the same tasks and
seeds and prints SR and SPL of each, then every task whose outcome (success, SPL, path, steps,
trajectory) differs; the exit status is 1 when any does, so a script can insist on identity.

    aerie bench compare before/ordinary_test_perfect.json after/ordinary_test_perfect.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# What makes two episodes the same episode: the judge's fields and where the vehicle went.
SAME = ("success", "spl", "path_m", "steps", "trajectory", "end")


def differences(before: dict, after: dict) -> list[tuple[str, dict[str, tuple]]]:
    """(task, {field: (before, after)}) for every task whose episode differs; a task in one file only, too."""
    a = {(r["task"], r.get("seed")): r for r in before["records"]}
    b = {(r["task"], r.get("seed")): r for r in after["records"]}
    out = []
    for key in sorted(set(a) | set(b), key=str):
        ra, rb = a.get(key), b.get(key)
        if ra is None or rb is None:
            out.append((str(key[0]), {"present": (ra is not None, rb is not None)}))
            continue
        changed = {f: (ra.get(f), rb.get(f)) for f in SAME if ra.get(f) != rb.get(f)}
        if changed:
            out.append((str(key[0]), changed))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="aerie bench compare", description=__doc__.splitlines()[0])
    p.add_argument("before", type=Path)
    p.add_argument("after", type=Path)
    args = p.parse_args(argv)
    try:
        before, after = (json.loads(f.read_text()) for f in (args.before, args.after))
    except (OSError, ValueError) as exc:
        print(f"aerie bench compare: {exc}", file=sys.stderr)
        return 2
    diff = differences(before, after)
    print(f"{args.before}: SR {before['sr']:.3f}  SPL {before['spl']:.3f}  ({before['episodes']} episodes)")
    print(f"{args.after}: SR {after['sr']:.3f}  SPL {after['spl']:.3f}  ({after['episodes']} episodes)")
    if not diff:
        print("every episode identical")
        return 0
    for task, changed in diff:
        print(f"{task}: " + "; ".join(f"{k} {v[0]!r} -> {v[1]!r}" for k, v in changed.items() if k != "trajectory")
              + (" (trajectory differs)" if "trajectory" in changed else ""))
    return 1


if __name__ == "__main__":
    sys.exit(main())
