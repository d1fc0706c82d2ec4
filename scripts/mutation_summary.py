"""Read mutmut's result files (mutants/**/*.meta) and print per-file counts and the survivors.

Run from a mutmut work directory by scripts/mutation.sh, with the tool venv's Python (stdlib only).
`--list --every N` prints every Nth mutant name instead, for a deterministic sample. The summary
exits 1 when the kill rate is below `--threshold`. Killed means a test failed or timed out (a
mutant that hangs is caught); survived and "no tests" both count against the rate.

One class of survivor is equivalent by construction and is not counted: in files under a
`--case-blind` prefix (the store), a mutant that only changes the letter case of a string. SQLite
ignores the case of keywords and identifiers and `sqlite3.Row` looks columns up without regard to
case, so `"SELECT key FROM completions"` → `"select key from completions"` or `row["cost_usd"]` →
`row["COST_USD"]` cannot change behaviour. Each is still printed, marked "equivalent".
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

# mutmut's exit codes (mutmut/stats.py); anything else is "suspicious".
STATUS_BY_EXIT_CODE = {
    1: "killed",
    3: "killed",
    0: "survived",
    5: "no tests",
    33: "no tests",
    2: "interrupted",
    34: "skipped",
    36: "timeout",
    37: "killed",
    24: "timeout",
    -24: "timeout",
    152: "timeout",
    255: "timeout",
    -11: "segfault",
    -9: "segfault",
}
DETECTED = {"killed", "timeout", "segfault"}


def load_results(root: Path) -> dict[str, dict[str, int | None]]:
    """Map each mutated file (relative to mutants/) to its mutants' exit codes."""
    results = {}
    for meta in sorted((root / "mutants").rglob("*.py.meta")):
        codes = json.loads(meta.read_text())["exit_code_by_key"]
        if codes:
            results[str(meta.relative_to(root / "mutants"))[: -len(".meta")]] = codes
    return results


def changed_lines(mutmut: str, name: str) -> tuple[list[str], list[str]]:
    """The removed and added lines of a mutant's diff (`mutmut show`)."""
    shown = subprocess.run([mutmut, "show", name], capture_output=True, text=True).stdout
    lines = shown.splitlines()
    removed = [line[1:] for line in lines if line.startswith("-") and not line.startswith("---")]
    added = [line[1:] for line in lines if line.startswith("+") and not line.startswith("+++")]
    return removed, added


def only_case_changed(mutmut: str, name: str) -> bool:
    removed, added = changed_lines(mutmut, name)
    return (
        bool(removed)
        and len(removed) == len(added)
        and all(a != b and a.lower() == b.lower() for a, b in zip(removed, added, strict=True))
        and not any("'" in line for line in removed)  # a quoted SQL value is case-sensitive
    )


def status_of(code: int | None) -> str:
    return "not checked" if code is None else STATUS_BY_EXIT_CODE.get(code, "suspicious")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--module", default="")
    parser.add_argument("--threshold", type=float, default=85.0)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--seconds", type=int, default=0)
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--case-blind", action="append", default=[])
    parser.add_argument("--mutmut", default="mutmut")
    args = parser.parse_args()
    results = load_results(Path.cwd())
    if args.list:
        names = sorted(name for codes in results.values() for name in codes)
        print("\n".join(names[:: args.every]))
        return 0
    total: Counter[str] = Counter()
    not_killed = []
    print(f"module {args.module}: {args.seconds} s, every {args.every}. mutant")
    for path, codes in results.items():
        case_blind = any(path.startswith(prefix) for prefix in args.case_blind)
        statuses = {}
        for name, code in codes.items():
            status = status_of(code)
            if status == "survived" and case_blind and only_case_changed(args.mutmut, name):
                status = "equivalent"
            statuses[name] = status
        counts = Counter(statuses.values())
        counts.pop("not checked", None)
        if not counts:
            continue
        total.update(counts)
        print(f"  {path}: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
        not_killed += [
            f"    {status}: {name}"
            for name, status in sorted(statuses.items())
            if status not in DETECTED | {"skipped", "not checked"}
        ]
    checked = sum(n for s, n in total.items() if s not in {"skipped", "equivalent"})
    detected = sum(total[s] for s in DETECTED)
    rate = 100.0 * detected / checked if checked else 0.0
    print(
        f"  total: {checked} checked, {detected} killed, kill rate {rate:.1f}%"
        f" ({total['equivalent']} case-only equivalents not counted)"
    )
    print("\n".join(not_killed))
    if not checked:
        print("no mutant was checked: see mutmut.log in the work directory", file=sys.stderr)
    if rate < args.threshold:
        print(f"kill rate {rate:.1f}% is below {args.threshold:g}%", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
