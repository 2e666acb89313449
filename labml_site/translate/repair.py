"""Repairing benign structural defects in a translation instead of discarding it.

Real translation caches (machine translated, then edited) carry defects that lose nothing a
reader needs: a stray `。` after `</p>`, a stray `</a>`, an unclosed `<strong>`, paragraphs merged
or split, placeholders that came back URL-encoded (`_%5e_0_%5e_`). `review` repairs those:

1. encoded placeholders are decoded back to `<span translate=no>_^_N_^_</span>`;
2. the value is parsed by the HTML5 parsing rules (html5lib), which closes what is unclosed and
   drops what closes nothing;
3. content outside any block (text, placeholders, inline tags after a `</p>`) is moved into the
   block before it (or the one after it when there is none before), unless the English itself has
   content outside blocks;
4. the result is serialised and checked again; what is left of the structural codes is reported
   as a warning (`repaired`), and the sanitiser (`sanitize.py`) runs on it as on any value.

Only a value whose placeholders differ from the key's, or that is unsafe, still fails. Then, when
the key spans several top-level blocks and the repaired value has the same blocks, the value is
split by them and only the failing blocks fall back to the marked English (`UNTRANSLATED_MARK`
stands for the marker text, which the page fills in its language).
"""
from __future__ import annotations

import contextlib
import hashlib
import html as _html
import re
from dataclasses import dataclass, field
from collections.abc import Iterator, Mapping, Sequence
from functools import cache, lru_cache

from ..findings import Finding
from ..read.markup import (
    ENCODED_PLACEHOLDER_RE,
    INLINE_TAGS,
    LIST_TAGS,
    LOOSE_IN_SPAN_RE,
    PLACEHOLDER_RE,
    canonical_placeholders,
    is_placeholder_element,
    placeholder,
    placeholder_numbers,
    unit_kind,
)
from . import fast_html
from .checks import EntryContext, run_entry_checks
from .sanitize import sanitize
from ..lazy_re import lazy

# Codes whose defects `repair` removes: after a repair they are warnings, not errors.
REPAIRABLE = frozenset({"html-unbalanced", "html-structure", "html-outside-block", "placeholder-encoded"})
# Stands for the "not yet translated" marker inside a partly translated block; `section_html`
# replaces it by the marker in the page's language.
UNTRANSLATED_MARK = "\ue000untranslated\ue000"

# A value whose placeholders differ from the key's is not repairable, but its other blocks may
# still be shown (`_split_review`).
_PLACEHOLDER_SET = frozenset({"placeholder-missing", "placeholder-duplicated", "placeholder-extra", "placeholder-altered"})

_WHOLE_TAG = lazy(r"</?[A-Za-z][^<>]*>")


@cache
def _html5lib():
    """html5lib's fragment parser and (tree walker, serializer), set up on first use.

    Imported here only: most values are read by `fast_html` and never need it, and importing it
    costs a rebuild ~25 ms (it brings http.client and email along).
    """
    import html5lib
    from html5lib.serializer import HTMLSerializer

    serializer = HTMLSerializer(
        quote_attr_values="always", omit_optional_tags=False, minimize_boolean_attributes=False,
        use_trailing_solidus=False, escape_lt_in_attrs=True, resolve_entities=False,
        alphabetical_attributes=False, strip_whitespace=False, sanitize=False,
    )
    return html5lib.parseFragment, html5lib.getTreeWalker("etree"), serializer


def decode_placeholders(value: str) -> str:
    """`_%5e_0_%5e_` (and the entity spellings), with or without its span → the placeholder."""
    if "%5" not in value and "&#" not in value and "&Hat;" not in value:
        return value

    def fix(m: re.Match) -> str:
        token = m.group("token")
        if ENCODED_PLACEHOLDER_RE.search(token):
            return placeholder(int(m.group("index")))
        return m.group(0)

    return LOOSE_IN_SPAN_RE.sub(fix, value)


def _parse(fragment: str):
    parse_fragment, _, _ = _html5lib()
    return parse_fragment(fragment, container="div", treebuilder="etree", namespaceHTMLElements=False)


def _serialize(node) -> str:
    _, walker, serializer = _html5lib()
    return "".join(serializer.serialize(walker(node)))


