"""Guards on a run's identity: a label keeps its settings, and two processes never pay twice."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support.mock_server import MockServer


def _config(server: MockServer, temperature: float) -> None:
    Path("models.yaml").write_text(
        f"models:\n  - id: scripted-firm\n    label: x\n    temperature: {temperature}\n"
        f"    base_url: {server.base_url}\n"
        f"judge:\n  id: scripted-judge\n  base_url: {server.base_url}\n",
        encoding="utf-8",
    )


def test_a_label_run_again_with_other_settings_is_refused(server: MockServer, aib: Any) -> None:
    run = ("run", "--config", "models.yaml", "--scenarios", "direct", "--data-dir", "d")
    _config(server, 0.7)
    assert aib(*run).code == 0
    calls = server.seen.request_count
    _config(server, 0.2)
    refused = aib(*run)
    assert refused.code == 2
    assert refused.err.strip().splitlines() == [
        "aib: error: run 1 of 'x' is stored with other sampling settings (temperature 0.7 → "
        "0.2); use a new label, or --fresh for new run numbers"
    ]
    assert server.seen.request_count == calls, "a refused run sent requests"
    fresh = aib(*run, "--fresh")
    assert fresh.code == 0, fresh.err
    assert server.seen.request_count > calls
    _config(server, 0.7)
    assert aib(*run).code == 0  # run 1 at its own settings is still complete
