"""Checks for translation files, as small registered functions.

Translations arrive as pull requests, so everything in them is untrusted input.  Each check is a
function registered with `@file_check(...)` (sees the whole file: encoding, JSON syntax, keys) or
`@entry_check(...)` (sees one key/value pair and compares the translation with its English key).
Adding a check means writing one more decorated function here; the runners below pick it up.

Severity: "error" means the entry (or file) must not be used: its verdict (`verdict.py`) is
invalid, the page renders the English instead and `build.py check` fails.  "warning" is shown to translators but changes nothing.

Reading a file is `files.py`'s job and analysing a fragment's HTML `html_outline.py`'s; this
module holds only the checks and the two runners, `run_file_checks` and `run_entry_checks`
(`Catalog.load` and `verdict.py` run them).
"""
from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from ..findings import Finding, shorten
from ..read.markup import (
    ALLOWED_ATTRIBUTES,
    ALLOWED_TAGS,
    CELL_ALIGN_VALUES,
    SPAN_TRANSLATE_VALUES,
    URL_SCHEMES,
    allowed_summary,
    placeholder,
)
from . import glossary
from . import files
from .files import ParsedFile, RawPair, string_size
from .html_outline import (
    URLISH_ATTRIBUTES,
    HtmlOutline,
    HtmlSummary,
    PlaceholderScan,
    _key_placeholders,
    outline_html,
    outline_key,
    scan_placeholders,
    summarize_html,
    summarize_key,
    url_scheme,
    visible_text,
)
from .sanitize import is_protocol_relative
from ..lazy_re import lazy

# --------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------

Scope = Literal["file", "entry"]


@dataclass(frozen=True)
class Check:
    name: str
    scope: Scope
    codes: tuple[str, ...]  # the finding codes it may emit (for docs and `--list-checks`)
    fn: Callable[[Any], Iterable[Finding]]
    skip_empty: bool = True  # entry checks: not run on an empty (untranslated) value


_REGISTRY: dict[str, Check] = {}


def _register(scope: Scope, codes: tuple[str, ...], skip_empty: bool = True):
    def decorate(fn):
        _REGISTRY[fn.__name__] = Check(fn.__name__, scope, codes, fn, skip_empty)
        return fn

    return decorate


def file_check(*codes: str):
    """Register `fn(ctx: FileContext) -> Iterable[Finding]`."""
    return _register("file", codes)


def entry_check(*codes: str, skip_empty: bool = True):
    """Register `fn(ctx: EntryContext) -> Iterable[Finding]`."""
    return _register("entry", codes, skip_empty)


def registered_checks(scope: Scope | None = None) -> list[Check]:
    return [c for c in _REGISTRY.values() if scope is None or c.scope == scope]


def unregister(name: str) -> None:
    """Remove a check (tests register throwaway checks and clean up after themselves)."""
    _REGISTRY.pop(name, None)


# Never allowed, even when the English has them: they run script, load or submit content, or
# switch the parser into a foreign or raw-text mode.
HARD_DENY_TAGS = frozenset(
    {"script", "style", "iframe", "frame", "frameset", "object", "embed", "applet", "form",
     "input", "button", "textarea", "select", "option", "base", "meta", "link", "svg", "math",
     "template", "noscript", "xmp", "plaintext", "noembed", "noframes", "portal", "marquee",
     "html", "head", "body", "title", "video", "audio", "source", "track", "canvas", "dialog",
     "img", "image", "picture", "param", "isindex", "listing"}
)
# Attributes worth naming in the message because they run script or load content.
_MAX_BAD_BYTES = 5  # invalid UTF-8 sequences reported one by one, then counted
_DANGEROUS_ATTRIBUTES = frozenset({"style", "srcdoc", "formaction", "action", "xlink:href", "src"})
_MARKUP_IN_ATTRIBUTE = re.compile(r"[<>]")


# --------------------------------------------------------------------------------------------
# Contexts passed to the checks
# --------------------------------------------------------------------------------------------


