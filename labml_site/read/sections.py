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

Python is read by tokenizing it (with `tokenize`'s rules, see "Python tokens"), so `#` and
`\"\"\"` inside strings and f-strings stay code.
"""
from __future__ import annotations

import ast
import datetime
import io
import re
import sys
import token
import tokenize
from dataclasses import dataclass, field
from functools import cache
from pathlib import PurePath
from typing import Iterable

from .simple_yaml import simple_mapping


@dataclass(frozen=True)
class Section:
    prose: str  # raw Markdown prose ("" if none)
    prose_lines: tuple[int, ...]  # 1-based source line of each line of `prose`
    code: tuple[str, ...]  # code lines without newline, leading/trailing blank lines trimmed
    code_start: int  # 1-based source line of code[0]; 0 when there is no code
    span: tuple[int, int]  # first and last source line (inclusive) this section covers


@dataclass(frozen=True)
class ParsedSource:
    meta: "FrontMatter"  # front matter (title, summary, …: text; `macros`: a mapping), with its lines
    sections: tuple[Section, ...]
    # Python only: the tokens of the CRLF-normalised text, reused by the highlighter
    tokens: PythonTokens | None = field(default=None, repr=False, compare=False)


class SourceError(Exception):
    """A source file we cannot split; str() is `path:line: message`."""

    def __init__(self, path: str, line: int, message: str, col: int = 0):
        super().__init__(f"{path or '<input>'}:{line}: {message}")
        self.path = path
        self.line = line
        self.col = col  # 1-based, 0 when unknown
        self.message = message


# ---------------------------------------------------------------------------------------------
# Front matter


# Front matter is untrusted input (a pull request can change it) read by a YAML parser, so it is
# bounded data: a size, a number of values and a depth, and no aliases (`*a`: ten nested aliases
# of ten make 10^10 values of 700 bytes, the "billion laughs"). Keys the builder reads have a
# shape: text for these, a mapping of text to text for those.
MAX_FRONT_MATTER_CHARS = 64 * 1024
MAX_FRONT_MATTER_VALUES = 2000
MAX_FRONT_MATTER_DEPTH = 8
SCALAR_KEYS = frozenset({"title", "summary", "redirect", "order", "equation_numbers"})
MAPPING_KEYS = frozenset({"macros"})  # name → TeX


class FrontMatter(dict):
    """The front matter: key → text (a mapping of text to text for `MAPPING_KEYS`), and the
    source line of each key (`line`), for findings about its value."""

    def __init__(self, data: dict | None = None, lines: dict[str, int] | None = None) -> None:
        super().__init__(data or {})
        self.lines = lines or {}

    def line(self, key: str, default: int = 1) -> int:
        return self.lines.get(key, default)


@cache
def pyyaml():
    """PyYAML, imported on first use: it costs ~8 ms, which a build that parses no front matter
    (a rebuild whose edited files have none, a build with nothing to do) need not pay."""
    import yaml

    return yaml


@cache
def _bounded_loader() -> type:
    yaml = pyyaml()

    class BoundedLoader(yaml.SafeLoader):
        """PyYAML's safe loader with aliases refused and the number and depth of values bounded
        (the composer builds the node tree recursively, one value at a time, so the bounds hold
        before anything large or deep exists)."""

        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self._values = 0
            self._depth = 0

        def compose_node(self, parent, index):  # noqa: ANN001 - PyYAML's signature
            event = self.peek_event()
            if isinstance(event, yaml.AliasEvent):
                raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed in front matter", event.start_mark)
            self._values += 1
            if self._values > MAX_FRONT_MATTER_VALUES:
                raise yaml.composer.ComposerError(None, None, f"more than {MAX_FRONT_MATTER_VALUES} values", event.start_mark)
            self._depth += 1
            try:
                if self._depth > MAX_FRONT_MATTER_DEPTH:
                    raise yaml.composer.ComposerError(None, None, f"nested more than {MAX_FRONT_MATTER_DEPTH} levels deep", event.start_mark)
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

    return BoundedLoader


def _load_yaml(body: str) -> tuple[object, dict[str, int]]:
    """The YAML document and, for a mapping, the 0-based line of each key in `body`."""
    simple = simple_mapping(body, MAX_FRONT_MATTER_VALUES)  # `title: …` lines need no PyYAML
    if simple is not None:
        return simple
    yaml = pyyaml()
    loader = _bounded_loader()(body)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}
        data = loader.construct_document(node)
        lines = {}
        if isinstance(node, yaml.MappingNode):
            for key_node, _value in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    lines.setdefault(str(key_node.value), key_node.start_mark.line)
        return data, lines
    finally:
        loader.dispose()


load_bounded_yaml = _load_yaml  # (redirects.yaml is read with the same bounds as front matter)

_SCALARS = (str, int, float, bool, datetime.date)


def split_front_matter(prose: str, path: str = "", first_line: int = 1) -> tuple[FrontMatter, str, int]:
    """Remove YAML front matter (`---` ... `---` at the start of `prose`).

    Returns (meta, remaining prose, number of prose lines removed). Leading empty lines before
    the opening `---` count as part of the front matter (a docstring starts with a newline).
    """
    lines = prose.split("\n")
    i = 0
    while i < len(lines) and lines[i].strip() == "":
        i += 1
    if i >= len(lines) or lines[i].rstrip() != "---":
        return FrontMatter(), prose, 0
    for j in range(i + 1, len(lines)):
        if lines[j].rstrip() == "---":
            break
    else:
        raise SourceError(path, first_line + i, "front matter opened with '---' is never closed; "
                                                "add a closing '---' line")
    body = "\n".join(lines[i + 1:j])
    start = first_line + i + 1  # the source line of the body's first line
    if len(body) > MAX_FRONT_MATTER_CHARS:
        raise SourceError(path, start, f"front matter is longer than {MAX_FRONT_MATTER_CHARS // 1024} KB; "
                                       "keep it to the page's title, summary and settings")
    try:
        data, key_lines = _load_yaml(body) if body.strip() else ({}, {})
    except pyyaml().YAMLError as e:  # (evaluated only when something was raised)
        mark = getattr(e, "problem_mark", None)
        line = start + (mark.line if mark is not None else 0)
        raise SourceError(path, line, f"front matter is not valid YAML ({getattr(e, 'problem', e)}); "
                                      "fix the YAML between the '---' lines") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise SourceError(path, start, "front matter must be a YAML mapping like 'title: ...' and 'summary: ...'")
    meta = FrontMatter(lines={k: start + n for k, n in key_lines.items()})
    for k, v in data.items():
        key = str(k)
        meta[key] = _meta_value(key, v, path, meta.line(key, start))
    # The blank lines after the closing `---` go with it (in the original key rule too: a
    # paragraph right after front matter has no leading space).
    k = j + 1
    while k < len(lines) - 1 and lines[k].strip() == "":
        k += 1
    return meta, "\n".join(lines[k:]), k


def _kind(v: object) -> str:
    return "list" if isinstance(v, (list, tuple, set)) else "mapping" if isinstance(v, dict) else type(v).__name__


def _meta_value(key: str, v: object, path: str, line: int) -> str | dict[str, str]:
    """A front matter value as the builder keeps it: text, or for `MAPPING_KEYS` a mapping of
    text to text (anything else there is text its reader refuses). A list or a mapping where the
    builder reads text is an error at its line."""
    if key in MAPPING_KEYS:
        if isinstance(v, dict) and all(isinstance(x, _SCALARS) for pair in v.items() for x in pair):
            return {str(a): _scalar_text(b) for a, b in v.items()}
        return "" if v is None else f"<a {_kind(v)}>"  # its reader reports that it is no mapping
    if v is None:
        return ""
    if isinstance(v, _SCALARS):
        return _scalar_text(v)
    if key in SCALAR_KEYS:
        raise SourceError(path, line, f"front matter '{key}:' must be text, not a {_kind(v)}; "
                                      "quote it if it holds ':', '[' or '{'")
    return str(v)  # a key the builder does not read (bounded: no aliases, few values)


def _scalar_text(v: object) -> str:
    if v is None:
        return ""
    return v.strip() if isinstance(v, str) else str(v)


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
# Python tokens
#
# `tokenize` is pure Python before 3.12 and was the largest single cost of a build, so ordinary
# files are read by one compiled regular expression that mirrors its rules: the same alternatives
# in the same order (its own number and operator patterns), the same indentation and bracket
# bookkeeping. Whatever that reader is not sure to get exactly right (a character no token
# starts with, a form feed or CR, a string continued with a backslash, an unterminated string,
# a bad dedent, EOF inside a statement, ...) makes it give up, and `tokenize` reads the file:
# it also words the errors. Either way the result is a `PythonTokens`, which holds what the
# section scanner and the highlighter read, and nothing they skip.

_FAST_TOKENIZER = sys.version_info < (3, 12)  # 3.12's tokenize is the C one, with other rules
_FSTRING_START = getattr(token, "FSTRING_START", -1)  # Python 3.12+ splits f-strings up
_FSTRING_END = getattr(token, "FSTRING_END", -1)

# (token type, start offset, end offset, string, offset of its first line's start, 1-based line)
TokenItem = tuple[int, int, int, str, int, int]


@dataclass(frozen=True)
class PythonTokens:
    """The tokens of a Python text that matter to the section scanner and the highlighter.

    `items` are tokenize's tokens less NEWLINE, NL, INDENT, DEDENT, ENCODING and ENDMARKER (a
    3.12 f-string's parts are one STRING, as 3.11 reports it); `logical_lines` are (index of
    the first item that is not a comment, index after its last item, whether an INDENT came
    since the previous logical line started); `comments` are the indices of COMMENT items.
    """

    text: str
    items: list[TokenItem]
    logical_lines: list[tuple[int, int, bool]]
    comments: list[int]

    def __bool__(self) -> bool:
        return bool(self.items)


_PREFIX = "(?:[bB][rR]?|[rR][bBfF]?|[uU]|[fF][rR]?)?"  # the string prefixes tokenize knows
# tokenize tries its alternatives in a fixed order (line continuation, comment, triple-quoted
# string, number, newline, operator, string, name) and the first that matches wins. They overlap
# only where a name starts with a string prefix letter and where `.5` is a number, not `.`; so
# the commonest tokens can go first, written so they never take what tokenize would read as one
# of the others. (This order halves the time the regular expression takes.)
_TOKEN_PARTS = {
    "plain_name": r"[ac-eg-qs-tv-zAC-EG-QS-TV-Z_]\w*",  # first letter not one of b, f, r, u
    "newline": r"\n",
    "op": r"(?!\.[0-9])" + tokenize.Special,
    "comment": r"#[^\r\n]*",
    "cont": r"\\\n",
    # A triple-quoted string whole: tokenize scans its body line by line from each line's start,
    # which a single scan across newlines matches (a closing quote never spans two lines).
    "triple": _PREFIX + r"""(?:'''[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*'''"""
                        r'''|"""[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*""")''',
    "unclosed_triple": _PREFIX + r"""(?:'''|\"\"\")""",
    "number": tokenize.Number,
    "string": _PREFIX + r"""(?:'[^\n'\\]*(?:\\.[^\n'\\]*)*'|"[^\n"\\]*(?:\\.[^\n"\\]*)*")""",
    "name": r"[A-Za-z_]\w*",
    "word": r"\w+",  # tokenize calls it a NAME only if it starts like an identifier
    "other": r"[\s\S]",
}
# \f is not whitespace here because it resets tokenize's indentation column: it gives up.
_TOKEN = re.compile("[ \t]*(?:" + "|".join(f"(?P<{name}>{part})" for name, part in _TOKEN_PARTS.items()) + ")")
_G = _TOKEN.groupindex
_PLAIN_NAME, _NEWLINE, _OP, _COMMENT, _CONT, _TRIPLE, _NUMBER, _STRING, _NAME, _WORD = (
    _G["plain_name"], _G["newline"], _G["op"], _G["comment"], _G["cont"], _G["triple"], _G["number"],
    _G["string"], _G["name"], _G["word"])
_OPENERS = frozenset("([{")
_CLOSERS = frozenset(")]}")
_TABSIZE = 8


class _GiveUp(Exception):
    """The fast reader is not sure to match tokenize here."""


def _indent_column(indent: str) -> int:
    if "\t" not in indent:
        return len(indent)
    column = 0
    for char in indent:  # tokenize's rule: a tab moves to the next multiple of 8
        column = (column // _TABSIZE + 1) * _TABSIZE if char == "\t" else column + 1
    return column


def _fast_tokens(text: str) -> PythonTokens:
    """`_from_tokenize(text, tokenize's tokens)` for ordinary text; raises _GiveUp otherwise."""
    items: list[TokenItem] = []
    append = items.append
    logical_lines: list[tuple[int, int, bool]] = []
    comments: list[int] = []
    indents = [0]
    row, line_start, depth = 1, 0, 0
    new_line = True  # the next token is the first of a line that starts a statement
    first = -1  # first item of the open logical line, -1 when none is open
    first_indented = indent_seen = False
    group = 0
    for m in _TOKEN.finditer(text):
        group = m.lastindex
        if new_line:
            if group == _NEWLINE:  # a blank line: NL
                row += 1
                line_start = m.end()
                continue
            if group != _COMMENT:  # a comment-only line is NL too, and changes no indentation
                new_line = False
                column = _indent_column(text[line_start:m.start(group)])
                if column > indents[-1]:
                    indents.append(column)
                    indent_seen = True
                while column < indents[-1]:
                    if column not in indents:
                        raise _GiveUp  # tokenize words this IndentationError
                    indents.pop()
        if group == _NEWLINE:
            row += 1
            line_start = m.end()
            if not depth:  # NEWLINE, not NL
                new_line = True
                if first >= 0:
                    logical_lines.append((first, len(items), first_indented))
                    first = -1
            continue
        if group == _COMMENT:
            comments.append(len(items))
            start = m.start(group)
            append((token.COMMENT, start, m.end(), m[group], line_start, row))
            continue
        if group == _CONT:
            row += 1
            line_start = m.end()
            continue
        if first < 0:
            first = len(items)
            first_indented, indent_seen = indent_seen, False
        start, end = m.span(group)
        string = m[group]
        if group == _OP:
            append((token.OP, start, end, string, line_start, row))
            if string in _OPENERS:
                depth += 1
            elif string in _CLOSERS:
                depth -= 1
                if depth < 0:
                    raise _GiveUp
        elif group == _PLAIN_NAME or group == _NAME:
            append((token.NAME, start, end, string, line_start, row))
        elif group == _NUMBER:
            append((token.NUMBER, start, end, string, line_start, row))
        elif group == _STRING:
            append((token.STRING, start, end, string, line_start, row))
        elif group == _TRIPLE:
            append((token.STRING, start, end, string, line_start, row))
            newlines = string.count("\n")
            if newlines:
                row += newlines
                line_start = start + string.rfind("\n") + 1
        elif group == _WORD and string[0].isidentifier():
            append((token.NAME, start, end, string, line_start, row))
        else:
            raise _GiveUp  # an unclosed string, or a character tokenize reports as an error
    if depth or group == _CONT:
        raise _GiveUp  # EOF in a statement: tokenize words the error
    if first >= 0:
        logical_lines.append((first, len(items), first_indented))
    return PythonTokens(text, items, logical_lines, comments)


def _from_tokenize(text: str, tokens: Iterable[tokenize.TokenInfo]) -> PythonTokens:
    """`PythonTokens` from tokenize's tokens of `text`; ValueError if they are another text's."""
    line_starts = [0]
    pos = text.find("\n")
    while pos >= 0:
        line_starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    items: list[TokenItem] = []
    logical_lines: list[tuple[int, int, bool]] = []
    comments: list[int] = []
    first, first_indented, indent_seen = -1, False, False
    fstring_depth = 0
    fstring: TokenItem = (0, 0, 0, "", 0, 0)
    for kind, string, (row, col), (end_row, end_col), _ in tokens:
        if kind in (token.NL, token.DEDENT, token.ENCODING):
            continue
        if kind == token.INDENT:
            indent_seen = True
            continue
        if kind in (token.NEWLINE, token.ENDMARKER):
            if first >= 0:
                logical_lines.append((first, len(items), first_indented))
                first = -1
            continue
        if row > len(line_starts) or end_row > len(line_starts):
            raise ValueError("the tokens are not this text's")
        line_start = line_starts[row - 1]
        start = line_start + col
        if fstring_depth or kind == _FSTRING_START:  # 3.12+: gather an f-string's parts
            if kind == _FSTRING_START:
                if not fstring_depth:
                    fstring = (token.STRING, start, 0, "", line_start, row)
                fstring_depth += 1
                continue
            if kind != _FSTRING_END:
                continue
            fstring_depth -= 1
            if fstring_depth:
                continue
            kind, start, _, _, line_start, row = fstring
            end = line_starts[end_row - 1] + end_col
            string = text[start:end]
        elif not text.startswith(string, start):
            raise ValueError("the tokens are not this text's")
        if kind == token.COMMENT:
            comments.append(len(items))
        elif first < 0:
            first, first_indented, indent_seen = len(items), indent_seen, False
        items.append((kind, start, start + len(string), string, line_start, row))
    if first >= 0:
        logical_lines.append((first, len(items), first_indented))
    return PythonTokens(text, items, logical_lines, comments)


# ---------------------------------------------------------------------------------------------
# Python


@dataclass(frozen=True)
class _Docstring:
    start: int
    end: int
    lines: list[str]
    module: bool


def _docstring_lines(literal: str, indent: int) -> list[str]:
    """The docstring text rule: rest of the opening line, then the body lines with the opening
    line's indentation (`indent`, the literal's column) removed, then the part of the closing
    line before the quotes; each line right-stripped. An empty closing part adds no line (so no
    trailing newline)."""
    s = literal
    i = 0
    while s[i] not in "\"'":
        i += 1  # string prefix such as r, u
    q = s[i:i + 3] if s[i:i + 3] in ('"""', "'''") else s[i]
    content = s[i + len(q):len(s) - len(q)]
    raw = content.split("\n")
    lines = [raw[0].rstrip()]
    for line in raw[1:]:
        n = len(line) - len(line.lstrip(" \t"))
        lines.append(line[min(n, indent):].rstrip())
    if len(raw) > 1:
        # the closing line's empty part adds no line; nor do blank lines before it (the original
        # key rule: a docstring's last paragraph has no trailing space)
        while len(lines) > 1 and lines[-1] == "":
            lines.pop()
    return lines


def _is_bytes_or_fstring(literal: str) -> bool:
    prefix = literal[:len(literal) - len(literal.lstrip("rRuUbBfF"))].lower()
    return "b" in prefix or "f" in prefix


def python_tokens(text: str) -> PythonTokens:
    """tokenize's tokens of `text` (`PythonTokens`): read by `_fast_tokens` where it is sure to
    agree, else by tokenize, whose `TokenError` or `SyntaxError` it raises."""
    if _FAST_TOKENIZER:
        try:
            return _fast_tokens(text)
        except _GiveUp:
            pass
    return _from_tokenize(text, tokenize.generate_tokens(io.StringIO(text).readline))


def _tokenize(text: str, path: str) -> PythonTokens:
    try:
        return python_tokens(text)
    except (tokenize.TokenError, SyntaxError) as e:  # (IndentationError is a SyntaxError)
        # tokenize says where it gave up (an unclosed bracket: at the end of the file); Python's
        # parser says where the mistake is, as `python file.py` would. Asked only on failure.
        found = python_syntax_error(text, path)
        if found is not None:
            line, col, msg = found
            hint = ("close it" if "never closed" in msg or "unterminated" in msg or "was not closed" in msg
                    else "fix the indentation" if isinstance(e, IndentationError) or "indent" in msg
                    else "fix the Python syntax there")
            raise SourceError(path, line, f"invalid Python ({msg}); {hint}", col) from None
        if isinstance(e, tokenize.TokenError):
            msg, (line, _col) = e.args
            raise SourceError(path, line, f"cannot tokenize Python ({msg}); close the string or bracket that "
                                          "starts above" if "EOF" in msg else f"cannot tokenize Python ({msg})") from None
        raise SourceError(path, e.lineno or 0, f"cannot tokenize Python ({e.msg}); fix the indentation "
                                               "or syntax on this line", e.offset or 0) from None


def python_syntax_error(text: str, path: str) -> tuple[int, int, str] | None:
    """(line, column, message) of the syntax error Python's own parser reports in `text`, or
    None. Parsed to a syntax tree only: nothing in the file runs."""
    try:
        compile(text, path or "<input>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as e:
        return e.lineno or 0, e.offset or 0, e.msg
    except (ValueError, RecursionError, MemoryError):  # NUL bytes, absurd nesting
        return None
    return None


def _scan(tokens: PythonTokens) -> tuple[set[int], dict[int, _Docstring], set[int]]:
    """Classify lines: comment-only lines, docstrings (by start line), and lines that start a
    section when the current one has code (decorators, def, class not after a decorator)."""
    text, items = tokens.text, tokens.items
    comment_lines: set[int] = set()
    for i in tokens.comments:
        _, start, _, _, line_start, row = items[i]
        if start == line_start or not text[line_start:start].strip():
            comment_lines.add(row)

    docstrings: dict[int, _Docstring] = {}
    split_lines: set[int] = set()
    prev_kind = ""
    for n, (a, b, indented) in enumerate(tokens.logical_lines):
        first_type, start, _, string, line_start, row = items[a]
        kind = "code"
        if first_type == token.OP:
            if string == "@":
                kind = "decorator"
        elif first_type == token.NAME:
            if string == "def" or string == "class" or (string == "async" and _second_is_def(items, a, b)):
                kind = "header"
        elif first_type == token.STRING and _alone(items, a, b) and not _is_bytes_or_fstring(string):
            if n == 0:
                kind = "module_doc"
            elif prev_kind == "header" and indented:
                kind = "doc"
        if kind == "decorator" or kind == "header":
            if prev_kind != "decorator":
                split_lines.add(row)
        elif kind != "code":
            docstrings[row] = _Docstring(row, row + string.count("\n"),
                                         _docstring_lines(string, start - line_start), kind == "module_doc")
        prev_kind = kind
    return comment_lines, docstrings, split_lines


def _alone(items: list[TokenItem], a: int, b: int) -> bool:
    """Whether item `a` is the only one of the logical line `a:b` that is not a comment."""
    return all(item[0] == token.COMMENT for item in items[a + 1:b])


def _second_is_def(items: list[TokenItem], a: int, b: int) -> bool:
    second = next((item for item in items[a + 1:b] if item[0] != token.COMMENT), None)
    return second is not None and second[3] == "def"


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

    meta = FrontMatter()
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
            # A docstring is read as written, raw or not, as the original site read it: its TeX
            # is the author's (`a \\ b` is two rows; Python's value has one backslash there, which
            # collapsed every environment onto one row). No key of the real corpus changes (no key
            # of its caches holds a backslash): keys carry placeholders, not TeX. A non-raw
            # docstring's `\\{…\\}` outside environments is read as `\{…\}` by typeset/math.py.
            cur.add_docstring(doc_lines, first)
            if not doc.module and doc.start == doc.end and any(doc_lines):
                # A one-line docstring of a function or class ends with a newline in the
                # original key rule (`"""Number of images"""` is `<p>Number of images </p>`), as
                # a comment line does.
                cur.prose_closed = True
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
    return ParsedSource(meta=meta, sections=_finish(builders), tokens=tokens)


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
