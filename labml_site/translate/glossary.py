"""The glossary as data: `translations/glossary.<lang>.md` (or `glossary.<lang>.json`).

The Markdown glossary is the translators' own document; its table is the data:

    | English | 中文 | 说明 |
    |---|---|---|
    | query / queries | 查询 | notes… |
    | layer normalization (layer norm) | 层归一化 | |
    | pre-norm / post-norm | 前置归一化（pre-norm）/ 后置归一化（post-norm） | |

- the first column holds the English term; `a / b` are alternatives, a parenthesis is an alias
  (`layer normalization (layer norm)`) unless it only disambiguates (`block (a pair)`, `(`d_k`)`);
- the second column holds the expected translation; `x / y` (or `;`, `,`) alternatives pair up with the English
  ones when there are as many of each, else any of them is accepted; a parenthesis after a term
  (`批量维在前（batch-first）`) is an optional gloss: the term without it is accepted too;
- rows whose translation is the English itself (`softmax | softmax`) enforce nothing.

`glossary.<lang>.json` (a structured sibling, read when present instead of the Markdown) is
`{"english term": "translation" | ["translation", …]}`.

`terms_in(glossary, english_text)` finds the glossary's terms in a block's English (whole words,
longest first, case-insensitive, plurals included); `has_term(lang, text, expected)` says whether a
translation uses one of the expected words: a substring for Chinese, Japanese, Korean (no word
boundaries), a per-word stem match elsewhere (so Russian inflections count).

The glossary of a catalog is found by walking up from the catalog's folder to the nearest
`glossary.<lang>.{json,md}` (at most `_MAX_LEVELS` folders), so the check needs only the path a
finding names; parsed glossaries are cached by path, size and modification time.
"""
from __future__ import annotations

import json
import os
import time
import re
from dataclasses import dataclass
from pathlib import Path

from ..read.safe_files import UnsafeFile, read_regular

MAX_GLOSSARY_BYTES = 512 * 1024
_MAX_LEVELS = 6
_CJK_LANGS = ("zh", "ja", "ko")


@dataclass(frozen=True)
class Term:
    english: tuple[str, ...]  # the English forms (lower case)
    expected: tuple[str, ...]  # accepted translations
    note: str = ""
    ambiguous: bool = False  # the row names one sense only (`block (a pair)`): shown, not checked


@dataclass(frozen=True)
class Glossary:
    lang: str
    path: str
    terms: tuple[Term, ...]


@dataclass(frozen=True)
class Match:
    term: Term
    found: str  # the English words as they appear in the block


_ROW = re.compile(r"^\s*\|(.*)\|\s*$")
_SEPARATOR = re.compile(r"^[\s|:\-]+$")
_PAREN = re.compile(r"\s*[（(]([^()（）]*)[)）]")
_CODE = re.compile(r"`[^`]*`")


def _english_forms(cell: str) -> list[list[str]]:
    """`query / queries` → [["query"], ["queries"]]; each alternative with its aliases."""
    forms = []
    for alt in cell.split("/"):
        alt = alt.strip()
        names: list[str] = []
        main = _PAREN.sub("", alt).strip()
        if main:
            names.append(main)
        for inner in _PAREN.findall(alt):
            inner = inner.strip()
            if not inner or _CODE.search(inner) or re.match(r"(a|an|the)\s", inner, re.I):
                continue  # a disambiguation, not an alias
            names.append(inner)
        names = [" ".join(n.replace("`", "").split()).lower() for n in names]
        if any(names):
            forms.append([n for n in names if n])
    return forms


def _expected_forms(cell: str) -> list[list[str]]:
    """`加权平均 / 加权和` → [["加权平均"], ["加权和"]]; `X（gloss）` also accepts plain `X`."""
    forms = []
    for alt in re.split(r"[/;,；，]", cell):
        alt = " ".join(alt.replace("`", "").split())
        if not alt:
            continue
        bare = _PAREN.sub("", alt).strip()
        forms.append(list(dict.fromkeys(n for n in (alt, bare) if n)))
    return forms


def parse_markdown(text: str, lang: str = "", path: str = "") -> Glossary:
    """Every row of the glossary's tables (the first table row is its header)."""
    terms: list[Term] = []
    header = True
    for line in text.splitlines():
        row = _ROW.match(line)
        if not row:
            header = True  # the next table starts with its header again
            continue
        if _SEPARATOR.match(line):
            continue
        cells = [c.strip() for c in row.group(1).split("|")]
        if header:
            header = False
            continue
        if len(cells) < 2 or not cells[0] or not cells[1]:
            continue
        ambiguous = any(re.match(r"(a|an|the)\s", inner.strip(), re.I) for inner in _PAREN.findall(cells[0]))
        terms.extend(_terms(cells[0], cells[1], cells[2] if len(cells) > 2 else "", ambiguous))
    return Glossary(lang, path, tuple(terms))


def _terms(english_cell: str, expected_cell: str, note: str, ambiguous: bool = False) -> list[Term]:
    english, expected = _english_forms(english_cell), _expected_forms(expected_cell)
    if not english or not expected:
        return []
    if len(english) == len(expected) and len(english) > 1:
        pairs = list(zip(english, expected))  # pre-norm / post-norm ↔ 前置… / 后置…
    else:
        pairs = [([e for alt in english for e in alt], [x for alt in expected for x in alt])]
    terms = []
    for names, wanted in pairs:
        if any(w.lower() in names for w in wanted):
            continue  # kept in English (softmax, dropout): nothing to enforce
        terms.append(Term(tuple(dict.fromkeys(names)), tuple(dict.fromkeys(wanted)), note, ambiguous))
    return terms


