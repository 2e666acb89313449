"""Printing findings: as text (`file:line: message`), JSON, or GitHub Actions annotations."""
from __future__ import annotations

import json
import sys
from typing import Sequence

from ..findings import Finding


def _gh_property(value: object) -> str:
    """A workflow command's property value, escaped as GitHub's toolkit does."""
    return (str(value).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
            .replace(":", "%3A").replace(",", "%2C"))


def _gh_message(value: object) -> str:
    return str(value).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def print_findings(findings: Sequence[Finding], fmt: str = "text", quiet: bool = False, stream=None) -> None:
    """Findings as `fmt` (docs/cli-contract.md): `text`, one `file:line: severity: message [code]`
    each; `json`, one array of finding objects (labml_site/schemas/findings.schema.json); `github`,
    one workflow command each (the caller chooses which: `check` and `review` pass errors only)."""
    stream = stream or sys.stderr
    shown = [f for f in findings if f.severity == "error" or not quiet]
    if fmt == "json":
        json.dump([f.__dict__ for f in shown], stream, ensure_ascii=False, indent=1)
        stream.write("\n")
        return
    for f in shown:
        if fmt == "github":
            # GitHub Actions workflow commands annotate the file in a pull request's diff.
            level = f.severity if f.severity in ("error", "warning", "notice") else "notice"
            props = f"file={_gh_property(f.path)},line={f.line or 1},col={f.col or 1},title={_gh_property(f.code)}"
            stream.write(f"::{level} {props}::{_gh_message(f.message)}\n")
        else:
            stream.write(f.format() + "\n")


def print_summary(line: str, fmt: str = "text", stream=None) -> None:
    """The one summary line of a run: a `::notice` for GitHub (shown on the run's page and in the
    pull request's checks), a plain line on stderr otherwise (so stdout stays JSON for `json`)."""
    if fmt == "github":
        (stream or sys.stdout).write(f"::notice title=labml-site::{_gh_message(line)}\n")
    else:
        print(line, file=sys.stderr)
