"""Errors that mean "the user must change something": bad input, missing keys, dead endpoints.

The CLI prints a `UserError` as one line on stderr and exits with status 2; nothing else in the
package prints. Internal failures stay ordinary exceptions so that bugs still show a traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """A problem the user can fix. The message names the problem and the fix, on one line."""

    exit_code = 2
