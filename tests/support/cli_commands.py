"""Every `aib` command as its click object, loaded through the lazy group as `aib --help` does."""

from __future__ import annotations

import click

from independence_bench.cli.main import cli


def aib_commands() -> dict[str, click.Command]:
    """Each command by name (importing every command module)."""
    ctx = click.Context(cli)
    loaded = {name: cli.get_command(ctx, name) for name in cli.list_commands(ctx)}
    return {name: command for name, command in loaded.items() if command is not None}