@dataclass
class EntryContext:
    """One key/value pair; the key is the English HTML the value translates."""

    key: str
    value: str
    path: str = ""
    line: int = 0
    lang: str = ""

    def finding(self, severity, code: str, message: str) -> Finding:
        return Finding(severity, code, message, self.path, self.line, 0, self.key)

    def error(self, code: str, message: str) -> Finding:
        return self.finding("error", code, message)

    def warning(self, code: str, message: str) -> Finding:
        return self.finding("warning", code, message)

    @property
    def is_empty(self) -> bool:
        return not self.value.strip()

    # The built-in checks read the outlines; `key_html` and `value_html` (with positions) are
    # built only to point at a problem, or for a plugin that asks for them.
    @cached_property
    def key_outline(self) -> HtmlOutline:
        """The English's outline, shared with its other languages (immutable)."""
        return outline_key(self.key)

    @cached_property
    def value_outline(self) -> HtmlOutline:
        return outline_html(self.value)

    @cached_property
    def key_html(self) -> HtmlSummary:
        return summarize_key(self.key)

    @cached_property
    def value_html(self) -> HtmlSummary:
        return summarize_html(self.value)

    @cached_property
    def key_placeholders(self) -> list[int]:
        return list(_key_placeholders(self.key))

    @cached_property
    def value_placeholders(self) -> PlaceholderScan:
        return scan_placeholders(self.value)

    @cached_property
    def key_urls(self) -> list[str]:
        """The English's link targets (href, src): all a translation may link to."""
        return list(self.key_outline.urls)

    @cached_property
    def key_ids(self) -> list[str]:
        """The English's ids: all a translation may define."""
        return list(self.key_outline.ids)

    @cached_property
    def english_attributes(self) -> set[tuple[str, str, str | None]]:
        return set(self.key_outline.attributes)

    @cached_property
    def has_unusual_chars(self) -> bool:
        """False when the value has no lone surrogate or control character (nearly always)."""
        return _UNUSUAL_CHARS.search(self.value) is not None

    @property
    def key_is_plain_text(self) -> bool:
        return not self.key_outline.tag_names


@dataclass
class FileContext:
    parsed: ParsedFile
    lang: str = ""
    kind: Literal["main", "fuzzy", "stale"] = "main"  # sidecars hold objects/lists, not strings

    @property
    def path(self) -> str:
        return self.parsed.path

    def finding(self, severity, code, message, line=0, col=0, key="") -> Finding:
        return Finding(severity, code, message, self.path, line, col, key)


# --------------------------------------------------------------------------------------------
# File checks
# --------------------------------------------------------------------------------------------


@file_check("bom")
def check_bom(ctx: FileContext) -> Iterator[Finding]:
    if ctx.parsed.bom:
        yield ctx.finding(
            "error", "bom",
            "the file starts with a byte order mark (BOM); save it as UTF-8 without BOM "
            "(the build reads it anyway, but other tools don't)", 1, 1,
        )


@file_check("not-utf8")
def check_utf8(ctx: FileContext) -> Iterator[Finding]:
    if ctx.parsed.utf16:
        yield ctx.finding("error", "not-utf8", "the file is saved as UTF-16; save it as UTF-8", 1, 1)
        return
    for line, col in ctx.parsed.bad_bytes[:_MAX_BAD_BYTES]:
        yield ctx.finding(
            "error", "not-utf8",
            "bytes that are not valid UTF-8 (entries containing them are not used); "
            "save the file as UTF-8", line, col,
        )
    if len(ctx.parsed.bad_bytes) > _MAX_BAD_BYTES:
        yield ctx.finding(
            "error", "not-utf8",
            f"…and {len(ctx.parsed.bad_bytes) - _MAX_BAD_BYTES} more invalid UTF-8 sequences",
        )


@file_check("json-syntax")
def check_json_syntax(ctx: FileContext) -> Iterator[Finding]:
    if ctx.parsed.syntax_error:
        message, line, col = ctx.parsed.syntax_error
        yield ctx.finding(
            "error", "json-syntax",
            f"invalid JSON: {message}; the whole file is ignored until this is fixed "
            "(a common cause is an unescaped \" inside a value: write \\\")", line, col,
        )


@file_check("not-a-regular-file", "file-too-large", "unreadable-file")
def check_refused(ctx: FileContext) -> Iterator[Finding]:
    if ctx.parsed.refused:
        code, why = ctx.parsed.refused
        if code not in ("file-too-large", "unreadable-file"):
            code = "not-a-regular-file"  # a link, FIFO, device, socket, linked folder
        yield ctx.finding(
            "error", code,
            f"the file {why}; it was not read and the whole file is ignored (a translation file "
            f"must be a plain file of at most {files.MAX_FILE_BYTES // (1024 * 1024)} MB)", 1, 1,
        )


