"""Shipped model presets: listed, validated, and planned through the same path as --config."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from independence_bench.clients.config import load_models_file
from independence_bench.clients.presets import available_presets, load_preset


def _closed_port() -> int:
    """A loopback port nothing listens on: the estimate's model-list request is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("name", ["frontier", "budget"])
def test_presets_validate_and_pin_where_it_matters(name: str) -> None:
    preset = load_preset(name)
    ids = [spec.id for spec in preset.models]
    assert len(ids) >= 5 and len(set(ids)) == len(ids)
    assert all("/" in i for i in ids)  # OpenRouter ids: provider/model
    kimi = [s for s in preset.models if s.id.startswith("moonshotai/")]
    assert kimi and kimi[0].provider == ("fireworks",)
    assert preset.judge is not None and preset.judge.temperature == 0


def test_aib_models_lists_presets_and_shows_one(aib: Any) -> None:
    listed = aib("models")
    assert listed.code == 0
    for name in available_presets():
        assert f"  {name} " in listed.out
    shown = aib("models", "--preset", "budget")
    assert shown.code == 0
    assert shown.out.startswith("preset budget: 7 models\n")
    assert "moonshotai/kimi-k2.5+fireworks" in shown.out
    assert "judge: google/gemini-3-flash-preview" in shown.out


def test_preset_yaml_is_a_models_yaml(aib: Any) -> None:
    printed = aib("models", "--preset", "frontier", "--yaml")
    assert printed.code == 0
    Path("models.yaml").write_text(printed.out, encoding="utf-8")
    assert load_models_file(Path("models.yaml")) == load_preset("frontier")
    as_config = aib("models", "--config", "models.yaml")
    assert (
        as_config.out.splitlines()[1:] == aib("models", "--preset", "frontier").out.splitlines()[1:]
    )


def test_bad_preset_use_is_one_line(aib: Any) -> None:
    unknown = aib("models", "--preset", "cheap")
    assert unknown.code == 2
    assert (
        unknown.err.strip() == "aib: error: unknown preset 'cheap'; choose one of: budget, frontier"
    )
    both = aib("run", "--preset", "budget", "--models", "x")
    assert both.code == 2 and "give one of --models or --preset, not several" in both.err
    yaml_only = aib("models", "--yaml")
    assert yaml_only.code == 2 and "--yaml prints a preset; add --preset NAME" in yaml_only.err


def test_a_preset_plans_the_same_run_as_its_config(aib: Any) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    common = ["--base-url", url, "--runs", "1", "--judge", "j", "--scenarios", "direct"]
    by_preset = aib("estimate", "--preset", "budget", *common)
    assert by_preset.code == 0, by_preset.err
    for spec in load_preset("budget").models:
        assert spec.display_label in by_preset.out
    Path("budget.yaml").write_text(aib("models", "--preset", "budget", "--yaml").out, "utf-8")
    by_config = aib("estimate", "--config", "budget.yaml", *common)
    assert by_config.out == by_preset.out
