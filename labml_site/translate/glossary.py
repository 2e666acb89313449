"""The glossary as data: `translations/glossary.<lang>.md` (or `glossary.<lang>.json`), and where
a translation file's glossary is. The `glossary-term` check's question, which of a block's
glossary terms its translation misses, is `glossary_check.py`'s.

The Markdown glossary is the translators' own document; its tables are the data:

    | English | 中文 | 说明 |
    |---|---|---|
    | query / queries | 查询 | notes… |
    | layer normalization (layer norm) | 层归一化 | |
    | mean (noun) | 均值；平均 | |
    | sample (verb / noun) | 采样 / 样例文本 | |
    | value / values (not: the value derived) | 值 | |
    | block (a pair) | 屏蔽 | |

English column (`_english_alternatives`):
- `a / b` are alternatives, each written in full (`weighted average / weighted sum`); a term
  matches in any inflection (masks, masked, queries, matrices: `glossary_check.py`);
- a parenthesis is, by its content: a part of speech, `(noun)`, `(verb)` or `(verb / noun)`, so
  the term counts only where the English uses it so ("0 means …" is no noun "mean"); `(not: x,
  y)`, English phrases where the word is another word (those occurrences are not checked); an
  alias, when it shares a word with the term or spells its initials (`(layer norm)`, `(MHA)`);
  code (`` (`d_k`) ``), which is ignored; anything else names a sense (`(a pair)`): the row is
  shown to the translator but not checked, since the check cannot tell senses apart.

Translation column: `x / y` alternatives pair up with the English ones (or with the parts of
speech) when there are as many of each, else any is accepted; within one, `;` or `,` separate
synonyms, all accepted (`均值；平均`); a parenthesis after a term (`批量维在前（batch-first）`) is
an optional gloss. A translation that keeps the English words themselves (a name, “rank 0”)
uses the term, so a row whose translation is the English (`softmax | softmax`) asks that the
word stay in English (“变压器” for “transformer” is flagged).

`glossary.<lang>.json` (read instead of the Markdown when present) is `{"english cell":
"translation cell" | ["synonym", …]}`, each read like the table's cells.

The glossary of a catalog is found by walking up from the catalog's folder to the nearest
`glossary.<lang>.{json,md}` (at most `glossary_files.LEVELS` folders), so the check needs only the path a
finding names; parsed glossaries are cached by path, size and modification time.
"""
from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from ..read.safe_files import UnsafeFile, read_regular
from . import glossary_files

MAX_GLOSSARY_BYTES = 512 * 1024


@dataclass(frozen=True)
class Term:
    english: tuple[str, ...]  # the English forms (lower case)
    expected: tuple[str, ...]  # accepted translations
    note: str = ""
    ambiguous: bool = False  # the row names one sense only (`block (a pair)`): shown, not checked
    pos: str = ""  # "noun" or "verb": the row means that part of speech only ("" either)
    excluded: tuple[str, ...] = ()  # English phrases (lower case) in which the term is not this term


@dataclass(frozen=True)
class Glossary:
    lang: str
    path: str
    terms: tuple[Term, ...]


# ------------------------------------------------------------------------------------------
# Parsing

_ROW = re.compile(r"^\s*\|(.*)\|\s*$")
_SEPARATOR = re.compile(r"^[\s|:\-]+$")
_PAREN = re.compile(r"\s*[（(]([^()（）]*)[)）]")
_CODE = re.compile(r"`[^`]*`")
_POS = {"noun": "noun", "n.": "noun", "verb": "verb", "v.": "verb"}
_QUOTES = "«»“”„\"‘’'`"


@dataclass(frozen=True)
class _Alternative:
    names: tuple[str, ...]  # the term and its aliases
    pos: tuple[str, ...] = ()  # ("verb", "noun") for `(verb / noun)`
    excluded: tuple[str, ...] = ()
    sense: bool = False  # a parenthesis names a sense the check cannot tell apart


def _split_top(cell: str, separators: str) -> list[str]:
    """`cell` split at `separators` outside parentheses."""
    parts, depth, current = [], 0, []
    for ch in cell:
        if ch in "(（":
            depth += 1
        elif ch in ")）":
            depth = max(depth - 1, 0)
        if ch in separators and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def _clean(text: str) -> str:
    return " ".join(text.strip().strip(_QUOTES).replace("`", "").split()).lower()


def _is_alias(inner: str, main: str) -> bool:
    """`(layer norm)` for `layer normalization`, `(MHA)` for `multi-head attention`."""
    inner_words, main_words = set(re.findall(r"\w+", inner.lower())), re.findall(r"\w+", main.lower())
    if inner_words & set(main_words):
        return True
    letters = re.sub(r"[^A-Za-z]", "", inner)
    initials = "".join(w[0] for w in re.findall(r"[A-Za-z]+", main))
    return len(letters) >= 2 and letters.isupper() and letters.lower() == initials.lower()


