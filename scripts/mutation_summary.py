"""Read mutmut's result files (mutants/**/*.meta) and print per-file counts and the survivors.

Run from a mutmut work directory by scripts/mutation.sh, with the tool venv's Python (stdlib only).
`--list --every N` prints every Nth mutant name instead, for a deterministic sample. The summary
exits 1 when the kill rate is below `--threshold`. Killed means a test failed or timed out (a
mutant that hangs is caught); survived and "no tests" both count against the rate.
"""

from __future__ import annotations

import argparse
import json
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


def status_of(code: int | None) -> str:
    return "not checked" if code is None else STATUS_BY_EXIT_CODE.get(code, "suspicious")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--module", default="")
    parser.add_argument("--threshold", type=float, default=85.0)
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--seconds", type=int, default=0)
    parser.add_argument("--list", action="store_true")
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
        counts = Counter(status_of(code) for code in codes.values())
        counts.pop("not checked", None)
        if not counts:
            continue
        total.update(counts)
        print(f"  {path}: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
        not_killed += [
            f"    {status_of(code)}: {name}"
            for name, code in sorted(codes.items())
            if code is not None and status_of(code) not in DETECTED | {"skipped"}
        ]
    checked = sum(n for s, n in total.items() if s != "skipped")
    detected = sum(total[s] for s in DETECTED)
    rate = 100.0 * detected / checked if checked else 0.0
    print(f"  total: {checked} checked, {detected} killed, kill rate {rate:.1f}%")
    print("\n".join(not_killed))
    if rate < args.threshold:
        print(f"kill rate {rate:.1f}% is below {args.threshold:g}%", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
