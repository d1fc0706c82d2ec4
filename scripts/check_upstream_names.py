"""Check that `aib import` names every configuration as the earlier leaderboard published it.

Reads a checkout of the earlier implementation's repository (its `cache/` folders, its
`configs/models.yaml` and its `results/LEADERBOARD.md`), names each cache folder the way
`aib import` does (`legacy/labels.py`), and compares with the published names: every ranked row
of "Overall Rankings" must be one of ours, and every folder's name must appear in the file.

    .venv/bin/python scripts/check_upstream_names.py PATH/TO/ai-independence-bench

Prints the counts and each name that does not match; exits 1 when one does not.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from independence_bench.legacy.labels import published_labels, unnamed

MEDALS = re.compile(r"^(?:🥇|🥈|🥉)\s*")
RANKED_ROW = re.compile(r"^\|\s*\d+\s*\|\s*(.*?)\s*\|", re.MULTILINE)


def ranked_names(leaderboard: str) -> list[str]:
    """The configuration names of the "Overall Rankings" table, medals and bold removed."""
    start = leaderboard.index("## Overall Rankings")
    end = leaderboard.find("\n## ", start + 1)
    section = leaderboard[start : end if end != -1 else None]
    return [MEDALS.sub("", cell).strip("* ") for cell in RANKED_ROW.findall(section)]


def main(checkout: Path) -> int:
    folders = sorted(p.name for p in (checkout / "cache").iterdir() if p.is_dir())
    labels = published_labels(checkout / "configs" / "models.yaml", folders)
    leaderboard = (checkout / "results" / "LEADERBOARD.md").read_text("utf-8")
    ranked = ranked_names(leaderboard)
    ours = set(labels.values())
    wrong = [name for name in ranked if name not in ours]
    absent = sorted(name for name in ours if name not in leaderboard)
    print(f"{len(folders)} folders, {len(unnamed(labels, folders))} without a name")
    print(f"ranked rows named as published: {len(ranked) - len(wrong)} of {len(ranked)}")
    print(f"folder names found in LEADERBOARD.md: {len(ours) - len(absent)} of {len(ours)}")
    for name in wrong:
        print(f"  published, not a name aib import gives: {name}")
    for name in absent:
        print(f"  aib import's name, not in LEADERBOARD.md: {name}")
    return 1 if wrong or absent else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: check_upstream_names.py PATH/TO/ai-independence-bench")
    sys.exit(main(Path(sys.argv[1])))