@file_check("value-too-large")
def check_sizes(ctx: FileContext) -> Iterator[Finding]:
    for pair in ctx.parsed.pairs:
        if len(pair.key) > files.MAX_VALUE_CHARS:
            what = "key"
        elif string_size(pair.value) > files.MAX_VALUE_CHARS:
            what = "value"
        else:
            continue
        yield ctx.finding(
            "error", "value-too-large",
            f"this {what} is longer than {files.MAX_VALUE_CHARS} characters; split the block in the "
            "source (the entry is not used)", pair.line, pair.col, pair.key,
        )



@file_check("not-an-object")
def check_top_level(ctx: FileContext) -> Iterator[Finding]:
    if ctx.parsed.syntax_error is None and ctx.parsed.top_level != "object":
        yield ctx.finding(
            "error", "not-an-object",
            f"the file holds a JSON {ctx.parsed.top_level}, not an object; it must be "
            '{"English HTML": "translated HTML", …}', 1, 1,
        )


@file_check("duplicate-key")
def check_duplicates(ctx: FileContext) -> Iterator[Finding]:
    first: dict[str, RawPair] = {}
    for pair in ctx.parsed.pairs:
        if pair.key not in first:
            first[pair.key] = pair
            continue
        earlier = first[pair.key]
        if pair.value == earlier.value:
            yield ctx.finding(
                "warning", "duplicate-key",
                f"this key also appears on line {earlier.line} with the same value; delete one",
                pair.line, pair.col, pair.key,
            )
        else:
            yield ctx.finding(
                "error", "duplicate-key",
                f"this key also appears on line {earlier.line} with a different value; keep one "
                "(the entry is not used until then)", pair.line, pair.col, pair.key,
            )


@file_check("not-a-string")
def check_value_types(ctx: FileContext) -> Iterator[Finding]:
    if ctx.kind != "main":
        return
    for pair in ctx.parsed.pairs:
        if not isinstance(pair.value, str):
            kind = "null" if pair.value is None else type(pair.value).__name__
            yield ctx.finding(
                "error", "not-a-string",
                f"the value is a JSON {kind}; it must be a string of translated HTML "
                '(use "" for not translated yet)', pair.line, pair.col, pair.key,
            )


# --------------------------------------------------------------------------------------------
# Entry checks: placeholders
# --------------------------------------------------------------------------------------------


@entry_check("placeholder-encoded", "placeholder-altered")
def check_placeholder_form(ctx: EntryContext) -> Iterator[Finding]:
    scan = ctx.value_placeholders
    for token, index in scan.encoded:
        yield ctx.error(
            "placeholder-encoded",
            f"placeholder {index} came back encoded as `{token}`; write it as "
            f"`{placeholder(index)}`, exactly as in the English",
        )
    for token, index in scan.altered:
        fix = f"`{placeholder(index)}`" if index is not None else "the placeholder span"
        yield ctx.error(
            "placeholder-altered",
            f"a placeholder was changed (`{token}`); copy {fix} unchanged from the English "
            "(math and code live in it: don't edit, space or unwrap it)",
        )


@entry_check("placeholder-missing", "placeholder-duplicated", "placeholder-extra")
def check_placeholder_set(ctx: EntryContext) -> Iterator[Finding]:
    if sorted(ctx.key_placeholders) == sorted(ctx.value_placeholders.indices):
        return  # each placeholder as often as in the English: none missing, duplicated or extra
    expected = Counter(ctx.key_placeholders)
    found = Counter(ctx.value_placeholders.indices)
    damaged = {i for _, i in ctx.value_placeholders.encoded + ctx.value_placeholders.altered}
    for index in sorted(expected):
        if index not in found and index not in damaged:
            yield ctx.error(
                "placeholder-missing",
                f"placeholder {index} (math or code from the English) is missing; copy "
                f"`{placeholder(index)}` into the translation where it belongs "
                "(placeholders may be reordered, not dropped)",
            )
    for index, count in sorted(found.items()):
        if index in expected and count > expected[index]:
            yield ctx.error(
                "placeholder-duplicated",
                f"placeholder {index} appears {count} times but {expected[index]} in the English; "
                "keep each placeholder exactly once",
            )
        elif index not in expected:
            yield ctx.error(
                "placeholder-extra",
                f"placeholder {index} does not exist in the English; remove it (only "
                f"{', '.join(map(str, sorted(expected))) or 'none'} exist for this block)",
            )


