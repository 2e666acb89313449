"""Loading translation catalogs and looking up checked, sanitized translations.

A catalog is one page in one language: `translations/<page>.<lang>.json`, a JSON object mapping the
English HTML of each prose block (math/code replaced by `<span translate=no>_^_N_^_</span>`) to
its translation.  Next to it may live two sidecars written by `extract`:

- `<page>.<lang>.fuzzy.json`: `{new English key: {"suggestion": old translation, "from": old key}}`,
  suggestions for blocks whose English changed.  Loaded into `Catalog.fuzzy`; never rendered.
- `<page>.<lang>.stale.json`: `{old English key: [translation, …]}`, entries whose English is gone.
  Not loaded here (nothing in it is rendered); `extract` reads and writes it.

Nothing in these files is trusted.  `Catalog.load` never raises on bad content (a missing file is
an empty catalog), and `Catalog.verdict` only hands out HTML that passed every error-level check
(after the repair of benign defects) and then went through the sanitizer.  Anything else renders
the English.  Every tool asks `Catalog.verdict` what an entry is (`verdict.py`).
"""
from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from .checks import FileContext, run_file_checks
from .files import ParsedFile, oversized, parse_translation_file
from ..findings import Finding
from ..read.listing import TreeListing
from ..read.structure import SourceFile
from .untabled import from_untabled, untabled_signature
from .repair import compose_from_units, from_legacy, key_units, legacy_key, repair_html, retarget, unit_pairs, without_hrefs
from .verdict import FUZZY, UNTRANSLATED, Verdict, judge, stale, untranslated_note


def catalog_path(translations_dir: Path, page: str, lang: str) -> Path:
    """`translations/<page>.<lang>.json` for a page path like `annotated_attention/mha`."""
    return Path(translations_dir) / f"{page}.{lang}.json"


def translation_path(translations_dir: Path, page: SourceFile, lang: str) -> Path:
    """`translations/<path under source, no extension>.<lang>.json` (the existing format); when
    that does not exist, the one file whose path differs from it only in case (`RWKV/` beside a
    source folder `rwkv/`), if there is exactly one (`resolve_translation_path` says so)."""
    return resolve_translation_path(translations_dir, page, lang)[0]


def _case_insensitive(root: Path, parts: list[str]) -> list[Path]:
    found = [root]
    for part in parts:
        lower = part.casefold()
        nxt = []
        for folder in found:
            try:
                names = os.listdir(folder)
            except OSError:
                continue
            nxt.extend(folder / n for n in names if n.casefold() == lower)
        found = nxt
        if not found:
            break
    return found


def resolve_translation_path(
    translations_dir: Path, page: SourceFile, lang: str, listing: TreeListing | None = None
) -> tuple[Path, Finding | None]:
    """The translation file of `page` and, when it was found by case alone, a warning. `listing`:
    the translations folder as the build's walk saw it, asked before the disk."""
    path, by_case = resolve_translation_file(os.fspath(translations_dir), page.base, lang, listing)
    return Path(path), by_case


def resolve_translation_file(
    translations_dir: str, base: str, lang: str, listing: TreeListing | None = None
) -> tuple[str, Finding | None]:
    """`resolve_translation_path` in strings (asked for every page in every language)."""
    name = f"{base}.{lang}.json"
    exact = os.path.join(translations_dir, name)
    there = listing.exists(name) if listing is not None else None
    if there is None:
        there = os.path.exists(exact)
    if there:
        return exact, None
    root = Path(translations_dir)
    by_case = listing.files_by_case(name) if listing is not None else None
    if by_case is not None:
        candidates = [root / c for c in by_case]
    else:
        candidates = [c for c in _case_insensitive(root, name.split("/")) if c.is_file()]
    if len(candidates) != 1:
        return exact, None
    found = candidates[0]
    return str(found), Finding(
        "warning", "path-case",
        f"the translations of {base} are read from {found.relative_to(root)}, whose path "
        f"differs from the source's only in case; rename it to {name}",
        str(found),
    )


def sidecar_name(main: str, kind: str) -> str:
    """`x.zh.json` → `x.zh.<kind>.json` (a name or a whole path)."""
    stem = main[: -len(".json")] if main.endswith(".json") else main
    return f"{stem}.{kind}.json"


def _sidecar(main: Path, kind: str) -> Path:
    main = Path(main)
    return main.with_name(sidecar_name(main.name, kind))


def fuzzy_path(main: Path) -> Path:
    return _sidecar(main, "fuzzy")


