"""Split a commented Python file (or a Markdown file) into prose/code sections.

The split follows the source format exactly, because translation keys are computed from the
prose of each section and must match an existing corpus of translation files byte for byte:

* a `#` comment line contributes its text (after `#` and one optional space, right-stripped)
  plus a newline; a comment line arriving when the current section already has code (blank
  lines count as code) starts a new section;
* the module docstring is the prose of section 0 (YAML front matter at its start becomes page
  metadata) and the code after it joins section 0;
* a decorator, `def` or `class` line starts a new section when the current one has code; a
  docstring right after a `def`/`class` header is appended to the prose of the section holding
  the header, and a new section starts after it;
* sections without prose whose code is blank are dropped (their lines join a neighbour's span).

Python is read with `tokenize`, so `#` and `\"\"\"` inside strings and f-strings stay code.
"""
from __future__ import annotations

import io
import token
import tokenize
from dataclasses import dataclass, field
from pathlib import PurePath

import yaml


@dataclass(frozen=True)
class Section:
    prose: str  # raw Markdown prose ("" if none)
    prose_lines: tuple[int, ...]  # 1-based source line of each line of `prose`
    code: tuple[str, ...]  # code lines without newline, leading/trailing blank lines trimmed
    code_start: int  # 1-based source line of code[0]; 0 when there is no code
    span: tuple[int, int]  # first and last source line (inclusive) this section covers


@dataclass(frozen=True)
class ParsedSource:
    meta: dict[str, str]  # front matter (title, summary, and any other keys as strings)
    sections: tuple[Section, ...]
    # Python only: tokenize's tokens of the CRLF-normalised text, reused by the highlighter
    tokens: tuple[tokenize.TokenInfo, ...] = field(default=(), repr=False, compare=False)


class SourceError(Exception):
    """A source file we cannot split; str() is `path:line: message`."""

    def __init__(self, path: str, line: int, message: str):
        super().__init__(f"{path or '<input>'}:{line}: {message}")
        self.path = path
        self.line = line
        self.message = message


# ---------------------------------------------------------------------------------------------
# Front matter


