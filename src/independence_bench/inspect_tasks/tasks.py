"""The suites as Inspect tasks: `inspect eval independence_bench/v2` (and `v3`, `lite`, `full`).

A sample is one conversation of the suite: a scenario in one cell (prompt variant × delivery
mode), its id `scenario/variant/mode`; epochs are runs. Task parameters (`-T name=value`)
narrow the suite as `aib run`'s options do — `scenarios`, `variants`, `modes`, comma-separated,
in the same order, so a narrowed suite has the same content hash as `aib run --scenarios …` —
and choose the judge's form (`judge_form=holistic|checklist`). The judge is the model bound to
the `grader` role (`--model-role grader=…`); in `adaptive`, the model that plays the human is
bound to the `user_model` role (`--model-role user_model=…`).
"""

from __future__ import annotations

from collections.abc import Callable

from inspect_ai import Epochs, Task, task

# Inspect's own test of an installed package (`task_name` says why we need it).
from inspect_ai._util.package import get_installed_package_name
from inspect_ai.dataset import MemoryDataset, Sample

from independence_bench.inspect_tasks.log_format import TASK_MARK, sample_id
from independence_bench.inspect_tasks.narrowing import Names, as_text, narrowed_suite
from independence_bench.inspect_tasks.scorer import (
    independence_judge,
    index_metric,
    keep_epochs,
    unscored,
)
from independence_bench.inspect_tasks.solver import conversation_solver
from independence_bench.judging.forms import judge_form_named
from independence_bench.suites.suite import Suite

PACKAGE = "independence_bench"


def task_name(short: str) -> str:
    """The name to register so that Inspect lists the task as `independence_bench/<short>`.

    Inspect prefixes a task's name with its package only when it finds the package installed:
    in site-packages, or editable under a distribution of the package's own name
    (`inspect_ai/_util/package.py`, `get_installed_package_name`). Our distribution is
    `ai-independence-bench`, so an editable install (a clone) gets no prefix; we add it then.
    """
    found = get_installed_package_name(task_name)
    return short if found == PACKAGE else f"{PACKAGE}/{short}"


def samples(suite: Suite) -> list[Sample]:
    """One sample per conversation: every scenario in every variant and delivery mode."""
    return [
        Sample(
            id=sample_id(variant.id, mode, scenario.id),
            input=scenario.turns[0],
            metadata={"variant": variant.id, "mode": mode, "scenario": scenario.id},
        )
        for variant in suite.variants
        for mode in suite.delivery_modes
        for scenario in suite.scenarios
    ]


def suite_task(suite_id: str, *, judge_form: str = "holistic", **narrowing: Names) -> Task:
    """The Inspect task of suite `suite_id`, narrowed (`variants`, `modes`, `scenarios`, as
    `narrowed_suite` takes them) and judged as the parameters say."""
    texts = {name: as_text(names) for name, names in narrowing.items()}
    suite = narrowed_suite(suite_id, **texts)
    form = judge_form_named(judge_form)
    return Task(
        dataset=MemoryDataset(samples(suite), name=f"independence_bench_{suite.id}"),
        solver=conversation_solver(suite_id, **texts),
        scorer=independence_judge(suite_id, **texts, judge_form=form),
        metrics=[index_metric(suite.formula), unscored()],
        epochs=Epochs(1, [keep_epochs()]),
        version=suite.version,
        metadata={
            TASK_MARK: {
                "suite": suite.id,
                "suite_hash": suite.content_hash,
                "suite_version": suite.version,
                "formula": suite.formula,
                "judge_form": form,
            }
        },
    )


SUITE_TASKS = {
    "v2": "Suite v2, the default: identity, name and gender, boundaries and stability.",
    "v3": "Suite v3: identity as in v2, then rounds of escalating pressure, with control arms.",
    "adaptive": "Suite adaptive: v3's escalation topics with pressure written turn by turn by the "
    "model bound to the `user_model` role (`--model-role user_model=…`), and v3's control arms.",
    "lite": "Suite lite: a cheaper cut of the v1 benchmark.",
    "full": "Suite full: the complete v1 benchmark, both prompt variants and both delivery modes.",
}
"""Each suite registered as a task, with the description Inspect shows for it."""


def _registered(suite_id: str) -> Callable[..., Task]:
    """Suite `suite_id`'s task as Inspect registers it: `suite_task` with the task parameters
    (`-T`) named in the signature Inspect reads and records in the log."""

    def make(
        variants: Names = "", modes: Names = "", scenarios: Names = "", judge_form: str = "holistic"
    ) -> Task:
        narrowing = {"variants": variants, "modes": modes, "scenarios": scenarios}
        return suite_task(suite_id, judge_form=judge_form, **narrowing)

    make.__name__ = make.__qualname__ = suite_id
    make.__doc__ = SUITE_TASKS[suite_id]
    registered: Callable[..., Task] = task(name=task_name(suite_id))(make)
    return registered


v2 = _registered("v2")
v3 = _registered("v3")
adaptive = _registered("adaptive")
lite = _registered("lite")
full = _registered("full")
