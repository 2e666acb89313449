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

import contextlib
from collections import Counter, OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Literal

from ..findings import Finding
from . import glossary
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


# The same English and translation recur (a quarter of a real corpus's lookups: shared
# docstrings, the same block in several files, parts of changed keys), and the verdict depends
# only on them, the language and the glossary that applies: within a build (`remembering`), each
# is judged once and its findings are moved to where the entry is. The glossary object is part of
# the key (a changed glossary file loads as a new object). Outside a build nothing is remembered,
# so a tool or a test that changes the checks sees the change at once.
_JUDGED: OrderedDict[tuple, tuple[object, "Verdict"]] | None = None
_JUDGED_MAX = 50_000
# What the builds of a long-lived process (`serve`, the editor) judged, kept for its next builds:
# the checks cannot change within a process, and a changed glossary is a new object (a new key).
_LONG_LIVED: OrderedDict[tuple, tuple[object, "Verdict"]] = OrderedDict()


@contextlib.contextmanager
def remembering(long_lived: bool = False) -> Iterator[None]:
    """Judge each (English, translation, language, glossary) once until the block ends (a build;
    its forked workers inherit the memo, empty or not); with `long_lived`, once per process."""
    global _JUDGED
    outer = _JUDGED
    _JUDGED = outer if outer is not None else (_LONG_LIVED if long_lived else OrderedDict())
    try:
        yield
    finally:
        _JUDGED = outer


def judge(key: str, value: str, path: str = "", line: int = 0, lang: str = "") -> Verdict:
    """The verdict on `value` as the translation of `key`, on its own (no other entry helps)."""
    if not value.strip():
        return UNTRANSLATED
    memo = _JUDGED
    if memo is None:
        return _judge(key, value, path, line, lang)
    terms = glossary.for_catalog(path, lang)
    memo_key = (key, value, lang, id(terms))
    hit = memo.get(memo_key)
    if hit is not None and hit[0] is terms:
        memo.move_to_end(memo_key)
        found = hit[1]
        if not found.findings or (found.findings[0].path == path and found.findings[0].line == line):
            return found
        return replace(found, findings=tuple(replace(f, path=path, line=line) for f in found.findings))
    found = _judge(key, value, path, line, lang)
    memo[memo_key] = (terms, found)
    if len(memo) > _JUDGED_MAX:
        memo.popitem(last=False)
    return found


def _judge(key: str, value: str, path: str, line: int, lang: str) -> Verdict:
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
