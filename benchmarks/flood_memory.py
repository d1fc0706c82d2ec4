"""Peak memory with 2,048 calls in flight to an endpoint whose every reply body never ends.

A flooding server (`mock_hostile.serve_flood`, in its own process so its memory is not
counted) answers each request with `HTTP 200` and an endless JSON array, as fast as the client
reads. This process sends `--calls` chat completions at once through the client a run uses
(`OpenAICompatibleClient` over `JsonPoster`, one shared connection budget) and prints the
process's peak RSS before and after, how the calls ended, and the wall time. Without the body
caps of `clients/reply_body.py` one such endless reply took the process past 4 GB.

    python benchmarks/flood_memory.py
    python benchmarks/flood_memory.py --calls 256     # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from independence_bench.clients.http import ConnectionBudget
from independence_bench.clients.openai_compat import OpenAICompatibleClient
from independence_bench.clients.protocol import ClientError, CompletionRequest
from independence_bench.clients.reply_body import BODY_CAP_BYTES, LARGE_BODIES_BYTES

TESTS = Path(__file__).resolve().parents[1] / "tests"

SERVER = """
import asyncio, sys
sys.path.insert(0, sys.argv[2])  # tests/: the hostile server is a test double (support/)
from support.mock_hostile import serve_flood
async def main():
    server, port, _ = await serve_flood(int(sys.argv[1]))
    print("ready", flush=True)
    await server.serve_forever()
asyncio.run(main())
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


async def _flood(port: int, calls: int) -> Counter[str]:
    client = OpenAICompatibleClient(
        base_url=f"http://127.0.0.1:{port}/v1",
        api_key=None,
        is_openrouter=False,
        timeout_s=600,
        connections=ConnectionBudget(calls),
    )
    request = CompletionRequest(model="m", messages=({"role": "user", "content": "hi"},))

    async def one() -> str:
        try:
            await client.complete(request)
        except ClientError as exc:
            return str(exc).split(":")[0] + (" (retryable)" if exc.retryable else "")
        return "answered"

    try:
        return Counter(await asyncio.gather(*(one() for _ in range(calls))))
    finally:
        await client.aclose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2048)
    args = parser.parse_args(argv)
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(port), str(TESTS)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        before = _peak_rss_mb()
        started = time.perf_counter()
        outcomes = asyncio.run(_flood(port, args.calls))
        wall = time.perf_counter() - started
    finally:
        server.terminate()
        server.wait()
    print(f"calls in flight: {args.calls}; body cap {BODY_CAP_BYTES // 2**20} MiB each, ")
    print(f"  {LARGE_BODIES_BYTES // 2**20} MiB shared by long bodies")
    for outcome, count in outcomes.most_common():
        print(f"  {count:5d} × {outcome}")
    print(f"peak RSS: {before:.0f} MB before the calls, {_peak_rss_mb():.0f} MB after")
    print(f"wall: {wall:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
