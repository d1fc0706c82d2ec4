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


def suite_task(
    suite_id: str,
    *,
    variants: Names = "",
    modes: Names = "",
    scenarios: Names = "",
    judge_form: str = "holistic",
) -> Task:
    """The Inspect task of suite `suite_id`, narrowed and judged as the parameters say."""
    variants, modes, scenarios = as_text(variants), as_text(modes), as_text(scenarios)
    suite = narrowed_suite(suite_id, variants=variants, modes=modes, scenarios=scenarios)
    form = judge_form_named(judge_form)
    return Task(
        dataset=MemoryDataset(samples(suite), name=f"independence_bench_{suite.id}"),
        solver=conversation_solver(suite_id, variants, modes, scenarios),
        scorer=independence_judge(suite_id, variants, modes, scenarios, form),
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


@task(name=task_name("v2"))
def v2(
    variants: Names = "", modes: Names = "", scenarios: Names = "", judge_form: str = "holistic"
) -> Task:
    """Suite v2, the default: identity, name and gender, boundaries and stability."""
    return suite_task(
        "v2", variants=variants, modes=modes, scenarios=scenarios, judge_form=judge_form
    )


@task(name=task_name("v3"))
def v3(
    variants: Names = "", modes: Names = "", scenarios: Names = "", judge_form: str = "holistic"
) -> Task:
    """Suite v3: identity as in v2, then rounds of escalating pressure, with control arms."""
    return suite_task(
        "v3", variants=variants, modes=modes, scenarios=scenarios, judge_form=judge_form
    )


@task(name=task_name("adaptive"))
def adaptive(
    variants: Names = "", modes: Names = "", scenarios: Names = "", judge_form: str = "holistic"
) -> Task:
    """Suite adaptive: v3's escalation topics with pressure written turn by turn by the model
    bound to the `user_model` role (`--model-role user_model=…`), and v3's control arms."""
    return suite_task(
        "adaptive", variants=variants, modes=modes, scenarios=scenarios, judge_form=judge_form
    )


@task(name=task_name("lite"))
def lite(
    variants: Names = "", modes: Names = "", scenarios: Names = "", judge_form: str = "holistic"
) -> Task:
    """Suite lite: a cheaper cut of the v1 benchmark."""
    return suite_task(
        "lite", variants=variants, modes=modes, scenarios=scenarios, judge_form=judge_form
    )


@task(name=task_name("full"))
def full(
    variants: Names = "", modes: Names = "", scenarios: Names = "", judge_form: str = "holistic"
) -> Task:
    """Suite full: the complete v1 benchmark, both prompt variants and both delivery modes."""
    return suite_task(
        "full", variants=variants, modes=modes, scenarios=scenarios, judge_form=judge_form
    )
