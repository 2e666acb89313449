"""Create and update the translation files of a language from the English the source produces.

For each page, `extract` makes `translations/<page>.<lang>.json` hold exactly the page's current
English keys:

- a new English block gets the value "" ("not translated yet"). The empty string, like gettext's
  empty msgstr, is where the translator writes; `Catalog.lookup` treats it as missing, so the page
  shows the English block, never an empty one;
- when a block's English changed, the old translation is looked up by similarity (difflib ratio of
  the text with tags and placeholders normalised, cutoff `FUZZY_CUTOFF`) and offered in the fuzzy
  sidecar `<page>.<lang>.fuzzy.json` as `{new key: {"suggestion": old value, "from": old key}}`.
  A suggestion is never rendered; a person confirms it by copying it (corrected) into the empty
  value in the main file, or with `confirm()`; the next extract then drops it from the sidecar;
- entries whose English is gone are moved to the stale sidecar `<page>.<lang>.stale.json` as
  `{old key: [value, …]}`; if that English comes back, the value is restored.

Nothing a translator wrote is ever deleted: every non-empty value in any of the three files before
a run is in one of them after it.  A page whose files can't be read safely (bad JSON, duplicate
keys with different values, non-string values, bytes that aren't UTF-8) is left untouched and
reported.

Output is stable so a pull request's diff shows only real changes: keys sorted, UTF-8 without
`\\u` escapes, indent 2, `": "` separators, trailing newline; the older style (ASCII escapes,
indent 1) is read without complaint and rewritten in this style by the first run that changes
the file.
"""
from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .checks import FileContext, parse_translation_file, run_file_checks
from ..findings import Finding
from .sanitize import PLACEHOLDER_RE
from .catalog import catalog_path, fuzzy_path, load_fuzzy, stale_path

FUZZY_CUTOFF = 0.6
INDENT = 2


@dataclass
class PageChange:
    page: str
    path: str
    added: list[str] = field(default_factory=list)  # new English keys (value "")
    fuzzy: list[str] = field(default_factory=list)  # new suggestions offered
    stale: list[str] = field(default_factory=list)  # keys moved to the stale sidecar
    revived: list[str] = field(default_factory=list)  # keys restored from the stale sidecar
    written: list[str] = field(default_factory=list)  # files written or removed
    skipped: bool = False  # files unreadable: nothing was touched


@dataclass
class ExtractResult:
    pages: list[PageChange] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def changed_files(self) -> list[str]:
        return [p for page in self.pages for p in page.written]

    @property
    def has_errors(self) -> bool:
        return any(f.severity == "error" for f in self.findings)


@dataclass
class _Files:
    """The three files of one page and language, as plain data."""

    main: dict[str, str]
    fuzzy: dict[str, tuple[str, str]]  # key -> (suggestion, from)
    stale: dict[str, list[str]]


def extract(keys_by_file: dict[str, list[str]], translations_dir: Path, lang: str) -> ExtractResult:
    """Bring the `lang` files of every page in `keys_by_file` up to date with its English keys.

    `keys_by_file`: page path (under source, no extension, e.g. `annotated_attention/mha`) ->
    the English keys the page produces now.  Pages not listed are not touched.
    """
    result = ExtractResult()
    for page in sorted(keys_by_file):
        main = catalog_path(translations_dir, page, lang)
        change = PageChange(page, str(main))
        files, findings = _read(main)
        result.findings.extend(findings)
        if files is None:
            change.skipped = True
        else:
            keys = list(dict.fromkeys(keys_by_file[page]))
            updated = _update(files, keys, change)
            if keys or main.exists():
                change.written = _write(main, updated)
        result.pages.append(change)
    return result


def confirm(translations_dir: Path, page: str, lang: str, containing: str | None = None) -> list[str]:
    """Accept fuzzy suggestions as translations (only those whose key contains `containing`).

    Meant for a person who has reviewed the suggestions (`build.py extract --confirm`): each one
    is copied into the empty value in the main file and removed from the fuzzy sidecar.  The
    confirmed values then go through `check` like any other.  Returns the confirmed keys.
    """
    main = catalog_path(translations_dir, page, lang)
    files, _ = _read(main)
    if files is None:
        return []
    confirmed = []
    for key, (suggestion, _from) in sorted(files.fuzzy.items()):
        if containing is not None and containing not in key:
            continue
        if files.main.get(key, "").strip():
            continue  # a translation was written meanwhile: it wins
        files.main[key] = suggestion
        del files.fuzzy[key]
        confirmed.append(key)
    if confirmed:
        _write(main, files)
    return confirmed


# --------------------------------------------------------------------------------------------


def _has_value(value: str) -> bool:
    return bool(value.strip())


