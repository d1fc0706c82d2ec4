"""Any Python text to bytes and back without loss, for hashes, the wire and the store.

A server's reply can hold code points that strict UTF-8 refuses: a JSON `"\\ud800"` escape
decodes to a lone UTF-16 surrogate, and a body that is not valid UTF-8 is decoded here with
`surrogateescape` (each bad byte becomes U+DC80..U+DCFF, Python's documented convention), so a
reply always parses. `str.encode("utf-8")` raises on those, and every place that turns text
into bytes must not. The rules, one per destination:

- *Hashes* (`utf8`): `surrogatepass`, which is byte-identical to strict UTF-8 for any text that
  strict UTF-8 accepts, so every key computed before this module existed is unchanged.
- *The wire and files* (`json_dumps`; a request body's bytes, `json_bytes`): JSON with
  non-ASCII text as is and each lone surrogate as its `\\uXXXX` escape, which JSON readers
  turn back into the same code point.
- *Reading JSON from outside* (`json_loads`, `json_raw_decode`): nesting deeper than
  `JSON_DEPTH_LIMIT` is refused as `ValueError` before parsing (a reply of 200,000 `[` once
  raised `RecursionError` in every later run of the store); callers bound the size.
- *JSON documents for people and programs* (`json_document`): every number finite; a NaN or
  infinity (a sum of two `1e308` costs) becomes `null`, and the document says where and why,
  instead of the `Infinity` token no strict JSON reader accepts.
- *The store* (`to_sql` / `from_sql`): text strict UTF-8 accepts is stored as SQLite TEXT,
  unchanged; any other text as a BLOB of its `surrogatepass` bytes, read back to the same
  code points (a surrogate pair stays two code points). JSON columns use the same rule on the
  `ensure_ascii=False` JSON text, so nothing is ever escaped twice or read back differently.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any, TypeVar

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
JSON_DEPTH_LIMIT = 64
"""Arrays and objects nested deeper than this are refused: no reply, tool call or verdict the
harness reads nests more than five deep, and Python's recursive code stops near 1,000."""
_DECODER = json.JSONDecoder()
_T = TypeVar("_T")


def json_too_deep(value: Any, limit: int = JSON_DEPTH_LIMIT) -> bool:
    """True when the arrays and objects of the parsed JSON `value` nest deeper than `limit`;
    a walk level by level over containers only, so no recursion and no cost per scalar."""
    level = [value] if isinstance(value, dict | list) else []
    for _ in range(limit):
        level = [
            child
            for container in level
            for child in (container.values() if isinstance(container, dict) else container)
            if isinstance(child, dict | list)
        ]
        if not level:
            return False
    return bool(level)


def _bounded(parse: Callable[[str], _T], text: str) -> _T:
    """`parse(text)` with JSON nested deeper than `JSON_DEPTH_LIMIT` refused as a
    `json.JSONDecodeError`: the C parser stops at the recursion limit, the walk below it."""
    too_deep = json.JSONDecodeError(f"JSON nested deeper than {JSON_DEPTH_LIMIT} levels", text, 0)
    if text.count("[") + text.count("{") <= JSON_DEPTH_LIMIT:
        return parse(text)
    try:
        parsed = parse(text)
    except RecursionError:
        raise too_deep from None
    value = parsed[0] if isinstance(parsed, tuple) else parsed
    if json_too_deep(value):
        raise too_deep
    return parsed


def has_surrogates(text: str) -> bool:
    """True when `text` holds a code point strict UTF-8 refuses (a lone surrogate)."""
    return _LONE_SURROGATE.search(text) is not None