def _outer(node) -> str:
    """An element's own HTML, canonical, without the text after it (which the tree walker would
    write too)."""
    tail, node.tail = node.tail, None
    try:
        return canonical_placeholders(_serialize(node))
    finally:
        node.tail = tail


def _serialize_children(root) -> str:
    out = _html.escape(root.text or "", quote=False)
    for child in root:
        out += _serialize(child) + _html.escape(child.tail or "", quote=False)
    return canonical_placeholders(out)


def _has_content(text: str | None) -> bool:
    return bool(text and text.strip())


def _append_into(block, stuff) -> None:
    for kind, payload in stuff:
        if kind == "el":
            block.append(payload)
        else:
            last = list(block)
            if last:
                last[-1].tail = (last[-1].tail or "") + payload
            else:
                block.text = (block.text or "") + payload


def _prepend_into(block, stuff) -> None:
    text = ""
    elements = []
    for kind, payload in stuff:
        if kind == "el":
            elements.append(payload)
        elif elements:
            elements[-1].tail = (elements[-1].tail or "") + payload
        else:
            text += payload
    first_text = block.text or ""
    if elements:
        block.text = text
        elements[-1].tail = (elements[-1].tail or "") + first_text
        for i, e in enumerate(elements):
            block.insert(i, e)
    else:
        block.text = text + first_text


def _unit(el) -> str | None:
    """`markup.unit_kind` of a parsed element at the top level (a placeholder holds only text)."""
    kind = unit_kind(el.tag, el.attrib.items())
    return None if kind == "placeholder" and len(el) else kind


def _is_placeholder(el) -> bool:
    return _unit(el) == "placeholder"


def _move_outside_into_blocks(root, keep: frozenset[str] = frozenset()) -> bool:
    """Move text and inline elements at the top level into the nearest block. True if any moved."""
    children = list(root)
    if not any(_unit(c) == "block" for c in children):
        return False
    moved = False
    # Items at top level: (kind, payload) in document order.
    items: list = []
    if _has_content(root.text):
        items.append(("text", root.text))
    else:
        items.append(("space", root.text or ""))
    for child in children:
        items.append(("el", child))
        tail, child.tail = child.tail, None
        items.append(("text" if _has_content(tail) else "space", tail or ""))
    root.text = None
    for c in children:
        root.remove(c)
    out: list = []  # blocks (elements) and the whitespace between them, in order
    leading: list = []  # content with no block before it: goes into the next block
    last_block = None  # the block the content after it goes into
    last_real = None
    for kind, payload in items:
        if kind == "el" and _unit(payload) == "block":
            if leading:
                _prepend_into(payload, leading)
                leading = []
            out.append(payload)
            last_block = last_real = payload
        elif kind == "el" and _is_placeholder(payload) and (payload.text or "") in keep:
            # a formula the English has between blocks stays there; what follows it belongs to
            # the next block (`<ph>由<p>于…` is `<ph><p>由于…`)
            out.append(payload)
            last_block = None
        elif kind == "space":
            out.append(payload)
        elif last_block is None:
            leading.append((kind, payload.strip() if kind == "text" else payload))
            moved = True
        else:
            if kind == "text":
                _append_into(last_block, [("text", payload.strip())])
                out.append(payload[len(payload.rstrip()):])
            else:
                _append_into(last_block, [(kind, payload)])
            moved = True
    if leading and last_real is not None:  # nothing after it: into the last block
        _append_into(last_real, leading)
    # Rebuild the root from `out`.
    prev = None
    for item in out:
        if isinstance(item, str):
            if prev is None:
                root.text = (root.text or "") + item
            else:
                prev.tail = (prev.tail or "") + item
        else:
            root.append(item)
            prev = item
    return moved


def _drop_empty_inline(root) -> None:
    """Unwrap inline elements that hold only whitespace and no id: the HTML5 parser reopens a
    formatting element left open across a block's end (`<a>` around the newline after `</h3>`)."""
    for parent in root.iter():
        for i, child in reversed(list(enumerate(parent))):
            if (child.tag in INLINE_TAGS and len(child) == 0 and not _has_content(child.text)
                    and "id" not in child.attrib and not is_placeholder_element(child.tag, child.attrib.items())):
                text = (child.text or "") + (child.tail or "")
                if i == 0:
                    parent.text = (parent.text or "") + text
                else:
                    parent[i - 1].tail = (parent[i - 1].tail or "") + text
                parent.remove(child)


