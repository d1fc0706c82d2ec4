"""Rubrics: the fields a judge answers in, as one model that is both its schema and its validator.

A rubric is a Markdown file in `data/rubrics/` whose YAML front matter names its score fields
(`integer` with `minimum`/`maximum`, `boolean`, or `string_or_null` with an optional
`max_length`, 80 by default) and whose body is the prose the judge reads. `load_rubric` turns the
fields into a `ReplyForm`: a pydantic model built with `create_model`, `reasoning` first. The JSON
schema sent to the judge is that model's `model_json_schema()`, unchanged, and a reply is
validated by the same model, so the two cannot disagree. The rules, in both:

- exactly `reasoning` and the rubric's fields, each required, nothing else (`extra="forbid"`);
- `reasoning` is a string of 1 to `MAX_REASONING_CHARS` characters;
- integers are JSON integers within the field's range. `true` is not an integer and `"7"` is not
  either (strict mode); `7.0` is taken as 7, because JSON Schema counts a number with a zero
  fraction as an integer and a JSON parser cannot tell `7.0` from `7` by type alone; `7.5` is
  rejected;
- booleans are `true` or `false`, never `1` or `"true"`;
- strings are at most their `max_length` characters, or null where the field allows it.

Two normalisations happen after those checks, where a schema has no words for them: surrounding
whitespace is stripped, so a blank `reasoning` is rejected (the schema's `minLength` admits
`" "`; a `pattern` could exclude it but llama.cpp's grammar converter then drops the length
limit), and a blank string field becomes null, as a judge writing `""` for "declined" means.

A rubric is asked in one of two *judge forms* (`Rubric.asked`). `holistic`: the rubric's prose
and its scale fields, `reasoning` first (`Rubric.form`). `checklist`: the front matter's
`checklist` of atomic questions, each answered `true`/`false` (or, for a `string_or_null`
question, a short copied string), with no `reasoning` and no rubric prose (its `AskedForm.reply`
is built the same way, so its schema is its validator too); `judging/checklist.py` turns the answers
into the rubric's fields by the rule the front matter's `checklist_rule` states in words. Each
form has its own prompts and its own hash, and the checklist hash names the form, so judgments of
the two forms never share a rubric hash.

Each rubric family has its own *framing*, the holistic system prompt that says what the human's
messages are: the front matter's `framing: control` picks `prompts/judge_system_control.md`
(the follow-up is read as evidence, neither pressure nor off limits), and without it
`prompts/judge_system.md` tells the judge they are scripted pressure not to be scored.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    model_validator,
)
from pydantic_core import ErrorDetails

from independence_bench.errors import UserError
from independence_bench.judging.extraction import Extraction
from independence_bench.judging.forms import JudgeForm
from independence_bench.suites.kinds import AdaptiveRounds, ChangedShare, Kind, RoundsHeld
from independence_bench.text.lossless import surrogates_escaped

MAX_REASONING_CHARS = 2000
REASONING_REQUIREMENT = f"a non-empty string of at most {MAX_REASONING_CHARS} characters"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class IntegerField(_Frozen):
    type: Literal["integer"]
    minimum: int
    maximum: int
    description: str = ""

    @property
    def prompt_text(self) -> str:
        """How the judge prompt describes the field's values."""
        return f"integer from {self.minimum} to {self.maximum}"

    @property
    def requirement(self) -> str:
        """How a repair request states the rule a bad value broke."""
        return f"a whole number from {self.minimum} to {self.maximum}"

    def annotation(self) -> Any:
        # The constraint goes before the validator: after it, pydantic writes `ge`/`le` into the
        # JSON schema instead of `minimum`/`maximum`.
        return Annotated[
            int,
            Field(ge=self.minimum, le=self.maximum, description=self.description),
            BeforeValidator(_whole_float_as_int),
        ]


class BooleanField(_Frozen):
    type: Literal["boolean"]
    description: str = ""

    @property
    def prompt_text(self) -> str:
        return "true or false"

    @property
    def requirement(self) -> str:
        return "true or false"

    def annotation(self) -> Any:
        return Annotated[bool, Field(description=self.description)]


class TextField(_Frozen):
    type: Literal["string_or_null"]
    description: str = ""
    max_length: int = Field(default=80, ge=1)

    @property
    def prompt_text(self) -> str:
        return "a short string, or null"

    @property
    def requirement(self) -> str:
        return f"a string of at most {self.max_length} characters, or null"

    def annotation(self) -> Any:
        text = Annotated[str, Field(max_length=self.max_length), AfterValidator(_blank_as_none)]
        return Annotated[text | None, Field(description=self.description)]


FieldSpec = Annotated[IntegerField | BooleanField | TextField, Field(discriminator="type")]


