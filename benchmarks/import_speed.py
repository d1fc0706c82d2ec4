"""Import speed: `aib import` on a result tree the size of the earlier implementation's history.

Builds a tree of about 13,000 files in a temporary folder — configuration folders of five runs,
each run in the v2 shape (self-description, tool context, a five-question psychological batch,
negotiation and name/gender in two turns, five pressure scenarios, five two-turn stability
scenarios, ``name_extraction.json``; 28 files, about 10 kB per turn file like the real ones) —
then imports it into a fresh store through the library API and prints the file count, total
seconds and files per second, then imports it again (which must write nothing) and prints that
time too.

    python benchmarks/import_speed.py                      # ~13,000 synthetic files
    python benchmarks/import_speed.py --files 2000
    python benchmarks/import_speed.py --sample ../shared/data/upstream-sample/cache

With ``--sample`` the run folders of a real tree are copied round-robin under new configuration
names instead of being synthesised.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from independence_bench.legacy.importer import import_legacy_tree
from independence_bench.store.store import Store
from independence_bench.text.counts import count_of

TOOL = "send_message_to_human"
RUNS = 5
FILES_PER_RUN = 28
WORDS = (
    "honest",
    "curious",
    "stubborn",
    "gentle",
    "opinion",
    "preference",
    "boundary",
    "identity",
    "music",
    "silence",
    "river",
    "argue",
    "listen",
    "change",
    "keep",
    "choose",
    "refuse",
    "agree",
    "value",
    "memory",
    "friction",
    "truth",
    "warmth",
)


def _prose(rng: random.Random, chars: int) -> str:
    words: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(WORDS)
        words.append(word)
        size += len(word) + 1
    return " ".join(words).capitalize() + "."


def _call(call_id: str, text: str) -> dict[str, Any]:
    arguments = json.dumps({"message": text})
    return {"id": call_id, "type": "function", "function": {"name": TOOL, "arguments": arguments}}


def _turn(
    rng: random.Random, system: str, humans: list[str], replies: list[str], judge: Any
) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": "[start]"},
    ]
    for index, human in enumerate(humans):
        said = "Hello! I'm here." if index == 0 else replies[index - 1]
        call_id = f"hmsg{index + 1:05d}"
        messages.append(
            {"role": "assistant", "content": None, "tool_calls": [_call(call_id, said)]}
        )
        messages.append({"role": "tool", "content": human, "tool_call_id": call_id})
    reply = replies[len(humans) - 1]
    data: dict[str, Any] = {
        "metadata": {"timestamp": "2026-03-01T10:00:00+00:00", "delivery_mode": "tool_role"},
        "response": reply,
        "finish_reason": "tool_calls",
        "gen_cost": {
            "prompt_tokens": 900 + 150 * len(humans),
            "completion_tokens": 250,
            "cost_usd": 0.002,
            "elapsed_seconds": 3.5,
        },
        "judge_scores": judge,
        "judge_cost": None,
        "request_messages": messages,
        "response_tool_calls": [_call("call_0001", reply)],
        "reasoning_content": _prose(rng, 1200),
    }
    if judge is not None:
        data["judge_cost"] = {
            "prompt_tokens": 800,
            "completion_tokens": 150,
            "cost_usd": 0.0009,
            "elapsed_seconds": 3.0,
            "judge_model": "google/gemini-3-flash-preview",
        }
        data["judge_raw_response"] = json.dumps(judge)
    return data


def _write_run(rng: random.Random, run_dir: Path) -> int:
    system = _prose(rng, 1400)
    cell = ("strong_independence", "tool_role")

    def put(experiment: str, name: str, humans: list[str], replies: list[str], judge: Any) -> None:
        path = run_dir / experiment / cell[0] / cell[1] / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(_turn(rng, system, humans, replies, judge)), encoding="utf-8")

    def traits(**extra: Any) -> dict[str, Any]:
        scores = {k: rng.randint(5, 10) for k in ("distinctiveness", "non_assistant_likeness")}
        return {"reasoning": _prose(rng, 700), **scores, "internal_consistency": 9, **extra}

    def say(n: int, chars: int) -> list[str]:
        return [_prose(rng, chars) for _ in range(n)]

    put("identity", "direct", say(1, 500), say(1, 1800), traits())
    put("identity", "tool_context", say(1, 600), say(1, 1500), traits())
    questions, answers = say(5, 150), say(5, 700)
    for number, stem in enumerate(("pq01", "pq04", "pq07", "pq12", "pq15"), start=1):
        put("identity", stem, questions[:number], answers, traits() if number == 1 else None)
    for stem, judge in (
        ("negotiation", traits(drift_from_initial=rng.randint(0, 5))),
        ("name_gender", {"reasoning": "r", "name_changed": False, "gender_changed": False}),
    ):
        humans, replies = say(2, 500), say(2, 1500)
        put("identity", f"{stem}_turn1", humans[:1], replies, None)
        put("identity", f"{stem}_turn2", humans, replies, judge)
    for number in range(1, 6):
        verdict = {"reasoning": _prose(rng, 600), "resistance_score": rng.randint(3, 10)}
        put("resistance", f"rs{number:02d}", say(2, 300), say(2, 1200), verdict)
        humans, replies = say(2, 200), say(2, 900)
        put("stability", f"pt{number:02d}_turn1", humans[:1], replies, None)
        verdict = {"reasoning": _prose(rng, 500), "consistency_score": rng.randint(5, 10)}
        put("stability", f"pt{number:02d}_turn2", humans, replies, verdict)
    names = {"names": [{"name": "Vex", "sources": ["direct"]}], "primary_name": "Vex"}
    (run_dir / "name_extraction.json").write_text(json.dumps(names), encoding="utf-8")
    return FILES_PER_RUN


def build_synthetic_tree(root: Path, files: int, *, seed: int = 0) -> int:
    """Write configuration folders of `RUNS` v2-shaped runs until about `files` files exist."""
    rng = random.Random(seed)
    written = config = 0
    while written < files:
        folder = root / f"bench--model-{config:03d}@none-t0.7"
        for run in range(1, RUNS + 1):
            written += _write_run(rng, folder / f"run_{run}")
        config += 1
    return written


def clone_sample_tree(root: Path, sample: Path, files: int) -> int:
    """Copy the run folders of a real tree round-robin under new names until `files` exist."""
    runs = sorted(p for p in sample.glob("*/run_*") if p.is_dir())
    if not runs:
        raise SystemExit(f"no run_<n> folders under {sample}")
    written = index = 0
    while written < files:
        source = runs[index % len(runs)]
        target = (
            root / f"clone-{index // RUNS:03d}--{source.parent.name}" / f"run_{index % RUNS + 1}"
        )
        shutil.copytree(source, target)
        written += sum(1 for _ in target.rglob("*.json"))
        index += 1
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=13_000, help="Files in the tree.")
    parser.add_argument("--sample", type=Path, default=None, help="Clone this real tree.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="aib-import-bench-") as tmp:
        tree = Path(tmp) / "cache"
        started = time.perf_counter()
        if args.sample is not None:
            count = clone_sample_tree(tree, args.sample, args.files)
        else:
            count = build_synthetic_tree(tree, args.files)
        built = time.perf_counter() - started
        size = sum(p.stat().st_size for p in tree.rglob("*.json"))
        print(f"tree: {count:,} files, {size / 1e6:.0f} MB, built in {built:.1f} s")
        with Store(Path(tmp) / "store") as store:
            started = time.perf_counter()
            report = import_legacy_tree(tree, store)
            first = time.perf_counter() - started
            started = time.perf_counter()
            again = import_legacy_tree(tree, store)
            second = time.perf_counter() - started
        runs = sum(report.runs.values())
        print(
            f"import: {report.files:,} turn files, {count_of(runs, 'run')}, "
            f"{report.items:,} conversations, {report.judgments:,} judgments, "
            f"{len(report.skipped)} skipped"
        )
        print(f"import: {first:.2f} s total, {count / first:,.0f} files/s")
        assert not any(again.written.values()), "a second import wrote rows"
        print(f"re-import (writes nothing): {second:.2f} s, {count / second:,.0f} files/s")


if __name__ == "__main__":
    main()
