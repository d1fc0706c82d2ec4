"""Store-size benchmark: stored bytes per call against the bytes each call adds, and `aib view`'s
peak memory.

Runs `aib run` (suite v2, scripted firm/caving subjects, scripted judge) for M models × R runs
against the loopback server into a temporary store, then reads every stored call back through
`Store` in the order written and counts what was *new* in it: the request messages (and
parameters: tools, judge schema) no earlier call had sent, and the reply (content, reasoning,
tool calls), in UTF-8 bytes of their canonical JSON. It prints calls, the store's size,
stored bytes per call, new bytes per call and their ratio (issue 13 asks for at most 2), and
what the layout before schema 3 would have written (each request whole, plus the reply). A
second case lets the server pad every reply to 5 MB (`MockConfig.reply_chars`): the reply cap
keeps the store small. For each store, `aib view` runs in a fresh process whose own child it is, so
`getrusage(RUSAGE_CHILDREN)` gives that command's peak RSS alone.

    python benchmarks/store_size.py                      # 20 models × 5 runs, long-reply case
    python benchmarks/store_size.py --models 2 --runs 1 --scenarios direct,psych
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # support: the doubles

from independence_bench.store.store import Store
from independence_bench.store.texts import canonical_json
from independence_bench.text.counts import count_of
from independence_bench.text.lossless import utf8
from support.mock_server import MockConfig, MockServer

SUBJECTS = ("scripted-firm", "scripted-caving")
PEAK_RSS_OF_CHILD = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
    "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)
"""Runs a command as its only child and prints its exit status and peak RSS (KiB on Linux)."""


@dataclass(frozen=True)
class StoreSize:
    """One store: its calls, its bytes and the bytes its calls added."""

    calls: int
    store_bytes: int
    new_bytes: int
    whole_request_bytes: int
    cut_replies: int
    view_peak_rss_mb: float

    @property
    def ratio(self) -> float:
        return self.store_bytes / self.new_bytes if self.new_bytes else float("inf")


def write_models(path: Path, models: int, base_url: str) -> None:
    """`models` configurations of the scripted subjects, each with its own seed (so no two
    share a stored answer), and the scripted judge."""
    entries = [
        {
            "id": SUBJECTS[i % 2],
            "label": f"bench-{i:03d}",
            "seed": i,
            "base_url": base_url,
        }
        for i in range(models)
    ]
    judge = {"id": "scripted-judge", "base_url": base_url}
    path.write_text(json.dumps({"models": entries, "judge": judge}), encoding="utf-8")


def run_aib(args: Sequence[str]) -> int:
    """`aib` in a child process; its exit status."""
    command = [sys.executable, "-m", "independence_bench", *args]
    return subprocess.run(command, stdout=subprocess.DEVNULL, check=False).returncode


def view_peak_rss_mb(data: Path, out: Path) -> float:
    """Peak RSS of `aib view` on `data`, in MB, measured in a fresh parent process."""
    command = [sys.executable, "-m", "independence_bench", "view", "--data-dir", str(data)]
    command += ["--out", str(out), "--resamples", "200"]
    result = subprocess.run(
        [sys.executable, "-c", PEAK_RSS_OF_CHILD, *command],
        capture_output=True,
        text=True,
        check=False,
    )
    code, kib = result.stdout.split()
    if code != "0":
        raise RuntimeError(f"aib view failed: {result.stderr.strip()}")
    return int(kib) / 1024


def store_bytes(data: Path) -> int:
    """The store file's used bytes after a WAL checkpoint (free pages left out)."""
    with closing(sqlite3.connect(data / "aib.sqlite3")) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        free = db.execute("PRAGMA freelist_count").fetchone()[0]
        size = db.execute("PRAGMA page_size").fetchone()[0]
    return int((pages - free) * size)


def measure(data: Path, view_out: Path) -> StoreSize:
    """Read every stored call back in the order written and count what each one added."""
    seen: set[str] = set()
    new = whole = calls = 0
    with Store(data, read_only=True) as store:
        cut = len(store.cut_completions())
        for key in store.completion_keys():
            request = store.completion_request(key)
            reply = store.get_completion(key)
            assert request is not None and reply is not None
            calls += 1
            parts = [canonical_json(m) for m in request.get("messages", [])]
            parts.append(canonical_json({k: v for k, v in request.items() if k != "messages"}))
            reply_text = [reply.content or "", reply.reasoning or ""]
            reply_text += [canonical_json(c.__dict__) for c in reply.tool_calls]
            reply_bytes = sum(len(utf8(text)) for text in reply_text)
            new += reply_bytes + sum(len(utf8(p)) for p in parts if p not in seen)
            seen.update(parts)
            whole += reply_bytes + len(utf8(canonical_json(request)))
    return StoreSize(
        calls=calls,
        store_bytes=store_bytes(data),
        new_bytes=new,
        whole_request_bytes=whole,
        cut_replies=cut,
        view_peak_rss_mb=view_peak_rss_mb(data, view_out),
    )


def run_case(
    work: Path, name: str, config: MockConfig, models: int, runs: int, scenarios: str
) -> StoreSize:
    """One `aib run` against a loopback server with `config`, measured."""
    data = work / name
    with MockServer(config) as server:
        write_models(work / f"{name}.json", models, server.base_url)
        args = ["run", "--config", str(work / f"{name}.json"), "--runs", str(runs)]
        args += ["--data-dir", str(data), "--concurrency", "64"]
        if scenarios:
            args += ["--scenarios", scenarios]
        code = run_aib(args)
    if code not in (0, 3):
        raise RuntimeError(f"aib run exited {code}")
    return measure(data, work / f"{name}-viewer")


def format_size(title: str, size: StoreSize) -> str:
    per_call = size.store_bytes / size.calls if size.calls else 0.0
    new_per_call = size.new_bytes / size.calls if size.calls else 0.0
    whole = size.whole_request_bytes / size.calls if size.calls else 0.0
    return "\n".join(
        [
            title,
            f"  calls stored:            {size.calls:,}",
            f"  store size:              {size.store_bytes / 1e6:,.2f} MB",
            f"  stored bytes per call:   {per_call:,.0f}",
            f"  new bytes per call:      {new_per_call:,.0f}",
            f"  ratio stored / new:      {size.ratio:.2f}",
            f"  old layout would store:  {whole:,.0f} bytes per call (requests whole)",
            f"  replies cut by the cap:  {size.cut_replies:,}",
            f"  aib view peak RSS:       {size.view_peak_rss_mb:,.0f} MB",
        ]
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--scenarios", default="", help="a subset of v2's scenarios")
    parser.add_argument("--long-reply-chars", type=int, default=5_000_000)
    parser.add_argument("--long-reply-scenarios", default="direct,psych")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="aib-store-size-") as tmp:
        work = Path(tmp)
        scripted = run_case(work, "scripted", MockConfig(), args.models, args.runs, args.scenarios)
        shape = f"v2, {count_of(args.models, 'model')} × {count_of(args.runs, 'run')}"
        print(format_size(shape, scripted))
        padded = MockConfig(hostile=True, reply_chars=args.long_reply_chars)
        scenarios = args.long_reply_scenarios
        long = run_case(work, "long", padded, 1, 1, scenarios)
        print(format_size(f"{args.long_reply_chars:,}-character replies, 1 model × 1 run", long))
    over = scripted.ratio > 2
    if over:
        print(f"FAIL: stored bytes are {scripted.ratio:.2f}× the new bytes (at most 2)")
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
