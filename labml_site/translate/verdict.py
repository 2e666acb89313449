"""One verdict per translation entry: its state and its findings, the same for every tool.

`build` (through `localize`), `check`, `review`, `stats` and the editor all ask
`Catalog.verdict(key)`, which ends here for a value of the entry's own (`judge`):

- **untranslated**: no value, or an empty one (`""` is "not translated yet", never an error);
- **fuzzy**: untranslated, and a suggestion waits in the fuzzy sidecar;
- **translated**: the value passes every error-level check and the sanitiser, as written;
- **repaired**: shown, but not as written: the build repaired benign defects (an unclosed tag,
  text after `</p>`, an encoded placeholder), showed only its blocks that pass, or made it from
  other entries (links moved, unchanged blocks of a changed key). The findings say what; the
  file should be fixed (`check --fix` writes the repaired value; the editor does not save one);
- **invalid**: refused (unsafe, or wrong beyond repair): the page shows the English;
- **stale**: an entry whose English the page no longer produces: never shown, `extract` moves it
  aside.

Findings are those of the value; a tool may add words for a state (`check` lists untranslated
entries), never a different verdict.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from ..findings import Finding
from .repair import review

State = Literal["untranslated", "fuzzy", "translated", "repaired", "invalid", "stale"]
# In the order tables list them.
STATES: tuple[State, ...] = ("translated", "repaired", "fuzzy", "untranslated", "invalid", "stale")
SHOWN: frozenset[State] = frozenset({"translated", "repaired"})  # the page shows the translation


@dataclass(frozen=True)
class Verdict:
    state: State
    html: str | None = None  # what the page shows (sanitised, placeholders unfilled) when shown
    findings: tuple[Finding, ...] = ()
    repaired: str | None = None  # the value as repaired, when repairing changed it

    @property
    def shown(self) -> bool:
        return self.state in SHOWN


UNTRANSLATED = Verdict("untranslated")
FUZZY = Verdict("fuzzy")


def judge(key: str, value: str, path: str = "", line: int = 0, lang: str = "") -> Verdict:
    """The verdict on `value` as the translation of `key`, on its own (no other entry helps)."""
    if not value.strip():
        return UNTRANSLATED
    result = review(key, value, path, line, lang)  # the checks, the repair, the sanitiser
    if result.html is None:
        return Verdict("invalid", None, tuple(errors_first(result.findings)))
    repaired = result.partial or result.repaired is not None or any(f.code == "repaired" for f in result.findings)
    return Verdict("repaired" if repaired else "translated", result.html, tuple(result.findings), result.repaired)


def stale(finding: Finding) -> Verdict:
    return Verdict("stale", None, (finding,))


def untranslated_note(path: str, line: int, key: str) -> Finding:
    """How `check` and the editor list an untranslated entry (a warning: nothing is wrong)."""
    return Finding("warning", "empty-value", "not translated yet (the English is shown)", path, line, 0, key)


def errors_first(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: f.severity != "error")


def tally(verdicts: Iterable[Verdict]) -> dict[State, int]:
    """How many verdicts are in each state (every state present, in `STATES` order)."""
    counts = Counter(v.state for v in verdicts)
    return {state: counts.get(state, 0) for state in STATES}
