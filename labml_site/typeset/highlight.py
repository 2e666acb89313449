"""Syntax highlighting with Pygments' classes.

A file is lexed once as a whole, then cut into lines: a multi-line string or bracket that spans
several sections is still coloured correctly, and each section takes its slice of lines with the
source file's real line numbers.

Whole Python files are classified from the tokens that `sections` already computed, and inline
code spans from their tokens likewise: the same spans and CSS classes Pygments' PythonLexer would
produce, at a fraction of its per-token cost (and without importing Pygments' lexers, whose
Python rules alone take ~15 ms to compile). Pygments itself remains the fallback (no tokens, or a
construct the classifier does not reproduce) and colours prose code blocks.
"""
from __future__ import annotations

import html
import keyword
import re
import token
import tokenize
from functools import lru_cache
from typing import TYPE_CHECKING, Iterable, Iterator, Sequence

from pygments.token import STANDARD_TYPES, Token, _TokenType

from ..read.sections import PythonTokens, TokenItem, _from_tokenize, python_tokens
from .pygments_tables import python_words, style_defs
from ..lazy_re import lazy

if TYPE_CHECKING:
    from pygments.lexer import Lexer

_PLAIN_TYPES = (Token.Text, Token.Text.Whitespace, Token.Error)


def _css_class(ttype: _TokenType) -> str:
    # Walk up to the nearest token type Pygments' stylesheets know, e.g. Name.Function.Magic → nf.
    while ttype not in STANDARD_TYPES:
        ttype = ttype.parent
    return STANDARD_TYPES[ttype]


def _classed(tokens: Iterable[tuple[_TokenType, str]]) -> Iterator[tuple[str, str]]:
    """Pygments tokens → (CSS class, text); class "" for text shown plainly."""
    for ttype, value in tokens:
        # Lexer "errors" are mostly characters Python lacks (× in `batch × seq`): show them plainly.
        yield ("" if ttype in _PLAIN_TYPES else _css_class(ttype)), value


def _pieces_to_lines(pieces: Iterable[tuple[str, str]]) -> list[str]:
    """(class, text) pieces → one HTML string per source line, every span closed on its own line."""
    lines: list[str] = []
    current: list[str] = []
    rendered: dict[tuple[str, str], str] = {}  # names and operators repeat: escape each once
    for piece in pieces:
        cls, value = piece
        if "\n" not in value:
            html_piece = rendered.get(piece)
            if html_piece is None:
                html_piece = rendered[piece] = _span(cls, value) if value else ""
            current.append(html_piece)
            continue
        for i, part in enumerate(value.split("\n")):
            if i:
                lines.append("".join(current))
                current = []
            if part:
                current.append(_span(cls, part))
    lines.append("".join(current))
    return lines


def _span(cls: str, text: str) -> str:
    text = html.escape(text, quote=False)
    return f'<span class="{cls}">{text}</span>' if cls else text


def _tokens_to_lines(tokens: Iterable[tuple[_TokenType, str]]) -> list[str]:
    """Token stream → one HTML string per source line, every span closed on its own line."""
    return _pieces_to_lines(_classed(tokens))


def highlight_python_lines(source: str, tokens: PythonTokens | Sequence[tokenize.TokenInfo] | None = ()) -> list[str]:
    """HTML for every line of a Python file (index 0 is line 1).

    `tokens` are the tokens of `source` with CRLF normalised to LF: what `sections.parse_python`
    computes, or `tokenize`'s output; without them, or for anything the tokenizer-based
    classifier does not reproduce exactly, Pygments lexes the file.
    """
    if tokens:
        lines = _lines_from_tokens(source.replace("\r\n", "\n"), tokens)
        if lines is not None:
            return lines
    return _pygments_lines(source)


def _pygments_lines(source: str) -> list[str]:
    lines = _tokens_to_lines(_lexer("python").get_tokens(source))
    expected = source.count("\n") + 1
    # Pygments may add or swallow a final newline; keep the count equal to the file's lines.
    if len(lines) < expected:
        lines.extend([""] * (expected - len(lines)))
    return lines[:expected]


