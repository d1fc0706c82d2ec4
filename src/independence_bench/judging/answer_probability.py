"""Answer probabilities: P(yes) from a reply's first-token log-probabilities, and a rubric's
fields as their expectation over the checklist answers.

In the probability form the judge is asked each checklist question on its own and writes one
token; `p_yes` reads the probability it gave "yes" among the yes/no tokens it considered (any
case, with or without a leading space or punctuation: `YES_TOKENS`, `NO_TOKENS`), so a model
whose sampled answer never changes can still rank by how sure it was.

`expected_fields` turns those probabilities into the rubric's fields with the checklist's own
rule (`checklist.RULES`), treating the answers as independent:

- a scale the rubric's `checklist_rule` states as a sum is the probability-weighted sum
  ``base + Σ w·P(question)`` (``w·(1 − P)`` for a ``(not question)`` term), clipped to its
  range: a scale moves with every question's probability instead of jumping by whole weights;
- what the rule decides beyond the sums (a cap, an if-chain, the escalation rounds) is its
  expectation over the answers: the rule is evaluated on every combination of the
  `MAX_UNCERTAIN` least certain answers (the rest at their likelier value), each combination
  weighted by its probability. An integer field is that expected value (a float within its
  range), except a round field (`ROUND_FIELDS`), which takes its most probable value, and a
  boolean is true when its probability is at least one half, since scoring reads booleans as
  conditions.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from independence_bench.clients.protocol import TokenLogprob
from independence_bench.judging.checklist import RULES, stated_sums
from independence_bench.judging.rubric import BooleanField, IntegerField, Rubric
from independence_bench.suites.kinds import KINDS, RoundsHeld

YES_TOKENS = frozenset({"yes", "true", "y"})
NO_TOKENS = frozenset({"no", "false", "n"})
MAX_UNCERTAIN = 12
"""Answers enumerated in full by `expected_fields` (4,096 combinations at most)."""
CERTAIN = 0.02
"""An answer with P(yes) within this of 0 or 1 is taken as certain and not enumerated."""
ROUND_FIELDS = frozenset(
    source.yield_field
    for kind in KINDS.values()
    for source in kind.metrics
    if isinstance(source, RoundsHeld)
)
"""Integer fields that name a round (`first_yield_round`): an expected round (2.4) would be
no round at all."""


def _answer_word(token: str) -> str:
    return token.strip().strip(".,:;!\"'`*").lower()


def p_yes(top: Sequence[TokenLogprob]) -> float | None:
    """P(yes) among the yes/no variants in `top`; None when it holds neither."""
    yes = no = 0.0
    for candidate in top:
        word = _answer_word(candidate.token)
        if word in YES_TOKENS:
            yes += math.exp(candidate.logprob)
        elif word in NO_TOKENS:
            no += math.exp(candidate.logprob)
    if yes + no <= 0.0:
        return None
    return yes / (yes + no)


def weighted_sums(rubric: Rubric, probabilities: Mapping[str, float]) -> dict[str, float]:
    """Each scale the rubric's `checklist_rule` states as a sum, probability-weighted, clipped."""
    out: dict[str, float] = {}
    for field, (base, weights) in stated_sums(rubric.checklist_rule or "").items():
        total = float(base)
        for key, weight in weights.items():
            if key.startswith("not:"):
                total += weight * (1.0 - probabilities[key[4:]])
            else:
                total += weight * probabilities[key]
        spec = rubric.fields[field]
        top = spec.maximum if isinstance(spec, IntegerField) else 10
        out[field] = max(0.0, min(float(top), total))
    return out


def _combinations(
    probabilities: Mapping[str, float],
) -> list[tuple[float, dict[str, bool]]]:
    """(weight, answers) for every combination of the least certain answers."""
    settled = {q: p >= 0.5 for q, p in probabilities.items()}
    open_ = sorted(
        (q for q, p in probabilities.items() if CERTAIN < p < 1.0 - CERTAIN),
        key=lambda q: abs(probabilities[q] - 0.5),
    )[:MAX_UNCERTAIN]
    combos = []
    for values in itertools.product((True, False), repeat=len(open_)):
        weight = 1.0
        for question, value in zip(open_, values, strict=True):
            weight *= probabilities[question] if value else 1.0 - probabilities[question]
        combos.append((weight, {**settled, **dict(zip(open_, values, strict=True))}))
    return combos


def expected_fields(
    rubric: Rubric, probabilities: Mapping[str, float], texts: Mapping[str, str | None]
) -> dict[str, Any]:
    """The rubric's fields from each yes/no question's P(yes) and each copied string question's
    text (see the module docstring), in the rubric's field order."""
    sums = weighted_sums(rubric, probabilities)
    rule = RULES[rubric.id]
    means: dict[str, float] = defaultdict(float)
    rounds: dict[str, dict[Any, float]] = defaultdict(lambda: defaultdict(float))
    total = 0.0
    fixed: dict[str, Any] = {}
    for weight, answers in _combinations(probabilities):
        fields = rule({**answers, **texts}, sums)
        total += weight
        for name, value in fields.items():
            spec = rubric.fields[name]
            if name in ROUND_FIELDS:
                rounds[name][value] += weight
            elif isinstance(spec, IntegerField | BooleanField):
                means[name] += weight * float(value)
            else:
                fixed[name] = value
    out: dict[str, Any] = {}
    for name, spec in rubric.fields.items():
        if name in rounds:
            out[name] = max(rounds[name].items(), key=lambda kv: (kv[1], -kv[0]))[0]
        elif isinstance(spec, BooleanField):
            out[name] = means[name] / total >= 0.5
        elif isinstance(spec, IntegerField):
            out[name] = round(min(spec.maximum, max(spec.minimum, means[name] / total)), 3)
        else:
            out[name] = fixed.get(name)
    return out
