"""The `aib` entry point: the command group, and what a failure prints and exits with.

Every problem the user can fix ends as one line on stderr and exit status 2 — usage errors,
bad values, bad config or `.env`, missing keys, unreachable endpoints — with no traceback, and
with every control character it quotes made visible. `aib run` and `aib judge`
exit 3 when they finished but left conversations or judgments failed; a bug exits 1.

The commands live in `run.py`, `results.py`, `files.py` and `models.py`; `COMMANDS` names them
and `LazyGroup` imports one only when it runs (or when `--help` lists it), so starting `aib`
costs click and little else. The earlier implementation's spellings (`generate-report`, `-m`,
…) are read as today's first (`legacy_names.py`).
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import MappingProxyType

import click

from independence_bench.cli.group import LazyGroup
from independence_bench.cli.legacy_names import modern_argv
from independence_bench.cli.options import read_env
from independence_bench.clients.redact import Redactor, secrets_in_env
from independence_bench.errors import Interrupted, UserError
from independence_bench.text.outputs import terminal_text, visible

COMMANDS = MappingProxyType(
    {
        "run": "independence_bench.cli.run:run",
        "estimate": "independence_bench.cli.run:estimate",
        "runs": "independence_bench.cli.run:runs_",
        "judge": "independence_bench.cli.run:judge",
        "leaderboard": "independence_bench.cli.results:leaderboard",
        "judges": "independence_bench.cli.results:judges",
        "compare": "independence_bench.cli.results:compare",
        "items": "independence_bench.cli.results:items",
        "configs": "independence_bench.cli.results:configs",
        "report": "independence_bench.cli.files:report",
        "view": "independence_bench.cli.files:view",
        "import": "independence_bench.cli.files:import_",
        "models": "independence_bench.cli.models:models",
    }
)
"""Every `aib` command, by name: the module and attribute of its click command."""


INTERRUPTED = "aib: interrupted; completed calls are stored, run the command again to resume"
"""The line of exit status 130 when a second Ctrl-C (or SIGTERM after one) aborts a command."""


def _print_version(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    # click.version_option wants the version when the group is defined; reading the package
    # metadata then would slow every command down, so it is read only for `--version`.
    if not value or ctx.resilient_parsing:
        return
    from independence_bench.version import __version__

    click.echo(f"aib, version {__version__}")
    ctx.exit()


@click.group(
    cls=LazyGroup,
    lazy_commands=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
def cli() -> None:
    """AI Independence Bench: does a model keep its own persona under pressure?"""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `aib` script; returns the exit status.

    What it prints about a failure passes through a `Redactor` of every secret-named variable
    in the environment and `.env`, so an error that echoes a key does not print it.
    """
    try:
        redact = Redactor(secrets_in_env(read_env(Path.cwd())))
    except UserError as exc:  # an unreadable .env: nothing of it can be trusted to redact
        click.echo(f"aib: error: {visible(str(exc), lines=False)}", err=True)
        return exc.exit_code
    try:
        words = list(argv) if argv is not None else sys.argv[1:]
        status = cli.main(
            args=modern_argv(words, COMMANDS),
            prog_name="aib",
            standalone_mode=False,
        )
    except click.UsageError as exc:
        command = exc.ctx.command_path if exc.ctx else "aib"
        message = visible(f"{exc.format_message()} (see '{command} --help')", lines=False)
        click.echo(redact(f"aib: error: {message}"), err=True)
        return 2
    except click.ClickException as exc:
        click.echo(redact(f"aib: error: {visible(exc.format_message(), lines=False)}"), err=True)
        return 2
    except click.Abort:  # click's own form of a KeyboardInterrupt in a command
        click.echo(INTERRUPTED, err=True)
        return 130
    except UserError as exc:
        kind = "" if isinstance(exc, Interrupted) else "error: "
        click.echo(redact(f"aib: {kind}{visible(str(exc), lines=False)}"), err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        click.echo(INTERRUPTED, err=True)
        return 130
    except Exception as exc:
        if (problem := _store_problem(exc)) is not None:
            click.echo(redact(f"aib: error: {visible(problem, lines=False)}"), err=True)
            return 2
        # A bug: show the traceback, as Python would, but without any secret in it.
        click.echo(terminal_text(redact(traceback.format_exc())).rstrip(), err=True)
        return 1
    return status if isinstance(status, int) else 0


def _store_problem(exc: Exception) -> str | None:
    """One line for a SQLite error that is the disk's or the file's, not a bug: a full disk,
    a damaged store. (Checked by module, so `aib` does not import sqlite3 to start.)"""
    held_back = getattr(exc, "store_problem", None)  # `store.no_space.StoreFull`
    if isinstance(held_back, str):
        return held_back
    if type(exc).__module__ != "sqlite3":
        return None
    text = str(exc)
    if "full" in text:
        return f"the disk is full ({text}); free some space and run the command again to resume"
    if "malformed" in text or "not a database" in text or "corrupt" in text:
        return (
            f"the store is damaged ({text}); restore aib.sqlite3 from a backup, or point "
            "--data-dir at a new directory"
        )
    if "readonly" in text or "disk I/O" in text or "unable to open" in text:
        return f"the store cannot be written ({text}); check the disk and the --data-dir"
    return None


if __name__ == "__main__":
    sys.exit(main())
