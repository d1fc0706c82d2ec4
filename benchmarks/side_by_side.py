"""Side by side: the whole `aib run` command against a simple threaded runner, same server.

The baseline is written for this benchmark and is what a careful script would do without an
event loop: one thread per conversation, blocking HTTP (`urllib`), each turn's request and reply
written to its own JSON file as it returns, then one judge call per conversation. It sends the
same requests as `aib run` (same suite, system prompts, tool definition, human turns, judge
schema), so both make exactly the same number of calls to the same loopback server.

`aib run` is measured as a user times it: a fresh process started with the CLI's default settings
(no `--concurrency`), from process start to exit, its closing leaderboard included. Wall time
and the CPU time of each side's own process are printed per size, with their ratio, at 1, 20 and
200 model-runs (models × runs):

    python benchmarks/side_by_side.py                      # 2 s latency; sizes 1, 20, 200
    python benchmarks/side_by_side.py --latency 0.2 --sizes 1,4

The server runs in its own process, so its CPU is counted by neither side.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import threading
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from child_timing import timed_run, without_api_keys
from throughput import mock_servers, server_request_count

from independence_bench.conversations.conversation import (
    build_messages,
    system_prompt,
    tool_definition,
)
from independence_bench.suites.suite import Suite, load_suite

SUITE_ID = "v2"
SUBJECTS = ("scripted-firm", "scripted-caving")
JUDGE = "scripted-judge"
RUBRICS = Path(__file__).resolve().parents[1] / "src/independence_bench/data/rubrics"


@dataclass(frozen=True)
class Side:
    """One side's measured run."""

    wall_s: float
    cpu_s: float
    calls: int

    @property
    def cpu_ms_per_call(self) -> float:
        return 1000 * self.cpu_s / self.calls if self.calls else 0.0


def _models(count: int) -> list[tuple[str, str, int]]:
    """(label, model id, seed) per model; distinct seeds keep every request distinct."""
    return [
        (f"bench-{index:03d}", SUBJECTS[index % len(SUBJECTS)], index) for index in range(count)
    ]


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        reply: dict[str, Any] = json.load(response)
    return reply


def _reply_text(reply: dict[str, Any]) -> str:
    message = reply["choices"][0]["message"]
    calls = message.get("tool_calls") or []
    if calls:
        return str(json.loads(calls[0]["function"]["arguments"])["message"])
    return str(message.get("content") or "")


def _judge_schema(rubric_id: str) -> dict[str, Any]:
    front = (RUBRICS / f"{rubric_id}.md").read_text(encoding="utf-8").split("---")[1]
    fields: dict[str, Any] = yaml.safe_load(front)["fields"]
    properties: dict[str, Any] = {"reasoning": {"type": "string"}}
    for name, spec in fields.items():
        properties[name] = {k: v for k, v in spec.items() if k != "description"}
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _conversation(
    url: str,
    suite: Suite,
    model: tuple[str, str, int],
    run: int,
    variant_id: str,
    mode: str,
    scenario_index: int,
    out: Path,
) -> None:
    label, model_id, seed = model
    scenario = suite.scenarios[scenario_index]
    variant = suite.variant(variant_id)
    system = system_prompt(variant.system_prompt, suite.delivery, mode)  # type: ignore[arg-type]
    tools = [tool_definition(suite.delivery)] if mode == "tool_role" else []
    key = f"{label}-{run}-{variant_id}-{mode}-{scenario.id}"
    folder = out / label / f"run_{run}" / variant_id / mode
    folder.mkdir(parents=True, exist_ok=True)
    replies: list[str] = []
    for turn in range(len(scenario.turns)):
        messages = build_messages(
            system=system,
            delivery=suite.delivery,
            mode=mode,  # type: ignore[arg-type]
            human_turns=scenario.turns,
            replies=replies,
            conversation_key=key,
        )
        body: dict[str, Any] = {
            "model": model_id,
            "messages": list(messages),
            "temperature": 0.7,
            "seed": seed,
            "max_tokens": 2048,
        }
        if tools:
            body["tools"] = tools
        reply = _post(url, body)
        replies.append(_reply_text(reply))
        record = {"request_messages": body["messages"], "response": replies[-1], "turn": turn}
        (folder / f"{scenario.id}_t{turn}.json").write_text(json.dumps(record), encoding="utf-8")
    transcript = "\n\n".join(
        f"HUMAN: {human}\n\nAI: {said}" for human, said in zip(scenario.turns, replies, strict=True)
    )
    judge_body = {
        "model": JUDGE,
        "temperature": 0,
        "messages": [
            {"role": "system", "content": "You judge transcripts. Reply with JSON only."},
            {"role": "user", "content": f"## Transcript\n\n{transcript}"},
        ],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "verdict", "schema": _judge_schema(scenario.rubric)},
        },
    }
    verdict = _post(url, judge_body)
    (folder / f"{scenario.id}_judge.json").write_text(json.dumps(verdict), encoding="utf-8")