# --------------------------------------------------------------------------------------------
# Entry checks: HTML shape
# --------------------------------------------------------------------------------------------


@entry_check("html-unbalanced")
def check_balanced(ctx: EntryContext) -> Iterator[Finding]:
    if not ctx.key_outline.balanced or ctx.value_outline.balanced:
        # nothing to report, or the English itself is irregular: don't hold the translation to more
        return
    value = ctx.value_html  # with positions, to point at each problem
    if value.failed:
        yield ctx.error("html-unbalanced", f"the HTML could not be read ({value.failed})")
    for tag, line, col in value.stray_end:
        yield ctx.error(
            "html-unbalanced",
            f"stray `</{tag}>` (line {line}, column {col} of the value) closes nothing; delete it",
        )
    for tag, line, col in value.unclosed:
        yield ctx.error(
            "html-unbalanced",
            f"`<{tag}>` (line {line}, column {col} of the value) is never closed; add `</{tag}>` "
            "where the English has it",
        )


@entry_check("html-structure")
def check_block_structure(ctx: EntryContext) -> Iterator[Finding]:
    english = ctx.key_outline.top_blocks
    if not english:
        return
    translated = ctx.value_outline.top_blocks
    if translated != english:
        yield ctx.error(
            "html-structure",
            f"the English has the blocks {' '.join(english)} but the translation has "
            f"{' '.join(translated) or 'none'}; translate each block into the same kind of block, "
            "in the same order (don't merge, split or drop paragraphs, headings or lists)",
        )


@entry_check("html-outside-block")
def check_outside_block(ctx: EntryContext) -> Iterator[Finding]:
    if ctx.key_outline.top_blocks and not ctx.key_outline.outside_content:
        if ctx.value_outline.outside_content:
            yield ctx.error(
                "html-outside-block",
                "text outside any paragraph, heading or list; move it inside the block it "
                "belongs to, as in the English",
            )


@entry_check("html-in-plain-text")
def check_plain_text(ctx: EntryContext) -> Iterator[Finding]:
    if ctx.key_is_plain_text and ctx.value_outline.tag_names:
        names = sorted(ctx.value_outline.tag_names)
        yield ctx.error(
            "html-in-plain-text",
            f"this entry (a title or summary) is plain text but the translation has HTML tags "
            f"({', '.join(names)}); remove them",
        )


# --------------------------------------------------------------------------------------------
# Entry checks: unsafe content
# --------------------------------------------------------------------------------------------


@entry_check("unsafe-tag", "markup-dropped")
def check_tags(ctx: EntryContext) -> Iterator[Finding]:
    not_allowed = ctx.value_outline.tag_names - ALLOWED_TAGS
    if not not_allowed:
        return
    english = ctx.key_outline.tag_names
    for name in sorted(not_allowed):
        if name in english and name not in HARD_DENY_TAGS:
            # Copied from the English (raw HTML in the source): not the translator's doing, but
            # the sanitizer removes it, so say so.
            yield ctx.warning(
                "markup-dropped",
                f"the English uses `<{name}>`, which translations can't carry; the translated "
                "block is shown without it (a maintainer can change the English to avoid it)",
            )
            continue
        yield ctx.error(
            "unsafe-tag",
            f"the tag `<{name}>` is not allowed in translations; only "
            f"{', '.join(sorted(ALLOWED_TAGS))} are. Remove it",
        )


