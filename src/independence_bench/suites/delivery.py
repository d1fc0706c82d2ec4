"""Delivery modes: the two ways a suite's human turns reach the model under test.

`user_role` sends them as user messages, `tool_role` as the results of a tool the model talks
through (`conversations/conversation.py` builds both). Suites list the modes they run and
`--modes` selects among them. The names live here, apart from `suite.py`, so that checking a
selection does not load the suite models (a store reader starts without pydantic or YAML).
"""

from __future__ import annotations

from typing import Literal

DeliveryMode = Literal["user_role", "tool_role"]
DELIVERY_MODES: tuple[DeliveryMode, ...] = ("user_role", "tool_role")
