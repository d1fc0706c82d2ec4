"""The viewer's text and message tables: each text written once per model file, and the texts
several models use (the suite's system prompts, human turns and scripted greetings) once for
all in `data/shared.js`.

While a model's document is built, `Packer` hands out references (`TextRef`, `MessageRef`),
not numbers. Models are written one at a time (memory stays that of one model), so
`SharedTables` decides as it goes: a text or message that an earlier model already used (it
keeps a digest of each) moves to the shared table, and every later model refers to it there.
The first model that used it keeps its own copy. `Numbering` writes each reference as one
number, as the JSON encoder's `default`: n ≥ 0 is the model's own table at n, and a negative
n the shared table at −1 − n.
"""

from __future__ import annotations

import hashlib
from typing import Any

from independence_bench.text.lossless import json_dumps, utf8


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


def _digest(text: str) -> bytes:
    return hashlib.blake2b(utf8(text), digest_size=16).digest()


class SharedTables:
    """The shared texts and messages so far, and digests of everything earlier models used."""

    def __init__(self) -> None:
        self.texts: dict[str, int] = {}
        self.messages: dict[str, int] = {}
        self.entries: list[list[Any]] = []
        self._seen_texts: set[bytes] = set()
        self._seen_messages: set[bytes] = set()

    def numbering(self, packer: Packer) -> Numbering:
        """The numbers of one model's references; what an earlier model used becomes shared."""
        for text in packer.texts:  # texts first: a shared message's text is then shared too
            if text not in self.texts and _digest(text) in self._seen_texts:
                self.texts[text] = len(self.texts)
        for key, ref in packer.messages.items():
            if key not in self.messages and _digest(key) in self._seen_messages:
                self.messages[key] = len(self.entries)
                self.entries.append(ref.entry)
        self._seen_texts.update(_digest(text) for text in packer.texts)
        self._seen_messages.update(_digest(key) for key in packer.messages)
        return Numbering(self, packer)

    def document(self) -> dict[str, Any]:
        """`window.AIB_SHARED` (write it with `default=Numbering(shared)`)."""
        return {"texts": list(self.texts), "messages": self.entries}


class Numbering:
    """The numbers of one model's references and its own tables (what is not shared); with
    no packer, of the shared tables' own references."""

    def __init__(self, shared: SharedTables, packer: Packer | None = None) -> None:
        self.shared = shared
        texts = packer.texts if packer else {}
        messages = packer.messages if packer else {}
        self.own_texts = [text for text in texts if text not in shared.texts]
        own_keys = [key for key in messages if key not in shared.messages]
        self.own_messages = [messages[key].entry for key in own_keys]
        self._texts = {text: n for n, text in enumerate(self.own_texts)}
        self._messages = {key: n for n, key in enumerate(own_keys)}

    def __call__(self, value: Any) -> int:
        """The number of a reference (the JSON encoder's `default`)."""
        if isinstance(value, TextRef):
            found = self.shared.texts.get(value.value)
            return self._texts[value.value] if found is None else -1 - found
        if isinstance(value, MessageRef):
            found = self.shared.messages.get(value.key)
            return self._messages[value.key] if found is None else -1 - found
        raise TypeError(f"{type(value).__name__} is not a viewer reference")
