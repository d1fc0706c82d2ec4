"""models.yaml validation: errors name the file, the entry and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from independence_bench.clients.config import ModelSpec, load_models_file
from independence_bench.errors import UserError


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "models.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_valid_file_with_settings_and_labels(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "models:\n"
        "  - id: moonshotai/kimi-k2.5\n    provider: fireworks\n    reasoning_effort: low\n"
        "  - id: qwen/qwen3-8b\n    temperature: 1.0\n"
        "judge:\n  id: google/gemini-3-flash-preview\n  temperature: 0\n",
    )
    loaded = load_models_file(path)
    assert [m.display_label for m in loaded.models] == [
        "moonshotai/kimi-k2.5+fireworks@low",
        "qwen/qwen3-8b-t1",
    ]
    assert loaded.judge is not None and loaded.judge.temperature == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "models:\n  - id: a\n  - id: b\n    temprature: 0.3\n",
            "entry models[1] (b) field 'temprature'",
        ),
        ("models:\n  - id: a\n    temperature: 5\n", "entry models[0] (a) field 'temperature'"),
        ("models:\n  - id: a\n    reasoning_effort: huge\n", "field 'reasoning_effort'"),
        ("models: []\n", "field 'models'"),
        ("models:\n  - id: a\n   bad: [\n", "is not valid YAML at line"),
        ("- just a list\n", "expected a mapping"),
    ],
)
def test_errors_name_file_entry_and_field(tmp_path: Path, text: str, expected: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(UserError) as info:
        load_models_file(path)
    message = str(info.value)
    assert str(path) in message
    assert expected in message
    assert "\n" not in message


def test_missing_file_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        load_models_file(tmp_path / "nope.yaml")


def test_cost_from_prices_or_unknown() -> None:
    priced = ModelSpec(id="m", price_prompt_per_mtok=1.0, price_completion_per_mtok=4.0)
    assert priced.price_cost(1000, 500) == pytest.approx(0.003)
    assert priced.price_cost(None, 500) is None
    assert ModelSpec(id="m").price_cost(1000, 500) is None


@pytest.mark.parametrize(
    ("spec", "local"),
    [
        ({"id": "embedded:qwen2.5-coder-0.5b"}, True),
        ({"id": "gguf:/models/x.gguf"}, True),
        ({"id": "m", "base_url": "http://127.0.0.1:8080/v1"}, True),
        ({"id": "m", "base_url": "http://localhost:11434/v1"}, True),
        ({"id": "m", "base_urls": ["http://127.0.0.1:1/v1", "http://10.0.0.2:8000/v1"]}, False),
        ({"id": "m", "base_url": "http://10.0.0.2:8000/v1"}, False),
        ({"id": "openai/gpt-4o-mini"}, False),
    ],
)
def test_a_model_runs_locally_when_embedded_or_served_from_loopback_only(
    spec: dict[str, object], local: bool
) -> None:
    assert ModelSpec.model_validate(spec).runs_locally is local