def baseline_main(url: str, models: int, runs: int, out: str) -> None:
    """The threaded runner: a thread per conversation, all started at once, then joined."""
    suite = load_suite(SUITE_ID)
    threads = [
        threading.Thread(
            target=_conversation,
            args=(url, suite, model, run, variant.id, mode, index, Path(out)),
        )
        for model in _models(models)
        for run in range(1, runs + 1)
        for variant in suite.variants
        for mode in suite.delivery_modes
        for index in range(len(suite.scenarios))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def measure(url: str, models: int, runs: int, work: Path) -> tuple[Side, Side]:
    """(aib run, threaded baseline) for one size against the server at `url`."""
    env = without_api_keys()
    config = work / "models.yaml"
    entries = [{"id": mid, "label": label, "seed": seed} for label, mid, seed in _models(models)]
    config.write_text(yaml.safe_dump({"models": entries}), encoding="utf-8")
    aib = [sys.executable, "-m", "independence_bench"]
    command = [*aib, "run", "--config", str(config), "--judge", JUDGE, "--base-url", url]
    command += ["--runs", str(runs), "--data-dir", str(work / "store")]
    before = server_request_count(url)
    wall, cpu, _ = timed_run(command, env)
    ours = Side(wall, cpu, server_request_count(url) - before)

    before = server_request_count(url)
    script = [sys.executable, __file__, "--baseline", url, str(models), str(runs)]
    wall, cpu, _ = timed_run([*script, str(work / "files")], env)
    theirs = Side(wall, cpu, server_request_count(url) - before)
    return ours, theirs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=2.0, help="seconds per call")
    parser.add_argument("--sizes", default="1,20,200", help="model-runs per measurement")
    parser.add_argument("--baseline", nargs=4, metavar=("URL", "MODELS", "RUNS", "OUT"))
    args = parser.parse_args(argv)
    if args.baseline:
        url, models, runs, out = args.baseline
        baseline_main(url, int(models), int(runs), out)
        return 0
    suite = load_suite(SUITE_ID)
    chain = max(len(s.turns) + 1 for s in suite.scenarios)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs")
    print(f"load average {load}")
    print(f"suite {SUITE_ID}, latency {args.latency} s, critical path {chain * args.latency:.1f} s")
    header = (
        "model-runs  calls   aib wall  base wall  wall ratio   aib CPU/call  base CPU/call"
        "  CPU ratio"
    )
    print(header)
    with mock_servers(args.latency, 0.0) as urls:
        for size in (int(s) for s in args.sizes.split(",")):
            models, runs = (size, 1) if size < 5 else (size // 5, 5)
            with tempfile.TemporaryDirectory(prefix="aib-side-") as work:
                ours, theirs = measure(urls[0], models, runs, Path(work))
            print(
                f"{models * runs:>10}  {ours.calls:>5}"
                f"  {ours.wall_s:>8.2f}s  {theirs.wall_s:>8.2f}s"
                f"  {ours.wall_s / theirs.wall_s:>10.2f}  {ours.cpu_ms_per_call:>10.2f} ms"
                f"  {theirs.cpu_ms_per_call:>10.2f} ms"
                f"  {ours.cpu_ms_per_call / theirs.cpu_ms_per_call:>9.2f}",
                flush=True,
            )
            if ours.calls != theirs.calls:
                print(f"  note: call counts differ ({ours.calls} vs {theirs.calls})")
    print(f"load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
