"""Errors and warnings as values.

Every stage reports problems by returning `Finding`s instead of printing, so the CLI can
decide how to show them (plain text, JSON, GitHub annotations) and tests can assert on them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Finding:
    """One problem, located as precisely as we can: file, 1-based line and column."""

    severity: Severity
    code: str  # a stable short id, e.g. "placeholder-missing", for filtering and tests
    message: str  # what is wrong and what to do about it
    path: str = ""
    line: int = 0
    col: int = 0
    key: str = ""  # the translation key concerned, if any (shown shortened)

    def location(self) -> str:
        where = self.path or "<input>"
        if self.line:
            where += f":{self.line}"
            if self.col:
                where += f":{self.col}"
        return where

    def format(self) -> str:
        text = f"{self.location()}: {self.severity}: {self.message} [{self.code}]"
        if self.key:
            text += f"\n    key: {shorten(self.key)}"
        return text


def shorten(text: str, width: int = 80) -> str:
    """A one-line preview of a (possibly long, multi-line) key for messages."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@dataclass
class Report:
    """Findings collected over a run; the CLI turns `has_errors` into the exit status."""

    findings: list[Finding] = field(default_factory=list)

    def add(self, finding: Finding) -> None:
        self.findings.append(finding)

    def extend(self, findings) -> None:
        self.findings.extend(findings)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def has_errors(self) -> bool:
        return any(f.severity == "error" for f in self.findings)
