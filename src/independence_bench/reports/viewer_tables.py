"""The viewer's text and message tables: each text written once, and once for all models when
several models use it (the suite's system prompts, human turns and scripted greetings).

While a model's document is built, `Packer` hands out references (`TextRef`, `MessageRef`),
not indexes. When every model is packed, `plan_shared` counts in how many models each text and
message occurs; those in two or more go to `data/shared.js` (`window.AIB_SHARED`), the rest to
their model's own file. `Numbering` then writes each reference as one number, as the JSON
encoder's `default`: below the shared table's length it is an index into the shared table,
otherwise, minus that length, into the model's own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from independence_bench.text.lossless import json_dumps


class TextRef:
    """A text of the viewer's data, to be written as its index."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value


class MessageRef:
    """A request message, to be written as its index: `entry` is `[content, message]`, the
    text content as a `TextRef` (None when the message has no text content, and `message` is
    then the message exactly as stored) and the rest of the message."""

    __slots__ = ("entry", "key")

    def __init__(self, key: str, entry: list[Any]) -> None:
        self.key, self.entry = key, entry


class Packer:
    """One model's distinct texts and messages, in order of first use."""

    def __init__(self) -> None:
        self.texts: dict[str, TextRef] = {}
        self.messages: dict[str, MessageRef] = {}

    def text(self, value: str | None) -> TextRef | None:
        if value is None:
            return None
        found = self.texts.get(value)
        if found is None:
            found = self.texts[value] = TextRef(value)
        return found

    def message(self, message: Any) -> MessageRef:
        key = json_dumps(message, sort_keys=True)
        found = self.messages.get(key)
        if found is None:
            if isinstance(message, dict) and isinstance(message.get("content"), str):
                rest = {k: v for k, v in message.items() if k != "content"}
                entry = [self.text(message["content"]), rest]
            else:
                entry = [None, message]
            found = self.messages[key] = MessageRef(key, entry)
        return found


@dataclass(frozen=True)
class Shared:
    """The texts and messages that more than one model uses, by their index."""

    texts: dict[str, int]
    messages: dict[str, int]
    entries: tuple[list[Any], ...]
    """The shared messages' entries, in index order."""

    def document(self) -> dict[str, Any]:
        """`window.AIB_SHARED` (its references are written by `Numbering(shared)`)."""
        return {"texts": list(self.texts), "messages": list(self.entries)}


def plan_shared(packers: Sequence[Packer]) -> Shared:
    """Every text and message found in two or more of `packers`, in order of first use."""

    def used_twice(keys: Iterable[Iterable[str]]) -> list[str]:
        uses = Counter(key for found in keys for key in found)
        return [key for key, count in uses.items() if count > 1]

    texts = used_twice(packer.texts for packer in packers)
    messages = used_twice(packer.messages for packer in packers)
    found = {key: ref for packer in packers for key, ref in packer.messages.items()}
    return Shared(
        texts={text: n for n, text in enumerate(texts)},
        messages={key: n for n, key in enumerate(messages)},
        entries=tuple(found[key].entry for key in messages),
    )


class Numbering:
    """The numbers of one model's references, and its own tables (what is not shared); with
    no packer, of the shared table's own references."""

    def __init__(self, shared: Shared, packer: Packer | None = None) -> None:
        self.shared = shared
        texts = packer.texts if packer else {}
        messages = packer.messages if packer else {}
        self.own_texts = [text for text in texts if text not in shared.texts]
        self.own_messages = [
            ref.entry for key, ref in messages.items() if key not in shared.messages
        ]
        start = len(shared.texts)
        self._texts = {text: start + n for n, text in enumerate(self.own_texts)}
        start = len(shared.messages)
        own_keys = [key for key in messages if key not in shared.messages]
        self._messages = {key: start + n for n, key in enumerate(own_keys)}

    def __call__(self, value: Any) -> int:
        """The number of a reference (the JSON encoder's `default`)."""
        if isinstance(value, TextRef):
            found = self.shared.texts.get(value.value)
            return self._texts[value.value] if found is None else found
        if isinstance(value, MessageRef):
            found = self.shared.messages.get(value.key)
            return self._messages[value.key] if found is None else found
        raise TypeError(f"{type(value).__name__} is not a viewer reference")
