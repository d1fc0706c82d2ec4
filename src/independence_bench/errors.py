"""Errors that mean "the user must change something": bad input, missing keys, dead endpoints.

The CLI prints a `UserError` as one line on stderr and exits with status 2; nothing else in the
package prints. Internal failures stay ordinary exceptions so that bugs still show a traceback.
"""

from __future__ import annotations

import signal
from pathlib import Path

from independence_bench.text.counts import count_of
from independence_bench.text.outputs import terminal_text


class UserError(Exception):
    """A problem the user can fix. The message names the problem and the fix, on one line.

    It is printed to a terminal and may quote what a server or a file said, so every control
    character in it is made visible (`text.outputs.terminal_text`) when it is raised."""

    exit_code = 2

    def __init__(self, message: str = "") -> None:
        super().__init__(terminal_text(message))


class Interrupted(UserError):
    """The run stopped at a signal after storing the calls that were in flight."""

    def __init__(self, signum: int, answered: int) -> None:
        name = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
        super().__init__(
            f"interrupted by {name}: no call was started after it, the calls in flight were "
            f"finished and stored ({count_of(answered, 'call')} answered in all); run the command "
            "again to resume"
        )
        # The shells' convention: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP.
        self.exit_code = 128 + signum


def read_user_text(path: Path, name: str, fix: str) -> str:
    """The UTF-8 text of a file the user named (`name`: how messages call it); a `UserError`
    when it is missing, unreadable (both with `fix`) or not UTF-8."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{name} does not exist; {fix}") from None
    except UnicodeDecodeError as exc:
        raise UserError(f"{name} is not UTF-8 (byte {exc.start}); save it as UTF-8 text") from None
    except OSError as exc:
        raise UserError(f"cannot read {name}: {exc.strerror}; {fix}") from None