def _key_top_level(key: str) -> tuple[bool, frozenset[str]]:
    """Whether the key has content outside blocks (top-level placeholders aside), and the texts
    (`_^_N_^_`) of its top-level placeholders: they stay where they are in a translation."""
    fast = fast_html.tree(key)
    if fast is not None:
        if fast.text_content:
            return True, frozenset()
        keep = set()
        for c in fast.children:
            if c.tail_content:
                return True, frozenset()
            kind = fast_html.unit(c)
            if kind == "placeholder":
                keep.add(c.text)
            elif kind != "block":
                return True, frozenset()
        return False, frozenset(keep)
    root = _parse(key)
    if _has_content(root.text):
        return True, frozenset()
    keep = set()
    for c in root:
        if _has_content(c.tail):
            return True, frozenset()
        if _is_placeholder(c):
            keep.add(c.text or "")
        elif _unit(c) != "block":
            return True, frozenset()
    return False, frozenset(keep)


# Repairs made by earlier builds (`remembering_repairs`): a repair is a function of the key and
# the value alone, and the html5lib it needs costs a one-file rebuild ~25 ms to import and a few
# milliseconds a value. A stack, innermost last, of (known, made here): digest → repaired value.
_REPAIRS: list[tuple[Mapping[str, str], dict[str, str]]] = []


@contextlib.contextmanager
def remembering_repairs(known: Mapping[str, str] | None = None) -> Iterator[dict[str, str]]:
    """While the block lasts, `repair_html` answers from `known` (`repair_digest` → repaired
    value; with an enclosing block, from its too) and from what it repaired since; yields those
    new repairs, which an enclosing block also gets when this one ends."""
    made: dict[str, str] = {}
    _REPAIRS.append((known if known is not None else {}, made))
    try:
        yield made
    finally:
        _REPAIRS.pop()
        if _REPAIRS:
            _REPAIRS[-1][1].update(made)


def keep_repairs(repairs: Mapping[str, str]) -> None:
    """Repairs made elsewhere (in a worker process) join those of the innermost block."""
    if _REPAIRS and repairs:
        _REPAIRS[-1][1].update(repairs)


def repair_digest(key: str, value: str) -> str:
    return hashlib.blake2b(f"{len(key)}:{key}{value}".encode("utf-8", "surrogatepass"), digest_size=20).hexdigest()


def repair_html(key: str, value: str) -> str:
    """`value` with its benign structural defects repaired (see the module docstring)."""
    if not _REPAIRS:
        return _repair_html(key, value)
    digest = repair_digest(key, value)
    for known, made in reversed(_REPAIRS):
        found = made.get(digest)
        if found is None:
            found = known.get(digest)
        if isinstance(found, str):
            return found
    repaired = _REPAIRS[-1][1][digest] = _repair_html(key, value)
    return repaired


def _repair_html(key: str, value: str) -> str:
    fixed = decode_placeholders(value)
    root = _parse(fixed)
    outside, keep = _key_top_level(key)
    if not outside:
        _move_outside_into_blocks(root, keep)
    _drop_empty_inline(root)
    out = _serialize_children(root)
    # the English's edges (a stray tag at the end hid the value's final newline)
    lead = key[: len(key) - len(key.lstrip())]
    trail = key[len(key.rstrip()):]
    return lead + out.strip() + trail


def top_blocks(fragment: str) -> list[tuple[str, str]] | None:
    """(tag, HTML) of each top-level block, the whitespace between them dropped; None when there
    is content outside blocks."""
    fast = fast_html.tree(fragment)
    if fast is not None:
        if fast.text_content or any(fast_html.unit(c) != "block" or c.tail_content for c in fast.children):
            return None
        return [(c.tag, c.html) for c in fast.children]
    root = _parse(fragment)
    if _has_content(root.text):
        return None
    blocks = []
    for child in root:
        if _unit(child) != "block" or _has_content(child.tail):
            return None
        blocks.append((child.tag, _outer(child)))
    return blocks


