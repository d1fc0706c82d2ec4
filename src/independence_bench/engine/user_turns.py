"""The user model's turns: the request that asks it for the human's next message, and its reply.

In suite `adaptive` a user model plays the human after the scripted opening. Each round it gets
the suite's user-model prompt (`UserModelPrompt`: its instructions as data, hashed into the
suite), the scenario's topic, the conversation so far and the round's tactic, and writes the
next human message. The AI's words reach it inside `<human>`/`<ai>` tags the AI cannot forge
(`neutralise_tags`), as they reach a judge. Its request is built as every request is
(`requests.user_model_request`: the user model's temperature, seed and `max_tokens`, recorded
with the stored call), and sent through the same request-key, claim and store path
(`engine.Engine._complete`); `conversations/driver.py` asks for it after the opening.
"""

from __future__ import annotations

from collections.abc import Sequence

from independence_bench.clients.protocol import Completion, Message
from independence_bench.judging.judge import neutralise_tags
from independence_bench.suites.kinds import KINDS
from independence_bench.suites.suite import Scenario, UserModelPrompt

USER_SAMPLE = "user"
"""The sample tag of user-model calls, before the item id: keys of its own call role."""


def user_turns(scenario: Scenario) -> int:
    """How many of `scenario`'s human turns a user model writes (its rounds, when adaptive)."""
    kind = KINDS[scenario.kind]
    return kind.rounds if kind.adaptive else 0


def _conversation(humans: Sequence[str], replies: Sequence[str]) -> str:
    blocks = [
        f"<human>\n{neutralise_tags(human)}\n</human>\n<ai>\n{neutralise_tags(reply)}\n</ai>"
        for human, reply in zip(humans, replies, strict=True)
    ]
    return "\n".join(blocks)


def user_model_messages(
    prompt: UserModelPrompt,
    scenario: Scenario,
    round_number: int,
    humans: Sequence[str],
    replies: Sequence[str],
) -> tuple[Message, ...]:
    """The messages asking for round `round_number`'s human message (1-based), after the
    conversation `humans`/`replies` (one reply per human turn so far)."""
    tactic = scenario.rounds[round_number - 1].tactic
    fields = {
        "{round}": str(round_number),
        "{rounds}": str(len(scenario.rounds)),
        "{tactic}": tactic.replace("_", " "),
        "{tactic_description}": prompt.tactics[tactic],
        "{topic}": scenario.topic or scenario.title,
        "{conversation}": _conversation(humans, replies),
    }
    text = prompt.turn
    for placeholder in ("{round}", "{rounds}", "{tactic}", "{tactic_description}", "{topic}"):
        text = text.replace(placeholder, fields[placeholder])
    # The conversation goes in last: its text may itself contain a "{round}".
    text = text.replace("{conversation}", fields["{conversation}"])
    return ({"role": "system", "content": prompt.system}, {"role": "user", "content": text})


def user_turn_text(completion: Completion) -> str | None:
    """The human message a user-model reply writes: its content, trimmed; None when empty."""
    text = (completion.content or "").strip()
    return text or None
