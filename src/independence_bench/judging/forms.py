"""Judge forms: the ways a judge can be asked about one transcript, and which one a judge uses.

A *judge form* says how a rubric is put to a judge (`judging/rubric.py` holds each form's
prompts). This module holds the names and one line of help per form, light enough for the
command line to list them in `--help` without loading pydantic, and the two rules that read a
judge's configuration: the form it is asked in (`judge_form_of`: its `judge_form`, else the
default for where it runs) and the name its judgments are stored under (`judge_label_of`). A
`ModelSpec` carries the form's name as configured; it is checked here, where forms are known.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from independence_bench.errors import UserError

if TYPE_CHECKING:
    from independence_bench.clients.config import ModelSpec

JudgeForm = Literal["holistic", "checklist", "probability", "extraction"]
"""How a judge is asked; see `FORM_HELP`."""
JUDGE_FORMS: tuple[JudgeForm, ...] = ("holistic", "checklist", "probability", "extraction")
FORM_HELP: dict[JudgeForm, str] = {
    "holistic": "the rubric's scores in one reply",
    "checklist": "yes/no answers scored by a fixed rule",
    "probability": "each checklist question's P(yes) read from the answer's log-probabilities, "
    "scores as probability-weighted sums",
    "extraction": "the model copies short spans (a favourite, a name, a position per reply) and "
    "code compares them; P(yes) for the other questions",
}
"""One line per form: the `--judge-form` help."""
LOCAL_JUDGE_FORM: JudgeForm = "holistic"
"""The form of an in-process judge (embedded/GGUF) that names none: the better-calibrated form
of the embedded judge by `benchmarks/judge_calibration.py` (docs/judge-calibration.md)."""
ANSWER_PROBABILITY_FORMS: frozenset[JudgeForm] = frozenset({"probability", "extraction"})
"""Forms that ask one short question per call and read answer probabilities
(`judging/question_judgment.py`), rather than one structured reply."""


def judge_form_named(name: str, *, where: str = "") -> JudgeForm:
    """`name` as a judge form; UserError naming the forms otherwise (the Python API's check of
    what `--judge-form` checks with a choice), after `where` it was written when given."""
    for form in JUDGE_FORMS:
        if name == form:
            return form
    raise UserError(f"{where}unknown judge form {name!r}; use one of: {', '.join(JUDGE_FORMS)}")


def judge_form_of(judge: ModelSpec) -> JudgeForm:
    """The form `judge` is asked in: its `judge_form`, else `LOCAL_JUDGE_FORM` for an
    in-process model and holistic for any other; UserError for a name that is no form."""
    if judge.judge_form is not None:
        return judge_form_named(
            judge.judge_form, where=f"judge {judge.display_label}: judge_form: "
        )
    # Imported here: the names above are read by `--help`, which loads nothing it need not.
    from independence_bench.clients.local.weights import is_local_model

    return LOCAL_JUDGE_FORM if is_local_model(judge.id) else "holistic"


def judge_label_suffix(form: JudgeForm) -> str:
    """What a judge's name gains in `form`: nothing for holistic, `#<form>` otherwise, so the
    judgments of different forms of one judge never mix."""
    return "" if form == "holistic" else f"#{form}"


def judge_label_of(judge: ModelSpec) -> str:
    """The judge name `judge`'s judgments are stored under: its `display_label`, plus
    `#<form>` in any form but holistic (`judge_label_suffix`)."""
    return judge.display_label + judge_label_suffix(judge_form_of(judge))