@entry_check("unsafe-attribute")
def check_attributes(ctx: EntryContext) -> Iterator[Finding]:
    seen = set()
    english = ctx.key_outline.attributes
    for name, attr, value in ctx.value_outline.attributes:
        if (name, attr) in seen:
            continue
        if name == "span" and attr == "translate" and value in SPAN_TRANSLATE_VALUES:
            continue
        if name in ("th", "td") and attr == "align" and value in CELL_ALIGN_VALUES:
            continue
        dangerous = (
            attr.startswith("on") or attr in _DANGEROUS_ATTRIBUTES or attr in URLISH_ATTRIBUTES
        )
        if not dangerous and (name, attr, value) in english:
            continue  # e.g. a footnote link's class: the sanitizer drops it, harmlessly
        if attr in ALLOWED_ATTRIBUTES.get(name, ()):
            if value is None or not _MARKUP_IN_ATTRIBUTE.search(value):
                continue
            if any(a == attr and v == value for _, a, v in english):
                continue
            seen.add((name, attr))
            yield ctx.error(
                "unsafe-attribute",
                f"the `{attr}` of `<{name}>` contains `<` or `>`; markup inside an "
                "attribute can turn into real tags when the page is re-parsed. Remove it",
            )
            continue
        seen.add((name, attr))
        why = (
            "event handlers run script" if attr.startswith("on")
            else "it can run script or load content" if attr in _DANGEROUS_ATTRIBUTES
            else allowed_summary()
        )
        yield ctx.error(
            "unsafe-attribute",
            f"the attribute `{attr}` on `<{name}>` is not allowed ({why}); remove it",
        )


@entry_check("unsafe-url")
def check_urls(ctx: EntryContext) -> Iterator[Finding]:
    for name, attr, value in ctx.value_outline.urlish:
        scheme = url_scheme(value)
        if scheme is not None and scheme not in URL_SCHEMES:
            yield ctx.error(
                "unsafe-url",
                f"`{attr}` on `<{name}>` uses the URL scheme `{scheme}:`; only "
                "http, https, mailto and relative links are allowed, and only those of the "
                "English. Copy the link from the English",
            )


@entry_check("unsafe-markup")
def check_markup(ctx: EntryContext) -> Iterator[Finding]:
    for item in ctx.value_outline.markup:
        yield ctx.error(
            "unsafe-markup",
            f"comments, doctypes and processing instructions are not allowed (`{item}`); "
            "remove it",
        )


@entry_check("link-changed", "link-missing")
def check_links(ctx: EntryContext) -> Iterator[Finding]:
    english = ctx.key_outline.link_targets
    translated = ctx.value_outline.link_targets
    for url in sorted(translated):
        if url not in english:
            where = " (it loads from another site)" if is_protocol_relative(url) else ""
            yield ctx.error(
                "link-changed",
                f"the link `{shorten(url, 60)}` is not in the English{where}; a translation may "
                "not add or change link targets. Use the English's href unchanged",
            )
    for url in sorted(english):
        if url not in translated:
            yield ctx.warning(
                "link-missing",
                f"the English links to `{shorten(url, 60)}` but the translation does not; keep "
                "the link around the translated words",
            )


@entry_check("link-added")
def check_anchor_count(ctx: EntryContext) -> Iterator[Finding]:
    translated = ctx.value_outline.anchors
    if not translated:
        return  # cannot be more than the English's
    english = ctx.key_outline.anchors
    if translated > english:
        yield ctx.error(
            "link-added",
            f"the translation has {translated} `<a>` elements but the English has {english}; "
            "a translation may not add links or anchors. Keep only the English's",
        )


@entry_check("id-changed", "id-missing")
def check_ids(ctx: EntryContext) -> Iterator[Finding]:
    english = set(ctx.key_outline.ids)
    translated = set(ctx.value_outline.ids)
    for ident in sorted(translated - english):
        yield ctx.error(
            "id-changed",
            f"the id `{ident}` is not in the English; ids are link anchors and must be copied "
            "unchanged (a new id could clash with the page's own)",
        )
    for ident in sorted(english - translated):
        yield ctx.warning(
            "id-missing",
            f"the English has the anchor `id=\"{ident}\"` but the translation does not; links to "
            f"#{ident} won't work in this language. Copy it from the English",
        )


# --------------------------------------------------------------------------------------------
# Entry checks: characters and warnings
# --------------------------------------------------------------------------------------------

_SURROGATES = "\ud800-\udfff"
_CONTROLS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ufeff"
_LONE_SURROGATE = lazy(f"[{_SURROGATES}]")
_SUSPICIOUS_CHARS = lazy(f"[{_CONTROLS}]")
# Either of those: nearly every value has none, and one search says so for both checks.
_UNUSUAL_CHARS = re.compile(f"[{_SURROGATES}{_CONTROLS}]")


