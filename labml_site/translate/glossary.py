"""The glossary as data: `translations/glossary.<lang>.md` (or `glossary.<lang>.json`), and the
`glossary-term` check's question: which of a block's glossary terms does its translation miss?

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
  matches in any inflection (`english_words.base_words`: masks, masked, queries, matrices);
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

`missing_terms` is the check (and `term_report` what the editor shows): the terms of the English
(`terms_in`: longest first, whole compounds, part of speech and exclusions applied) whose
translation the translation lacks (`inflection.Text`: substrings in Chinese, Japanese, Korean,
stems elsewhere).

The glossary of a catalog is found by walking up from the catalog's folder to the nearest
`glossary.<lang>.{json,md}` (at most `glossary_files.LEVELS` folders), so the check needs only the path a
finding names; parsed glossaries are cached by path, size and modification time.
"""
from __future__ import annotations

import html
import json
import os
import re
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..read.markup import PLACEHOLDER_RE
from ..read.safe_files import UnsafeFile, read_regular
from . import english_words, glossary_files, inflection

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


@dataclass(frozen=True)
class Match:
    term: Term
    found: str  # the English words as they appear in the block


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


# ------------------------------------------------------------------------------------------
# Finding the terms in the English

_Index = dict[str, list[tuple[tuple[str, ...], Term]]]  # a form's first word → (its words, term)
_INDEXES: dict[int, tuple[Glossary, _Index]] = {}


@lru_cache(maxsize=8192)
def _words(form: str) -> tuple[str, ...]:
    return tuple(t.lower for t in english_words.tokens(form) if t.kind in ("word", "number"))


def _index(glossary: Glossary) -> _Index:
    cached = _INDEXES.get(id(glossary))
    if cached is not None and cached[0] is glossary:
        return cached[1]
    index: _Index = {}
    for term in glossary.terms:
        for form in term.english:
            words = _words(form)
            if words:
                for base in _glossary_bases(words[0]):
                    index.setdefault(base, []).append((words, term))
    if len(_INDEXES) > 64:
        _INDEXES.clear()
    _INDEXES[id(glossary)] = (glossary, index)
    return index


@lru_cache(maxsize=8192)
def _glossary_bases(word: str) -> frozenset[str]:
    """A glossary word and, when it is written as a plural (`scores`, `logits`), its singular:
    a token matches the word when one of the tokens' bases is among these (`seed` is no "see")."""
    return frozenset({word} | {base for base, form in english_words.base_words(word) if form == "s"})


def _word_form(token: english_words.Token, word: str) -> str | None:
    """The form ("" base, "s", "ed", "ing") in which `token` is the glossary's `word`, or None."""
    if token.kind not in ("word", "number"):
        return None
    wanted = _glossary_bases(word)
    common = [(base, form) for base, form in english_words.base_words(token.lower) if base in wanted]
    if not common:
        return None
    return min(common, key=lambda pair: len(pair[0]))[1]  # `scores` for `scores`: the plural of score


def _match_at(toks: list[english_words.Token], i: int, words: tuple[str, ...]) -> str | None:
    """The form of the inflected word when `words` are written at `toks[i:]`, else None."""
    end = i + len(words)
    if end > len(toks) or toks[i].joined or (end < len(toks) and toks[end].joined):
        return None  # not inside a compound: no "head" in "multi-head"
    form = ""
    for k, word in enumerate(words):
        found = _word_form(toks[i + k], word)
        if found is None:
            return None
        form = found or form
    return form


def _excluded(toks: list[english_words.Token], i: int, end: int, phrases: tuple[str, ...]) -> bool:
    """Whether `toks[i:end]` lies inside one of `phrases` (a row's `not:` list, or an idiom)."""
    for phrase in phrases:
        words = _words(phrase)
        for start in range(max(0, end - len(words)), i + 1):
            if start + len(words) >= end and _match_at(toks, start, words) is not None:
                return True
    return False