def stale_path(main: Path) -> Path:
    return _sidecar(main, "stale")


def is_sidecar(path: Path) -> bool:
    """True for `*.fuzzy.json` / `*.stale.json` / `*.review.json` (review_state.py), which are
    not catalogs of their own."""
    return Path(path).name.endswith((".fuzzy.json", ".stale.json", ".review.json"))


@dataclass(frozen=True)
class Entry:
    value: str
    line: int  # line of the key in the JSON file (1-based)
    previous: str | None = None  # fuzzy suggestions: the old English key the value translated
    col: int = 0


def load_fuzzy(main: Path, root: Path | None = None) -> tuple[dict[str, Entry], list[Finding]]:
    """Read the fuzzy sidecar of `main`; malformed entries are reported and skipped."""
    parsed = parse_translation_file(fuzzy_path(main), root)
    findings = run_file_checks(FileContext(parsed, kind="fuzzy"))
    fuzzy: dict[str, Entry] = {}
    if not parsed.usable:
        return fuzzy, findings
    for pair in parsed.pairs:
        item = pair.value
        if oversized(pair):
            continue  # reported by the size check
        if (
            isinstance(item, dict)
            and isinstance(item.get("suggestion"), str)
            and isinstance(item.get("from", ""), str)
        ):
            fuzzy[pair.key] = Entry(item["suggestion"], pair.line, item.get("from") or None)
        else:
            findings.append(
                Finding(
                    "error", "fuzzy-malformed",
                    'a fuzzy entry must be {"suggestion": "…", "from": "old English"}; '
                    "fix it or delete the entry (run extract to regenerate suggestions)",
                    parsed.path, pair.line, pair.col, pair.key,
                )
            )
    return fuzzy, findings


