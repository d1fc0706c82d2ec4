"""Model configuration: which models to test, how to reach them and with which settings.

A `ModelSpec` is one leaderboard row's worth of settings (model id, endpoint, temperature,
reasoning effort, provider pin, prices). Specs come from `--models a,b` or from a `models.yaml`
file, validated here with errors that name the file, the entry and the field.

`ModelSpec.display_label` builds a leaderboard label, ``base[+provider][@effort][-tT]``;
`parse_label` reads one back into its parts (`LabelParts`), so that rows sharing a base model
can be compared and models grouped by family (``x-ai/grok+fireworks@low-t0.7``).
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
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

from independence_bench.clients.local.weights import is_local_model
from independence_bench.clients.protocol import ReasoningEffort
from independence_bench.clients.redact import url_shown, without_url_credentials
from independence_bench.errors import UserError, read_user_text

OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"
DEFAULT_TEMPERATURE = 0.7


class ReasoningObject(BaseModel):
    """OpenRouter's `reasoning` request object, as its reasoning-tokens page documents it:
    `effort` or `max_tokens` (not both), optionally `exclude` (reason, but return none) and
    `enabled` (reasoning at the model's default)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    effort: Literal["none", "minimal", "low", "medium", "high", "xhigh"] | None = None
    max_tokens: int | None = Field(default=None, ge=1, le=200_000)
    exclude: bool | None = None
    enabled: bool | None = None

    @model_validator(mode="after")
    def _one_budget(self) -> ReasoningObject:
        if self.effort is not None and self.max_tokens is not None:
            raise ValueError("give reasoning effort or max_tokens, not both")
        if self.model_dump(exclude_none=True) == {}:
            raise ValueError("an empty reasoning object sends nothing; use reasoning_effort: off")
        return self

    @property
    def label(self) -> str:
        """How it shows in a label after `@`: the effort, else `maxtokens` or `enabled`."""
        if self.effort is not None:
            return self.effort
        return "maxtokens" if self.max_tokens is not None else "enabled"


class ProviderRouting(BaseModel):
    """OpenRouter's `provider` routing object (provider-routing page): where a request may go."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    order: tuple[str, ...] | None = None
    only: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    allow_fallbacks: bool | None = None
    require_parameters: bool | None = None
    quantizations: tuple[str, ...] | None = None
    sort: Literal["price", "throughput", "latency"] | None = None
    data_collection: Literal["allow", "deny"] | None = None
    zdr: bool | None = None

    @property
    def pinned(self) -> tuple[str, ...]:
        """The providers it names to serve (`order`, else `only`), for labels and prices."""
        return self.order or self.only or ()


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
    reasoning_effort: ReasoningEffort | ReasoningObject = "off"
    """A reasoning effort (`off` sends nothing), or OpenRouter's whole `reasoning` object."""
    provider: tuple[str, ...] | ProviderRouting = ()
    """OpenRouter provider pin, tried in order, without fallbacks; or OpenRouter's whole
    `provider` routing object (`only`, `ignore`, `sort`, `quantizations`, …)."""
    max_tokens: int = Field(default=2048, ge=16, le=200_000)
    seed: int | None = Field(default=None, ge=0, le=2**63 - 1)
    """Sent as is; 0..2**63-1, what a signed 64-bit integer holds with no negative (llama.cpp
    reads a negative seed as "random")."""
    price_prompt_per_mtok: float | None = Field(default=None, ge=0, le=1e6, allow_inf_nan=False)
    price_completion_per_mtok: float | None = Field(default=None, ge=0, le=1e6, allow_inf_nan=False)
    judge_form: str | None = None
    """Read only when this spec judges: the name of the form it is asked in, as configured;
    None = the default for where it runs. Judging knows the forms and checks the name
    (`judging/forms.py`: `judge_form_of`, `judge_label_of`)."""

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

    @field_validator("api_key_env")
    @classmethod
    def _api_key_env_is_a_name(cls, value: str | None) -> str | None:
        if value is None or (_ENV_NAME.fullmatch(value) and not _looks_like_key(value)):
            return value
        # Never echo the value: it is most likely the key itself.
        raise UserError(
            "api_key_env must name an environment variable (letters, digits and _, e.g. "
            "MY_SERVER_KEY), not hold the key: put the key in .env as MY_SERVER_KEY=... and "
            "write api_key_env: MY_SERVER_KEY"
        )

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
    def display_label(self) -> str:
        """`id[+provider][@effort][-tT]`: settings that differ from the defaults are visible."""
        if self.label:
            return self.label
        text = self.id
        pinned = (
            self.provider.pinned if isinstance(self.provider, ProviderRouting) else self.provider
        )
        if pinned:
            text += "+" + ",".join(pinned)
        effort = self.reasoning_effort
        if isinstance(effort, ReasoningObject):
            text += f"@{effort.label}"
        elif effort != "off":
            text += f"@{effort}"
        if self.temperature != DEFAULT_TEMPERATURE:
            text += f"-t{self.temperature:g}"
        return text

    @property
    def reasoning_sent(self) -> str | dict[str, Any] | None:
        """What a request carries as its reasoning setting: None for `off`, the effort, or the
        object's fields (`openrouter.reasoning_field` puts it on the wire)."""
        effort = self.reasoning_effort
        if isinstance(effort, ReasoningObject):
            return effort.model_dump(exclude_none=True)
        return None if effort == "off" else effort

    @property
    def pinned_providers(self) -> tuple[str, ...]:
        """The providers named to serve it: the list, or the routing object's order/only."""
        provider = self.provider
        return provider.pinned if isinstance(provider, ProviderRouting) else provider

    @property
    def provider_pin(self) -> tuple[str, ...]:
        """The providers a list pins (tried in order, no fallbacks); () for a routing object."""
        return () if isinstance(self.provider, ProviderRouting) else self.provider

    @property
    def provider_routing(self) -> dict[str, Any] | None:
        """The routing object's fields as sent, or None when `provider` is a list."""
        if isinstance(self.provider, ProviderRouting):
            return self.provider.model_dump(mode="json", exclude_none=True)
        return None

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
_FIELD_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def _looks_like_key(name: str) -> bool:
    """A long mix of lower case and digits is a token, not a variable name."""
    lower = any(c.islower() for c in name)
    return lower and any(c.isdigit() for c in name) and len(name) >= 16 and "_" not in name


def check_base_url(url: str) -> str:
    """`url` if it is an http(s) URL with a valid host and port; else a `UserError` saying
    what is wrong with it. A `UserError` (not a `ValueError`) passes through pydantic, so
    every place a spec is built — `--base-url`, `--judge-base-url`, `models.yaml` — stops
    with this one line instead of a traceback."""
    shown = url_shown(url)
    if any(char.isspace() for char in url):
        raise UserError(f"base_url {shown!r} contains a space or line break; remove it")
    try:
        parts = urlsplit(url)
        port = parts.port  # raises for a port out of range or not a number
    except ValueError as exc:
        # The parser's text may quote a password's tail (`as 'pa'`): say what to do instead.
        why = "percent-encode the user name and password, e.g. / as %2F" if "@" in url else exc
        raise UserError(f"base_url {shown!r} is not a valid URL ({why})") from None
    if parts.scheme not in ("http", "https"):
        raise UserError(f"base_url {shown!r} must start with http:// or https://")
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        # Paths are appended to the base URL, so a query or fragment would end up mid-URL;
        # a key in the query would be stored with the URL.
        raise UserError(
            f"base_url {shown!r} has a query string or fragment (after ? or #); give the base "
            "URL alone (e.g. http://host:8000/v1) and a key through api_key_env"
        )
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


_TYPE_MISMATCH = frozenset({"literal_error", "tuple_type", "dict_type", "model_type"})
"""Errors that only say "not this branch of a union"; another branch's error says more."""


def _describe_error(path: Path | str, data: Any, exc: ValidationError) -> str:
    errors = exc.errors()
    # Of a union's errors (an effort or a reasoning object, a list or a routing object), the
    # deepest that is not a mere type mismatch names what is wrong with what was written.
    same_field = [e for e in errors if e["loc"][:3] == errors[0]["loc"][:3]]
    first = max(same_field, key=lambda e: (len(e["loc"]), e["type"] not in _TYPE_MISMATCH))
    # A union's branch shows in the location as its type ("literal['off', …]",
    # "ProviderRouting"): not a field; fields are snake_case.
    loc = [p for p in first["loc"] if isinstance(p, int) or _FIELD_NAME.match(str(p))]
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


MAX_MODELS_FILE_BYTES = 1_000_000
"""A models.yaml is a few KB; a 10 MB one took 39 s and 1.1 GB to parse before it was refused."""


def load_models_file(path: Path) -> ModelsFile:
    """Read and validate a `models.yaml`; raise `UserError` naming the file, entry and field."""
    with contextlib.suppress(OSError):  # a missing file is reported by read_user_text
        size = path.stat().st_size
        if size > MAX_MODELS_FILE_BYTES:
            raise UserError(
                f"config file {path} is {size:,} bytes, more than a models.yaml needs "
                f"({MAX_MODELS_FILE_BYTES:,} at most); check the --config path"
            )
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


# -- a leaderboard label read back into its parts -------------------------------------------------


@dataclass(frozen=True)
class LabelParts:
    """A leaderboard label split by the grammar ``base[+provider][@effort][-tT]``."""

    base: str
    provider: str | None = None
    effort: str | None = None
    temperature: float | None = None

    @property
    def family(self) -> str | None:
        """The provider prefix of the base model id ("openai" in "openai/gpt-4o")."""
        return self.base.split("/", 1)[0] if "/" in self.base else None

    def settings(self) -> tuple[str, ...]:
        """The settings this label adds to its base, in words."""
        found = [("provider", self.provider), ("effort", self.effort)]
        found.append(("temperature", None if self.temperature is None else f"{self.temperature:g}"))
        return tuple(f"{name} {value}" for name, value in found if value is not None)


_LABEL = re.compile(
    r"^(?P<base>[^+@]+?)(?:\+(?P<provider>[^+@]+?))?(?:@(?P<effort>[A-Za-z]+))?"
    r"(?:-t(?P<temperature>[0-2](?:\.\d+)?))?$"
)


def parse_label(label: str) -> LabelParts:
    """Split ``base[+provider][@effort][-tT]``, e.g. ``x-ai/grok+fireworks@low-t0.7``.

    A trailing ``-t`` counts as a temperature only when followed by a number from 0 to 2, so
    ``google/flan-t5`` stays a base model id.
    """
    match = _LABEL.match(label)
    if match is None:
        raise ValueError(
            f"cannot read model label {label!r}; expected base[+provider][@effort][-tT]"
        )
    temperature = match["temperature"]
    if temperature is not None and float(temperature) > 2.0:
        return LabelParts(f"{match['base']}-t{temperature}", match["provider"], match["effort"])
    return LabelParts(
        match["base"],
        match["provider"],
        match["effort"],
        None if temperature is None else float(temperature),
    )