# ---------------------------------------------------------------------------------------------
# Python from tokenize tokens
#
# Reproduces PythonLexer's spans rule by rule, quirks included (`raise X from e` colours `e` as a
# module name, `**` is two operator spans, a triple-quoted string that starts a line is a
# docstring wherever it is). String bodies with escapes or interpolation are lexed by Pygments,
# one string at a time, which keeps them exact at little cost.


class _Unsupported(Exception):
    """A construct the classifier does not reproduce exactly; Pygments lexes the file instead."""


_WORDS = python_words()  # PythonLexer's word lists, without importing it (pygments_tables.py)
_MAGIC_FUNCTIONS = _WORDS["magic_functions"]
# Later entries win, so the order follows PythonLexer's rule order backwards.
_NAME_CLASSES: dict[str, str] = {
    **dict.fromkeys(_WORDS["magic_variables"], "vm"),
    **dict.fromkeys(_MAGIC_FUNCTIONS, "fm"),
    **dict.fromkeys(_WORDS["exceptions"], "ne"),
    # PythonLexer matches these four with a plain regex, not a word list.
    **dict.fromkeys(("self", "Ellipsis", "NotImplemented", "cls"), "bp"),
    **dict.fromkeys(_WORDS["builtins"], "nb"),
    **dict.fromkeys(("in", "is", "and", "or", "not"), "ow"),
    **dict.fromkeys(_WORDS["keyword_constants"], "kc"),
    # "yield from" is a single span when one space separates the words; _Classifier.name sees to it.
    **dict.fromkeys((w for w in _WORDS["keywords"] if " " not in w), "k"),
}
_NOT_AFTER_DOT = frozenset(("nb", "bp", "ne"))  # `x.print` is a plain name, `x.__init__` is not

_ROOT, _FUNCNAME, _CLASSNAME, _IMPORT, _FROMIMPORT = range(5)
# Words that colour the names after them; each needs whitespace after it, which it swallows.
_STATEMENTS = {"def": ("k", _FUNCNAME), "class": ("k", _CLASSNAME),
               "import": ("kn", _IMPORT), "from": ("kn", _FROMIMPORT)}
_STATEMENT_GAP = re.compile(r"(?:\s|\\\s)+")
_SPACE = lazy(r"\s*")
_GAP = re.compile(r"[\s\\]*")  # between tokens: whitespace and line continuations only
# `match`/`case` starting a line are keywords unless what follows shows they are names.
_SOFT_KEYWORD = lazy(r"(?![ \t]*(?:[:,;=^&|@~)\]}]|(?:%s)\b))"
                           % "|".join(k for k in keyword.kwlist if k[0].islower()))
_SOFT_UNDERSCORE = lazy(r"(\s+)([^\n_]*)(_\b)")
_LAZY_IMPORT = lazy(r"lazy(?:\s|\\\s)+(?:from|import)(?:\s|\\\s)+")
_OPERATOR = re.compile(r"!=|==|<<|>>|:=|[-~+/*%=<>&^|.@]")
_PUNCTUATION = frozenset("[]{}:(),;")
_NUMBERS = (
    (re.compile(r"(\d(?:_?\d)*\.(?:\d(?:_?\d)*)?|(?:\d(?:_?\d)*)?\.\d(?:_?\d)*)([eE][+-]?\d(?:_?\d)*)?"),
     "mf"),
    (re.compile(r"\d(?:_?\d)*[eE][+-]?\d(?:_?\d)*j?"), "mf"),
    (re.compile(r"0[oO](?:_?[0-7])+"), "mo"),
    (re.compile(r"0[bB](?:_?[01])+"), "mb"),
    (re.compile(r"0[xX](?:_?[a-fA-F0-9])+"), "mh"),
    (re.compile(r"\d(?:_?\d)*"), "mi"),
)
# A string body without these is one span between its quotes; with them Pygments splits it.
_STRING_SPECIAL = re.compile(r"[\\'\"%{}\n]")
_TRIPLE_QUOTES = ('"""', "'''")