@dataclass
class Review:
    """What a translation value is good for: `html` (sanitised, placeholders unfilled) or None,
    the findings, and `repaired`: the repaired value when repairing changed it (for `check --fix`)."""

    html: str | None
    findings: list[Finding] = field(default_factory=list)
    repaired: str | None = None
    partial: bool = False


def _errors(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]


def _as_repaired(f: Finding) -> Finding:
    return Finding("warning", "repaired", f"repaired ({f.code}): {f.message}", f.path, f.line, f.col, f.key)


def _sanitized(ctx: EntryContext, value: str, key: str) -> str | None:
    out = sanitize(value, allowed_urls=ctx.key_urls, allowed_ids=ctx.key_ids)
    if sorted(placeholder_numbers(out)) != sorted(placeholder_numbers(key)):
        return None
    return out


def review(key: str, value: str, path: str = "", line: int = 0, lang: str = "") -> Review:
    """Check `value` as the translation of `key`; repair what is benign; see the module docstring."""
    ctx = EntryContext(key, value, path, line, lang)
    findings = run_entry_checks(ctx)
    errors = _errors(findings)
    if not errors:
        html = _sanitized(ctx, value, key)
        if html is None:
            return Review(None, findings + [ctx.error(
                "sanitizer-changed",
                "the sanitizer had to change this translation's placeholders; compare its HTML "
                "with the English and copy the placeholders and tags exactly")])
        return Review(html, findings)
    if any(f.code not in REPAIRABLE and f.code not in _PLACEHOLDER_SET for f in errors):
        return Review(None, findings)  # unsafe (or otherwise wrong): never repaired, never shown
    if value.count("<") != len(_WHOLE_TAG.findall(value)):
        # a "<" that starts no complete tag (`<img src="x …` to the end): the HTML5 parser would
        # drop or reinterpret what follows; that is not a benign defect
        return Review(None, findings)
    repaired = repair_html(key, value)
    rctx = EntryContext(key, repaired, path, line, lang)
    after = run_entry_checks(rctx)
    # What was repaired, reported at the original value's line
    fixed_codes = {f.code for f in errors} - {f.code for f in _errors(after)}
    notes = [_as_repaired(f) for f in errors if f.code in REPAIRABLE]
    remaining = [f for f in after if not (f.severity == "error" and f.code in REPAIRABLE)]
    remaining += [_as_repaired(f) for f in after if f.severity == "error" and f.code in REPAIRABLE
                  and f.code not in {n.code for n in errors}]
    del fixed_codes
    if not _errors(remaining):
        html = _sanitized(rctx, repaired, key)
        if html is not None:
            return Review(html, notes + remaining, repaired if repaired != value else None)
    # Still failing: split by the key's top-level blocks, keep the blocks that pass.
    partial = _split_review(key, repaired, path, line, lang)
    if partial is not None:
        html, block_findings = partial
        return Review(html, notes + block_findings, None, partial=True)
    return Review(None, findings)


def _split_review(key: str, value: str, path: str, line: int, lang: str):
    kblocks = top_blocks(key)
    if not kblocks or len(kblocks) < 2:
        return None
    vblocks = top_blocks(value)
    if vblocks is None or [t for t, _ in vblocks] != [t for t, _ in kblocks]:
        return None
    parts: list[str] = []
    findings: list[Finding] = []
    any_ok = False
    for (_, kb), (_, vb) in zip(kblocks, vblocks):
        ctx = EntryContext(kb, vb, path, line, lang)
        block_findings = [f for f in run_entry_checks(ctx) if f.code != "whitespace-differs"]
        html = None
        if not _errors(block_findings):
            html = _sanitized(ctx, vb, kb)
        if html is None:
            english = sanitize(kb, allowed_urls=ctx.key_urls, allowed_ids=ctx.key_ids)
            if sorted(placeholder_numbers(english)) != sorted(placeholder_numbers(kb)):
                return None
            parts.append(
                '<div class="untranslated" lang="en" data-status="invalid">'
                f'<span class="untranslated-marker" role="note">{UNTRANSLATED_MARK}</span>'
                f"{english}</div>"
            )
            findings.extend(block_findings)
        else:
            any_ok = True
            parts.append(html)
            findings.extend(f for f in block_findings if f.severity != "error")
    if not any_ok:
        return None
    # Keep the fallback's errors as errors (check reports them), but the block is shown.
    return "\n".join(parts) + "\n", findings