@dataclass
class Catalog:
    path: str
    lang: str
    entries: dict[str, Entry] = field(default_factory=dict)
    fuzzy: dict[str, Entry] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)  # load-time problems, main and sidecar
    # Keys that must not be used because of a load-time problem (duplicate with another value,
    # non-string value): they look up as "invalid" rather than "missing".
    blocked: dict[str, list[Finding]] = field(default_factory=dict, repr=False)
    _cache: dict[str, Verdict] = field(default_factory=dict, repr=False, compare=False)
    _units: "_KnownUnits | None" = field(default=None, repr=False, compare=False)
    _by_text: dict[str, list[str]] | None = field(default=None, repr=False, compare=False)
    _by_untabled: dict[str, str] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def load(cls, path: Path, lang: str, root: Path | None = None) -> "Catalog":
        """`root`: the translations folder, when known (a file under a linked folder below it is
        refused). Never raises on what the files hold; a link, FIFO, device or oversize file is
        not read and is reported in `findings`."""
        path = Path(path)
        parsed = parse_translation_file(path, root)
        catalog = cls(str(path), lang)
        catalog.findings = run_file_checks(FileContext(parsed, lang))
        if parsed.usable:
            catalog._take_pairs(parsed)
        catalog.fuzzy, fuzzy_findings = load_fuzzy(path, root)
        catalog.findings.extend(fuzzy_findings)
        return catalog

    @classmethod
    def from_parsed(cls, parsed: ParsedFile, lang: str) -> "Catalog":
        """The catalog of a file already read (an older version from git), without sidecars."""
        catalog = cls(parsed.path, lang)
        catalog.findings = run_file_checks(FileContext(parsed, lang))
        if parsed.usable:
            catalog._take_pairs(parsed)
        return catalog

    def with_value(self, key: str, value: str, line: int = 0) -> "Catalog":
        """This catalog with `value` as the translation of `key` (a draft in the editor): every
        other entry, the fuzzy suggestions and the findings of the file as they are."""
        entries = dict(self.entries)
        old = entries.get(key)
        entries[key] = Entry(value, line or (old.line if old else 0), col=old.col if old else 0)
        blocked = {k: v for k, v in self.blocked.items() if k != key}
        return Catalog(self.path, self.lang, entries, dict(self.fuzzy), list(self.findings), blocked)

    def _take_pairs(self, parsed: ParsedFile) -> None:
        for finding in self.findings:
            if finding.key and finding.severity == "error":
                self.blocked.setdefault(finding.key, []).append(finding)
        for pair in parsed.pairs:
            if isinstance(pair.value, str):
                self.entries[pair.key] = Entry(pair.value, pair.line, col=pair.col)  # last one wins, as in JSON

    def verdict(self, key: str, page_keys: Collection[str] | None = None) -> Verdict:
        """What the English block `key` is in this language (`verdict.py`): its state, the HTML
        the page shows, the findings. `page_keys`: every key the page produces, when known; an
        entry of the file that is none of them is stale."""
        if page_keys is not None and key not in page_keys and key in self.entries:
            entry = self.entries[key]
            return stale(Finding(
                "warning", "stale-key",
                "the English for this key no longer exists (it changed or was removed); run the "
                f"builder's `extract --lang {self.lang or 'xx'}` command to move it aside and get a "
                "suggestion for the new text", self.path, entry.line, entry.col, key,
            ))
        cached = self._cache.get(key)
        if cached is None:
            cached = self._cache[key] = self._verdict(key)
        return cached

    def _verdict(self, key: str) -> Verdict:
        if key in self.blocked:
            return Verdict("invalid", None, tuple(self.blocked[key]))
        entry = self.entries.get(key)
        if entry is None or not entry.value.strip():
            legacy = legacy_key(key)
            if legacy is not None and legacy in self.entries and self.entries[legacy].value.strip():
                found = self.verdict(legacy)  # written for the original site's key rule
                if found.html is None:
                    return found
                return Verdict(found.state, from_legacy(key, found.html), found.findings, found.repaired)
            untabled = self._untabled(key)
            if untabled is not None:
                found = self.verdict(untabled)  # the original's key: a table or rule as a paragraph
                if found.html is None:
                    return found
                return Verdict(found.state, from_untabled(key, untabled, found.html), found.findings, found.repaired)
            moved = self._retargeted(key)
            if moved is not None:
                return moved
            # An empty value is "not translated yet": it must never render as an empty block.
            composed = self._from_units(key)
            if composed is not None:
                return composed
            return FUZZY if key in self.fuzzy else UNTRANSLATED
        return judge(key, entry.value, self.path, entry.line, self.lang)

    def _untabled(self, key: str) -> str | None:
        """The entry written for the original's key of `key`'s tables and rules (`untabled.py`)."""
        if "<table>" not in key and "<hr>" not in key:
            return None
        if self._by_untabled is None:
            self._by_untabled = {}
            for k, e in self.entries.items():
                if e.value.strip() and "<table>" not in k and "<hr>" not in k:
                    signature = untabled_signature(k)
                    if signature is not None:
                        self._by_untabled.setdefault(signature, k)
        signature = untabled_signature(key)
        return self._by_untabled.get(signature) if signature is not None else None

    def _retargeted(self, key: str) -> Verdict | None:
        """A key whose English changed only where its links point: the old translation with the
        new link targets, checked like any value."""
        if "href=" not in key:
            return None
        if self._by_text is None:
            self._by_text = {}
            for k, e in self.entries.items():
                if "href=" in k and e.value.strip() and k not in self.blocked:
                    self._by_text.setdefault(without_hrefs(k), []).append(k)
        candidates = self._by_text.get(without_hrefs(key), [])
        if len(candidates) != 1:
            return None
        old = candidates[0]
        entry = self.entries[old]
        value = retarget(old, key, entry.value)
        if value is None:
            return None
        found = judge(key, value, self.path, entry.line, self.lang)
        if not found.shown or any(f.severity == "error" for f in found.findings):
            return None
        note = Finding(
            "warning", "links-moved",
            "the English of this block changed only where its links point; the translation at "
            f"this line is shown with the new link targets. Run extract to update the file",
            self.path, entry.line, 0, key,
        )
        return Verdict("repaired", found.html, (note, *found.findings))

    def _from_units(self, key: str) -> Verdict | None:
        """A key whose English changed in some blocks only: the blocks (or list items) whose
        English is exactly that of a block another entry translates show that translation,
        checked like any value; the others show the marked English."""
        if "<" not in key:
            return None
        if self._units is None:
            self._units = _KnownUnits(self)
        if not self._units:
            return None
        lines: list[int] = []

        def check(english: str, found: tuple[str, int]) -> str | None:
            part = judge(english, found[0], self.path, found[1], self.lang)
            if not part.shown or any(f.severity == "error" for f in part.findings):
                return None
            lines.append(found[1])
            return part.html

        html = compose_from_units(key, self._units, check)
        if html is None:
            return None
        note = Finding(
            "warning", "partly-translated",
            "this block's English changed; its parts whose English did not change show their "
            f"translation from line{'s' if len(set(lines)) > 1 else ''} "
            f"{', '.join(map(str, sorted(set(lines))))}, the rest is shown in English. Run extract "
            "and translate the block",
            self.path, min(lines), 0, key,
        )
        return Verdict("repaired", html, (note,))

    def __contains__(self, key: str) -> bool:
        return key in self.entries