_Piece = tuple[str, str]  # (CSS class, or "" for plain text; source text)


@lru_cache(maxsize=256)
def _operator_pieces(op: str) -> tuple[_Piece, ...]:
    # Pygments takes operators one or two characters at a time: `**=` is three spans.
    pieces, pos = [], 0
    while pos < len(op):
        m = _OPERATOR.match(op, pos)
        if m:
            pieces.append(("o", m.group()))
            pos = m.end()
        elif op[pos] in _PUNCTUATION:
            pieces.append(("p", op[pos]))
            pos += 1
        else:
            raise _Unsupported(op)
    return tuple(pieces)


@lru_cache(maxsize=1024)
def _number_pieces(number: str) -> tuple[_Piece, ...]:
    pieces, pos = [], 0
    while pos < len(number):
        for pattern, cls in _NUMBERS:
            m = pattern.match(number, pos)
            if m:
                pieces.append((cls, m.group()))
                pos = m.end()
                break
        else:
            if number[pos:] not in ("j", "J"):
                raise _Unsupported(number)
            pieces.append(("n", number[pos:]))  # Pygments reads the `j` of `1.5j` as a name
            pos = len(number)
    return tuple(pieces)


def _string_pieces(text: str, start: int, literal: str, starts_line: bool) -> list[_Piece]:
    """The spans of the string `literal` found at `start` in `text`."""
    body = literal.lstrip("rRbBuUfF")
    prefix = literal[:len(literal) - len(body)]
    quote = body[:3] if body[:3] in _TRIPLE_QUOTES else body[:1]
    affix = [("sa", prefix)] if prefix else []
    if len(quote) == 3 and starts_line and "f" not in prefix.lower():
        # Pygments' docstring rule ends at the first closing quotes, even an escaped one.
        if body.find(quote, 3) != len(body) - 3:
            raise _Unsupported(literal)
        return affix + [("sd", body)]
    inner = body[len(quote):len(body) - len(quote)]
    if not _STRING_SPECIAL.search(inner):
        cls = "s1" if quote[0] == "'" else "s2"
        return affix + [(cls, quote)] + ([(cls, inner)] if inner else []) + [(cls, quote)]
    if "f" in prefix.lower():
        # `}` after a closed f-string is punctuation; read inside one it would be part of it.
        return _lexed_string(literal + "}", len(literal), quote, (Token.Punctuation, "}"))
    return _lexed_string(text[start:], len(literal), quote, None)


def _lexed_string(source: str, length: int, quote: str, then: tuple[_TokenType, str] | None) -> list[_Piece]:
    """Pygments' spans for the string literal that starts `source` and is `length` long.

    Pygments must end it exactly where tokenize does, with `then` as its next token when given,
    or whole-file Pygments would colour the rest differently. A plain string is lexed with the
    rest of the file behind it because a malformed format field such as `'{a[x}'` can make
    Pygments read past the closing quote; an f-string is followed by a probe that shows whether
    Pygments really left it (3.12 allows quotes and comments inside its fields that Pygments
    does not expect).
    """
    tokens = []
    lexed = _lexer("python").get_tokens_unprocessed(source, stack=("root", "expr"))
    for pos, ttype, value in lexed:
        tokens.append((ttype, value))
        if pos + len(value) >= length:
            if pos + len(value) > length or value != quote:
                break
            if then is not None and next(lexed, (0, None, None))[1:] != then:
                break
            return list(_classed(tokens))
    raise _Unsupported(source[:length])


