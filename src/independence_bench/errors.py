"""Errors that mean "the user must change something": bad input, missing keys, dead endpoints.

The CLI prints a `UserError` as one line on stderr and exits with status 2; nothing else in the
package prints. Internal failures stay ordinary exceptions so that bugs still show a traceback.
"""

from __future__ import annotations

from independence_bench.text.outputs import terminal_text


class UserError(Exception):
    """A problem the user can fix. The message names the problem and the fix, on one line.

    It is printed to a terminal and may quote what a server or a file said, so every control
    character in it is made visible (`text.outputs.terminal_text`) when it is raised."""

    exit_code = 2

    def __init__(self, message: str = "") -> None:
        super().__init__(terminal_text(message))