def surrogates_escaped(value: Any) -> Any:
    """`value` (text, or JSON data) with each lone surrogate as the six characters `\\udXXX`,
    for consumers that refuse them (pydantic's validators). Lossy: keep the original too."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", value)
    if isinstance(value, dict):
        return {surrogates_escaped(k): surrogates_escaped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [surrogates_escaped(v) for v in value]
    return value


def utf8(text: str) -> bytes:
    """`text` as UTF-8 for hashing: strict UTF-8 when possible, surrogates passed through."""
    return text.encode("utf-8", "surrogatepass")


def decode_body(body: bytes) -> str:
    """An HTTP body as text: UTF-8, each invalid byte kept as U+DC80..U+DCFF."""
    return body.decode("utf-8", "surrogateescape")


def json_loads(body: bytes | str) -> Any:
    """JSON from a body that may not be valid UTF-8 (see `decode_body`); `ValueError`
    (`json.JSONDecodeError`) if it is not JSON or nests deeper than `JSON_DEPTH_LIMIT`."""
    text = decode_body(body) if isinstance(body, bytes) else body
    return _bounded(json.loads, text)


def json_raw_decode(text: str) -> tuple[Any, int]:
    """`json.JSONDecoder().raw_decode(text)`: the first JSON value in `text` and where it
    ends, with the depth bound of `json_loads`."""
    return _bounded(_DECODER.raw_decode, text)


def json_dumps(value: Any, **options: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, ...)` whose result always encodes as UTF-8:
    each lone surrogate becomes its `\\uXXXX` escape (it can only occur inside a string)."""
    return escape_surrogates(json.dumps(value, ensure_ascii=False, **options))


def json_bytes(value: Any) -> bytes:
    """`json_dumps(value).encode("utf-8")`, the bytes of a request body: the strict encode
    is also the check for lone surrogates, so a body without one (nearly every body) is not
    searched for them first; one with them is escaped as `json_dumps` escapes them."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return escape_surrogates(text).encode("utf-8")


def escape_surrogates(text: str) -> str:
    """JSON text (`ensure_ascii=False`) with each lone surrogate as its `\\uXXXX` escape."""
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def to_sql(text: str | None) -> str | bytes | None:
    """A text value for SQLite: TEXT when strict UTF-8 takes it, else a `surrogatepass` BLOB."""
    if text is None or not has_surrogates(text):
        return text
    return utf8(text)


def from_sql(value: str | bytes | None) -> str | None:
    """The text `to_sql` stored."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogatepass")
    return value


def json_to_sql(value: Any, **options: Any) -> str | bytes:
    """`value` as a JSON column: its `ensure_ascii=False` JSON through `to_sql`."""
    stored = to_sql(json.dumps(value, ensure_ascii=False, **options))
    assert stored is not None
    return stored


def json_from_sql(value: str | bytes) -> Any:
    """The value `json_to_sql` stored."""
    text = from_sql(value)
    assert text is not None
    return json.loads(text)


NON_FINITE_KEY = "non_finite_as_null"
"""The key `json_document` adds: JSON path → what the number was (`Infinity`, `NaN`)."""


def finite_json(value: Any) -> tuple[Any, dict[str, str]]:
    """`value` with every NaN or infinite float as None, and the JSON path of each (`$.a[0].b`)
    mapped to what it was."""
    found: dict[str, str] = {}

    def walk(item: Any, path: str) -> Any:
        if isinstance(item, float) and not math.isfinite(item):
            found[path] = "NaN" if math.isnan(item) else ("Infinity" if item > 0 else "-Infinity")
            return None
        if isinstance(item, dict):
            return {k: walk(v, f"{path}.{k}") for k, v in item.items()}
        if isinstance(item, list | tuple):
            return [walk(v, f"{path}[{i}]") for i, v in enumerate(item)]
        return item

    return walk(value, "$"), found


def json_document(value: Any, **options: Any) -> str:
    """`json_dumps(value)` with every number finite (`finite_json`); a dict document that
    had a non-finite number gets `NON_FINITE_KEY` listing each, as the reason for its null."""
    cleaned, found = finite_json(value)
    if found and isinstance(cleaned, dict):
        cleaned[NON_FINITE_KEY] = found
    return json_dumps(cleaned, allow_nan=False, **options)