# --------------------------------------------------------------------------------------------
# Blocks whose English did not change, inside a key that did
# --------------------------------------------------------------------------------------------

def units(fragment: str) -> list[tuple[str, str, list[str] | None]] | None:
    """(tag, HTML, the HTML of each `<li>` for a list) of each top-level block; None when there
    is content outside blocks."""
    fast = fast_html.tree(fragment)
    if fast is not None:
        return _fast_units(fast)
    root = _parse(fragment)
    if _has_content(root.text):
        return None
    out = []
    for child in root:
        if _has_content(child.tail):
            return None
        kind = _unit(child)
        if kind == "placeholder":  # a display formula or code block between the blocks
            out.append(("placeholder", _outer(child), None))
            continue
        if kind != "block":
            return None
        items = None
        if child.tag in LIST_TAGS:
            items = []
            for li in child:
                if li.tag != "li":
                    items = None
                    break
                items.append(_outer(li))
        out.append((child.tag, _outer(child), items))
    return out


# English keys read by `key_units`, remembered: the same keys are read for every language of a
# page (and again by `serve` on each rebuild), their translations never twice. Only keys of up to
# this many characters are remembered, so the memo stays a few megabytes whatever a file holds.
_REMEMBERED_KEY_CHARS = 8192


@lru_cache(maxsize=1024)
def _remembered_units(key: str) -> tuple[tuple[str, str, tuple[str, ...] | None], ...] | None:
    found = units(key)
    return None if found is None else tuple((tag, html, None if items is None else tuple(items)) for tag, html, items in found)


def key_units(key: str) -> Sequence[tuple[str, str, Sequence[str] | None]] | None:
    """`units` of an English key (immutable: the same answer is given to every caller)."""
    if len(key) > _REMEMBERED_KEY_CHARS:
        return units(key)
    return _remembered_units(key)


def _fast_units(fast: "fast_html.Fragment") -> list[tuple[str, str, list[str] | None]] | None:
    """`units` read from the fast path's tree (the same rules, on its nodes)."""
    if fast.text_content:
        return None
    out = []
    for child in fast.children:
        if child.tail_content:
            return None
        kind = fast_html.unit(child)
        if kind == "placeholder":
            out.append(("placeholder", child.html, None))
            continue
        if kind != "block":
            return None
        items = None
        if child.tag in LIST_TAGS:
            items = [li.html for li in child.children]  # (a list's children are all `<li>` there)
        out.append((child.tag, child.html, items))
    return out


def unit_pairs(key: str, value: str) -> list[tuple[str, str]]:
    """(English, translation) of each block, and of each list item, of a translated entry whose
    blocks (and list items) line up one to one with the English's; [] when they do not. An entry
    of one block is a unit too: a longer key that has the very same block shows its translation
    (an older source's `<h3>Title</h3>` alone, today's with a paragraph after it)."""
    if "<" not in key:
        return []
    k, v = key_units(key), units(value)
    if not k or not v or len(k) != len(v):
        return []
    pairs = []
    for (kt, kh, ki), (vt, vh, vi) in zip(k, v):
        if kt != vt:
            return []
        if kt != "placeholder":
            pairs.append((kh, vh))
        if ki is not None and vi is not None and len(ki) == len(vi):
            pairs.extend(zip(ki, vi))
    return pairs


def _marked(english: str, tag: str = "div") -> str:
    return (f'<{tag} class="untranslated" lang="en" data-status="untranslated">'
            f'<span class="untranslated-marker" role="note">{UNTRANSLATED_MARK}</span>'
            f"{english}</{tag}>")