def _update(files: _Files, keys: list[str], change: PageChange) -> _Files:
    current = set(keys)
    stale = {k: list(v) for k, v in files.stale.items()}

    def stash(key: str, value: str) -> None:
        if _has_value(value) and value not in stale.get(key, []):
            stale.setdefault(key, []).append(value)

    def stored(value: str) -> bool:
        return value in main.values() or any(value in values for values in stale.values())

    main: dict[str, str] = {}
    for key in keys:
        value = files.main.get(key, "")
        if not _has_value(value) and stale.get(key):
            value = stale[key].pop()  # the English came back: so does its latest translation
            if not stale[key]:
                del stale[key]
            change.revived.append(key)
        elif key not in files.main:
            change.added.append(key)
        main[key] = value
    for key, value in files.main.items():
        if key not in current:
            stash(key, value)
            if _has_value(value):
                change.stale.append(key)

    fuzzy: dict[str, tuple[str, str]] = {}
    for key, (suggestion, source) in files.fuzzy.items():
        if key in current and not _has_value(main[key]):
            fuzzy[key] = (suggestion, source)
        elif not stored(suggestion):
            stash(source or key, suggestion)  # e.g. a suggestion someone edited in place

    pool = {k: v[-1] for k, v in stale.items() if v}
    for key in keys:
        if _has_value(main[key]) or key in fuzzy:
            continue
        match = _closest(key, pool)
        if match is not None:
            fuzzy[key] = (pool[match], match)
            change.fuzzy.append(key)
    return _Files(main, fuzzy, stale)


_TAG = re.compile(r"<[^>]*>")


def similarity_text(key: str) -> str:
    """What is compared when looking for the old translation of a changed block."""
    text = PLACEHOLDER_RE.sub("\u2022", key)  # placeholders compare equal whatever their number
    text = _TAG.sub(" ", text)
    return " ".join(text.split()).casefold()


def _closest(key: str, pool: dict[str, str]) -> str | None:
    """The pool key most similar to `key` (ratio >= FUZZY_CUTOFF), ties broken by key order."""
    target = similarity_text(key)
    matcher = difflib.SequenceMatcher(autojunk=False)  # autojunk skews long paragraphs
    matcher.set_seq2(target)
    best: tuple[float, str] | None = None
    for candidate in sorted(pool):
        matcher.set_seq1(similarity_text(candidate))
        if matcher.real_quick_ratio() < FUZZY_CUTOFF or matcher.quick_ratio() < FUZZY_CUTOFF:
            continue
        score = matcher.ratio()
        if score >= FUZZY_CUTOFF and (best is None or score > best[0]):
            best = (score, candidate)
    return best[1] if best else None


# --------------------------------------------------------------------------------------------
# Reading and writing
# --------------------------------------------------------------------------------------------


def _blocking(findings: list[Finding]) -> bool:
    # A BOM is harmless to rewrite (we drop it); any other error means we could lose or garble
    # something by rewriting, so the page is left alone until a person fixes it.
    return any(f.severity == "error" and f.code != "bom" for f in findings)


def _read(main: Path) -> tuple[_Files | None, list[Finding]]:
    parsed = parse_translation_file(main)
    findings = run_file_checks(FileContext(parsed))
    fuzzy_entries, fuzzy_findings = load_fuzzy(main)
    findings += fuzzy_findings
    stale, stale_findings = _read_stale(stale_path(main))
    findings += stale_findings
    if _blocking(findings):
        findings.append(
            Finding(
                "error", "extract-skipped",
                "extract left this page's translation files untouched; fix the errors above "
                "and run it again", str(main),
            )
        )
        return None, findings
    files = _Files(
        main={p.key: p.value for p in parsed.pairs},
        fuzzy={k: (e.value, e.previous or "") for k, e in fuzzy_entries.items()},
        stale=stale,
    )
    return files, findings


def _read_stale(path: Path) -> tuple[dict[str, list[str]], list[Finding]]:
    parsed = parse_translation_file(path)
    findings = run_file_checks(FileContext(parsed, kind="stale"))
    stale: dict[str, list[str]] = {}
    if not parsed.usable:
        return stale, findings
    for pair in parsed.pairs:
        values = [pair.value] if isinstance(pair.value, str) else pair.value
        if isinstance(values, list) and all(isinstance(v, str) for v in values):
            merged = stale.setdefault(pair.key, [])
            merged.extend(v for v in values if v not in merged)
        else:
            findings.append(
                Finding(
                    "error", "stale-malformed",
                    "a stale entry must be a list of strings; fix it by hand",
                    parsed.path, pair.line, pair.col, pair.key,
                )
            )
    return stale, findings


def dumps(data: dict) -> str:
    """The one serialisation of every translation file: stable, readable, diff-friendly."""
    return json.dumps(data, ensure_ascii=False, indent=INDENT, sort_keys=True) + "\n"


def _encode(text: str) -> bytes:
    # A lone surrogate (from a `\ud800` escape in the file we read) can't be UTF-8; writing it
    # back as the same JSON escape keeps it exactly.
    return text.encode("utf-8", errors="backslashreplace")


def _write(main: Path, files: _Files) -> list[str]:
    outputs = {
        main: files.main,
        fuzzy_path(main): {
            k: {"from": source, "suggestion": suggestion}
            for k, (suggestion, source) in files.fuzzy.items()
        },
        stale_path(main): files.stale,
    }
    written = []
    for path, data in outputs.items():
        if path != main and not data:
            if path.exists():
                path.unlink()  # an empty sidecar: nothing in it to lose
                written.append(str(path))
            continue
        content = _encode(dumps(data))
        if path.exists() and path.read_bytes() == content:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        written.append(str(path))
    return written


def all_values(main: Path) -> list[str]:
    """Every non-empty value stored for a page (main, fuzzy, stale): used to prove nothing is lost."""
    files, _ = _read(main)
    if files is None:
        return []
    values = [v for v in files.main.values() if isinstance(v, str)]
    values += [s for s, _ in files.fuzzy.values()]
    values += [v for vs in files.stale.values() for v in vs]
    return [v for v in values if _has_value(v)]