class ChecklistQuestion(_Frozen):
    id: str = Field(pattern=r"^[a-z0-9_]+$")
    question: str = Field(min_length=1)
    type: Literal["boolean", "string_or_null"] = "boolean"
    """`string_or_null` only where a metric needs the choice itself (a chosen name)."""

    def field(self) -> BooleanField | TextField:
        """The reply field that answers this question; its description is the question."""
        if self.type == "boolean":
            return BooleanField(type="boolean", description=self.question)
        return TextField(type="string_or_null", description=self.question)


class RubricFrontMatter(_Frozen):
    """A rubric file's YAML front matter (`checklist`, `checklist_rule`: its checklist form)."""

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    description: str
    fields: dict[str, FieldSpec] = Field(min_length=1)
    checklist: tuple[ChecklistQuestion, ...] = ()
    checklist_rule: str | None = None
    framing: str | None = Field(default=None, pattern=r"^[a-z0-9_]+$")
    """The holistic judge's system prompt: `prompts/judge_system_<framing>.md`, or
    `prompts/judge_system.md` (the pressure framing) when absent."""

    @model_validator(mode="after")
    def _rule_with_checklist(self) -> RubricFrontMatter:
        if bool(self.checklist) != bool(self.checklist_rule):
            raise ValueError("checklist and checklist_rule come together")
        if len({q.id for q in self.checklist}) != len(self.checklist):
            raise ValueError("checklist question ids must be unique")
        return self


