"""Judge forms: the ways a judge can be asked about one transcript, named in one place.

A *judge form* says how a rubric is put to a judge (`judging/rubric.py` holds each form's
prompts). This module holds only the names and one line of help per form, with no imports, so
the command line can list them in `--help` without loading pydantic.
"""

from __future__ import annotations

from typing import Literal

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


def judge_label_suffix(form: JudgeForm) -> str:
    """What a judge's name gains in `form`: nothing for holistic, `#<form>` otherwise, so the
    judgments of different forms of one judge never mix."""
    return "" if form == "holistic" else f"#{form}"