def split_front_matter(prose: str, path: str = "", first_line: int = 1) -> tuple[dict[str, str], str, int]:
    """Remove YAML front matter (`---` ... `---` at the start of `prose`).

    Returns (meta, remaining prose, number of prose lines removed). Leading empty lines before
    the opening `---` count as part of the front matter (a docstring starts with a newline).
    """
    lines = prose.split("\n")
    i = 0
    while i < len(lines) and lines[i].strip() == "":
        i += 1
    if i >= len(lines) or lines[i].rstrip() != "---":
        return {}, prose, 0
    for j in range(i + 1, len(lines)):
        if lines[j].rstrip() == "---":
            break
    else:
        raise SourceError(path, first_line + i, "front matter opened with '---' is never closed; "
                                                "add a closing '---' line")
    body = "\n".join(lines[i + 1:j])
    try:
        data = yaml.safe_load(body) if body.strip() else {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = first_line + i + 1 + (mark.line if mark is not None else 0)
        raise SourceError(path, line, f"front matter is not valid YAML ({getattr(e, 'problem', e)}); "
                                      "fix the YAML between the '---' lines") from None
    if not isinstance(data, dict):
        raise SourceError(path, first_line + i + 1,
                          "front matter must be a YAML mapping like 'title: ...' and 'summary: ...'")
    meta = {str(k): _meta_value(v) for k, v in data.items()}
    return meta, "\n".join(lines[j + 1:]), j + 1


def _meta_value(v: object) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return v.strip()
    return str(v)


# ---------------------------------------------------------------------------------------------
# Section assembly


@dataclass
class _Builder:
    """A section under construction."""

    start: int
    end: int = 0
    prose: list[str] = field(default_factory=list)  # prose lines
    prose_lines: list[int] = field(default_factory=list)
    prose_closed: bool = True  # whether the prose ends with a newline
    code: list[tuple[int, str]] = field(default_factory=list)

    def add_comment(self, text: str, line: int) -> None:
        # a comment line contributes its text plus a newline (so a paragraph of comments ends
        # with a space in its key); it always starts on its own line, even after a docstring
        self.prose.append(text)
        self.prose_lines.append(line)
        self.prose_closed = True

    def add_docstring(self, lines: list[str], first_line: int) -> None:
        for k, text in enumerate(lines):
            self.prose.append(text)
            self.prose_lines.append(first_line + k)
        self.prose_closed = False

    def prose_text(self) -> str:
        if not self.prose:
            return ""
        text = "\n".join(self.prose)
        return text + "\n" if self.prose_closed else text

    def build(self) -> Section | None:
        code = self.code
        while code and not code[0][1].strip():
            code = code[1:]
        while code and not code[-1][1].strip():
            code = code[:-1]
        prose = self.prose_text()
        if not prose and not code:
            return None
        return Section(prose=prose, prose_lines=tuple(self.prose_lines) if prose else (),
                       code=tuple(t for _, t in code), code_start=code[0][0] if code else 0,
                       span=(self.start, self.end))


def _finish(builders: list[_Builder]) -> tuple[Section, ...]:
    """Build sections; lines of dropped (blank) sections join the previous kept section's span,
    or the next one's when nothing is kept before them, so spans still partition the file."""
    kept: list[Section] = []
    pending_start = 0  # first line of dropped sections waiting for a following kept section
    for b in builders:
        if b.end < b.start:
            continue
        s = b.build()
        if s is None:
            if kept:
                last = kept[-1]
                kept[-1] = _with_span(last, (last.span[0], b.end))
            elif not pending_start:
                pending_start = b.start
            continue
        if pending_start:
            s = _with_span(s, (pending_start, s.span[1]))
            pending_start = 0
        kept.append(s)
    return tuple(kept)


def _with_span(s: Section, span: tuple[int, int]) -> Section:
    return Section(s.prose, s.prose_lines, s.code, s.code_start, span)


# ---------------------------------------------------------------------------------------------
# Python


@dataclass(frozen=True)
class _Docstring:
    start: int
    end: int
    lines: list[str]
    module: bool


def _docstring_lines(tok: tokenize.TokenInfo) -> list[str]:
    """The docstring text rule: rest of the opening line, then the body lines with the opening
    line's indentation removed, then the part of the closing line before the quotes; each line
    right-stripped. An empty closing part adds no line (so no trailing newline)."""
    s = tok.string
    i = 0
    while s[i] not in "\"'":
        i += 1  # string prefix such as r, u
    q = s[i:i + 3] if s[i:i + 3] in ('"""', "'''") else s[i]
    content = s[i + len(q):len(s) - len(q)]
    indent = tok.start[1]
    raw = content.split("\n")
    lines = [raw[0].rstrip()]
    for line in raw[1:]:
        n = len(line) - len(line.lstrip(" \t"))
        lines.append(line[min(n, indent):].rstrip())
    if len(raw) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def _is_bytes_or_fstring(literal: str) -> bool:
    prefix = literal[:len(literal) - len(literal.lstrip("rRuUbBfF"))].lower()
    return "b" in prefix or "f" in prefix


def _tokenize(text: str, path: str) -> list[tokenize.TokenInfo]:
    try:
        return list(tokenize.generate_tokens(io.StringIO(text).readline))
    except tokenize.TokenError as e:
        msg, (line, _col) = e.args
        hint = ("close the string or bracket that starts above" if "EOF" in msg
                else "fix the Python syntax")
        raise SourceError(path, line, f"cannot tokenize Python ({msg}); {hint}") from None
    except SyntaxError as e:  # IndentationError and friends
        raise SourceError(path, e.lineno or 0, f"cannot tokenize Python ({e.msg}); fix the indentation "
                                               "or syntax on this line") from None


_SKIP = {token.NL, token.COMMENT, token.INDENT, token.DEDENT, token.ENCODING}


def _scan(tokens: list[tokenize.TokenInfo]) -> tuple[set[int], dict[int, _Docstring], set[int]]:
    """Classify lines: comment-only lines, docstrings (by start line), and lines that start a
    section when the current one has code (decorators, def, class not after a decorator)."""
    comment_lines: set[int] = set()
    docstrings: dict[int, _Docstring] = {}
    split_lines: set[int] = set()

    # Logical lines: (first significant token index, NEWLINE token index)
    logical: list[tuple[int, int]] = []
    start = None
    indent_before: dict[int, bool] = {}
    saw_indent = False
    for i, t in enumerate(tokens):
        if t.type == token.COMMENT and t.line[:t.start[1]].strip() == "":
            comment_lines.add(t.start[0])
        if t.type == token.INDENT:
            saw_indent = True
        if start is None:
            if t.type in _SKIP or t.type in (token.NEWLINE, token.ENDMARKER):
                continue
            start = i
            indent_before[i] = saw_indent
            saw_indent = False
        if t.type == token.NEWLINE or t.type == token.ENDMARKER:
            logical.append((start, i))
            start = None
    if start is not None:
        logical.append((start, len(tokens) - 1))

    prev_kind = ""
    for n, (a, b) in enumerate(logical):
        first = tokens[a]
        sig = [t for t in tokens[a:b] if t.type not in _SKIP]
        kind = "code"
        if first.type == token.OP and first.string == "@":
            kind = "decorator"
        elif first.type == token.NAME and (first.string in ("def", "class") or (
                first.string == "async" and len(sig) > 1 and sig[1].string == "def")):
            kind = "header"
        elif len(sig) == 1 and first.type == token.STRING and not _is_bytes_or_fstring(first.string):
            if n == 0:
                kind = "module_doc"
            elif prev_kind == "header" and indent_before.get(a, False):
                kind = "doc"
        if kind in ("decorator", "header") and prev_kind != "decorator":
            split_lines.add(first.start[0])
        if kind in ("module_doc", "doc"):
            docstrings[first.start[0]] = _Docstring(first.start[0], first.end[0],
                                                    _docstring_lines(first), kind == "module_doc")
        prev_kind = kind
    return comment_lines, docstrings, split_lines


def _line_count(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def parse_python(text: str, path: str = "") -> ParsedSource:
    """Split Python source into sections; raises SourceError when it cannot be tokenized."""
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    n_lines = _line_count(text)
    tokens = _tokenize(text, path)
    comment_lines, docstrings, split_lines = _scan(tokens)

    meta: dict[str, str] = {}
    builders: list[_Builder] = []
    cur = _Builder(start=1)
    ln = 1
    while ln <= n_lines:
        line = lines[ln - 1]
        if ln in comment_lines:
            if cur.code:
                cur.end = ln - 1
                builders.append(cur)
                cur = _Builder(start=ln)
            body = line.lstrip()[1:]
            if body.startswith(" "):
                body = body[1:]
            cur.add_comment(body.rstrip(), ln)
            ln += 1
            continue
        doc = docstrings.get(ln)
        if doc is not None:
            doc_lines, first = doc.lines, doc.start
            if doc.module:
                fm, rest, removed = split_front_matter("\n".join(doc_lines), path, doc.start)
                if fm or removed:
                    meta = fm
                    doc_lines, first = rest.split("\n"), doc.start + removed
            cur.add_docstring(doc_lines, first)
            ln = doc.end + 1
            if not doc.module:
                cur.end = doc.end
                builders.append(cur)
                cur = _Builder(start=ln)
            continue
        if ln in split_lines and cur.code:
            cur.end = ln - 1
            builders.append(cur)
            cur = _Builder(start=ln)
        cur.code.append((ln, line))
        ln += 1
    cur.end = n_lines
    builders.append(cur)
    return ParsedSource(meta=meta, sections=_finish(builders), tokens=tuple(tokens))


def parse_markdown(text: str, path: str = "") -> ParsedSource:
    """A Markdown file is one prose-only section (front matter, if any, becomes metadata)."""
    text = text.replace("\r\n", "\n")
    n_lines = _line_count(text)
    # lines are right-stripped like comment and docstring lines (trailing spaces mean nothing)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    meta, prose, removed = split_front_matter(text, path, 1)
    if not prose.strip():
        return ParsedSource(meta=meta, sections=())
    count = _line_count(prose) if prose else 0
    section = Section(prose=prose, prose_lines=tuple(range(removed + 1, removed + 1 + count)),
                      code=(), code_start=0, span=(1, n_lines))
    return ParsedSource(meta=meta, sections=(section,))


def parse_source(text: str, path: str) -> ParsedSource:
    """Dispatch on the file suffix: `.py` or `.md`."""
    suffix = PurePath(path).suffix.lower()
    if suffix == ".py":
        return parse_python(text, path)
    if suffix == ".md":
        return parse_markdown(text, path)
    raise SourceError(path, 0, f"unsupported source type {suffix!r}; sources must be .py or .md files")