@entry_check("bad-characters", skip_empty=False)
def check_bad_characters(ctx: EntryContext) -> Iterator[Finding]:
    if ctx.has_unusual_chars and _LONE_SURROGATE.search(ctx.value):
        yield ctx.error(
            "bad-characters",
            "the value holds bytes that are not valid UTF-8 (or a lone \\ud8xx escape); "
            "retype the damaged characters and save as UTF-8",
        )


@entry_check("control-chars")
def check_control_chars(ctx: EntryContext) -> Iterator[Finding]:
    found = _SUSPICIOUS_CHARS.findall(ctx.value) if ctx.has_unusual_chars else []
    extra = sorted(set(found) - set(ctx.key)) if found else []
    if extra:
        names = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'control')}" for c in extra)
        yield ctx.warning(
            "control-chars",
            f"invisible control characters not in the English ({names}); delete them",
        )


def _leading_ws(text: str) -> str:
    return text[: len(text) - len(text.lstrip())]


def _trailing_ws(text: str) -> str:
    # str.strip and the regex `\s` agree on what whitespace is; this is `\s*$`, without the
    # regex's retry at every position of the text.
    return text[len(text.rstrip()):]


@entry_check("whitespace-differs")
def check_edge_whitespace(ctx: EntryContext) -> Iterator[Finding]:
    for name, edge in (("leading", _leading_ws), ("trailing", _trailing_ws)):
        english = edge(ctx.key)
        translated = edge(ctx.value)
        if english != translated:
            yield ctx.warning(
                "whitespace-differs",
                f"{name} whitespace differs from the English ({english!r} vs {translated!r}); "
                "match the English",
            )


_WORD = re.compile(r"[^\W\d_]{2,}")


def _same_words(a: str, b: str) -> bool:
    """`a` and `b` are the same words, whatever the whitespace between them. The first words are
    compared first: a translation nearly always differs from its English there already, and
    splitting just the first word off is much quicker than splitting all of both."""
    if a.split(None, 1)[:1] != b.split(None, 1)[:1]:
        return False
    return a.split() == b.split()


@entry_check("untranslated")
def check_identical(ctx: EntryContext) -> Iterator[Finding]:
    if not _same_words(ctx.value, ctx.key):
        return
    if len(_WORD.findall(visible_text(ctx.key))) >= 2:  # "Dropout" may well stay "Dropout"
        yield ctx.warning(
            "untranslated",
            "the value is the same as the English; translate it, or set it to \"\" so the page "
            "shows the English until someone does",
        )


@entry_check("glossary-term")
def check_glossary(ctx: EntryContext) -> Iterator[Finding]:
    """The glossary's translation for each glossary term of the English (`glossary_check.py`
    says how terms are found and matched). A warning: a sentence may have good reason to word a
    term differently."""
    found = glossary.for_catalog(ctx.path, ctx.lang)
    if found is None or not found.terms:
        return
    from . import glossary_check  # (here: a project without a glossary never imports it, 5 ms)

    for match in glossary_check.missing_terms(found, ctx.lang, ctx.key, ctx.value):
        wanted = " / ".join(f"“{w}”" for w in match.term.expected)
        yield ctx.warning(
            "glossary-term",
            f"the English says “{match.found}”; the glossary ({Path(found.path).name}) translates it "
            f"as {wanted}, which this translation does not use",
        )


# --------------------------------------------------------------------------------------------
# Runners
# --------------------------------------------------------------------------------------------


def run_entry_checks(ctx: EntryContext) -> list[Finding]:
    findings: list[Finding] = []
    empty = ctx.is_empty
    for check in _REGISTRY.values():  # as `registered_checks("entry")`, without a list per entry
        if check.scope != "entry" or (check.skip_empty and empty):
            continue
        findings.extend(check.fn(ctx))
    return findings


def run_file_checks(ctx: FileContext) -> list[Finding]:
    findings: list[Finding] = []
    for check in registered_checks("file"):
        findings.extend(check.fn(ctx))
    return findings


def check_entry(key: str, value: str, *, path: str = "", line: int = 0, lang: str = "") -> list[Finding]:
    """All entry findings for one pair (convenient for tests and editors)."""
    return run_entry_checks(EntryContext(key, value, path, line, lang))
