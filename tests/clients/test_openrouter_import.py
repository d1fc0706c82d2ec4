"""Imported configurations re-run as published: the earlier implementation sent
`reasoning: {"effort": "none"}` for its `@none` configurations, and so does a re-run of one."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
import yaml

from independence_bench.clients.config import ModelSpec
from independence_bench.clients.openai_compat import OpenAICompatibleClient
from independence_bench.engine.requests import subject_request

SAMPLE = Path(__file__).resolve().parents[2] / "shared/data/upstream-sample"
FOLDER = "google--gemini-3-flash-preview@none-t0.7"
pytestmark = pytest.mark.skipif(
    not (SAMPLE / "cache" / FOLDER).is_dir(), reason="the upstream sample is not beside the project"
)


def _sent_reasoning(spec: ModelSpec) -> Any:
    client = OpenAICompatibleClient(
        base_url="http://127.0.0.1:9/v1", api_key="k", is_openrouter=True
    )
    request = subject_request(spec, ({"role": "user", "content": "hi"},), ())
    return client._body(request).get("reasoning")


def test_an_imported_none_configuration_sends_effort_none_as_published(aib: Any) -> None:
    result = aib("import", str(SAMPLE / "cache" / FOLDER), "--data-dir", "d")
    assert result.code == 0, result.err
    with closing(sqlite3.connect(Path("d") / "aib.sqlite3")) as db:
        (config_json,) = db.execute("SELECT DISTINCT model_config_json FROM runs").fetchone()
    config = json.loads(config_json)
    published = yaml.safe_load((SAMPLE / "configs" / "models.yaml").read_text(encoding="utf-8"))
    entry = next(m for m in published["models"] if m["model_id"] == config["id"])
    assert config["reasoning_effort"] == entry["reasoning_effort"] == "none"
    spec = ModelSpec(
        id=config["id"],
        provider=config["provider"],
        reasoning_effort=config["reasoning_effort"],
        temperature=config["temperature"],
    )
    assert spec.display_label == "google/gemini-3-flash-preview@none"
    assert _sent_reasoning(spec) == {"effort": "none"}
    assert _sent_reasoning(spec.model_copy(update={"reasoning_effort": "off"})) is None