def compose_from_units(key: str, known: dict[str, str], check) -> str | None:
    """The translation of `key` made of the translations of its blocks (or list items) that
    other entries translate with the very same English (`known`: English → translation; `check`:
    (English, translation) → sanitized HTML or None), the rest marked English. None when no block
    is known."""
    k = key_units(key)
    if not k or (len(k) < 2 and not k[0][2]):
        return None
    parts: list[str] = []
    found = False
    for tag, block, items in k:
        if tag == "placeholder":  # math or code: the same in every language
            parts.append(block)
            continue
        if block in known and (html := check(block, known[block])) is not None:
            parts.append(html)
            found = found or _has_text(block)  # (a known `<p> </p>` alone translates nothing)
            continue
        if items:
            shown = []
            for li in items:
                html = check(li, known[li]) if li in known else None
                if html is not None:
                    shown.append(html)
                    found = found or _has_text(li)
                else:
                    shown.append(_marked_item(li))
            parts.append(f"<{tag}>" + "\n".join(shown) + f"</{tag}>")
            continue
        parts.append(_marked(block))
    if not found:
        return None
    return "\n".join(parts) + "\n"


_ANY_TAG_RE = re.compile(r"<[^>]*>")


def _has_text(block: str) -> bool:
    """Whether an English block has words, not only tags, placeholders and spaces."""
    return bool(_ANY_TAG_RE.sub("", PLACEHOLDER_RE.sub("", block)).strip())


def _marked_item(li: str) -> str:
    inner = li[len("<li>"):-len("</li>")] if li.startswith("<li>") and li.endswith("</li>") else li
    return (f'<li class="untranslated" lang="en" data-status="untranslated">'
            f'<span class="untranslated-marker" role="note">{UNTRANSLATED_MARK}</span>{inner}</li>')


# --------------------------------------------------------------------------------------------
# The original's key rule where it differs from ours
# --------------------------------------------------------------------------------------------

_OL_RE = lazy(r"<ol>(<li>.*?</li>)</ol>", re.S)
_TAG_SPLIT_RE = lazy(r"(<[^>]*>)")
# `[text]` not followed by `(`: no tag, placeholder or bracket inside
_BRACKET_RE = lazy(r"\[([^\[\]<>]+)\](?!\()")


def _bracket_links(key: str) -> str:
    """The original's rendering of a bare `[text]` (no `(url)` after it): a link to `text`
    (`<a href="batch_size, seq_len">batch_size, seq_len</a>`), in the text between tags."""
    if "[" not in key:
        return key
    return "".join(piece if piece.startswith("<") else
                   _BRACKET_RE.sub(lambda m: f'<a href="{m.group(1)}">{m.group(1)}</a>', piece)
                   for piece in _TAG_SPLIT_RE.split(key))


def legacy_key(key: str) -> str | None:
    """The key the original site's rule makes of the same English, where it differs from ours
    (None when the rules agree). A translation file written for the original has that key; its
    translation is used for ours (see `from_legacy`). The differences:

    - a `1. … 2. …` list is one paragraph (`<p>1. A 2. B</p>`), which we render as the list it
      is; its translation (one paragraph, as the original showed it) is used for the list;
    - a bare `[text]` is a link to `text` (a link that goes nowhere), which we show as the
      bracketed text it is;
    - a title from a `#  [Title](url)` line keeps the spaces after `# ` (` Title`): a key
      without markup (a title or summary) is also looked up with one leading space."""
    if "<" not in key:
        return " " + key if key.strip() and not key.startswith(" ") else None
    legacy = _bracket_links(key)
    if "<ol>" in legacy:

        def paragraph(m: re.Match) -> str:
            body = m.group(1)
            if "<ol>" in body or "<ul>" in body:
                return m.group(0)
            items = body[len("<li>"):-len("</li>")].split("</li>\n<li>")
            return "<p>" + " ".join(f"{n}. {item.strip()}" for n, item in enumerate(items, 1)) + "</p>"

        legacy = _OL_RE.sub(paragraph, legacy)
    return legacy if legacy != key else None


_A_ELEMENT_RE = lazy(r'<a href="([^"]*)"[^>]*>(.*?)</a>', re.S)


_ITEM_TAG_RE = lazy(r"<[^>]*>")