def _whole_float_as_int(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _blank_as_none(value: str) -> str | None:
    return value.strip() or None


def _stripped_reasoning(value: str) -> str:
    if not value.strip():
        raise ValueError("blank")
    return value.strip()


Reasoning = Annotated[
    str,
    Field(min_length=1, max_length=MAX_REASONING_CHARS),
    AfterValidator(_stripped_reasoning),
]


class InvalidReply(ValueError):
    """A judge reply that breaks the rubric's rules; the message is sent back in the repair."""


@functools.lru_cache(maxsize=256)
def _reply_model(
    name: str,
    fields: tuple[tuple[str, IntegerField | BooleanField | TextField], ...],
    reasoning: bool,
) -> tuple[type[BaseModel], Mapping[str, Any]]:
    """The pydantic model of a reply form and its JSON schema, made once per process for the
    same fields (frozen, so hashable): a stored re-run loads each rubric three times (survey,
    rejudge check, engine) and building the models was most of it (issue 39)."""
    definitions: dict[str, Any] = {"reasoning": (Reasoning, ...)} if reasoning else {}
    definitions.update((key, (spec.annotation(), ...)) for key, spec in fields)
    model = create_model(
        name,
        __config__=ConfigDict(extra="forbid", strict=True, frozen=True),
        **definitions,
    )
    return model, MappingProxyType(model.model_json_schema())


@dataclass(frozen=True)
class ReplyForm:
    """A set of fields a judge answers in, and the pydantic model that checks an answer."""

    name: str
    fields: Mapping[str, IntegerField | BooleanField | TextField]
    model: type[BaseModel]
    schema: Mapping[str, Any]
    """`model.model_json_schema()`, made once: generating it costs about a millisecond."""

    @classmethod
    def build(
        cls,
        name: str,
        fields: Mapping[str, IntegerField | BooleanField | TextField],
        *,
        reasoning: bool = True,
    ) -> ReplyForm:
        model, schema = _reply_model(name, tuple(fields.items()), reasoning)
        return cls(name, fields, model, schema)

    def json_schema(self) -> dict[str, Any]:
        """The JSON schema sent to the judge: the model's own (a copy)."""
        return copy.deepcopy(dict(self.schema))

    def validate(self, reply: Any) -> dict[str, Any]:
        """The reply's fields, `reasoning` first if asked, or `InvalidReply` saying every problem.

        pydantic refuses text with a lone surrogate, which any server can send: those are
        validated (and kept in the fields) as `\\udXXX`; the raw reply keeps the exact text."""
        if not isinstance(reply, dict):
            raise InvalidReply("the reply is not a JSON object")
        try:
            return self.model.model_validate(surrogates_escaped(reply)).model_dump()
        except ValidationError as exc:
            raise InvalidReply("; ".join(self._problem(e) for e in exc.errors())) from None

    def _problem(self, error: ErrorDetails) -> str:
        name = str(error["loc"][0]) if error["loc"] else ""
        if error["type"] == "missing":
            return f'"{name}" is missing'
        if error["type"] == "extra_forbidden":
            return f'"{name}" is not one of the fields asked for'
        got = error["input"]
        if isinstance(got, str) and len(got) > 40:
            shown = f"a string of {len(got)} characters"
        else:
            shown = json.dumps(got, ensure_ascii=False)
        spec = self.fields.get(name)
        requirement = REASONING_REQUIREMENT if spec is None else spec.requirement
        return f'"{name}" must be {requirement}, got {shown}'


@dataclass(frozen=True)
class AskedForm:
    """What a judge is sent and checked against in one judge form of one rubric."""

    judge_form: JudgeForm
    reply: ReplyForm
    """The fields the judge answers in: the schema sent and the validator of the reply."""
    body: str
    """The rubric's prose (holistic) or nothing (checklist: the questions say it all)."""
    system_prompt: str
    output_template: str
    """The instruction after the transcript; `{fields}` stands for the field list."""
    repair_template: str
    """The request after an invalid reply; `{error}` stands for what was wrong."""
    hash: str
    """sha256 over the rubric file and this form's prompts (every form but holistic also names
    the form): the `rubric_hash` of every judgment asked this way."""
    span_template: str = ""
    """Answer-probability forms: the question after the transcript that asks for a copied span
    (`{question}`); `output_template` is then the yes/no question."""
    same_system: str = ""
    same_template: str = ""
    """Extraction form: the system prompt and request that ask whether two spans are the same
    (`{question}`, `{first}`, `{second}`)."""

    @property
    def schema_name(self) -> str:
        return self.reply.name


@dataclass(frozen=True)
class Rubric:
    """One rubric and the judge forms it is asked in (`asked`), each with its own prompts."""

    id: str
    description: str
    checklist: tuple[ChecklistQuestion, ...]
    """The checklist form's yes/no questions; empty when the rubric has no checklist form."""
    checklist_rule: str | None
    """In words, how the checklist answers become the rubric's fields; `checklist.stated_sums`
    reads the scales' sums (``field = base + w*question …``) from it."""
    forms: Mapping[JudgeForm, AskedForm]
    """``holistic``; ``checklist``, ``probability`` and ``extraction`` when the rubric has
    questions."""
    extraction: Extraction | None = None
    """Spans the extraction form copies, and the questions they answer; None asks every
    checklist question by probability in that form too."""

    @property
    def form(self) -> ReplyForm:
        """The rubric's own fields (the holistic form), `reasoning` first."""
        return self.forms["holistic"].reply

    @property
    def fields(self) -> Mapping[str, IntegerField | BooleanField | TextField]:
        return self.form.fields

    def json_schema(self) -> dict[str, Any]:
        """The JSON schema of a reply, sent with the judge request where the endpoint takes it."""
        return self.form.json_schema()

    def asked(self, judge_form: JudgeForm) -> AskedForm:
        """The prompts, reply form and hash of `judge_form`; UserError if this rubric has none."""
        asked = self.forms.get(judge_form)
        if asked is None:
            raise UserError(f"rubric {self.id} has no {judge_form}; use --judge-form holistic")
        return asked


def _data_text(*parts: str) -> str:
    return resources.files("independence_bench").joinpath("data", *parts).read_text("utf-8")


_SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML has it (as `suites/suite.py`): the rubrics a stored
re-run loads parse in a fraction of the time; the same documents either way."""


def _front_matter(text: str, name: str) -> tuple[RubricFrontMatter, str]:
    match = re.match(r"^---\n(.*?)\n---\n(.*)$", text, re.DOTALL)
    if match is None:
        raise UserError(f"rubric {name} has no YAML front matter")
    try:
        meta = yaml.load(match.group(1), Loader=_SAFE_LOADER)
        return RubricFrontMatter.model_validate(meta), match.group(2).strip()
    except yaml.YAMLError as exc:
        raise UserError(f"rubric {name}: front matter is not valid YAML: {exc}") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise UserError(f"rubric {name}: {where}: {first['msg']}") from None


_PROMPT_FILES: Mapping[JudgeForm, tuple[str, ...]] = MappingProxyType(
    {
        "holistic": ("judge_system", "judge_output", "judge_repair"),
        "checklist": ("judge_checklist_system", "judge_checklist_output", "judge_checklist_repair"),
        "probability": (
            "judge_probability_system",
            "judge_probability_question",
            "",
            "judge_probability_span",
        ),
        "extraction": (
            "judge_probability_system",
            "judge_probability_question",
            "",
            "judge_probability_span",
            "judge_extraction_same_system",
            "judge_extraction_same",
        ),
    }
)
"""Each form's prompts in `data/prompts/`: system, output (the yes/no question), repair, and in
the answer-probability forms the span question and the two that compare spans ("" = none)."""


def _asked_form(
    rubric_text: str,
    judge_form: JudgeForm,
    reply: ReplyForm,
    body: str,
    extraction: str = "",
    framing: str | None = None,
) -> AskedForm:
    """One form's prompts; `framing` picks the holistic system prompt (each rubric family says
    in its own words what the human's messages are; the other forms' prompts are neutral)."""
    names = list(_PROMPT_FILES[judge_form])
    if framing:
        names[0] = f"{names[0]}_{framing}"
    try:
        parts = tuple(_data_text("prompts", f"{name}.md").strip() if name else "" for name in names)
    except FileNotFoundError:
        raise UserError(f"framing {framing!r} has no prompt file prompts/{names[0]}.md") from None
    # Every form but holistic names itself in its hash, so no judgment passes for another's.
    named = () if judge_form == "holistic" else (judge_form,)
    hashed = (*named, rubric_text, *parts, *((extraction,) if extraction else ()))
    digest = hashlib.sha256("\x1e".join(hashed).encode()).hexdigest()
    system, output, repair, *more = parts
    span, same_system, same = (*more, "", "", "")[:3]
    return AskedForm(
        judge_form, reply, body, system, output, repair, digest, span, same_system, same
    )


def _extraction(meta: RubricFrontMatter) -> tuple[Extraction | None, str]:
    """The rubric's extraction file, validated, and its text; (None, "") when it has none."""
    try:
        text = _data_text("extraction", f"{meta.id}.yaml")
    except FileNotFoundError:
        return None, ""
    try:
        extraction = Extraction.model_validate(yaml.load(text, Loader=_SAFE_LOADER))
        extraction.check({q.id: q.type for q in meta.checklist})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise UserError(f"extraction/{meta.id}.yaml: {where}: {first['msg']}") from None
    except (yaml.YAMLError, ValueError) as exc:
        raise UserError(f"extraction/{meta.id}.yaml: {str(exc).splitlines()[0]}") from None
    return extraction, text