def terms_in(glossary: Glossary | None, english_text: str) -> list[Match]:
    """The glossary terms in `english_text` (plain text; `english_text()` makes it from a key),
    in their order; where terms overlap the longest wins (`multi-head attention`, not
    `attention` in it), and each term is listed once."""
    if glossary is None or not english_text or not glossary.terms:
        return []
    index = _index(glossary)
    toks = english_words.tokens(english_text)
    spans: list[tuple[int, int, Term]] = []
    for i, tok in enumerate(toks):
        if tok.kind not in ("word", "number"):
            continue
        candidates = {id(t): (w, t) for base, _ in english_words.base_words(tok.lower) for w, t in index.get(base, ())}
        for words, term in candidates.values():
            form = _match_at(toks, i, words)
            if form is None:
                continue
            end = i + len(words)
            if term.pos and english_words.part_of_speech(toks, i, end, form) != term.pos:
                continue
            if _excluded(toks, i, end, term.excluded + english_words.IDIOMS):
                continue
            spans.append((i, end, term))
    spans.sort(key=lambda s: (-(s[1] - s[0]), -(toks[s[1] - 1].end - toks[s[0]].start), s[0]))
    taken: list[tuple[int, int]] = []
    chosen: list[tuple[int, int, Term]] = []
    for start, end, term in spans:
        if any(start < e and s < end for s, e in taken):
            continue
        taken.append((start, end))
        chosen.append((start, end, term))
    matches, seen = [], set()
    for start, end, term in sorted(chosen, key=lambda s: s[0]):
        if id(term) not in seen:
            seen.add(id(term))
            matches.append(Match(term, english_text[toks[start].start:toks[end - 1].end]))
    return matches


def english_text(fragment: str) -> str:
    """A key's text as `terms_in` reads it: tags dropped, a placeholder one token of its own
    (so that "`x` means …" reads as a verb), entities decoded."""
    text = PLACEHOLDER_RE.sub(f" {english_words.PLACEHOLDER} ", fragment)
    return " ".join(html.unescape(re.sub(r"<[^>]*>", " ", text)).split())


def translation_text(fragment: str) -> str:
    """A value's text as a reader sees it, without tags or placeholders."""
    return " ".join(html.unescape(re.sub(r"<[^>]*>", " ", PLACEHOLDER_RE.sub(" ", fragment))).split())


# ------------------------------------------------------------------------------------------
# The check


def has_term(lang: str, text: str, expected: tuple[str, ...]) -> bool:
    """True when `text` (a translation's plain text) uses one of the `expected` translations."""
    return inflection.prepared(lang, text).uses_any(expected)


def uses(lang: str, text: str, match: Match) -> bool:
    """Whether the translation's plain `text` renders `match`: with the glossary's word, or by
    keeping the English as it is."""
    prepared = inflection.prepared(lang, text)
    if prepared.uses_any(match.term.expected):
        return True
    return any(prepared.keeps_english(form) for form in (match.found, *match.term.english))


def term_report(glossary: Glossary | None, lang: str, key: str, value: str) -> list[tuple[Match, bool]]:
    """Each glossary term of the English `key` (HTML) and whether the translation `value` (HTML)
    uses it; an empty value uses none."""
    matches = terms_in(glossary, english_text(key))
    if not matches:
        return []
    text = translation_text(value) if value.strip() else ""
    return [(m, bool(text) and uses(lang, text, m)) for m in matches]


def missing_terms(glossary: Glossary | None, lang: str, key: str, value: str) -> list[Match]:
    """The checked terms of `key` that the translation `value` does not use."""
    return [m for m, used in term_report(glossary, lang, key, value) if not used and not m.term.ambiguous]


__all__ = [
    "Glossary", "Term", "Match", "parse_markdown", "parse_json", "load", "for_catalog", "glossary_path",
    "terms_in", "english_text", "translation_text", "has_term", "uses", "term_report", "missing_terms",
]
