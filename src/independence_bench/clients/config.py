"""Model configuration: which models to test, how to reach them and with which settings.

A `ModelSpec` is one leaderboard row's worth of settings (model id, endpoint, temperature,
reasoning effort, provider pin, prices). Specs come from `--models a,b` or from a `models.yaml`
file, validated here with errors that name the file, the entry and the field.
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from independence_bench.clients.judge_forms import (
    JUDGE_FORMS,
    LOCAL_JUDGE_FORM,
    JudgeForm,
    judge_label_suffix,
)
from independence_bench.clients.local.weights import is_local_model
from independence_bench.clients.protocol import ReasoningEffort
from independence_bench.clients.redact import without_url_credentials
from independence_bench.errors import UserError, read_user_text

OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"
DEFAULT_TEMPERATURE = 0.7
DEFAULT_JUDGE = "google/gemini-3-flash-preview"


def judge_form_named(name: str) -> JudgeForm:
    """`name` as a judge form; UserError naming the forms otherwise (the Python API's check of
    what `--judge-form` checks with a choice)."""
    for form in JUDGE_FORMS:
        if name == form:
            return form
    raise UserError(f"unknown judge form {name!r}; use one of: {', '.join(JUDGE_FORMS)}")


class ModelSpec(BaseModel):
    """One model configuration under test (or used as a judge)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    """The model name as the endpoint knows it, e.g. `openai/gpt-4o-mini` or `llama3.1:8b`."""
    label: str | None = None
    """Leaderboard label; derived from the settings when omitted."""
    base_url: str | None = None
    """An OpenAI-compatible endpoint; OpenRouter when omitted."""
    base_urls: tuple[str, ...] = ()
    """Several servers of the same model (e.g. vLLM or llama.cpp replicas): its calls are spread
    across them, each server within its own concurrency limit (`endpoint_group.py`). A list
    given as `base_url` means the same; `base_url` is then the first of them."""
    api_key_env: str | None = None
    """Environment variable holding the key for `base_url` (optional for local servers)."""
    temperature: float = Field(default=DEFAULT_TEMPERATURE, ge=0.0, le=2.0)
    reasoning_effort: ReasoningEffort = "off"
    provider: tuple[str, ...] = ()
    """OpenRouter provider pin, tried in order, without fallbacks."""
    max_tokens: int = Field(default=2048, ge=16, le=200_000)
    seed: int | None = None
    price_prompt_per_mtok: float | None = Field(default=None, ge=0)
    price_completion_per_mtok: float | None = Field(default=None, ge=0)
    judge_form: JudgeForm | None = None
    """Read only when this spec judges: how it is asked; None = `LOCAL_JUDGE_FORM` for an
    in-process model, `holistic` for any other."""

    @field_validator("provider", mode="before")
    @classmethod
    def _provider_as_tuple(cls, value: Any) -> Any:
        return (value,) if isinstance(value, str) else value

    @model_validator(mode="before")
    @classmethod
    def _several_base_urls(cls, data: Any) -> Any:
        """`base_url: [a, b]` → `base_urls: [a, b]`, `base_url: a`; `base_url` is in the list."""
        if not isinstance(data, dict):
            return data
        url, urls = data.get("base_url"), data.get("base_urls")
        if isinstance(url, list | tuple):
            if urls:
                raise ValueError("list several servers in base_urls or in base_url, not both")
            url, urls = (url[0] if url else None), url
        if not urls:
            return data
        if not isinstance(urls, list | tuple) or not all(isinstance(u, str) for u in urls):
            raise ValueError("base_urls must be a list of URLs")
        if len({u.rstrip("/") for u in urls}) != len(urls):
            raise ValueError("base_urls lists a server twice")
        if url is not None and url not in urls:
            raise ValueError(f"base_url {url!r} is not one of base_urls; give one or the other")
        return {**data, "base_url": url if url is not None else urls[0], "base_urls": urls}

    @field_validator("base_url")
    @classmethod
    def _base_url_is_a_url(cls, value: str | None) -> str | None:
        return None if value is None else check_base_url(value)

    @field_validator("base_urls")
    @classmethod
    def _base_urls_are_urls(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(check_base_url(url) for url in value)

    def stored_config(self) -> dict[str, Any]:
        """The settings as the store and every report keep them: URLs without credentials."""
        data = self.model_dump(mode="json")
        if data.get("base_url"):
            data["base_url"] = without_url_credentials(data["base_url"])
        data["base_urls"] = [without_url_credentials(u) for u in data.get("base_urls") or ()]
        if data.get("judge_form") is None:
            data.pop("judge_form", None)  # configurations stored before judge forms stay equal
        return data

    @property
    def judge_form_used(self) -> JudgeForm:
        """The judge form this spec is asked in when it judges."""
        if self.judge_form is not None:
            return self.judge_form
        return LOCAL_JUDGE_FORM if is_local_model(self.id) else "holistic"

    @property
    def judge_label(self) -> str:
        """The judge name its judgments are stored under: `display_label`, plus `#<form>` in
        any form but holistic (`judge_label_suffix`), so the forms of one judge never mix."""
        return self.display_label + judge_label_suffix(self.judge_form_used)

    @property
    def display_label(self) -> str:
        """`id[+provider][@effort][-tT]`: settings that differ from the defaults are visible."""
        if self.label:
            return self.label
        text = self.id
        if self.provider:
            text += "+" + ",".join(self.provider)
        if self.reasoning_effort != "off":
            text += f"@{self.reasoning_effort}"
        if self.temperature != DEFAULT_TEMPERATURE:
            text += f"-t{self.temperature:g}"
        return text

    @property
    def is_openrouter(self) -> bool:
        return self.base_url is None or self.base_url.rstrip("/") == OPENROUTER_BASE_URL

    @property
    def runs_locally(self) -> bool:
        """An embedded/GGUF model, or one served only from this machine (a loopback URL): it
        costs $0 unless `models.yaml` or its server's model list prices it."""
        if is_local_model(self.id):
            return True
        urls = self.base_urls or ((self.base_url,) if self.base_url else ())
        return bool(urls) and all(_is_loopback(url) for url in urls)

    def price_cost(self, prompt_tokens: int | None, completion_tokens: int | None) -> float | None:
        """Cost from the configured prices, or None when a price or a count is unknown."""
        if self.price_prompt_per_mtok is None or self.price_completion_per_mtok is None:
            return None
        if prompt_tokens is None or completion_tokens is None:
            return None
        return (
            prompt_tokens * self.price_prompt_per_mtok
            + completion_tokens * self.price_completion_per_mtok
        ) / 1_000_000


_NUMERIC_HOST = re.compile(r"^[0-9.]+$")


def check_base_url(url: str) -> str:
    """`url` if it is an http(s) URL with a valid host and port; else a `UserError` saying
    what is wrong with it. A `UserError` (not a `ValueError`) passes through pydantic, so
    every place a spec is built — `--base-url`, `--judge-base-url`, `models.yaml` — stops
    with this one line instead of a traceback."""
    shown = without_url_credentials(url)
    try:
        parts = urlsplit(url)
        port = parts.port  # raises for a port out of range or not a number
    except ValueError as exc:
        raise UserError(f"base_url {shown!r} is not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise UserError(f"base_url {shown!r} must start with http:// or https://")
    host = parts.hostname
    if not host:
        raise UserError(f"base_url {shown!r} has no host")
    if _NUMERIC_HOST.match(host):
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            raise UserError(f"base_url {shown!r}: {host} is not an IPv4 address") from None
    if port == 0:
        raise UserError(f"base_url {shown!r}: port 0 is not a port to connect to")
    return url


def _is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ModelsFile(BaseModel):
    """`models.yaml`: the models to test and, optionally, the judge."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    models: tuple[ModelSpec, ...] = Field(min_length=1)
    judge: ModelSpec | None = None


def _describe_error(path: Path | str, data: Any, exc: ValidationError) -> str:
    first = exc.errors()[0]
    loc = list(first["loc"])
    where = ""
    if len(loc) >= 2 and loc[0] == "models" and isinstance(loc[1], int):
        index = loc[1]
        entry = data["models"][index] if isinstance(data, dict) else None
        name = entry.get("id") if isinstance(entry, dict) else None
        where = f"models[{index}]" + (f" ({name})" if name else "")
        field = ".".join(str(p) for p in loc[2:])
    else:
        field = ".".join(str(p) for p in loc)
    field_text = f" field '{field}'" if field else ""
    entry_text = f" entry {where}" if where else ""
    return f"{path}:{entry_text}{field_text}: {first['msg']}; fix it and run again"


def load_models_file(path: Path) -> ModelsFile:
    """Read and validate a `models.yaml`; raise `UserError` naming the file, entry and field."""
    text = read_user_text(path, f"config file {path}", "check the --config path")
    return parse_models_file(text, path)


def parse_models_file(text: str, source: Path | str) -> ModelsFile:
    """Validate the text of a `models.yaml` (a file, or a shipped preset named `source`)."""
    path = source
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise UserError(f"{path} is not valid YAML{where}; fix the syntax and run again") from None
    if not isinstance(data, dict):
        raise UserError(
            f"{path}: expected a mapping with a 'models' list; see README for the format"
        )
    try:
        return ModelsFile.model_validate(data)
    except ValidationError as exc:
        raise UserError(_describe_error(path, data, exc)) from None


def specs_from_names(names: str, *, base_url: str | None) -> tuple[ModelSpec, ...]:
    """`--models a,b,c` as specs with default settings, all on `base_url`."""
    ids = [n.strip() for n in names.split(",") if n.strip()]
    if not ids:
        raise UserError("--models is empty; give model ids separated by commas")
    try:
        return tuple(ModelSpec(id=i, base_url=base_url) for i in ids)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "model"
        raise UserError(f"--models/--base-url: {field}: {first['msg']}") from None
