"""The earlier implementation's command-line spellings, read as today's.

Its users know `generate-report`, `estimate-cost`, `-m`, `-j` and `-e`. `modern_argv` rewrites
those into today's names before click parses the command line, so they keep working without
cluttering `--help`; a command or option with no counterpart (`clear-cache`, `extract-names`,
`--parallel`, `--local-url`) is a usage error whose one line names what to use instead. Only
the command word and whole option words before a `--` are rewritten, never an option's value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

import click

RENAMED_COMMANDS = MappingProxyType({"generate-report": "report", "estimate-cost": "estimate"})
RETIRED_COMMANDS = MappingProxyType(
    {
        "clear-cache": (
            "aib keeps every call in its store (--data-dir, default ./aib-data) and never needs "
            "clearing: 'aib run --fresh' starts new runs, 'aib judge --judge MODEL' judges "
            "again; delete the data folder to start over"
        ),
        "extract-names": (
            "the names each model chose are shown by 'aib leaderboard --detailed' "
            "(and in 'aib report')"
        ),
    }
)
RENAMED_OPTIONS = MappingProxyType(
    {
        "-m": "--models",
        "-j": "--judge",
        "--judge-model": "--judge",
        "-e": "--experiments",
        "--exp": "--experiments",
        "-r": "--reasoning-effort",
        "-t": "--temperature",
        "-d": "--detailed",
    }
)
"""The earlier CLI's option names that mean the same as one of ours."""
_PARALLEL = "aib runs every model and call concurrently; cap calls in flight with --concurrency N"
_LOCAL = (
    "use --base-url URL --models MODEL for a local server (the judge goes there too unless "
    "--judge-base-url names another endpoint; --timeout sets the seconds per call)"
)
RETIRED_OPTIONS = MappingProxyType(
    {
        "-p": _PARALLEL,
        "--parallel": _PARALLEL,
        "-pt": _PARALLEL,
        "--parallel-tasks": _PARALLEL,
        "--local-url": _LOCAL,
        "--local-model": _LOCAL,
        "--local-timeout": _LOCAL,
    }
)
"""The earlier CLI's options with no one-to-one counterpart, and what to use instead."""
_VALUE_OPTIONS = frozenset({"-m", "-j", "--judge-model", "-e", "--exp", "-r", "-t"})


def _renamed(word: str) -> str:
    """`word` in today's spelling: `-m` → `--models`, `--exp=a` → `--experiments=a`."""
    name, equals, value = word.partition("=")
    if equals and name.startswith("--") and name in RENAMED_OPTIONS:
        return f"{RENAMED_OPTIONS[name]}={value}"
    return RENAMED_OPTIONS.get(word, word)


def modern_argv(argv: Sequence[str], commands: Mapping[str, str]) -> list[str]:
    """`argv` with the earlier spellings replaced by today's; raises `click.UsageError` for a
    command that has none. `commands` are today's command names (left alone)."""
    words = list(argv)
    position = next((i for i, w in enumerate(words) if not w.startswith("-")), None)
    if position is None:
        return words
    command = words[position]
    if command in RETIRED_COMMANDS:
        raise click.UsageError(f"'{command}' is gone: {RETIRED_COMMANDS[command]}")
    if command in RENAMED_COMMANDS and command not in commands:
        words[position] = RENAMED_COMMANDS[command]
    rest = words[position + 1 :]
    end = rest.index("--") if "--" in rest else len(rest)
    rewritten: list[str] = []
    taking_value = False
    for word in rest[:end]:
        if not taking_value and (name := word.partition("=")[0]) in RETIRED_OPTIONS:
            raise click.UsageError(f"{name} is gone: {RETIRED_OPTIONS[name]}")
        rewritten.append(word if taking_value else _renamed(word))
        # The word after an option that takes a value is that value, never an option name.
        taking_value = not taking_value and word in _VALUE_OPTIONS
    return [*words[: position + 1], *rewritten, *rest[end:]]
