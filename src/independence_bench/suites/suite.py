"""Suites: which scenarios, prompt variants and delivery modes make up one benchmark.

All text lives in YAML and Markdown under `independence_bench/data/` and is loaded with
`importlib.resources`, validated into frozen pydantic models that reject unknown fields, and
resolved into a `Suite` whose `content_hash` covers every word a model or judge will see. A
changed prompt therefore changes the hash, and no stored answer is ever silently reused for it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from functools import cached_property
from importlib import resources
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from independence_bench.errors import UserError
from independence_bench.suites.delivery import DeliveryMode
from independence_bench.suites.kinds import ARMS, KINDS, kind_named
from independence_bench.suites.selection import Selection

_M = TypeVar("_M", bound=BaseModel)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _unset(value: object) -> bool:
    return value is None or value == ()


class Round(_Frozen):
    """One pressure round of an escalation scenario: its tactic and the human's message."""

    tactic: str = Field(pattern=r"^[a-z0-9_]+$")
    text: str = Field(min_length=1)


class Scenario(_Frozen):
    """One scripted conversation: the human's turns in order, the model answering each.

    An escalation scenario is written as an `opening` and its pressure `rounds`; its `turns` are
    those texts in order, filled in here. A control scenario names its `topic_id` (which groups
    its arms; the arm is its kind's) and the `expected` behaviour, which is for reports and
    human audit and never sent to the judge.
    """

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    kind: str
    """A key of `kinds.KINDS`: it decides the experiment and the metrics."""
    title: str
    turns: tuple[str, ...] = Field(min_length=1)
    rubric: str
    tactic: str | None = None
    """For pressure scenarios: the named pressure tactic (e.g. `identity_erasure`)."""
    topic: str | None = None
    """For stability and boundary scenarios: what the preference or opinion is about."""
    # The fields below are left out of dumps (and so of `Suite.content_hash`) while unset, so
    # that suites written before them keep their hash and their stored answers.
    opening: str | None = Field(default=None, exclude_if=_unset)
    """For escalation scenarios: the first human turn, asking for the model's own position."""
    rounds: tuple[Round, ...] = Field(default=(), exclude_if=_unset)
    """For escalation scenarios: the pressure rounds after the opening, mildest first."""
    topic_id: str | None = Field(default=None, pattern=r"^[a-z0-9_]+$", exclude_if=_unset)
    """For control scenarios: the topic whose arms share one opening."""
    expected: str | None = Field(default=None, exclude_if=_unset)
    """For control scenarios: what calibrated behaviour looks like (not sent to the judge)."""
    evidence: Literal["consideration", "record"] | None = Field(default=None, exclude_if=_unset)
    """For strong-argument arms: a `consideration` about this case in the human's own words, or
    a `record` (a document, notice or rule). Not sent to the judge."""

    @model_validator(mode="before")
    @classmethod
    def _turns_of_rounds(cls, data: Any) -> Any:
        if isinstance(data, dict) and "rounds" in data and "turns" not in data:
            rounds = data["rounds"] if isinstance(data["rounds"], list | tuple) else ()
            texts = [
                r.get("text") if isinstance(r, dict) else getattr(r, "text", None) for r in rounds
            ]
            return {**data, "turns": [data.get("opening"), *texts]}
        return data

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, kind: str) -> str:
        kind_named(kind)
        return kind

    @model_validator(mode="after")
    def _fields_of_its_kind(self) -> Scenario:
        kind = KINDS[self.kind]
        if kind.rounds:
            if self.opening is None or len(self.rounds) != kind.rounds:
                raise ValueError(f"{self.kind} scenarios need an opening and {kind.rounds} rounds")
            if self.turns != (self.opening, *(r.text for r in self.rounds)):
                raise ValueError("turns must be the opening followed by the rounds' texts")
        elif self.opening is not None or self.rounds:
            raise ValueError(
                f"only escalation scenarios have an opening and rounds, not {self.kind}"
            )
        if kind.arm is not None and (
            self.topic_id is None or self.expected is None or len(self.turns) != 2
        ):
            raise ValueError(f"{self.kind} scenarios need a topic_id, expected and 2 turns")
        if (self.evidence is None) == (kind.arm == "strong_argument"):
            raise ValueError("strong-argument arms, and only they, say their evidence")
        if kind.arm is None and (self.topic_id is not None or self.expected is not None):
            raise ValueError(
                f"only control scenarios have a topic_id and expected, not {self.kind}"
            )
        return self

    @property
    def experiment(self) -> str:
        return KINDS[self.kind].experiment

    @property
    def arm(self) -> str | None:
        """For control scenarios: which follow-up this is (see `kinds.ARMS`)."""
        return KINDS[self.kind].arm


