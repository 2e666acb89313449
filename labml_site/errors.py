"""Mistakes a user can fix: each is one actionable line, never a traceback.

The library raises `UserError` for what the person running it got wrong (a folder that does not
exist, a language tag that is not one, a theme without `page.html`); the command line prints it as
`error: <message>` and exits with its status (2 unless told otherwise). Anything else that goes
wrong is a bug and keeps its traceback.
"""
from __future__ import annotations


class UserError(Exception):
    """One line saying what is wrong and what to do about it."""

    def __init__(self, message: str, status: int = 2) -> None:
        """`status`: the exit status (2, a mistake in the command; 1, the system failed it)."""
        message = str(message).replace("\r", " ").replace("\n", " ")  # one line, whatever the parts were
        super().__init__(message)
        self.message = message
        self.status = status

    def __str__(self) -> str:
        return self.message