def _as_reviewed(key: str, value: str, verdict: Verdict) -> str:
    """An entry's value as its review (`verdict.judge`) left it: as written when the checks found
    no error (warnings only: nothing to repair), the repair when it made one, else repaired now.
    The review's answer saves parsing the value again with html5lib (three of the nine values the
    real corpus's benchmark edit parsed); on every entry of the real corpus, the tutorial and the
    benchmark corpus, the unit pairs are those of `repair_html`'s value."""
    if verdict.state == "translated":
        return value
    if verdict.repaired is not None:
        return verdict.repaired
    return repair_html(key, value)


class _KnownUnits:
    """English block (or list item) → (its translation, the line) from the first entry of the
    file, in file order, that is shown and whose blocks pair up with its translation's
    (`repair.unit_pairs`). Found on demand: an entry is judged only when its English has a block
    asked for (a file full of stale entries is not judged whole for one changed key)."""

    def __init__(self, catalog: "Catalog") -> None:
        self.catalog = catalog
        self.found: dict[str, tuple[str, int]] = {}
        self.pairs: dict[str, dict[str, str]] = {}  # entry → its (English → translation) pairs
        self.by_block: dict[str, list[str]] | None = None
        self.missing: set[str] = set()

    def _index(self) -> dict[str, list[str]]:
        if self.by_block is None:
            self.by_block = {}
            c = self.catalog
            for k, e in c.entries.items():
                if not e.value.strip() or k in c.blocked or "<" not in k:
                    continue
                for _tag, block, items in key_units(k) or ():
                    for english in (block, *(items or ())):
                        self.by_block.setdefault(english, []).append(k)
        return self.by_block

    def _pairs(self, k: str) -> dict[str, str]:
        pairs = self.pairs.get(k)
        if pairs is None:
            c = self.catalog
            e = c.entries[k]
            pairs = self.pairs[k] = {}
            verdict = c.verdict(k)
            if verdict.shown:  # (unsafe or unrepairable: none of its parts is used either)
                for block, translated in unit_pairs(k, _as_reviewed(k, e.value, verdict)):
                    pairs.setdefault(block, translated)
        return pairs

    def _resolve(self, english: str) -> None:
        for k in self._index().get(english, ()):  # in file order: the first entry with it wins
            pairs = self._pairs(k)
            if english in pairs:
                self.found[english] = (pairs[english], self.catalog.entries[k].line)
                return

    def __bool__(self) -> bool:
        return bool(self._index())

    def __contains__(self, english: str) -> bool:
        if english not in self.found and english not in self.missing:
            self._resolve(english)
            if english not in self.found:
                self.missing.add(english)
        return english in self.found

    def __getitem__(self, english: str) -> tuple[str, int]:
        if english not in self:
            raise KeyError(english)
        return self.found[english]


def file_verdicts(catalog: Catalog, page_keys: Collection[str] | None = None) -> dict[str, Verdict]:
    """The verdict on every entry of a catalog's file (keys in file order; a duplicate once)."""
    keys = dict.fromkeys([*catalog.entries, *catalog.blocked])
    return {key: catalog.verdict(key, page_keys) for key in keys}


def check_file(path: Path, lang: str, english_keys: Collection[str] | None = None, root: Path | None = None) -> list[Finding]:
    """Every finding for one translation file (and its fuzzy sidecar), sorted by line: the file's
    own, and each entry's verdict's (`Catalog.verdict`, as the build, review, stats and the editor
    see it), and a note for each entry not translated yet.

    `english_keys`: the keys the source produces for this page.  With it, keys that are no longer
    produced are stale (a `stale-key` warning; their values are not checked further: they are
    never rendered, and `extract` moves them aside).  A missing file gives no findings.
    """
    path = Path(path)
    catalog = Catalog.load(path, lang, root)
    findings = list(catalog.findings)
    known = set(findings)
    for key, found in file_verdicts(catalog, english_keys).items():
        findings.extend(f for f in found.findings if f not in known)
        if found.state in ("untranslated", "fuzzy"):
            entry = catalog.entries[key]
            findings.append(untranslated_note(str(path), entry.line, key))
    return sorted(findings, key=lambda f: (f.path, f.line, f.col))
