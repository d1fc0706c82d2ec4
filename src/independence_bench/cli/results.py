"""`aib leaderboard`, `judges`, `compare`, `items` and `configs`: results read from the store.

None of them calls a model. `leaderboard` calls `workflows/leaderboard.py`, the analyses
`workflows/analyses.py` with an `AnalysisOptions`. Each imports its workflow when it runs, so
`aib --help` loads neither numpy nor the bootstrap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from independence_bench.cli.options import (
    COMMA_LIST,
    SEED_RANGE,
    analysed_suite_option,
    analysis_options,
    bootstrap_options,
    data_dir_of,
    data_dir_option,
    echo_for,
    json_option,
    models_of,
    resampling_of,
    scored_by_option,
    selection_of,
    shown_results_options,
)

if TYPE_CHECKING:
    from independence_bench.workflows.analyses import AnalysisOptions


@click.command()
@click.option("--suite", default=None, help="Suite to rank (default: the one in the store).")
@scored_by_option
@json_option
@click.option(
    "--method",
    type=click.Choice(["default", "legacy"]),
    default="default",
    show_default=True,
    help="Scoring rules: ours, or the earlier implementation's (reproduces its figures).",
)
@click.option(
    "--judges",
    type=COMMA_LIST,
    default=None,
    help="A judge panel, comma-separated: mean per item, with inter-judge agreement (alpha).",
)
@bootstrap_options
@click.option(
    "--detailed",
    is_flag=True,
    help="Also show reasoning quality, identity kept, graceful handling and chosen names.",
)
@shown_results_options
def leaderboard(**values: Any) -> None:
    """Rank the models in the store by Independence Index, with 95% intervals and rank intervals."""
    from independence_bench.suites.selection import split_list
    from independence_bench.workflows.leaderboard import LeaderboardOptions, leaderboard_command

    options = LeaderboardOptions(
        suite_id=values["suite"],
        judge=values["judge"],
        data_dir=data_dir_of(values),
        method=values["method"],
        judges=split_list(values["judges"]),
        resampling=resampling_of(values),
        selection=selection_of(values),
        detailed=values["detailed"],
        models=models_of(values),
    )
    as_json = values["as_json"]
    leaderboard_command(options, as_json=as_json, echo=echo_for(as_json=as_json))


def analysis_options_of(values: dict[str, Any]) -> AnalysisOptions:
    """The `AnalysisOptions` of an analysis command (`cli.options.analysis_options`)."""
    from independence_bench.suites.selection import split_list
    from independence_bench.workflows.analyses import AnalysisOptions

    if values.get("judge") and values["judges"]:
        raise click.UsageError("give either --judge or --judges, not both")
    return AnalysisOptions(
        data_dir=data_dir_of(values),
        suite_id=values["suite"],
        judge=values.get("judge"),
        judges=split_list(values["judges"]),
        resampling=resampling_of(values),
    )


@click.command()
@analysed_suite_option
@click.option(
    "--judges",
    type=COMMA_LIST,
    default=None,
    help="Only these judges, comma-separated (default: all).",
)
@click.option(
    "--seed", type=SEED_RANGE, default=0, show_default=True, help="Seed of the alpha intervals."
)
@click.option(
    "--reference",
    default=None,
    help="Instead: each judge's agreement with this judge (rho, alpha, mean difference).",
)
@json_option
@data_dir_option
def judges(reference: str | None, **values: Any) -> None:
    """Compare the judges: index per model per judge, spread, self-preference, test-retest.

    With --reference JUDGE: per metric, each judge's agreement with that judge on the items
    both scored, and whether it orders the models alike.
    """
    from independence_bench.workflows.analyses import judges_command

    as_json = values["as_json"]
    options = analysis_options_of(values)
    judges_command(options, reference=reference, as_json=as_json, echo=echo_for(as_json=as_json))


@click.command()
@click.argument("models", nargs=-1)
@analysis_options
@bootstrap_options
def compare(models: tuple[str, ...], **values: Any) -> None:
    """Compare two models (A − B, paired), or with no MODELS every setting against its base.

    Settings are provider pins, reasoning efforts and temperatures: model labels such as
    base+provider@effort-tT that share a base model id.
    """
    from independence_bench.workflows.analyses import compare_command

    options = analysis_options_of(values)
    as_json = values["as_json"]
    compare_command(options, models, as_json=as_json, echo=echo_for(as_json=as_json))


@click.command()
@analysis_options
def items(**values: Any) -> None:
    """Item difficulty: per scenario, how high models score and how well it separates them."""
    from independence_bench.workflows.analyses import items_command

    as_json = values["as_json"]
    items_command(analysis_options_of(values), as_json=as_json, echo=echo_for(as_json=as_json))


@click.command()
@analysis_options
@bootstrap_options
def configs(**values: Any) -> None:
    """Prompt variant × delivery mode cells against neutral + user_role (suite full)."""
    from independence_bench.workflows.analyses import configs_command

    as_json = values["as_json"]
    configs_command(analysis_options_of(values), as_json=as_json, echo=echo_for(as_json=as_json))