class PsychQuestion(_Frozen):
    id: str = Field(pattern=r"^[a-z0-9_]+$")
    category: Literal["values", "preferences", "reactions", "self_reflection", "dilemmas"]
    text: str


class ScenarioBank(_Frozen):
    """A data file of scenarios (and, for identity, the psychological questions)."""

    scenarios: tuple[Scenario, ...] = ()
    psych_questions: tuple[PsychQuestion, ...] = ()

    @model_validator(mode="after")
    def _arms_complete(self) -> ScenarioBank:
        """Each control topic has exactly one scenario per arm, all with the same opening."""
        topics: dict[str, list[Scenario]] = {}
        for scenario in self.scenarios:
            if scenario.topic_id is not None:
                topics.setdefault(scenario.topic_id, []).append(scenario)
        for topic_id, arms in topics.items():
            if sorted(str(s.arm) for s in arms) != sorted(ARMS):
                raise ValueError(f"control topic {topic_id!r} needs one scenario per arm {ARMS}")
            if len({s.turns[0] for s in arms}) != 1:
                raise ValueError(f"control topic {topic_id!r}: the arms' openings differ")
        return self


class PromptVariant(_Frozen):
    id: str
    description: str
    system_prompt: str


class DeliveryText(_Frozen):
    """The words the `tool_role` mode adds around the conversation."""

    tool_role_instructions: str
    """Appended to the system prompt in `tool_role` mode: how to reach the human."""
    kickoff: str
    """The short user message that opens a `tool_role` conversation."""
    greeting: str
    """The model's scripted first tool call, before the first human message arrives."""
    tool_description: str
    message_description: str


class PromptsFile(_Frozen):
    variants: tuple[PromptVariant, ...]
    delivery: DeliveryText


class UserModelPrompt(_Frozen):
    """The user model's instructions (`data/prompts/<id>.yaml`): sent to the user model only."""

    id: str
    system: str = Field(min_length=1)
    turn: str = Field(min_length=1)
    """Each round's request; `{round}`, `{rounds}`, `{tactic}`, `{tactic_description}`,
    `{topic}` and `{conversation}` are filled in."""
    tactics: dict[str, str]
    """What each tactic asks for, by the tactic names of `escalation_tactics`."""

    @property
    def hash(self) -> str:
        """sha256 of the prompt's canonical JSON: its version on every output, like a rubric's."""
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class SuiteFile(_Frozen):
    """A suite definition as written in `data/suites/<id>.yaml`."""

    id: str
    version: int = Field(ge=1)
    description: str
    formula: Literal["v1", "lite", "v2", "v3", "adaptive"]
    prompt_variants: tuple[str, ...] = Field(min_length=1)
    optional_variants: tuple[str, ...] = ()
    """Variants run only when asked for by `--variants` (v3: `neutral`, to see whether a model
    is independent without being told to be)."""
    delivery_modes: tuple[DeliveryMode, ...] = Field(min_length=1)
    scenarios: tuple[str, ...] = Field(min_length=1)
    """Scenario ids from the banks, in run order."""
    psych_questions: tuple[str, ...] = ()
    """Question ids asked, in order, in the one `psych` conversation (when `psych` is listed)."""
    escalation_tactics: tuple[str, ...] = ()
    """The tactic of each pressure round, in order; every escalation scenario follows it."""
    user_model_prompt: str | None = None
    """A suite whose pressure a user model writes (`adaptive`): its instructions' file id. Its
    escalation scenarios become `adaptive_escalation` ones, judged with that rubric."""

    @model_validator(mode="after")
    def _psych_needs_questions(self) -> SuiteFile:
        if "psych" in self.scenarios and not self.psych_questions:
            raise ValueError("the suite lists 'psych' but names no psych_questions")
        return self


SUITE_HASH_CHARS = 12
"""How many leading characters of a suite's content hash are printed and name its charts'
folder: one length everywhere, so the hash `aib run` prints finds the folder."""