def parse_json(text: str, lang: str = "", path: str = "") -> Glossary:
    data = json.loads(text)
    terms = []
    if isinstance(data, dict):
        for english, wanted in data.items():
            wanted = [wanted] if isinstance(wanted, str) else wanted
            if isinstance(english, str) and isinstance(wanted, list) and all(isinstance(w, str) for w in wanted):
                terms.extend(_terms(english, " / ".join(wanted), ""))
    return Glossary(lang, path, tuple(terms))


_CACHE: dict[str, tuple[tuple[int, int], Glossary]] = {}


def load(path: Path, lang: str) -> Glossary | None:
    """The glossary in `path` (Markdown or JSON), or None when it cannot be read or parsed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    stamp = (st.st_size, st.st_mtime_ns)
    cached = _CACHE.get(str(path))
    if cached and cached[0] == stamp:
        return cached[1]
    try:
        text = read_regular(path, MAX_GLOSSARY_BYTES).decode("utf-8-sig")
        glossary = parse_json(text, lang, str(path)) if str(path).endswith(".json") else parse_markdown(text, lang, str(path))
    except (OSError, UnsafeFile, UnicodeDecodeError, ValueError, RecursionError):
        return None
    _CACHE[str(path)] = (stamp, glossary)
    return glossary


_PATHS: dict[tuple[str, str], "tuple[Path | None, float]"] = {}  # (folder, lang) → (answer, when)
_NONE_FOR_S = 2.0  # "no glossary" is believed this long (walking up to / costs 30 stats)


def forget_paths() -> None:
    """Look for glossary files again (a build calls this first: one may have been added since)."""
    _PATHS.clear()


def glossary_path(folder: Path, lang: str) -> Path | None:
    """The nearest `glossary.<lang>.json` or `.md` in `folder` or the folders above it. Asked for
    every entry of a file, so the answer is remembered: a glossary found is checked to be still
    there, and not outranked by a `.json` beside it, at each call; "none" is believed for two
    seconds; a glossary added closer than the one found is seen at the next build."""
    if not lang:
        return None
    key, now = (os.fspath(folder), lang), time.monotonic()
    cached = _PATHS.get(key)
    if cached is not None:
        found, when = cached
        if found is None and now - when < _NONE_FOR_S:
            return None
        if found is not None and os.path.isfile(found) and not (
            found.suffix == ".md" and os.path.isfile(found.with_suffix(".json"))
        ):
            return found
    found = _find_glossary(Path(os.path.abspath(folder)), lang)
    _PATHS[key] = (found, now)
    return found


def _find_glossary(folder: Path, lang: str) -> Path | None:
    for _ in range(_MAX_LEVELS):
        for name in (f"glossary.{lang}.json", f"glossary.{lang}.md"):
            candidate = folder / name
            if os.path.isfile(candidate):
                return candidate
        if folder.parent == folder:
            break
        folder = folder.parent
    return None


def for_catalog(catalog_path: str | Path, lang: str) -> Glossary | None:
    """The glossary that applies to the translation file `catalog_path`."""
    if not catalog_path or not lang:
        return None
    found = glossary_path(Path(catalog_path).parent, lang)
    return load(found, lang) if found is not None else None


def _english_pattern(form: str) -> re.Pattern:
    words = [re.escape(w) for w in re.split(r"[\s\-]+", form) if w]
    body = r"[\s\-]+".join(words)
    return re.compile(rf"(?<![\w-])({body})(?:s|es)?(?![\w-])", re.IGNORECASE)


_PATTERNS: dict[str, re.Pattern] = {}


def terms_in(glossary: Glossary | None, english_text: str) -> list[Match]:
    """The glossary terms in `english_text` (plain text), longest first; a shorter term inside a
    longer one found (`attention` in `multi-head attention`) is not counted again."""
    if glossary is None or not english_text:
        return []
    candidates = sorted(
        ((form, term) for term in glossary.terms for form in term.english),
        key=lambda pair: -len(pair[0]),
    )
    taken: list[tuple[int, int]] = []
    matches: list[tuple[int, Match]] = []
    seen: set[int] = set()
    for form, term in candidates:
        pattern = _PATTERNS.get(form)
        if pattern is None:
            pattern = _PATTERNS[form] = _english_pattern(form)
        for m in pattern.finditer(english_text):
            start, end = m.span()
            if any(start < e and s < end for s, e in taken):
                continue
            taken.append((start, end))
            if id(term) not in seen:
                seen.add(id(term))
                matches.append((start, Match(term, m.group(1))))
    return [m for _, m in sorted(matches, key=lambda pair: pair[0])]


def _stem(word: str) -> str:
    """A crude stem for inflected languages (Russian cases, plurals): the word less its ending."""
    if len(word) >= 6:
        return word[:-2]
    if len(word) >= 4:
        return word[:-1]
    return word[:2]


def has_term(lang: str, text: str, expected: tuple[str, ...]) -> bool:
    """True when `text` (a translation's plain text) uses one of the `expected` translations."""
    folded = text.casefold()
    cjk = lang.split("-")[0].lower() in _CJK_LANGS
    for wanted in expected:
        wanted = wanted.casefold()
        if cjk:
            if wanted in folded or wanted.replace(" ", "") in folded.replace(" ", ""):
                return True
            continue
        if all(_stem(word) in folded for word in wanted.split()):
            return True
    return False


__all__ = ["Glossary", "Term", "Match", "parse_markdown", "parse_json", "load", "for_catalog", "glossary_path", "terms_in", "has_term"]
