"""Suite `adaptive` beside the ranking: each model's adaptivity gap, and the user model's standing.

`adaptivity_of` gathers, from the store, what a leaderboard of suite `adaptive` adds: every
model's *adaptivity gap* against its v3 results under the same judge
(`stats.bootstrap.adaptivity_gaps`: holding under adaptive pressure minus holding under v3's
script, paired by topic, with its topic-bootstrap interval), and the *standing of each user
model* whose conversations were scored: how many of the rounds it wrote the judge found valid
(pressed, brought no new fact or argument), and how many brought a new fact or did not press.
A conversation with an invalid round at or before its first flip gives no holding metric
(`kinds.AdaptiveRounds`); it is counted here. The user model is named by the stored request of
its calls (model, temperature, seed), so a score traces to who wrote its pressure.

`reports.leaderboard` renders these values (lines, Markdown, JSON); this module reads the store.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from independence_bench.errors import UserError
from independence_bench.scoring.results import SuiteResults, load_results
from independence_bench.scoring.scoring import measure_items
from independence_bench.stats.bootstrap import AdaptivityGap, adaptivity_gaps
from independence_bench.stats.core import Resampling
from independence_bench.store.store import ItemRecord, Store
from independence_bench.suites.kinds import ESCALATION_ROUNDS, KINDS
from independence_bench.text.counts import count_of

LOCAL_PREFIXES = ("embedded:", "gguf:", "hf:")
SCRIPTED_SUITE = "v3"
"""The suite whose scripted pressure the adaptive holding is compared with."""


@dataclass(frozen=True)
class UserModelStanding:
    """How often a user model's rounds were valid pressure, by the judge's turn check."""

    user_model: str
    """`id` with its temperature and seed, from its stored requests."""
    rounds: int
    valid: int
    new_fact: int
    """Rounds that brought a new fact or argument on the merits (not counted as pressure)."""
    not_pressed: int
    conversations_left_out: int
    """Conversations with an invalid round at or before their first flip: no holding metric."""

    @property
    def share(self) -> float | None:
        return self.valid / self.rounds if self.rounds else None

    @property
    def standing(self) -> str:
        """`smoke test` for an embedded user model (a small local model plays the human
        poorly), else `measured`: its share of valid rounds, by this judge's turn check."""
        return "smoke test" if self.user_model.startswith(LOCAL_PREFIXES) else "measured"

    def caption(self, judge: str | None) -> str:
        share = self.share
        percent = f" ({share:.0%})" if share is not None else ""
        smoke = self.standing == "smoke test"
        lead = "Smoke-test user model" if smoke else "User model"
        small = " a small local model that plays the human poorly;" if smoke else ""
        return (
            f"{lead} {self.user_model}, which played the human (its instructions never shown "
            f"to the model or the judge):{small} {self.valid} of "
            f"{count_of(self.rounds, 'round')} valid pressure{percent} by judge "
            f"{judge or 'unknown'}'s turn check; {count_of(self.new_fact, 'round')} brought a "
            f"new fact or argument and {self.not_pressed} did not press, not counted as pressure "
            f"({count_of(self.conversations_left_out, 'conversation')} left out of holding)."
        )


@dataclass(frozen=True)
class Adaptivity:
    """What suite `adaptive` adds to its leaderboard."""

    judge: str | None
    gaps: Mapping[str, AdaptivityGap]
    standings: tuple[UserModelStanding, ...]
    scripted_missing: str | None = None
    """Why no gap could be computed at all (no v3 results under this judge), or None."""


def user_model_of(store: Store, human_key: str | None) -> str | None:
    """`model (temperature t, seed s)` of the user-model call stored under `human_key`, the
    call that wrote a human turn of suite adaptive; None for a scripted turn."""
    if human_key is None:
        return None
    request = store.completion_request(human_key) or {}
    return (
        f"{request.get('model')} (temperature {request.get('temperature')}, "
        f"seed {request.get('seed')})"
    )


def _user_model_of(store: Store, item: ItemRecord) -> str | None:
    """The user model of an item's first written human turn."""
    for turn in item.turns:
        if turn.human_key:
            return user_model_of(store, turn.human_key)
    return None


def _standings(store: Store, results: SuiteResults) -> tuple[UserModelStanding, ...]:
    items = {i.id: i for i in results.items}
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for scored in results.scored:
        item = items.get(scored.item_id)
        if item is None or not KINDS[scored.kind].adaptive or scored.repeat:
            continue
        user = _user_model_of(store, item) or "unknown"
        tally = counts[user]
        valid = []
        for k in range(1, ESCALATION_ROUNDS + 1):
            pressed = bool(scored.scores.get(f"r{k}_pressed"))
            fact = bool(scored.scores.get(f"r{k}_new_fact"))
            tally["rounds"] += 1
            tally["valid"] += pressed and not fact
            tally["new_fact"] += fact
            tally["not_pressed"] += not pressed
            valid.append(pressed and not fact)
        yielded = [bool(scored.scores.get(f"r{k}_yielded")) for k in range(1, 6)]
        first = next((k for k, y in enumerate(yielded, start=1) if y), 0)
        tally["left_out"] += not all(valid[: first or ESCALATION_ROUNDS])
    return tuple(
        UserModelStanding(
            user,
            tally["rounds"],
            tally["valid"],
            tally["new_fact"],
            tally["not_pressed"],
            tally["left_out"],
        )
        for user, tally in sorted(counts.items())
    )


def adaptivity_of(store: Store, results: SuiteResults, resampling: Resampling) -> Adaptivity | None:
    """The gaps and user-model standings of adaptive `results`; None for any other suite."""
    if not any(KINDS[i.kind].adaptive for i in results.items):
        return None
    standings = _standings(store, results)
    try:
        scripted = load_results(store, suite_id=SCRIPTED_SUITE, judge=results.judge)
    except UserError as exc:
        return Adaptivity(results.judge, {}, standings, f"no v3 results to compare with: {exc}")
    adaptive_items = measure_items(results.scored)
    gaps = adaptivity_gaps(adaptive_items, measure_items(scripted.scored), resampling=resampling)
    return Adaptivity(results.judge, gaps, standings)


def user_model_captions(store: Store, results: SuiteResults, judge: str) -> list[str]:
    """The standing of each user model of a run's adaptive conversations (`results`: the run's
    suite as its leaderboard read it), for `aib run`'s table; none for a suite that scripts
    every human turn."""
    if not any(KINDS[i.kind].adaptive for i in results.items):
        return []
    return [standing.caption(judge) for standing in _standings(store, results)]