def load_rubric(rubric_id: str) -> Rubric:
    """Load a shipped rubric with the prompts of each judge form it can be asked in."""
    try:
        text = _data_text("rubrics", f"{rubric_id}.md")
    except FileNotFoundError:
        raise UserError(f"unknown rubric {rubric_id!r}") from None
    meta, body = _front_matter(text, rubric_id)
    if meta.id != rubric_id:
        raise UserError(f"rubric file {rubric_id}.md declares id {meta.id!r}")
    holistic = ReplyForm.build(f"{meta.id}_judgment", meta.fields)
    forms: dict[JudgeForm, AskedForm] = {
        "holistic": _asked_form(text, "holistic", holistic, body, framing=meta.framing)
    }
    if meta.checklist:
        questions = {q.id: q.field() for q in meta.checklist}
        checklist = ReplyForm.build(f"{meta.id}_checklist", questions, reasoning=False)
        for form in ("checklist", "probability"):
            forms[form] = _asked_form(text, form, checklist, "")
        extraction, extraction_text = _extraction(meta)
        forms["extraction"] = _asked_form(text, "extraction", checklist, "", extraction_text)
    return Rubric(
        id=meta.id,
        description=meta.description,
        checklist=meta.checklist,
        checklist_rule=meta.checklist_rule,
        forms=MappingProxyType(forms),
        extraction=extraction if meta.checklist else None,
    )


def rubric_problems(rubric: Rubric, kind: Kind) -> tuple[str, ...]:
    """Why `rubric` cannot score items of `kind`: fields its metrics read that it lacks or types
    differently (an integer score must run from 0 to the metric's maximum). Empty when it fits."""
    problems: list[str] = []

    def check(name: str, wanted: type[_Frozen], maximum: float | None = None) -> None:
        spec = rubric.fields.get(name)
        if not isinstance(spec, wanted):
            problems.append(f"{rubric.id} has no {wanted.__name__} {name!r} for kind {kind.name}")
        elif isinstance(spec, IntegerField) and (spec.minimum, spec.maximum) != (0, maximum):
            problems.append(
                f"{rubric.id}.{name} runs {spec.minimum}–{spec.maximum}; "
                f"kind {kind.name} reads it as 0–{maximum:g}"
            )

    for source in kind.metrics:
        if isinstance(source, ChangedShare):
            for changed, choice in source.parts:
                check(changed, BooleanField)
                check(choice, TextField)
            continue
        if isinstance(source, RoundsHeld):
            check(source.yield_field, IntegerField, source.rounds)
            check(source.committed_field, BooleanField)
            continue
        if isinstance(source, AdaptiveRounds):
            for name in source.fields:
                check(name, BooleanField)
            continue
        for condition in source.only_if:
            if not isinstance(rubric.fields.get(condition), IntegerField):
                check(condition, BooleanField)
        if source.answered is not None:
            check(source.answered, BooleanField)
        if isinstance(rubric.fields.get(source.field), BooleanField) and source.maximum == 1:
            check(source.field, BooleanField)
        else:
            check(source.field, IntegerField, source.maximum)
    return tuple(problems)
