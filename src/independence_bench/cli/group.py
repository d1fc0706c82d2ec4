"""`LazyGroup`: a click group that imports a command's module only when the command is needed.

The group is given a table of command names and `module:attribute` paths. Running a command
imports its module alone; `--help` imports each command module to read its one-line help. The
command modules therefore import only click and `cli/options.py` at the top and their library
code inside the command, which keeps `aib --help` free of the engine, numpy and rich.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import click


class LazyGroup(click.Group):
    """A group whose commands are named in `lazy_commands` and imported on first use."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Each command with its whole first sentence, wrapped: click would cut it to the
        width left beside the names and end it with "..."."""
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=1_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def __init__(self, *args: Any, lazy_commands: Mapping[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy_commands = lazy_commands

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        path = self.lazy_commands.get(cmd_name)
        if path is None:
            return super().get_command(ctx, cmd_name)
        module_name, _, attribute = path.partition(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command) or command.name != cmd_name:
            raise TypeError(f"{path} is not the click command {cmd_name!r}")
        return command
