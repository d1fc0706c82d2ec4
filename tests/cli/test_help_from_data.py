"""`aib run --help` is built from the shipped data: every suite and preset, the defaults of
`--runs` and `--judge`, and the forms a model name takes."""

from __future__ import annotations

from typing import Any

from independence_bench.clients.config import DEFAULT_JUDGE
from independence_bench.clients.local.local_models import DEFAULT_JUDGE as OFFLINE_JUDGE
from independence_bench.clients.local.local_models import LOCAL_RUNS
from independence_bench.clients.presets import available_presets
from independence_bench.suites.suite import available_suites
from independence_bench.workflows.plan import DEFAULT_API_RUNS


def test_run_help_lists_the_data_and_the_defaults(aib: Any) -> None:
    result = aib("run", "--help")
    assert result.code == 0, result.err
    text = " ".join(result.out.split())
    suites = available_suites()
    assert "v3" in suites
    assert f"Suite: {', '.join(suites[:-1])} or {suites[-1]}. [default: v2]" in text
    for preset in available_presets():
        assert preset in text.split("--preset", 1)[1].split("--", 1)[0]
    runs = f"Default: {LOCAL_RUNS} when every model is local (embedded:, gguf:, hf:), else "
    assert f"{runs}{DEFAULT_API_RUNS}." in text
    assert f"Default: {OFFLINE_JUDGE} offline (a smoke-test judge), else {DEFAULT_JUDGE}." in text
    for form in ("embedded:NAME", "gguf:/path/file.gguf", "hf:owner/repo/file.gguf"):
        assert form in text