class _Classifier:
    """Walks the tokens of one file in PythonLexer's states, collecting (class, text) pieces."""

    def __init__(self, text: str, items: list[TokenItem]):
        self.text = text
        self.items = items
        self.pieces: list[_Piece] = []
        self.state = _ROOT
        self.swallowed_to = 0  # the last rule consumed the whitespace up to here
        self.soft_underscores: set[int] = set()  # offsets of `_` in `case _:` patterns

    def run(self) -> list[_Piece]:
        text, items, pieces = self.text, self.items, self.pieces
        prev_end = i = 0
        while i < len(items):
            kind, start, end, string, line_start, _ = items[i]
            if start < prev_end:
                raise _Unsupported("overlapping tokens")
            if start != prev_end:
                gap = text[prev_end:start]
                if not gap.isspace() and _GAP.fullmatch(gap) is None:
                    raise _Unsupported(gap)
                pieces.append(("", gap))
            # The text after what the state's last rule swallowed decides how the state reads it.
            if self.state == _ROOT or not self.in_state(kind, string, end,
                                                        text[max(prev_end, self.swallowed_to):start]):
                self.state = _ROOT
                i = self.root(i)
            prev_end = items[i][2]
            i += 1
        tail = text[prev_end:]
        if _GAP.fullmatch(tail) is None:
            raise _Unsupported(tail)
        pieces.append(("", tail))
        return pieces

    def in_state(self, kind: int, string: str, end: int, gap: str) -> bool:
        """Colour a token in a state entered by def/class/import/from; False means the state ends
        and the token is read afresh."""
        emit = self.pieces.append
        state = self.state
        if state == _FUNCNAME and not gap and kind == token.NAME and string.isidentifier():
            if string in _MAGIC_FUNCTIONS:
                emit(("fm", string))  # and stay: Pygments looks for the name after it, in vain
            else:
                emit(("nf", string))
                self.state = _ROOT
            return True
        if state == _CLASSNAME:
            if gap or kind != token.NAME or not string.isidentifier():
                raise _Unsupported("class without a name")
            emit(("nc", string))
            self.state = _ROOT
            return True
        if state == _IMPORT:
            if kind == token.NAME and string == "as" and gap.isspace() and self.text[end:end + 1].isspace():
                emit(("k", string))
                self.swallowed_to = _SPACE.match(self.text, end).end()
                return True
            if kind == token.OP and string == "," and (not gap or gap.isspace()):
                emit(("o", string))
                self.swallowed_to = _SPACE.match(self.text, end).end()
                return True
            return not gap and self.module_name(kind, string)
        if state == _FROMIMPORT:
            if gap:
                if kind == token.NAME and string == "import" and gap.isspace():
                    emit(("kn", string))
                    self.state = _ROOT
                    return True
                return False
            if kind == token.NAME and string == "None":  # `raise X from None`
                emit(("kc", string))
                self.state = _ROOT
                return True
            return self.module_name(kind, string)
        return False

    def module_name(self, kind: int, string: str) -> bool:
        if kind == token.NAME and string.isidentifier():
            self.pieces.append(("nn", string))
            return True
        if kind == token.OP and not string.strip("."):
            self.pieces.extend(("nn", ".") for _ in string)
            return True
        return False

    def root(self, i: int) -> int:
        """Colour token `i` in PythonLexer's root state; returns the last token index it used."""
        kind, start, end, string, line_start, _ = self.items[i]
        emit = self.pieces.append
        if kind == token.NAME:
            return self.name(i)
        if kind == token.OP:
            nxt = self.items[i + 1] if string == "@" and i + 1 < len(self.items) else None
            if nxt and nxt[0] == token.NAME and nxt[1] == end and nxt[3].isidentifier():
                emit(("nd", "@" + nxt[3]))  # Pygments reads `@name` as a decorator, even `a @b`
                return i + 1
            self.pieces.extend(_operator_pieces(string))
        elif kind == token.COMMENT:
            emit(("ch" if start == 0 and string.startswith("#!") and len(string) > 2 else "c1", string))
        elif kind == token.NUMBER:
            if i and self.items[i - 1][0] == token.NUMBER and self.items[i - 1][2] == start:
                raise _Unsupported(string)  # `024`: tokenize reads 0 and 24, Pygments one number
            self.pieces.extend(_number_pieces(string))
        elif kind == token.STRING:
            starts_line = start == line_start or self.text[line_start:start].isspace()
            self.pieces.extend(_string_pieces(self.text, start, string, starts_line))
        elif kind == token.ERRORTOKEN and (string.isspace() or (
                len(string) == 1 and string not in "'\"" and not ("_" + string).isidentifier())):
            emit(("", string))  # a character Python lacks, such as ×: Pygments shows it plainly
        else:
            raise _Unsupported(string)
        return i

    def name(self, i: int) -> int:
        kind, start, end, string, line_start, _ = self.items[i]
        text = self.text
        emit = self.pieces.append
        nxt = self.items[i + 1] if i + 1 < len(self.items) else None
        if not string.isidentifier() or (nxt and nxt[0] == token.STRING and nxt[1] == end):
            raise _Unsupported(string)  # tokenize's names are wider than Pygments'; t-strings
        statement = _STATEMENTS.get(string)
        if statement:
            gap = _STATEMENT_GAP.match(text, end)
            if gap:
                emit((statement[0], string))
                self.state = statement[1]
                self.swallowed_to = gap.end()
            else:
                emit(("n", string))
            return i
        if string == "yield" and nxt and nxt[3] == "from" and nxt[1] == end + 1 and text[end] == " ":
            emit(("k", "yield from"))
            return i + 1
        if start == line_start and string == "lazy" and _LAZY_IMPORT.match(text, start):
            raise _Unsupported(string)
        if ((string == "match" or string == "case") and not text[line_start:start].strip(" \t")
                and _SOFT_KEYWORD.match(text, end)):
            emit(("k", string))
            self.mark_soft_underscores(end)
            return i
        if start in self.soft_underscores:
            emit(("k", string))
            return i
        cls = _NAME_CLASSES.get(string, "n")
        if cls in _NOT_AFTER_DOT and start and text[start - 1] == ".":
            cls = "n"
        emit((cls, string))
        return i

    def mark_soft_underscores(self, pos: int) -> None:
        # After `match`/`case` Pygments colours a lone `_` wildcard as a keyword too.
        while m := _SOFT_UNDERSCORE.match(self.text, pos):
            if m.group(2):
                raise _Unsupported("pattern before a `_` wildcard")  # Pygments re-lexes it apart
            self.soft_underscores.add(m.start(3))
            pos = m.end()