def _english_alternatives(cell: str) -> list[_Alternative]:
    alternatives = []
    for alt in _split_top(cell, "/"):
        main = _PAREN.sub("", alt).strip()
        names, pos, excluded, sense = [_clean(main)] if main.strip() else [], [], [], False
        for inner in _PAREN.findall(alt):
            inner = inner.strip()
            parts = [p.strip().lower() for p in re.split(r"[/,]", inner)]
            if not inner or _CODE.fullmatch(inner):
                continue  # `(`d_k`)`: the code it stands for
            if all(p in _POS for p in parts):
                pos = [_POS[p] for p in parts]
            elif re.match(r"not\s*:", inner, re.I):
                excluded += [_clean(p) for p in re.split(r"[,;]", inner.split(":", 1)[1]) if _clean(p)]
            elif main and _is_alias(inner, main):
                names.append(_clean(inner))
            else:
                sense = True  # `(a pair)`, `(of layers)`: which sense, in words
        names = [n for n in dict.fromkeys(names) if n]
        if names:
            alternatives.append(_Alternative(tuple(names), tuple(pos), tuple(excluded), sense))
    return alternatives


def _expected_alternatives(cell: str) -> list[list[str]]:
    """`加权平均 / 加权和；加权求和` → [["加权平均"], ["加权和", "加权求和"]]; `X（gloss）` also
    accepts plain `X`."""
    alternatives = []
    for alt in _split_top(cell, "/"):
        forms: list[str] = []
        for synonym in _split_top(alt, ";,；，"):
            full = " ".join(synonym.replace("`", "").split()).strip(_QUOTES).strip()
            bare = _PAREN.sub("", full).strip().strip(_QUOTES).strip()
            forms.extend(n for n in (full, bare) if n and n not in forms)
        if forms:
            alternatives.append(forms)
    return alternatives


def _terms(english_cell: str, expected_cell: str, note: str) -> list[Term]:
    english, expected = _english_alternatives(english_cell), _expected_alternatives(expected_cell)
    if not english or not expected:
        return []
    # (names, part of speech, exclusions, sense) → accepted translations
    pairs: list[tuple[tuple[str, ...], str, tuple[str, ...], bool, list[str]]] = []
    if len(english) == 1 and len(english[0].pos) > 1 and len(english[0].pos) == len(expected):
        alt = english[0]  # sample (verb / noun) | 采样 / 样例文本
        pairs = [(alt.names, pos, alt.excluded, alt.sense, wanted) for pos, wanted in zip(alt.pos, expected)]
    elif len(english) == len(expected) > 1:  # pre-norm / post-norm ↔ 前置… / 后置…
        pairs = [(a.names, a.pos[0] if len(a.pos) == 1 else "", a.excluded, a.sense, w) for a, w in zip(english, expected)]
    else:
        # query / queries | 查询: one term, any of its names, any of the translations
        names = tuple(dict.fromkeys(n for a in english for n in a.names))
        kinds = {a.pos[0] if len(a.pos) == 1 else "" for a in english}
        excluded = tuple(dict.fromkeys(x for a in english for x in a.excluded))
        pos = kinds.pop() if len(kinds) == 1 else ""
        pairs = [(names, pos, excluded, any(a.sense for a in english), [x for alt in expected for x in alt])]
    terms = []
    for names, pos, excluded, sense, wanted in pairs:
        wanted = list(dict.fromkeys(wanted))
        terms.append(Term(names, tuple(wanted), note, sense, pos, excluded))
    return terms


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
        terms.extend(_terms(cells[0], cells[1], cells[2] if len(cells) > 2 else ""))
    return Glossary(lang, path, tuple(terms))


def parse_json(text: str, lang: str = "", path: str = "") -> Glossary:
    data = json.loads(text)
    terms = []
    if isinstance(data, dict):
        for english, wanted in data.items():
            wanted = [wanted] if isinstance(wanted, str) else wanted
            if isinstance(english, str) and isinstance(wanted, list) and all(isinstance(w, str) for w in wanted):
                terms.extend(_terms(english, " ; ".join(wanted), ""))
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
    _HERE.clear()


def glossary_path(folder: str | Path, lang: str) -> Path | None:
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


# (folder, lang) → when that folder itself was found to hold no glossary: the folders of a
# translations tree share their parents, so each is looked in once, not once per child.
_HERE: dict[tuple[str, str], float] = {}


def _find_glossary(folder: Path, lang: str) -> Path | None:
    now = time.monotonic()
    for here in glossary_files.folders_up(os.fspath(folder)):
        cached = _HERE.get((here, lang))
        if cached is None or now - cached >= _NONE_FOR_S:
            for name in glossary_files.names(lang):
                candidate = os.path.join(here, name)
                if os.path.isfile(candidate):
                    return Path(candidate)
            _HERE[(here, lang)] = now
    return None


def for_catalog(catalog_path: str | Path, lang: str) -> Glossary | None:
    """The glossary that applies to the translation file `catalog_path`."""
    if not catalog_path or not lang:
        return None
    # (the folder as a string: asked twice for every entry judged, and a `Path` costs more than
    # the rest of the answer; the folder's spelling only names the remembered answer)
    found = glossary_path(os.path.dirname(os.fspath(catalog_path)), lang)
    return load(found, lang) if found is not None else None


__all__ = ["Glossary", "Term", "parse_markdown", "parse_json", "load", "for_catalog", "glossary_path", "forget_paths"]