class Suite(_Frozen):
    """A resolved suite: every scenario and prompt it will send, and a hash of all of it."""

    id: str
    version: int
    description: str
    formula: Literal["v1", "lite", "v2", "v3", "adaptive"]
    escalation_tactics: tuple[str, ...] = Field(default=(), exclude_if=_unset)
    variants: tuple[PromptVariant, ...]
    optional_variants: tuple[PromptVariant, ...] = Field(default=(), exclude_if=_unset)
    """Variants a `--variants` selection may add; never run otherwise."""
    delivery_modes: tuple[DeliveryMode, ...]
    delivery: DeliveryText
    scenarios: tuple[Scenario, ...]
    user_model_prompt: UserModelPrompt | None = Field(default=None, exclude_if=_unset)
    """The user model's instructions, for a suite whose pressure a user model writes."""

    @property
    def adaptive(self) -> bool:
        """True when a user model writes some of this suite's human turns (needs `--user-model`)."""
        return any(KINDS[s.kind].adaptive for s in self.scenarios)

    @cached_property
    def content_hash(self) -> str:
        """sha256 over the canonical JSON of everything the suite sends."""
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    @property
    def short_hash(self) -> str:
        """The content hash as every output prints it (`SUITE_HASH_CHARS` characters)."""
        return self.content_hash[:SUITE_HASH_CHARS]

    def variant(self, variant_id: str) -> PromptVariant:
        for variant in self.variants:
            if variant.id == variant_id:
                return variant
        raise KeyError(variant_id)

    def scenario(self, scenario_id: str) -> Scenario:
        for scenario in self.scenarios:
            if scenario.id == scenario_id:
                return scenario
        raise KeyError(scenario_id)

    def subset(self, scenario_ids: Sequence[str]) -> Suite:
        """The same suite restricted to some scenarios; it has its own content hash."""
        unknown = [s for s in scenario_ids if s not in {x.id for x in self.scenarios}]
        if unknown:
            known = ", ".join(x.id for x in self.scenarios)
            raise UserError(f"suite {self.id} has no scenario {unknown[0]!r}; it has: {known}")
        fields = self.model_dump(exclude={"scenarios"})
        chosen = tuple(x for x in self.scenarios if x.id in set(scenario_ids))
        return Suite(**fields, scenarios=chosen)

    def narrowed(self, scenario_ids: Sequence[str], selection: Selection) -> Suite:
        """The suite as `aib run --scenarios … --experiments … --variants … --modes …` and an
        Inspect task's parameters narrow it: to `scenario_ids` when any, then to `selection`."""
        suite = self.subset(scenario_ids) if scenario_ids else self
        return suite.select(selection)

    def select(self, selection: Selection) -> Suite:
        """The suite narrowed to `selection`; like `subset` it has its own content hash."""
        if not selection.active:
            return self
        offered = (*self.variants, *self.optional_variants)
        selection.check_against(
            self.experiments,
            (v.id for v in offered),
            self.delivery_modes,
            f"suite {self.id}",
        )
        exclude = {"scenarios", "variants", "optional_variants", "delivery_modes"}
        fields = self.model_dump(exclude=exclude)
        return Suite(
            **fields,
            scenarios=tuple(
                s
                for s in self.scenarios
                if not selection.experiments or s.experiment in selection.experiments
            ),
            variants=tuple(v for v in offered if v.id in selection.variants)
            if selection.variants
            else self.variants,
            delivery_modes=tuple(
                m for m in self.delivery_modes if not selection.modes or m in selection.modes
            ),
        )

    @property
    def experiments(self) -> tuple[str, ...]:
        seen: list[str] = []
        for scenario in self.scenarios:
            if scenario.experiment not in seen:
                seen.append(scenario.experiment)
        return tuple(seen)


def _adaptive(scenario: Scenario) -> Scenario:
    """An escalation scenario as suite `adaptive` runs it: same topic, opening and tactics,
    its rounds written by the user model and judged by the `adaptive_escalation` rubric."""
    fields = scenario.model_dump(exclude={"turns"})
    kind = KINDS["adaptive_escalation"]
    return Scenario.model_validate({**fields, "kind": kind.name, "rubric": kind.rubric})


def _data_text(*parts: str) -> str:
    resource = resources.files("independence_bench").joinpath("data", *parts)
    return resource.read_text(encoding="utf-8")


_SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML has it: a suite's seven files parse in a tenth of the time
(pure-Python parsing was most of a cached `aib run`'s CPU); the same documents either way."""


def _load_yaml(*parts: str) -> Any:
    name = "/".join(parts)
    try:
        return yaml.load(_data_text(*parts), Loader=_SAFE_LOADER)
    except FileNotFoundError:
        raise
    except yaml.YAMLError as exc:
        raise UserError(f"package data file {name} is not valid YAML: {exc}") from exc


def _validated(model: type[_M], data: Any, name: str) -> _M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise UserError(f"{name}: {where}: {first['msg']}") from exc


BANK_FILES = (
    "identity.yaml",
    "resistance.yaml",
    "boundary.yaml",
    "stability.yaml",
    "escalation.yaml",
    "control.yaml",
)


def available_suites() -> tuple[str, ...]:
    """Ids of the suites shipped in the package, sorted."""
    folder = resources.files("independence_bench").joinpath("data", "suites")
    return tuple(
        sorted(p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml"))
    )


def load_scenario_bank(name: str) -> ScenarioBank:
    """One shipped scenario bank, `data/scenarios/<name>.yaml`, validated."""
    return _validated(ScenarioBank, _load_yaml("scenarios", f"{name}.yaml"), f"{name}.yaml")


def suite_formula(suite_id: str) -> str:
    """A shipped suite's index formula, from its suite file alone (no scenario banks)."""
    known = available_suites()
    if suite_id not in known:
        raise UserError(f"unknown suite {suite_id!r}; choose one of: {', '.join(known)}")
    name = f"{suite_id}.yaml"
    return _validated(SuiteFile, _load_yaml("suites", name), name).formula


def load_suite(suite_id: str) -> Suite:
    """Load, validate and resolve a shipped suite; raise `UserError` for an unknown id."""
    known = available_suites()
    if suite_id not in known:
        raise UserError(f"unknown suite {suite_id!r}; choose one of: {', '.join(known)}")
    suite_file = _validated(SuiteFile, _load_yaml("suites", f"{suite_id}.yaml"), f"{suite_id}.yaml")
    prompts = _validated(PromptsFile, _load_yaml("prompts", "variants.yaml"), "variants.yaml")
    scenarios: dict[str, Scenario] = {}
    questions: dict[str, PsychQuestion] = {}
    for bank_name in BANK_FILES:
        bank = load_scenario_bank(bank_name.removesuffix(".yaml"))
        scenarios.update((s.id, s) for s in bank.scenarios)
        questions.update((q.id, q) for q in bank.psych_questions)
    variants = {v.id: v for v in prompts.variants}

    resolved: list[Scenario] = []
    for scenario_id in suite_file.scenarios:
        if scenario_id == "psych":
            missing = [q for q in suite_file.psych_questions if q not in questions]
            if missing:
                raise UserError(f"{suite_id}.yaml names unknown psych questions: {missing}")
            resolved.append(
                Scenario(
                    id="psych",
                    kind="psych",
                    title="Psychological questions, asked in one conversation",
                    turns=tuple(questions[q].text for q in suite_file.psych_questions),
                    rubric=KINDS["psych"].rubric,
                )
            )
        elif scenario_id in scenarios:
            scenario = scenarios[scenario_id]
            if suite_file.user_model_prompt is not None and scenario.kind == "escalation":
                scenario = _adaptive(scenario)
            tactics = tuple(r.tactic for r in scenario.rounds)
            if tactics and tactics != suite_file.escalation_tactics:
                raise UserError(
                    f"{suite_id}.yaml: scenario {scenario_id!r} has rounds {list(tactics)}; "
                    f"the suite's escalation_tactics are {list(suite_file.escalation_tactics)}"
                )
            resolved.append(scenario)
        else:
            raise UserError(f"{suite_id}.yaml names unknown scenario {scenario_id!r}")
    unknown_variants = [
        v for v in (*suite_file.prompt_variants, *suite_file.optional_variants) if v not in variants
    ]
    if unknown_variants:
        raise UserError(f"{suite_id}.yaml names unknown prompt variants: {unknown_variants}")
    user_model = None
    if suite_file.user_model_prompt is not None:
        name = f"{suite_file.user_model_prompt}.yaml"
        data = {"id": suite_file.user_model_prompt, **_load_yaml("prompts", name)}
        user_model = _validated(UserModelPrompt, data, name)
        missing = [t for t in suite_file.escalation_tactics if t not in user_model.tactics]
        if missing:
            raise UserError(f"{name} describes no tactic {missing[0]!r}")
    return Suite(
        user_model_prompt=user_model,
        id=suite_file.id,
        version=suite_file.version,
        description=suite_file.description,
        formula=suite_file.formula,
        escalation_tactics=suite_file.escalation_tactics,
        variants=tuple(variants[v] for v in suite_file.prompt_variants),
        optional_variants=tuple(variants[v] for v in suite_file.optional_variants),
        delivery_modes=suite_file.delivery_modes,
        delivery=prompts.delivery,
        scenarios=tuple(resolved),
    )