def _lines_from_tokens(text: str, tokens: PythonTokens | Sequence[tokenize.TokenInfo]) -> list[str] | None:
    """Like `_pygments_lines`, from the tokens of `text`; None where the classifier is unsure."""
    if "\r" in text or text.startswith("\ufeff"):
        return None  # Pygments turns a lone CR into a line break and drops a byte-order mark
    try:
        if not isinstance(tokens, PythonTokens):
            tokens = _from_tokenize(text, tokens)
        elif tokens.text != text:
            return None
        pieces = _Classifier(text, tokens.items).run()
    except (_Unsupported, ValueError):  # ValueError: tokens of another text
        return None
    return _pieces_to_lines(pieces)


@lru_cache(maxsize=64)
def _lexer(lang: str) -> Lexer | None:
    """Pygments' lexer for `lang`, None for a language it does not know.

    The one place this module imports Pygments' lexers: importing them and compiling
    PythonLexer's rules costs ~15 ms, which a rebuild whose Python files the classifier colours
    and whose prose has no code needs not pay.
    """
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    if not lang:
        return None
    try:
        return get_lexer_by_name(lang, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def highlight_block(code: str, lang: str = "") -> str:
    """A fenced code block from the prose, highlighted when its language is known."""
    lexer = _lexer(lang.strip().lower()) if lang else None
    if lexer is None:
        body = html.escape(code, quote=False)
    else:
        body = "\n".join(_tokens_to_lines(lexer.get_tokens(code))).rstrip("\n")
    # The declared language, when it is one Pygments knows (page.md fences the block with it).
    attribute = f' data-lang="{html.escape(lang.strip().lower(), quote=True)}"' if lexer is not None else ""
    return f'<pre class="highlight code-block"{attribute}><code>{body}</code></pre>'


# An inline span that is a shell command line (`pip install -e .`, `python -m pkg.mod`, `$ ls`):
# a program's name followed by arguments. Such a span is shown as plain code, not as Python.
_SHELL_LINE = re.compile(
    r"\$\s+\S|(?:sudo\s+)?(?:python3?|pip3?|git|cd|ls|npm|npx|node|bash|sh|zsh|export|mkdir|rm|cp|mv|conda|make|curl|wget|"
    r"cat|echo|pytest|torchrun|uv|apt|apt-get|brew|docker|tensorboard|jupyter|ssh|tar|unzip|chmod|source)\s+(?:-|[^\s=(:.,\[]\S*(?:\s|$))"
)


def looks_like_shell(code: str) -> bool:
    return bool(_SHELL_LINE.match(code.strip()))


@lru_cache(maxsize=4096)
def highlight_inline(code: str) -> str:
    """An inline code span: highlighted as Python, which is what our prose quotes, unless it is a
    shell command line (`looks_like_shell`), shown plain."""
    if looks_like_shell(code):
        return f'<code class="shell">{html.escape(code, quote=False)}</code>'
    lines = _snippet_lines(code)
    body = " ".join(line for line in lines if line)
    return f'<code class="highlight">{body}</code>'


def _snippet_lines(code: str) -> list[str]:
    """`_tokens_to_lines` of PythonLexer's tokens of `code`: the classifier's, from tokenize's
    tokens, where it reproduces them (a rebuild then needs no lexer for its prose's spans)."""
    tokens = _snippet_tokens(code)
    lines = _lines_from_tokens(code, tokens) if tokens is not None else None
    return lines if lines is not None else _tokens_to_lines(_lexer("python").get_tokens(code))


def _snippet_tokens(code: str) -> PythonTokens | None:
    """tokenize's tokens of `code`, None where it fails (an unclosed bracket, a stray indent):
    from the section scanner's reader where it can, which saves compiling tokenize's patterns."""
    try:
        return python_tokens(code)
    except (tokenize.TokenError, SyntaxError):
        return None


def render_code(lines: Sequence[str], first_line: int) -> str:
    """A section's code as a table-free block: one row per line with its real line number.

    Line numbers are CSS-generated from a data attribute so copying code never copies them.
    Code that scrolls sideways must be reachable by keyboard: every block is focusable, and
    site.js drops the tab stop from blocks that turn out not to scroll.
    """
    rows = []
    for offset, line_html in enumerate(lines):
        number = first_line + offset
        rows.append(f'<span class="line" data-line="{number}">{line_html or " "}</span>')
    return '<pre class="highlight code" tabindex="0"><code>' + "\n".join(rows) + "</code></pre>"


_PAGE_OWNED = (".highlight {", "pre {", "td.", "span.linenos", "span.lineno", ".highlight .hll")


def _colours_only(css: str) -> str:
    # Backgrounds, line-number tables and pre margins come from the page theme, not Pygments.
    return "\n".join(line for line in css.splitlines() if not line.startswith(_PAGE_OWNED))


def stylesheet(light: str = "default", dark: str = "github-dark") -> str:
    """Pygments colours for both themes; the dark one applies when the reader's system is dark."""
    light_css = style_defs(light)  # (the default styles' are literals: no formatter to import)
    dark_css = style_defs(dark)
    return (
        "/* Generated by labml_site.highlight.stylesheet() from Pygments styles. */\n"
        + _colours_only(light_css)
        + "\n@media (prefers-color-scheme: dark) {\n"
        + _colours_only(dark_css)
        + "\n}\n"
    )
