"""`aib judges`, `judges --reference`, `compare`, `items` and `configs`: the store-only analyses.

Each command takes an `InsightOptions` (store, suite, judge or panel, bootstrap) and prints the
`*_output` of `reports/analyses/`: rich tables with the method under every table that shows
intervals, or JSON. The reports and statistics are imported when a command runs, so building
the options loads neither numpy nor the bootstrap. None of it calls a model.
"""

from __future__ import annotations

from collections.abc import Sequence

from independence_bench.reports.options import InsightOptions as InsightOptions  # the CLI's
from independence_bench.workflows import Echo


def judges_command(
    options: InsightOptions, *, reference: str | None, as_json: bool, echo: Echo
) -> None:
    """`aib judges`: the index per model per judge, spread, self-preference and test-retest; with
    `reference`, each judge's agreement with that judge per metric (`judges --reference`)."""
    from independence_bench.reports.analyses import calibration_output, judges_output

    if reference is not None:
        echo(calibration_output(options, reference, as_json=as_json))
        return
    echo(judges_output(options, as_json=as_json))


def compare_command(
    options: InsightOptions, models: Sequence[str], *, as_json: bool, echo: Echo
) -> None:
    """`aib compare`: two models' paired difference, or with no models every setting's effect."""
    from independence_bench.reports.analyses import compare_output

    echo(compare_output(options, models, as_json=as_json))


def items_command(options: InsightOptions, *, as_json: bool, echo: Echo) -> None:
    """`aib items`: per scenario, how high models score and how well it separates them."""
    from independence_bench.reports.analyses import items_output

    echo(items_output(options, as_json=as_json))


def configs_command(options: InsightOptions, *, as_json: bool, echo: Echo) -> None:
    """`aib configs`: prompt variant × delivery mode cells against neutral + user_role."""
    from independence_bench.reports.analyses import configs_output

    echo(configs_output(options, as_json=as_json))