def _numbered_items(paragraph: str, count: int) -> list[str] | None:
    """The inner HTML of `<p>1. A 2. B</p>` cut before each number 1 … `count` (followed by `.`,
    `。` or `．`, at the start or after a space, outside any element), without the numbers; None
    unless all are found, in order."""
    inner = paragraph[len("<p>"):-len("</p>")] if paragraph.startswith("<p>") and paragraph.endswith("</p>") else None
    if inner is None:
        return None
    depth_at: list[int] = []  # element depth at each character
    depth, pos = 0, 0
    for m in _ITEM_TAG_RE.finditer(inner):
        depth_at.extend([depth] * (m.start() - pos))
        tag = m.group(0)
        depth_at.extend([-1] * len(tag))  # inside a tag: never a cut
        if not tag.startswith("</") and not tag.endswith("/>") and not tag.startswith("<br"):
            depth += 1
        elif tag.startswith("</"):
            depth -= 1
        pos = m.end()
    depth_at.extend([depth] * (len(inner) - pos))
    cuts: list[tuple[int, int]] = []
    at = 0
    for n in range(1, count + 1):
        rx = re.compile(rf"(?<!\S){n}[.。．]\s*")
        m = rx.search(inner, at)
        while m is not None and depth_at[m.start()] != 0:
            m = rx.search(inner, m.start() + 1)
        if m is None or (n == 1 and inner[:m.start()].strip()):
            return None
        cuts.append((m.start(), m.end()))
        at = m.end()
    items = [inner[start:(cuts[i + 1][0] if i + 1 < len(cuts) else len(inner))].strip()
             for i, (_, start) in enumerate(cuts)]
    return items if all(items) else None


def _relist(key: str, html: str) -> str:
    """`html` (a translation of the original's key, with a numbered list as one paragraph) with
    each such paragraph made the list our key has again, where its numbers 1 … N can be found."""
    k, v = key_units(key), units(html)
    if not k or not v or len(k) != len(v):
        return html
    parts: list[str] = []
    changed = False
    for (kt, _, ki), (vt, vh, _) in zip(k, v):
        items = _numbered_items(vh, len(ki)) if kt == "ol" and vt == "p" and ki else None
        if items is None:
            parts.append(vh)
            continue
        parts.append("<ol>" + "\n".join(f"<li>{item}</li>" for item in items) + "</ol>")
        changed = True
    return "\n".join(parts) + "\n" if changed else html


def from_legacy(key: str, html: str) -> str:
    """A translation (reviewed, sanitized HTML) of `legacy_key(key)` as shown for `key`: a link
    the original made of a bare `[text]` is the bracketed text again (`[译文]`), not a link that
    goes nowhere; a numbered list the original made one paragraph is a list again when the
    translation keeps its numbers (`1.甲 2。乙` → two items); a title's translation loses the
    leading spaces of the original's key."""
    if "<" not in key:
        return html.lstrip() if not key[:1].isspace() else html
    if "<ol>" in key:
        html = _relist(key, html)
    if "[" not in key:
        return html
    made = {m.group(1) for piece in _TAG_SPLIT_RE.split(key) if not piece.startswith("<")
            for m in _BRACKET_RE.finditer(piece)}
    if not made:
        return html
    return _A_ELEMENT_RE.sub(lambda m: f"[{m.group(2)}]" if _html.unescape(m.group(1)) in
                             {_html.unescape(t) for t in made} else m.group(0), html)


# --------------------------------------------------------------------------------------------
# An English block whose link targets changed, and nothing else
# --------------------------------------------------------------------------------------------

_HREF_VALUE = re.compile(r'href="([^"]*)"')


def without_hrefs(key: str) -> str:
    """`key` with every link target blanked: two keys that differ only in where links point
    have the same `without_hrefs`."""
    return _HREF_VALUE.sub('href=""', key)


def retarget(old_key: str, new_key: str, value: str) -> str | None:
    """`value` (a translation of `old_key`) with the links pointing where `new_key`'s do, when
    the two keys differ only in their link targets, in the same order; None otherwise."""
    old, new = _HREF_VALUE.findall(old_key), _HREF_VALUE.findall(new_key)
    if len(old) != len(new) or without_hrefs(old_key) != without_hrefs(new_key):
        return None
    mapping: dict[str, str] = {}
    for a, b in zip(old, new):
        if mapping.setdefault(a, b) != b:
            return None  # one old target became two new ones: which is which is unknown
    return _HREF_VALUE.sub(lambda m: f'href="{mapping.get(m.group(1), m.group(1))}"', value)
