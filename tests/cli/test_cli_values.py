"""Every numeric, list and URL option of every command refuses a bad value with one line.

The table is built from the commands themselves (`cli_commands.aib_commands`), so an option
added later is covered without editing this file: each bad value must end as exit status 2,
one line on stderr naming the option or the value, no traceback, and no data dir created.
Files the commands read (models.yaml, .env) that are not UTF-8 or not valid are here too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest

from independence_bench.cli.options import CommaList, EndpointUrl
from support.cli_commands import aib_commands

NUMBERS = ("nan", "inf", "-inf", "-1", "", "ten")
"""Bad for every numeric option of every command."""
NUMBER_EDGES = {
    "--runs": ("0", "101"),
    "--concurrency": ("0", "4097"),
    "--timeout": ("0", "3601"),
    "--max-cost": ("0",),
    "--seed": (str(2**63), str(-(2**63))),
    "--repeats": ("0",),
    "--resamples": ("99",),
    "--port": ("65536",),
}
"""Per option, values just outside its documented range."""
LISTS = ("", " , ", ",")
URLS = (
    "",
    "http://[::1",
    "http://256.256.256.256/v1",
    "http://127.0.0.1:99999/v1",
    "ftp://x",
    "127.0.0.1:8000/v1",
)
LIST_OPTIONS = {"--models", "--scenarios", "--judges", "--experiments", "--variants", "--modes"}
REQUIRED = {"judge": ("--judge", "j"), "import": ("results",)}
"""What a command needs besides the option under test."""


def _is_number(param: click.Parameter) -> bool:
    return isinstance(param.type, click.types._NumberParamTypeBase)


def _cases() -> list[tuple[str, str, str]]:
    cases: list[tuple[str, str, str]] = []
    for name, command in sorted(aib_commands().items()):
        for param in command.params:
            if not isinstance(param, click.Option) or param.is_flag:
                continue
            option = max(param.opts, key=len)
            if _is_number(param):
                values: tuple[str, ...] = NUMBERS + NUMBER_EDGES.get(option, ())
            elif isinstance(param.type, CommaList):
                values = LISTS
            elif isinstance(param.type, EndpointUrl):
                values = URLS
            else:
                continue
            cases += [(name, option, value) for value in values]
    return cases


CASES = _cases()


def test_the_table_covers_every_list_and_url_option() -> None:
    covered = {(name, option) for name, option, _ in CASES}
    for name, command in aib_commands().items():
        for param in command.params:
            option = max(param.opts, key=len)
            if option in LIST_OPTIONS or option.endswith("base-url") or _is_number(param):
                assert (name, option) in covered, f"aib {name} {option} is not checked"
    assert ("run", "--timeout") in covered and ("leaderboard", "--judges") in covered


@pytest.mark.parametrize(("command", "option", "value"), CASES)
def test_a_bad_value_is_one_line_and_exit_2(
    command: str, option: str, value: str, aib: Any
) -> None:
    result = aib(command, *REQUIRED.get(command, ()), option, value)
    assert result.code == 2, (result.code, result.out, result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("aib: error:"), result.err
    assert "Traceback" not in result.err
    assert option in lines[0] or repr(value) in lines[0], lines[0]
    assert not Path("aib-data").exists() and not Path("results").exists()


def test_the_last_valid_values_are_accepted_by_the_parser() -> None:
    run = aib_commands()["run"]
    ctx = run.make_context(
        "run",
        ["--seed", str(2**63 - 1), "--timeout", "3600", "--runs", "100", "--max-cost", "0.01"],
    )
    assert ctx.params["seed"] == 2**63 - 1 and ctx.params["timeout_s"] == 3600.0
    assert ctx.params["runs"] == 100 and ctx.params["max_cost"] == 0.01


@pytest.mark.parametrize("command", ["run", "estimate", "models"])
def test_a_models_yaml_that_is_not_utf8_is_one_line(command: str, aib: Any) -> None:
    Path("models.yaml").write_bytes(b"models:\n  - id: caf\xe9\n")
    result = aib(command, "--config", "models.yaml")
    assert result.code == 2 and result.err.count("\n") == 1, result.err
    assert "models.yaml is not UTF-8 (byte 19); save it as UTF-8 text" in result.err
    assert not Path("aib-data").exists()


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"OPENROUTER_API_KEY=sk-\xff\xfe\n", "is not UTF-8 (byte 22)"),
        (b"AIB_DATA_DIR=elsewhere\nthis line has no equals sign\n", "line 2 is not NAME=value"),
    ],
)
def test_a_bad_env_file_is_one_line_for_every_command(
    content: bytes, problem: str, aib: Any
) -> None:
    Path(".env").write_bytes(content)
    fix = "save it as UTF-8 text" if "UTF-8" in problem else "fix or remove it"
    for command in ("run", "leaderboard", "models"):
        result = aib(command)
        assert result.code == 2, (command, result.out, result.err)
        lines = result.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("aib: error: "), result.err
        assert lines[0].endswith(f".env {problem}; {fix}"), lines[0]
    assert not Path("aib-data").exists() and not Path("elsewhere").exists()


@pytest.mark.parametrize(
    "args",
    [
        ("run", "--concurrency", "\x1b[2J\u202e\n7"),
        ("run", "--models", "m", "--judge", "j", "--suite", "\x1b[2J\u202e\n7"),
        ("leaderboard", "--data-dir", "\x1b[2J\u202e\n7"),
    ],
)
def test_a_control_character_in_a_bad_value_is_shown_not_sent(
    args: tuple[str, ...], aib: Any
) -> None:
    result = aib(*args)
    assert result.code == 2
    assert "\x1b" not in result.err and "\u202e" not in result.err
    assert "\\x1b[2J\\u202e" in result.err and result.err.count("\n") == 1, result.err
