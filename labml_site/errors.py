"""Mistakes a user can fix: each is one actionable line, never a traceback.

The library raises `UserError` for what the person running it got wrong (a folder that does not
exist, a language tag that is not one, a theme without `page.html`); the command line prints it as
`error: <message>` and exits with status 2. Anything else that goes wrong is a bug and keeps its
traceback.
"""
from __future__ import annotations


class UserError(Exception):
    """One line saying what is wrong and what to do about it."""

    def __init__(self, message: str) -> None:
        message = str(message).replace("\r", " ").replace("\n", " ")  # one line, whatever the parts were
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message
