"""TeX → MathML at build time: no JavaScript on the page, no CDN.

`tex_to_mathml` wraps latex2mathml and repairs what it gets wrong for Chromium's MathML Core:

* it checks the TeX first (braces, ``\\left``/``\\right``, environments, unknown commands) because
  latex2mathml passes unknown commands through as text and accepts unbalanced input silently;
* it rewrites a few inputs latex2mathml mishandles (``aligned``, ``\\mathrm{d}``, ``\\operatorname``
  with non-letters) before conversion, on a copy: the annotation keeps the author's TeX;
* it repairs the tree (elements inside ``<mo>`` from ``\\mathop``, ``\\Big\\vert`` left as text,
  ``mathvariant`` values Chromium ignores, named spaces, upright Greek capitals, function spacing);
* it serialises the tree itself, because latex2mathml un-escapes its output (``\\text{a<b}`` would
  yield ``<mtext>a<b</mtext>``), and validates the result before returning: `validate_mathml`'s
  checks, run on the tree it serialised rather than on a re-parse of the string where the two agree.

Each formula costs CPU in every build, so the TeX is tokenised once (latex2mathml would do it again),
the common constructs go through a faster port of latex2mathml's walker and converter (latex2mathml
itself does the rest), the passes skip cheaply what they cannot apply to, and the tree is checked
as it is serialised.
"""

from __future__ import annotations

import functools
import re
from typing import Iterable, Iterator, Optional
from xml.etree import ElementTree
from xml.etree.ElementTree import Element, SubElement

from latex2mathml import commands as l2m_commands
from latex2mathml import converter as l2m_converter
from latex2mathml import exceptions as l2m_exceptions
from latex2mathml import walker as l2m_walker
from latex2mathml.symbols_parser import SYMBOLS as L2M_SYMBOLS
from latex2mathml.symbols_parser import convert_symbol
from latex2mathml.tokenizer import PATTERN as L2M_TOKEN_PATTERN
from latex2mathml.tokenizer import UNITS as L2M_UNITS

__all__ = [
    "MathError",
    "MATHML_NS",
    "MATHML_ELEMENTS",
    "MATHML_ATTRIBUTES",
    "SUPPORTED_ENVIRONMENTS",
    "tex_to_mathml",
    "validate_mathml",
]

MATHML_NS = "http://www.w3.org/1998/Math/MathML"


class MathError(Exception):
    """The TeX cannot be turned into valid MathML; the message says what is wrong and what to do.

    `column` is the 1-based column in the TeX where the problem was found, when it is known, so a
    caller that knows where the formula starts in its file can point at the exact spot.
    """

    def __init__(self, message: str, column: Optional[int] = None) -> None:
        super().__init__(message)
        self.column = column


# --------------------------------------------------------------------------------------------------
# What is supported

# Environment name → what latex2mathml gets (None: unchanged). `align` is rendered unnumbered: every
# formula is converted on its own, so numbers would restart at (1) in each block and nothing on the
# page can refer to them.
SUPPORTED_ENVIRONMENTS: dict[str, Optional[str]] = {
    "align": "align*",
    "align*": None,
    "aligned": "align*",
    "split": None,
    "array": None,
    "cases": None,
    "matrix": None,
    "matrix*": None,
    "pmatrix": None,
    "pmatrix*": None,
    "bmatrix": None,
    "bmatrix*": None,
    "Bmatrix": None,
    "Bmatrix*": None,
    "vmatrix": None,
    "vmatrix*": None,
    "Vmatrix": None,
    "Vmatrix*": None,
    "smallmatrix": None,
    # A plain group in latex2mathml; `&` and `\\` are refused inside it (see _TABLE_ENVIRONMENTS).
    "equation": None,
    "equation*": None,
}
_TABLE_ENVIRONMENTS = frozenset(SUPPORTED_ENVIRONMENTS) - {"equation", "equation*"}
# Tokens that only mean something inside a table (elsewhere latex2mathml prints them as text).
_TABLE_ONLY = frozenset(["&", r"\\", r"\cr", r"\hline", r"\hdashline", r"\hfil", r"\nonumber", r"\notag"])
# The only tokens without a backslash that _check_tokens looks at.
_CHECKED_CHARACTERS = frozenset("{}&")
# Plain-TeX forms whose brace argument is a table: `\substack{a \\ b}`, `\pmatrix{a & b}`.
_TABLE_COMMANDS = frozenset(r"\substack \matrix \pmatrix \cases \smallmatrix".split())

# Commands with a clear reason to refuse them, and what to write instead.
_REFUSED: dict[str, str] = {
    r"\newcommand": "macro definitions are not supported: write the expansion out",
    r"\renewcommand": "macro definitions are not supported: write the expansion out",
    r"\def": "macro definitions are not supported: write the expansion out",
    r"\DeclareMathOperator": r"macro definitions are not supported: write \operatorname{name} instead",
    r"\newenvironment": "environment definitions are not supported: write the environment out",
    r"\href": "links are not allowed inside math: put the link in the surrounding text",
    r"\style": "raw CSS is not allowed inside math: remove it",
    r"\class": "raw classes are not allowed inside math: remove it",
    r"\label": "labels are not supported (formulas are not numbered): remove it",
    r"\ref": "references are not supported (formulas are not numbered): remove it",
    r"\eqref": "references are not supported (formulas are not numbered): remove it",
    r"\tag": "tags are not supported (formulas are not numbered): remove it",
    r"\tag*": "tags are not supported (formulas are not numbered): remove it",
    r"\genfrac": r"\genfrac is not supported: use \frac, \dfrac or \binom",
    r"\abovewithdelims": r"\abovewithdelims is not supported: use \frac with \left( … \right)",
    r"\atopwithdelims": r"\atopwithdelims is not supported: use \binom",
    r"\verb": r"\verb is not supported inside math: use \texttt{…}",
    r"\sideset": r"\sideset is not supported: write the scripts on an empty group, {}_a^b X",
    r"\unicode": r"\unicode is not supported: type the character itself (UTF-8 is fine)",
    r"\fcolorbox": r"\fcolorbox is not supported: use \colorbox{colour}{text}",
}

# Commands whose next token latex2mathml takes verbatim (text, colour), not as math.
_RAW_ARGUMENT_COMMANDS = frozenset(
    r"""\text \textbf \textit \textmd \textnormal \textrm \textsf \texttt \textup \emph \mbox \hbox
    \fbox \llap \rlap \clap \color \textcolor""".split()
)
_TEXT_COMMANDS = _RAW_ARGUMENT_COMMANDS - {r"\color", r"\textcolor"}
# Commands whose next token must be a delimiter.
_DELIMITER_COMMANDS = frozenset(
    [r"\left", r"\right", r"\middle", *l2m_commands.BIG, *l2m_commands.BIG_OPEN_CLOSE]
)
_DELIMITERS = frozenset(
    r"""( ) [ ] | / . < > \{ \} \| \lbrace \rbrace \lbrack \rbrack \langle \rangle \lvert \rvert
    \lVert \rVert \vert \Vert \lfloor \rfloor \lceil \rceil \lgroup \rgroup \lmoustache \rmoustache
    \uparrow \downarrow \updownarrow \Uparrow \Downarrow \Updownarrow \backslash \lparen \rparen""".split()
)
_COLOUR = re.compile(r"^(#[0-9a-fA-F]{3}|#[0-9a-fA-F]{6}|[a-zA-Z]+)$")


def _known_commands() -> frozenset[str]:
    """Every command latex2mathml handles: its command constants and its symbol table."""
    known: set[str] = set(L2M_SYMBOLS)
    for value in vars(l2m_commands).values():
        names: Iterable = ()
        if isinstance(value, str):
            names = (value,)
        elif isinstance(value, (tuple, list, frozenset, set)):
            names = value
        elif isinstance(value, dict):
            names = value.keys()
        known.update(n for n in names if isinstance(n, str) and n.startswith("\\"))
    known.update(l2m_converter.OPERATORS)
    known.update(l2m_converter.MOVABLE_LIMIT_TEXTS)
    return frozenset(n for n in known if re.fullmatch(r"\\[A-Za-z]+\*?", n))


_KNOWN_COMMANDS = _known_commands()
_COMMAND = re.compile(r"\\[A-Za-z]+\*?")


# --------------------------------------------------------------------------------------------------
# Public API


_TOO_DEEP = "formula nests too deeply: split it into smaller formulas"


@functools.lru_cache(maxsize=4096)
def tex_to_mathml(tex: str, display: bool) -> str:
    """Convert one formula to a ``<math>`` element (a string of MathML) or raise MathError.

    `tex` is the TeX between the delimiters (``$…$``, ``$$…$$``) or a whole environment
    (``\\begin{align}…\\end{align}``); `display` chooses ``display="block"`` or ``"inline"``.
    The result carries the TeX in ``<annotation encoding="application/x-tex">``. Cached per
    ``(tex, display)``: the same formula repeats across pages and languages.
    """
    if not isinstance(tex, str):
        raise TypeError(f"tex must be str, not {type(tex).__name__}")
    if not tex.strip():
        raise MathError("empty formula: write the TeX between the delimiters or remove them")
    _check_source(tex)
    tokens = _tokenize(_prepare(tex))
    _check_tokens(tokens, source=tex)
    mode = "block" if display else "inline"
    try:
        element = _convert(tokens, mode)
    except MathError:
        raise
    except RecursionError as error:
        raise MathError(_TOO_DEEP) from error
    except Exception as error:  # latex2mathml signals malformed input with many exception types
        raise MathError(_explain_converter_error(error)) from error
    math = _math_element(_repair(element, tex), tex, mode)
    try:
        markup, checked = _serialise_checked(math)
    except RecursionError as error:  # the serialiser recurses once per level, like the converter
        raise MathError(_TOO_DEEP) from error
    # Checking the tree we built, as it is written, is much cheaper than parsing `markup` again. It
    # is exact wherever `markup` parses back to that same tree; elsewhere (and to word the messages)
    # the string decides.
    if not checked or _NOT_XML_ROUND_TRIP.search(markup):
        problems = validate_mathml(markup, expected_tex=tex)
    else:
        problems = []
    if problems:
        raise MathError(
            "this TeX converts to invalid MathML (" + "; ".join(problems[:3]) + "): "
            "simplify the formula or rewrite the part named"
        )
    return markup


# --------------------------------------------------------------------------------------------------
# Tokenising and converting with latex2mathml
#
# latex2mathml's public entry point takes a string and tokenises it itself, but _check_tokens needs
# the tokens first; tokenising once and handing the list to its walker and converter halves that
# work. Those are internals (walker._walk and Node, Converter and its _convert_* methods, the command
# tables, the tokenizer's PATTERN and UNITS), which is acceptable because pyproject pins latex2mathml
# to >=3.81.1,<3.82; the differential tests in tests/test_math.py fail if a release changes what they
# rely on.


def _whole_match_pattern() -> re.Pattern:
    r"""latex2mathml's token pattern with its groups made non-capturing, so that ``findall`` yields
    whole matches, and without its \verb alternative, whose backreference needs a group."""
    source = L2M_TOKEN_PATTERN.pattern
    verb = re.search(r"\(\?P<verb>.*?\(\?P=verb_delim\)\)\s*\|", source, re.S)
    if verb is not None:
        source = re.sub(r"\(\?P<\w+>", "(?:", source.replace(verb.group(), ""))
    if verb is None or "(?P" in source:
        raise ImportError("latex2mathml's token pattern is not the one _tokenize knows (see its pin in pyproject)")
    return re.compile(source, L2M_TOKEN_PATTERN.flags)


_WHOLE_MATCHES = _whole_match_pattern()


def _tokenize(tex: str) -> list[str]:
    """Exactly the tokens of latex2mathml's ``tokenizer.tokenize(tex)``, as a list, for less CPU.

    latex2mathml filters all twenty-odd groups of every regex match through a lambda. Here the
    matches come as strings from _WHOLE_MATCHES, far cheaper than match objects, and most are a
    token as they stand. The others are matched again on their own, which takes the same alternative
    of the pattern (none looks past the end of its match except to stop there), and go through
    latex2mathml's rules.
    """
    if r"\verb" in tex:
        return _tokenize_matches(tex)  # _WHOLE_MATCHES has no \verb alternative
    tokens: list[str] = []
    for whole in _WHOLE_MATCHES.findall(tex):
        first = whole[0]
        if len(whole) == 1:
            if whole != "%":  # a lone "%" is an empty comment
                tokens.append(whole)
        elif first == "\\" and (len(whole) == 2 or whole[1:].isalpha()) and not whole.startswith(r"\math"):
            tokens.append(whole)  # an escaped character or a command (\math… may be a symbol: the rules)
        elif first in "0123456789." and not whole[-1].isalpha():
            tokens.append(whole)  # a number (a dimension ends with its unit: the rules)
        elif first in "_^":
            tokens += [first, whole[1]]  # a script with a one-digit argument: x_2
        elif not _add_match_tokens(L2M_TOKEN_PATTERN.match(whole), tokens):
            break
    return tokens


# Regex groups that match one whole token on their own, which latex2mathml yields unchanged.
_SINGLE_TOKEN_GROUPS = frozenset({"letter", "number", "escaped", "command", "char"})


def _tokenize_matches(tex: str) -> list[str]:
    r"""_tokenize on match objects, for TeX with \verb."""
    tokens: list[str] = []
    for match in L2M_TOKEN_PATTERN.finditer(tex):
        token = match.group()
        # "%" starts a comment and "\math…" / "\verb…" have special cases: leave those to the rules.
        if match.lastgroup in _SINGLE_TOKEN_GROUPS and not token.startswith(("%", r"\math", r"\verb")):
            tokens.append(token)
        elif not _add_match_tokens(match, tokens):
            break
    return tokens


def _add_match_tokens(match: re.Match, tokens: list[str]) -> bool:
    """latex2mathml's rules for one match (tokenizer.tokenize's loop body); False: stop tokenising."""
    groups = [group for group in match.groups() if group is not None]
    if groups[0].startswith(l2m_commands.VERB):
        tokens.append(l2m_commands.VERB)
        if len(groups) < 3:
            # A bare \verb: latex2mathml yields it and then fails with IndexError. _check_tokens
            # refuses \verb wherever it appears, so that failure is never reached; stopping here
            # leaves the same tokens up to the refusal.
            return False
        tokens.append(groups[2])
        return True
    if groups[0].startswith(l2m_commands.MATH) and groups[0] not in l2m_commands.MATH_NON_FONT_COMMANDS:
        symbol = convert_symbol("".join(groups))
        if symbol:
            tokens.append(f"&#x{symbol};")
            return True
    for captured in groups:
        if captured.startswith("%"):
            break
        if captured.endswith(L2M_UNITS) and captured[0:1].isdigit():
            tokens.append(captured.replace(" ", ""))
        elif captured.startswith((l2m_commands.BEGIN, l2m_commands.END, l2m_commands.OPERATORNAME)):
            tokens.append("".join(captured.split(" ")))
        else:
            tokens.append(captured)
    return True


def _convert(tokens: list[str], mode: str) -> Element:
    """``Converter(display=mode).convert_to_element(tex)`` for the tokens of `tex`, without tokenising again.

    The fast port below converts nearly every formula; where it declines a construct or fails in any
    way (malformed TeX, too deep a recursion), latex2mathml's own walker and converter do the whole
    formula again, so the result, or the exception and its message, is theirs.
    """
    block = mode == "block"
    try:
        nodes = _walk_fast(iter(tokens), block=block)
        math, row = _math_and_row(mode)
        _FastConverter(display=mode)._convert_group(iter(nodes), row)
        return math
    except Exception:  # _Unsupported, or any failure: latex2mathml decides below
        pass
    converter = l2m_converter.Converter(display=mode)
    math, row = _math_and_row(mode)
    nodes = l2m_walker._walk(iter(tokens), block=block, macros=converter.macros)
    converter._convert_group(iter(nodes), row)
    return math


def _math_and_row(mode: str) -> tuple[Element, Element]:
    math = Element("math", {"xmlns": MATHML_NS, "display": mode})
    return math, SubElement(math, "mrow")


# --------------------------------------------------------------------------------------------------
# A faster port of latex2mathml's walker and converter, for the common constructs
#
# walker._walk tests every token against some forty branches in turn (building a tuple of the \big
# commands on the way), and the converter deep-copies a CONVERSION_MAP entry for each command and
# classifies each symbol afresh: that was half of tex_to_mathml's CPU. `_walk_fast` and
# `_FastConverter` port them from latex2mathml 3.81.x (pyproject pins >=3.81.1,<3.82, so relying on
# these internals is safe) for the constructs nearly every formula is made of, dispatching on tables
# precomputed from latex2mathml's own command lists, and build the same nodes and elements. The rest
# is declined rather than ported: the walker raises _Unsupported, the converter hands the node to its
# base class. tests/test_math.py compares both ways on every command latex2mathml knows, on the
# tutorial and on random tokens, and fails if a release changes what the port mirrors.

Node = l2m_walker.Node


class _Unsupported(Exception):
    """The fast walker met a token it leaves to latex2mathml's walker."""


# How walker._walk treats a token: the kinds _walk_fast ports, and _AS_DECLINE for the rest.
(_AS_PLAIN, _AS_LEFT, _AS_MIDDLE, _AS_BRACE, _AS_SCRIPT, _AS_PRIME, _AS_TWO, _AS_ONE, _AS_TEXT, _AS_SQRT,
 _AS_ENVIRONMENT, _AS_DECLINE) = range(12)  # fmt: skip

_c = l2m_commands  # short, as the port mirrors latex2mathml's `commands.X` at every turn
_ONE_PARAMETER = frozenset(_c.COMMANDS_WITH_ONE_PARAMETER)
_TWO_PARAMETERS = frozenset(_c.COMMANDS_WITH_TWO_PARAMETERS)
_REVERSED_PARAMETERS = frozenset((_c.OVERSET, _c.STACKREL, _c.UNDERSET))
_MATH_NON_FONT = frozenset(_c.MATH_NON_FONT_COMMANDS)
# Tokens whose next token walker._walk takes as the node's text.
_WALKER_TEXT_COMMANDS = frozenset(
    (*_c.BIG, *_c.BIG_OPEN_CLOSE, _c.CLAP, _c.EMPH, _c.FBOX, _c.HBOX, _c.LLAP, _c.MBOX, _c.MIDDLE, _c.RLAP,
     _c.TAG, _c.TAGSTAR, _c.TEXT, _c.TEXTBF, _c.TEXTIT, _c.TEXTMD, _c.TEXTNORMAL, _c.TEXTRM, _c.TEXTSF,
     _c.TEXTTT, _c.TEXTUP, _c.VERB)
)  # fmt: skip
# Every other token a branch of walker._walk names (\right is one only where it is not the terminator).
_WALKER_DECLINED = frozenset(
    (_c.RIGHT, _c.NOT, *_c.EXTENSIBLE_ARROWS, _c.HSKIP, _c.HSPACE, _c.KERN, _c.MKERN, _c.MSKIP, _c.MSPACE,
     _c.RAISE, _c.LOWER, _c.MOVELEFT, _c.MOVERIGHT, _c.RULE, _c.SMASH, _c.TEXTCOLOR, _c.COLORBOX,
     _c.FCOLORBOX, _c.COLOR, _c.LEFTROOT, _c.UPROOT, _c.MATHCHOICE, _c.CLASS, _c.STYLE, _c.HREF, _c.ABOVE,
     _c.ATOP, _c.ABOVEWITHDELIMS, _c.ATOPWITHDELIMS, _c.BRACE, _c.BRACK, _c.CHOOSE, _c.OVER, _c.ROOT,
     *_c.MATRICES, _c.GENFRAC, _c.SIDESET, _c.SKEW, _c.NEWCOMMAND, _c.DEF, _c.DECLAREMATHOPERATOR,
     _c.NEWENVIRONMENT)
)  # fmt: skip


def _walk_kind(token: str) -> int:
    """walker._walk's branch for `token` (after its terminator test), in the walker's order up to the
    one-parameter commands; every branch after those that _walk_fast does not port is declined first,
    which can only send a token to latex2mathml, never to the wrong port."""
    if token == _c.MIDDLE:
        return _AS_MIDDLE  # an error outside \left … \right, else a text command
    if token == _c.LEFT:
        return _AS_LEFT
    if token == _c.OPENING_BRACE:
        return _AS_BRACE
    if token in (_c.SUBSCRIPT, _c.SUPERSCRIPT):
        return _AS_SCRIPT
    if token == _c.APOSTROPHE:
        return _AS_PRIME
    if token in _TWO_PARAMETERS:
        return _AS_TWO
    if token in _ONE_PARAMETER or (token.startswith(_c.MATH) and token not in _MATH_NON_FONT):
        return _AS_ONE
    if token in _WALKER_DECLINED:
        return _AS_DECLINE
    if token in _WALKER_TEXT_COMMANDS:
        return _AS_TEXT
    if token == _c.SQRT:
        return _AS_SQRT
    if token.startswith(_c.BEGIN):
        return _AS_ENVIRONMENT
    return _AS_PLAIN  # walker._walk would look the token up in its macros next: there are none


# Precomputed for every token a formula can hold once _check_tokens has passed it; others are
# classified as they come.
_WALK_KINDS: dict[str, int] = {
    token: _walk_kind(token)
    for token in (*_KNOWN_COMMANDS, *L2M_SYMBOLS, *_WALKER_DECLINED, *_WALKER_TEXT_COMMANDS, "{", "}", "_", "^", "'")
}


# Nodes are immutable tuples, so the many plain ones (letters, digits, symbols) can be shared.
_plain_node = functools.lru_cache(maxsize=4096)(Node)


def _walk_fast(
    tokens: Iterator[str], terminator: Optional[str] = None, limit: int = 0, block: bool = False
) -> list[Node]:
    r"""walker._walk (without macros) for the kinds of token above; raises _Unsupported for the others.

    Like the original it recurses once per group and passes `block` on only where that does (into
    environments): the scripts of a \sum inside braces are not limits, even in display mode.
    """
    group: list[Node] = []
    has_available_tokens = False
    for token in tokens:
        has_available_tokens = True
        if token == terminator:
            delimiter = next(tokens) if terminator == _c.RIGHT else None
            group.append(Node(token=token, delimiter=delimiter))
            break
        kind = _WALK_KINDS.get(token)
        if kind is None:
            kind = _walk_kind(token)
        if kind == _AS_PLAIN:
            node = _plain_node(token)
        elif kind == _AS_BRACE:
            children = tuple(_walk_fast(tokens, terminator=_c.CLOSING_BRACE))
            if len(children) and children[-1].token == _c.CLOSING_BRACE:
                children = children[:-1]
            node = Node(token=_c.BRACES, children=children)
        elif kind == _AS_SCRIPT:
            node = _script_node(token, group, tokens, terminator, block)
        elif kind == _AS_ONE:
            node = Node(token=token, children=tuple(_walk_fast(tokens, terminator=terminator, limit=1)))
        elif kind == _AS_TWO:
            children = tuple(_walk_fast(tokens, terminator=terminator, limit=2))
            if token in _REVERSED_PARAMETERS:
                children = children[::-1]
            node = Node(token=token, children=children)
        elif kind == _AS_TEXT or (kind == _AS_MIDDLE and terminator == _c.RIGHT):
            node = Node(token=token, text=next(tokens))
        elif kind == _AS_LEFT:
            delimiter = next(tokens)
            children = tuple(_walk_fast(tokens, terminator=_c.RIGHT))
            if len(children) == 0 or children[-1].token != _c.RIGHT:
                raise l2m_exceptions.ExtraLeftOrMissingRightError
            node = Node(token=token, children=children, delimiter=delimiter)
        elif kind == _AS_SQRT:
            node = _sqrt_node(tokens)
        elif kind == _AS_PRIME:
            node = _prime_node(group)
        elif kind == _AS_ENVIRONMENT:
            # latex2mathml's own code walks the environment (tables are rare); a macro defined inside
            # it would be seen by the tokens after it, which this walker does not track.
            macros: dict = {}
            node = l2m_walker._get_environment_node(token, tokens, macros=macros, block=block)
            if macros:
                raise _Unsupported(token)
        else:
            raise _Unsupported(token)
        group.append(node)
        if limit and len(group) >= limit:
            break
    if not has_available_tokens:
        raise l2m_exceptions.NoAvailableTokensError
    return group


def _script_node(
    token: str, group: list[Node], tokens: Iterator[str], terminator: Optional[str], block: bool
) -> Node:
    """walker._walk's branch for ``_`` and ``^``: the script takes the previous node as its base."""
    previous = group.pop() if group else Node(token="")  # left operand can be empty if not present
    if token == previous.token == _c.SUBSCRIPT:
        raise l2m_exceptions.DoubleSubscriptsError
    if (
        token == previous.token == _c.SUPERSCRIPT
        and previous.children is not None
        and len(previous.children) >= 2
        and previous.children[1].token != _c.PRIME
    ):
        raise l2m_exceptions.DoubleSuperscriptsError
    modifier = None
    if previous.token in (_c.LIMITS, _c.NOLIMITS):
        modifier = previous.token
        if not group:
            raise l2m_exceptions.LimitsMustFollowMathOperatorError
        previous = group.pop()
        if not previous.token.startswith("\\"):
            raise l2m_exceptions.LimitsMustFollowMathOperatorError
    elif block and previous.token in (_c.SUMMATION, _c.PRODUCT):
        modifier = _c.LIMITS  # block summation and product take their scripts as limits
    children = tuple(_walk_fast(tokens, terminator=terminator, limit=1))
    if token == _c.SUBSCRIPT and previous.token == _c.SUPERSCRIPT and previous.children is not None:
        return Node(
            token=_c.SUBSUP,
            children=(previous.children[0], *children, previous.children[1]),
            modifier=previous.modifier,
        )
    if token == _c.SUPERSCRIPT and previous.token == _c.SUBSCRIPT and previous.children is not None:
        return Node(token=_c.SUBSUP, children=(*previous.children, *children), modifier=previous.modifier)
    if (
        token == _c.SUPERSCRIPT
        and previous.token == _c.SUPERSCRIPT
        and previous.children is not None
        and previous.children[1].token == _c.PRIME
    ):
        return Node(
            token=_c.SUPERSCRIPT,
            children=(previous.children[0], Node(token=_c.BRACES, children=(previous.children[1], *children))),
            modifier=previous.modifier,
        )
    if previous.token in (_c.OVERBRACE, _c.UNDERBRACE):
        modifier = previous.token
    return Node(token=token, children=(previous, *children), modifier=modifier)


def _sqrt_node(tokens: Iterator[str]) -> Node:
    r"""walker._walk's branch for \sqrt, with an optional [index]; its argument ignores the terminator."""
    root_nodes: tuple[Node, ...] = ()
    next_node = _walk_fast(tokens, limit=1)[0]
    if next_node.token == _c.OPENING_BRACKET:
        root_nodes = tuple(_walk_fast(tokens, terminator=_c.CLOSING_BRACKET))[:-1]
        next_node = _walk_fast(tokens, limit=1)[0]
        if len(root_nodes) > 1:
            root_nodes = (Node(token=_c.BRACES, children=root_nodes),)
    if root_nodes:
        return Node(token=_c.ROOT, children=(next_node, *root_nodes))
    return Node(token=_c.SQRT, children=(next_node,))


def _prime_node(group: list[Node]) -> Node:
    """walker._walk's branch for ``'``: a prime superscript on the previous node, or one more prime."""
    previous = group.pop() if group else Node(token="")
    prev_is_super_with_children = (
        previous.token == _c.SUPERSCRIPT and previous.children is not None and len(previous.children) >= 2
    )
    prev_prime = previous.children[1] if prev_is_super_with_children and previous.children else None
    prev_is_prime_token = prev_prime is not None and (
        prev_prime.token in _c.PRIME_UPGRADE
        or prev_prime.token == _c.QPRIME
        or prev_prime.token == l2m_walker.MULTIPRIMES
    )
    if prev_is_super_with_children and not prev_is_prime_token:
        raise l2m_exceptions.DoubleSuperscriptsError
    if prev_is_prime_token and previous.children is not None and prev_prime is not None:
        if prev_prime.token in _c.PRIME_UPGRADE:
            new_prime = Node(token=_c.PRIME_UPGRADE[prev_prime.token])
        elif prev_prime.token == _c.QPRIME:
            new_prime = Node(token=l2m_walker.MULTIPRIMES, text="5")
        else:
            new_prime = Node(token=l2m_walker.MULTIPRIMES, text=str(int(prev_prime.text or "0") + 1))
        return Node(token=_c.SUPERSCRIPT, children=(previous.children[0], new_prime))
    if previous.token == _c.SUBSCRIPT and previous.children is not None:
        return Node(token=_c.SUBSUP, children=(*previous.children, Node(token=_c.PRIME)), modifier=previous.modifier)
    return Node(token=_c.SUPERSCRIPT, children=(previous, Node(token=_c.PRIME)))


# How Converter._convert_group treats a token before it looks at the node's children.
_GROUP_STYLE, _GROUP_COMMAND, _GROUP_DECLINE = range(3)


def _group_kinds() -> dict[str, int]:
    kinds: dict[str, int] = {}
    for names, kind in (  # in _convert_group's order: a name keeps the first branch that names it
        ((*_c.MSTYLE_SIZES, *_c.STYLES), _GROUP_STYLE),  # a style applies to the rest of the group
        ((_c.UNICODE, _c.RULE), _GROUP_DECLINE),
        ((*_c.CONVERSION_MAP, _c.MOD, _c.PMOD, _c.POD), _GROUP_COMMAND),
    ):
        for name in names:
            kinds.setdefault(name, kind)
    return kinds


_GROUP_KINDS = _group_kinds()

# Commands Converter._convert_command handles uniformly: an element from CONVERSION_MAP holding the
# node's text or children (and a diacritic). The names its special cases test are left to it.
_COMMAND_SPECIAL_CASES = frozenset(
    (_c.SUBSTACK, _c.SMALLMATRIX, _c.CASES, _c.DBINOM, _c.DFRAC, _c.HPHANTOM, _c.VPHANTOM, _c.TBINOM, _c.HBOX,
     _c.MBOX, _c.TFRAC, _c.MOD, _c.PMOD, _c.POD, _c.BMOD, _c.SKEW, _c.LEFT, _c.MIDDLE, *_c.EXTENSIBLE_ARROWS,
     *_c.LIMIT, _c.BRA, _c.KET, _c.BRAKET, _c.FBOX, _c.LLAP, _c.RLAP, _c.CLAP, _c.COLORBOX, _c.FCOLORBOX,
     _c.TAG, _c.TAGSTAR, _c.GENFRAC, *_c.MATRICES, _c.CFRAC, _c.SIDESET, _c.BINOM, r"\pmatrix", r"\bmatrix",
     r"\Bmatrix", r"\vmatrix", r"\Vmatrix")
)  # fmt: skip
_UNIFORM_COMMANDS = frozenset(_c.CONVERSION_MAP) - _COMMAND_SPECIAL_CASES

# (token, id(font)) → (tag, attributes, text) of the one element Converter._convert_symbol makes
# for that symbol, or None where it makes more. Fonts are latex2mathml's module-level tables, so
# their ids stay valid.
_SYMBOL_ELEMENTS: dict[tuple[str, int], Optional[tuple[str, dict[str, str], Optional[str]]]] = {}
_SYMBOL_CACHE_SIZE = 8192


class _FastConverter(l2m_converter.Converter):
    """Converter._convert_group, _convert_command and _convert_symbol with table dispatch, no deep
    copies and symbols converted once; element for element the same tree."""

    def _convert_group(self, nodes: Iterable[Node], parent: Element, font: Optional[dict] = None) -> None:
        _font = font
        for node in nodes:
            token = node.token
            kind = _GROUP_KINDS.get(token)
            if kind is None:
                children = node.children
                if children is None:
                    if token in _c.GLOBAL_FONTS:
                        _font = _c.GLOBAL_FONTS[token]
                    else:
                        self._convert_symbol(node, parent, _font)
                elif token in _c.LOCAL_FONTS:
                    self._convert_group(iter(children), parent, _c.LOCAL_FONTS[token])
                elif token.startswith(_c.MATH):
                    self._convert_group(iter(children), parent, _font)
                elif token in _c.GLOBAL_FONTS:
                    _font = _c.GLOBAL_FONTS[token]
                else:
                    row = SubElement(parent, "mrow", attrib=node.attributes or {})
                    self._convert_group(iter(children), row, _font)
            elif kind == _GROUP_COMMAND:
                self._convert_command(node, parent, _font)
            elif kind == _GROUP_STYLE:
                self._convert_command(Node(token=token, children=tuple(nodes)), parent, _font)
            else:
                super()._convert_group(iter((node,)), parent, _font)

    def _convert_command(self, node: Node, parent: Element, font: Optional[dict] = None) -> None:
        command = node.token
        if command not in _UNIFORM_COMMANDS or node.delimiter is not None or node.alignment is not None:
            super()._convert_command(node, parent, font)
            return
        tag, attributes = _c.CONVERSION_MAP[command]
        if node.attributes is not None:
            # The table's attribute values are strings: a shallow copy is the original's deepcopy.
            attributes = {**attributes, **node.attributes}
        modifier = node.modifier
        if command == _c.SUBSUP and node.children is not None and node.children[0].token == _c.GCD:
            tag = "munderover"
        elif command == _c.SUPERSCRIPT and modifier in (_c.LIMITS, _c.OVERBRACE):
            tag = "mover"
        elif command == _c.SUBSCRIPT and modifier in (_c.LIMITS, _c.UNDERBRACE):
            tag = "munder"
        elif command == _c.SUBSUP and modifier in (_c.LIMITS, _c.OVERBRACE, _c.UNDERBRACE):
            tag = "munderover"
        element = SubElement(parent, tag, attributes)  # SubElement copies `attributes`
        if node.text is not None:
            element.text = node.text.replace(" ", "&#x000A0;")
            self._set_font(element, "mtext", font)
        if node.children is not None:
            self._convert_group(iter(node.children), element, font)
        diacritic = _c.DIACRITICS.get(command)
        if diacritic is not None:
            SubElement(element, "mo", diacritic[1]).text = diacritic[0]

    def _convert_symbol(self, node: Node, parent: Element, font: Optional[dict] = None) -> None:
        if node.attributes is not None or node.text is not None:
            super()._convert_symbol(node, parent, font)
            return
        key = (node.token, id(font))
        if key in _SYMBOL_ELEMENTS:
            made = _SYMBOL_ELEMENTS[key]
        else:
            made = self._symbol_element(node, font)
            if len(_SYMBOL_ELEMENTS) < _SYMBOL_CACHE_SIZE:
                _SYMBOL_ELEMENTS[key] = made
        if made is None:
            super()._convert_symbol(node, parent, font)
        else:
            SubElement(parent, made[0], made[1]).text = made[2]

    def _symbol_element(self, node: Node, font: Optional[dict]) -> Optional[tuple[str, dict[str, str], Optional[str]]]:
        """What Converter._convert_symbol makes for `node`: (tag, attributes, text) when that is one
        element without children, else None."""
        scratch = Element("scratch")
        super()._convert_symbol(node, scratch, font)
        if len(scratch) != 1 or len(scratch[0]) or scratch.text or scratch[0].tail:
            return None
        return scratch[0].tag, dict(scratch[0].attrib), scratch[0].text


# --------------------------------------------------------------------------------------------------
# Checks on the TeX before conversion


# What _check_source looks at: a command or escaped character (skipped whole, so "\\{" is no
# brace), a backslash that ends the formula, and the characters that need checking.
_SOURCE_MARK = re.compile(r"\\(?:[A-Za-z]+|.)?|[$#%{}]", re.S)


def _check_source(tex: str) -> None:
    """Brace balance and stray comment signs, on the raw text so columns are exact."""
    open_braces: list[int] = []
    for match in _SOURCE_MARK.finditer(tex):
        char = match.group()
        index = match.start()
        if char[0] == "\\":
            if char == "\\":
                raise MathError(
                    f"stray backslash at column {index + 1} (end of formula): remove it or write \\backslash",
                    index + 1,
                )
            continue
        if char in "$#":
            hint = " (a $ inside a formula usually means the delimiters are unbalanced)" if char == "$" else ""
            raise MathError(f"unescaped {char} at column {index + 1}: write \\{char} for the character{hint}", index + 1)
        if char == "%":
            raise MathError(
                f"unescaped % at column {index + 1} starts a TeX comment that hides the rest of the "
                r"line: write \% for a percent sign",
                index + 1,
            )
        if char == "{":
            open_braces.append(index)
        elif char == "}":
            if not open_braces:
                raise MathError(
                    f"unbalanced braces: '}}' at column {index + 1} has no matching '{{': "
                    r"remove it or write \} for a literal brace",
                    index + 1,
                )
            open_braces.pop()
    if open_braces:
        column = open_braces[-1] + 1
        raise MathError(
            f"unbalanced braces: '{{' at column {column} is never closed: add the matching '}}' "
            r"or write \{ for a literal brace",
            column,
        )


def _column_of(tex: str, token: str) -> Optional[int]:
    position = tex.find(token)
    return position + 1 if position >= 0 else None


def _check_tokens(token_list: list[str], source: str) -> None:
    """Walk the tokens of the prepared TeX as latex2mathml will see them and refuse what it would
    mangle silently; columns in messages refer to `source`, the author's TeX."""
    # Frames: ("{", table?) for a brace group, ("left", "") for \left, ("env", name).
    stack: list[tuple[str, str]] = []
    tokens = iter(token_list)
    previous = ""
    for token in tokens:
        if token[:1] != "\\" and token not in _CHECKED_CHARACTERS:
            # Letters, digits, operators: the bulk of the tokens, and nothing below applies to them.
            previous = token
            continue
        if token in _RAW_ARGUMENT_COMMANDS:
            argument = next(tokens, None)
            if argument is None:
                raise MathError(f"{token} needs an argument in braces, e.g. {token}{{…}}", _column_of(source, token))
            if token in (r"\color", r"\textcolor") and not _COLOUR.match(argument.strip()):
                raise MathError(
                    f"{token}{{{argument}}}: the colour must be a name (red) or #rgb / #rrggbb",
                    _column_of(source, token),
                )
            if token in _TEXT_COMMANDS:
                _check_text_argument(source, token, argument)
            previous = token
            continue
        if token in _DELIMITER_COMMANDS:
            delimiter = next(tokens, None)
            if delimiter is None or delimiter not in _DELIMITERS:
                found = "nothing" if delimiter is None else f"'{delimiter}'"
                raise MathError(
                    f"{token} must be followed by a delimiter such as ( ) [ ] \\{{ \\}} | \\| \\langle "
                    f"\\rangle or . (none), found {found}",
                    _column_of(source, token),
                )
            if token == r"\left":
                stack.append(("left", ""))
            elif token == r"\right":
                if not stack or stack[-1][0] != "left":
                    raise MathError(_unmatched_right(stack), _column_of(source, token))
                stack.pop()
            elif token == r"\middle" and not any(kind == "left" for kind, _ in stack):
                raise MathError(r"\middle outside \left … \right: add the \left and \right", _column_of(source, token))
            previous = token
            continue
        if token == "{":
            stack.append(("{", "table" if previous in _TABLE_COMMANDS else ""))
        elif token == "}":
            if not stack or stack[-1][0] != "{":
                if stack and stack[-1][0] == "left":
                    raise MathError(r"'}' closes a group that contains an unclosed \left: add the \right first")
                if stack and stack[-1][0] == "env":
                    raise MathError(f"'}}' inside \\begin{{{stack[-1][1]}}} closes a brace opened outside it")
                # Balanced in the raw text but not in the tokens: a text argument swallowed a brace.
                raise MathError(
                    r"braces inside \text{…} (or another text command) are not supported: split the text, "
                    r"e.g. \text{a}\{b\}\text{c}"
                )
            stack.pop()
        elif token.startswith(r"\begin{"):
            name = token[len(r"\begin{") : -1]
            if name not in SUPPORTED_ENVIRONMENTS:
                raise MathError(
                    f"unsupported environment {name}: use one of " + ", ".join(sorted(SUPPORTED_ENVIRONMENTS)),
                    _column_of(source, name),
                )
            stack.append(("env", name))
        elif token.startswith(r"\end{"):
            name = token[len(r"\end{") : -1]
            if not stack or stack[-1] != ("env", name):
                open_env = next((n for kind, n in reversed(stack) if kind == "env"), None)
                expected = f"\\end{{{open_env}}}" if open_env else "no \\end here"
                raise MathError(f"\\end{{{name}}} does not match the open environment: expected {expected}")
            stack.pop()
        elif token in (r"\begin", r"\end"):
            raise MathError(f"{token} needs an environment name, e.g. {token}{{aligned}}", _column_of(source, token))
        elif token in _TABLE_ONLY:
            if not _in_table(stack):
                what = {"&": "alignment '&'", r"\\": r"line break '\\'"}.get(token, token)
                hint = r" (or write \& for an ampersand)" if token == "&" else ""
                raise MathError(
                    f"{what} outside a table environment: wrap the lines in \\begin{{aligned}} … "
                    f"\\end{{aligned}}{hint}",
                    _column_of(source, token),
                )
        elif token == "\\":
            raise MathError(
                r"stray backslash: write \backslash for the character, or check the command name",
                _column_of(source, "\\"),
            )
        elif token in _REFUSED:
            raise MathError(f"{token}: {_REFUSED[token]}", _column_of(source, token))
        elif _COMMAND.fullmatch(token) and token not in _KNOWN_COMMANDS:
            raise MathError(
                f"unknown command {token}: use a supported command or write a name with \\operatorname{{…}}",
                _column_of(source, token),
            )
        previous = token
    for kind, name in reversed(stack):
        if kind == "left":
            raise MathError(r"\left without a matching \right: add \right) (or \right. for no delimiter)")
        if kind == "env":
            raise MathError(f"\\begin{{{name}}} without \\end{{{name}}}: add the \\end")


def _in_table(stack: list[tuple[str, str]]) -> bool:
    for kind, name in reversed(stack):
        if kind == "env":
            return name in _TABLE_ENVIRONMENTS
        if kind == "{" and name == "table":
            return True
    return False


def _unmatched_right(stack: list[tuple[str, str]]) -> str:
    if stack and stack[-1][0] == "env":
        return f"\\right inside \\begin{{{stack[-1][1]}}} whose \\left is outside it: keep each pair in one cell"
    if stack and stack[-1][0] == "{":
        return r"\right inside a brace group whose \left is outside it: keep \left … \right in one group"
    return r"\right without a matching \left: add \left( (or \left. for no delimiter)"


def _check_text_argument(tex: str, command: str, argument: str) -> None:
    leftover = _COMMAND.search(_TEXT_ESCAPES.sub("", argument))
    if leftover:
        raise MathError(
            f"{leftover.group(0)} inside {command}{{…}}: commands are not expanded in text; "
            f"close the text first, e.g. {command}{{a }}{leftover.group(0)}{command}{{ b}}",
            _column_of(tex, leftover.group(0)),
        )


_TEXT_ESCAPES = re.compile(r"\\([&%$#_{} ])")


def _explain_converter_error(error: Exception) -> str:
    explanations = {
        l2m_exceptions.NumeratorNotFoundError: r"a fraction has no numerator: write \frac{a}{b}",
        l2m_exceptions.DenominatorNotFoundError: r"a fraction has no denominator: write \frac{a}{b}",
        l2m_exceptions.ExtraLeftOrMissingRightError: r"\left and \right do not pair up: add the missing one",
        l2m_exceptions.MissingSuperScriptOrSubscriptError: "^ or _ has nothing after it: write x^{2} or x_{i}",
        l2m_exceptions.DoubleSubscriptsError: "double subscript (x_a_b): write x_{ab} or {x_a}_b",
        l2m_exceptions.DoubleSuperscriptsError: "double superscript (x^a^b): write x^{ab} or {x^a}^b",
        l2m_exceptions.NoAvailableTokensError: r"a command is missing its argument (e.g. \frac{a} or \sqrt)",
        l2m_exceptions.MissingEndError: r"\begin{…} without a matching \end{…}",
        l2m_exceptions.InvalidAlignmentError: "array column spec may only contain l, c, r and |",
        l2m_exceptions.InvalidWidthError: r"\skew needs a number as its first argument",
        l2m_exceptions.LimitsMustFollowMathOperatorError: r"\limits must follow an operator such as \sum",
        l2m_exceptions.InvalidStyleForGenfracError: r"\genfrac style must be 0, 1, 2 or 3",
    }
    for kind, text in explanations.items():
        if isinstance(error, kind):
            return text
    if isinstance(error, (StopIteration, IndexError)):
        return r"the formula ends in the middle of a command: a command is missing its argument (e.g. \frac{a})"
    return f"malformed TeX ({type(error).__name__}: {error}): check the commands and their arguments"


# --------------------------------------------------------------------------------------------------
# Rewrites before conversion (on a copy; the annotation keeps the author's TeX)

_ENVIRONMENT = re.compile(r"\\(begin|end)\s*\{([A-Za-z]+\*?)\}")
# latex2mathml turns \mathrm{d} into a bare "d" that renders italic; with a space it takes the
# font path that marks it upright.
_SINGLE_LETTER_RM = re.compile(r"\\(mathrm)\s*\{([A-Za-z])\}")
_OPERATORNAME = re.compile(r"\\operatorname(\*?)\s*\{")


_MATHNORMAL = re.compile(r"\\mathnormal(?![A-Za-z])")
_SIM = re.compile(r"\\sim(?![A-Za-z])")


def _prepare(tex: str) -> str:
    # Each rewrite is skipped, by a substring test its pattern implies, where it cannot apply: most
    # formulas need none of them.
    def environment(match: re.Match) -> str:
        replacement = SUPPORTED_ENVIRONMENTS.get(match.group(2))
        return f"\\{match.group(1)}{{{replacement or match.group(2)}}}"

    prepared = tex
    if "\\begin" in prepared or "\\end" in prepared:
        prepared = _ENVIRONMENT.sub(environment, prepared)
    if "\\mathrm" in prepared:
        prepared = _SINGLE_LETTER_RM.sub(lambda m: f"\\{m.group(1)}{{ {m.group(2)}}}", prepared)
    if "\\mathnormal" in prepared:
        # latex2mathml sets \mathnormal upright; in TeX it is the default italic, like \mathit.
        prepared = _MATHNORMAL.sub(r"\\mathit", prepared)
    if "\\sim" in prepared:
        # latex2mathml's symbol table maps \sim to "~" (an <mi> tilde); \thicksim is the same ∼ relation.
        prepared = _SIM.sub(r"\\thicksim", prepared)
    if "\\operatorname" in prepared:
        prepared = _rewrite_operatornames(prepared)
    return prepared


def _rewrite_operatornames(tex: str) -> str:
    r"""latex2mathml only reads \operatorname{letters}; anything else (arg\,max, p_{data}) it drops.

    Those become \mathop{\mathrm{…}}, which the repair step turns into one operator name.
    """
    out: list[str] = []
    position = 0
    for match in _OPERATORNAME.finditer(tex):
        if match.start() < position:
            continue
        end = _matching_brace(tex, match.end() - 1)
        content = tex[match.end() : end]
        if re.fullmatch(r"[a-zA-Z\s*]+", content):
            continue
        out.append(tex[position : match.start()])
        out.append(f"\\mathop{{\\mathrm{{{content}}}}}")
        position = end + 1
    out.append(tex[position:])
    return "".join(out)


def _matching_brace(tex: str, open_index: int) -> int:
    depth = 0
    index = open_index
    while index < len(tex):
        char = tex[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    raise MathError("unbalanced braces after \\operatorname: add the matching '}'")


# --------------------------------------------------------------------------------------------------
# Repairs on latex2mathml's tree

_TOKEN_ELEMENTS = frozenset({"mi", "mn", "mo", "mtext", "ms"})
_ENTITY = re.compile(r"&#x([0-9A-Fa-f]+);")
_FUNCTION_MARK = "data-function"  # internal; removed before serialisation
_FUNCTION_NAMES = frozenset(name[1:] for name in l2m_commands.FUNCTIONS)
# Operator names Chromium's operator dictionary knows (spacing, limits); they stay <mo>.
_DICTIONARY_OPERATOR_NAMES = frozenset(name[1:] for name in l2m_commands.LIMIT)
# Symbols latex2mathml emits as <mo> that TeX treats as ordinary (no operator spacing).
_ORDINARY_SYMBOLS = frozenset("\u221e\u2202\u2207\u2205\u2200\u2203\u2204\u22a4")
_OPENING = frozenset("([{\u27e8\u2016|\u230a\u2308\u27ee")
_CLOSING = frozenset(")]}\u27e9\u2016|\u230b\u2309\u27ef")
_NAMED_SPACES = {
    "veryverythinmathspace": "0.056em",
    "verythinmathspace": "0.111em",
    "thinmathspace": "0.167em",
    "mediummathspace": "0.222em",
    "thickmathspace": "0.278em",
    "verythickmathspace": "0.333em",
    "veryverythickmathspace": "0.389em",
    "negativeveryverythinmathspace": "-0.056em",
    "negativeverythinmathspace": "-0.111em",
    "negativethinmathspace": "-0.167em",
    "negativemediummathspace": "-0.222em",
    "negativethickmathspace": "-0.278em",
}
# Elements whose children form a row (an "inferred mrow"), where siblings may be merged or spaced;
# the children of msub, mfrac and the like are positional and must stay as they are.
_ROW_ELEMENTS = frozenset({"math", "mrow", "mstyle", "mpadded", "mphantom", "msqrt", "mtd", "menclose", "merror"})


def _repair(math: Element, tex: str) -> Element:
    """Return the presentation body (an <mrow>) of latex2mathml's <math>, fixed for MathML Core."""
    body = math[0] if len(math) == 1 else _wrap_row(list(math))
    _fix_token_elements(body, tex)
    _fix_token_children(body)
    _fix_text(body)
    _fix_symbol_classes(body)
    _fix_spaces(body)
    _fix_tables(body)
    _merge_upright_letters(body)
    marked = [element for element in body.iter() if element.get(_FUNCTION_MARK) is not None]
    if marked:  # most formulas have no operator name to space
        _space_function_names(body)
        for element in marked:
            del element.attrib[_FUNCTION_MARK]
    return body


def _wrap_row(children: list[Element]) -> Element:
    row = Element("mrow")
    row.extend(children)
    return row


def _fix_token_elements(root: Element, tex: str) -> None:
    r"""The repairs that look at one element at a time, in one walk over the tree rather than one
    each; per element, in this order: entities decoded, \big delimiters resolved, commands left as
    text refused, mathvariants turned into Unicode letters."""
    for element in root.iter():
        text = element.text
        if text and "&#x" in text:
            # latex2mathml writes characters as "&#x…;" strings in the tree and relies on un-escaping
            # the serialised output; we serialise ourselves, so decode them into characters.
            element.text = text = _decoded(text)
        tag = element.tag
        if tag == "mo":
            _fix_big_delimiter(element)
            text = element.text
        elif tag != "mi" and tag != "mn":
            continue
        if text and "\\" in text:
            _refuse_leftover_command(text, tex)
        if tag != "mo" and "mathvariant" in element.attrib:
            _fix_mathvariant(element)


@functools.lru_cache(maxsize=2048)
def _decoded(text: str) -> str:
    # Cached: the same few hundred symbols make up most of these texts.
    return _ENTITY.sub(lambda m: chr(int(m.group(1), 16)), text)


def _leaf_texts(element: Element) -> Optional[list[str]]:
    """Texts of a subtree made only of token elements, rows and spaces; None if it has structure."""
    texts: list[str] = []
    for node in element.iter():
        if node is element:
            if node.text and node.text.strip():
                texts.append(node.text)
            continue
        if node.tag in _TOKEN_ELEMENTS:
            if len(node):
                return None
            texts.append(node.text or "")
        elif node.tag == "mspace":
            texts.append("\u2009")
        elif node.tag not in ("mrow", "mstyle"):
            return None
    return texts


def _fix_token_children(root: Element) -> None:
    r"""\mathop{softmax} → <mo><mrow><mi>s</mi>…</mrow></mo>: token elements may hold text only."""
    for element in list(root.iter()):
        if element.tag not in _TOKEN_ELEMENTS or not len(element):
            continue
        texts = _leaf_texts(element)
        if texts is None:
            # Real structure (\mathop{x^2}): keep it, as a row.
            element.tag = "mrow"
            for name in ("movablelimits", "stretchy", "accent", "separator", "form", "fence"):
                element.attrib.pop(name, None)
            continue
        text = "".join(texts).strip()
        for child in list(element):
            element.remove(child)
        element.text = text
        if element.tag == "mo" and len(text) > 1 and text.replace("\u2009", "").isalpha():
            # A named operator (softmax): <mi> renders upright without the generic operator spacing
            # Chromium gives an unknown <mo>; function spacing is added by _space_function_names.
            limits = element.get("movablelimits")
            element.tag = "mi"
            element.attrib.clear()
            if limits:
                element.tag = "mo"
                element.set("movablelimits", limits)
            element.set(_FUNCTION_MARK, "1")


def _fix_big_delimiter(element: Element) -> None:
    r"""An <mo>: \Big\vert and friends leave the command as text, \Bigg. leaves a dot; minsize
    needs stretchy."""
    text = element.text or ""
    if text.startswith("\\"):
        symbol = convert_symbol(text) or {r"\{": "0007B", r"\}": "0007D", r"\|": "02016"}.get(text)
        if symbol:
            element.text = chr(int(symbol, 16))
    if element.get("fence") == "true" or "minsize" in element.attrib:
        # As a delimiter, TeX reads < and > as angle brackets.
        element.text = {"<": "\u27e8", ">": "\u27e9"}.get(element.text or "", element.text)
    if "minsize" in element.attrib:
        if text == ".":
            element.text = ""
        element.set("stretchy", "true")


def _refuse_leftover_command(text: str, tex: str) -> None:
    # Backstop for _check_tokens: latex2mathml passes any command it does not know through as text.
    match = _COMMAND.search(text)
    if match:
        raise MathError(
            f"unknown command {match.group(0)}: use a supported command or write a name with \\operatorname{{…}}",
            _column_of(tex, match.group(0)),
        )


def _fix_text(root: Element) -> None:
    for element in root.iter("mtext"):
        if element.text:
            element.text = _TEXT_ESCAPES.sub(lambda m: m.group(1), element.text).replace("\u00a0", " ")
            # Keep spaces at the edges visible: HTML would collapse them.
            element.text = re.sub(r"^ | $", "\u00a0", element.text)


def _fix_mathvariant(element: Element) -> None:
    """An <mi> or <mn>: Chromium only honours mathvariant="normal"; other variants become Unicode
    math letters."""
    variant = element.get("mathvariant")
    if not variant or variant == "normal":
        return
    original = element.text or ""
    element.text = "".join(_styled_char(c, variant) for c in original)
    del element.attrib["mathvariant"]
    if element.text == original and "italic" not in variant:
        # No Unicode slot for this character in that style: at least keep it upright, as TeX would.
        element.set("mathvariant", "normal")


def _fix_symbol_classes(root: Element) -> None:
    for element in root.iter():
        # Only bare <mo> and <mi> change: an attribute (stretchy, mathvariant, a mark) means the
        # element was already given its role.
        if element.tag not in ("mo", "mi") or element.attrib:
            continue
        text = element.text
        if element.tag == "mo":
            if text in _ORDINARY_SYMBOLS:
                element.tag = "mi"  # and on to the <mi> rules
            elif text and len(text) > 1 and text.isalpha() and text not in _DICTIONARY_OPERATOR_NAMES:
                # \operatorname{softmax}: an unknown multi-letter <mo> gets generic operator spacing in
                # Chromium ("softmax ( x )"); as <mi> it is upright and spaced like TeX's \operatorname.
                element.tag = "mi"
                element.set(_FUNCTION_MARK, "1")
                continue
            else:
                continue
        if text and len(text) == 1 and (0x391 <= ord(text) <= 0x3A9 or text == "\u2207"):
            # TeX sets capital Greek and ∇ upright; Chromium would italicise a single-letter <mi>.
            element.set("mathvariant", "normal")
        elif text in _FUNCTION_NAMES:
            element.set(_FUNCTION_MARK, "1")


def _fix_spaces(root: Element) -> None:
    for element in root.iter("mspace"):
        width = element.get("width")
        if width in _NAMED_SPACES:
            element.set("width", _NAMED_SPACES[width])
        if element.get("linebreak"):
            # Only reachable inside a table cell; Chromium ignores it there anyway.
            del element.attrib["linebreak"]


def _fix_tables(root: Element) -> None:
    for table in root.iter("mtable"):
        if table.get("columnspacing", "").startswith("0em 2em") or table.get("columnspacing") == "0em":
            # align / split: CSS (math.css) removes the padding between the right- and left-aligned
            # halves of each equation, which MathML Core's columnspacing no longer does.
            table.set("class", "tex-align")  # one of _CLASSES


def _merge_upright_letters(root: Element) -> None:
    r"""\mathrm{Attention} arrives as nine <mi mathvariant="normal">; one <mi> reads and spaces better."""
    upright = sum(1 for element in root.iter("mi") if element.get("mathvariant") == "normal")
    if upright < 2:
        return  # nothing to merge (the common case), so skip the walk over every row
    for parent in root.iter():
        if parent.tag not in _ROW_ELEMENTS:
            continue
        children = list(parent)
        run: list[Element] = []
        for child in [*children, None]:
            if (
                child is not None
                and child.tag == "mi"
                and child.attrib == {"mathvariant": "normal"}
                and child.text
                and child.text.isalpha()
            ):
                run.append(child)
                continue
            if len(run) > 1:
                run[0].text = "".join(c.text or "" for c in run)
                del run[0].attrib["mathvariant"]
                for extra in run[1:]:
                    parent.remove(extra)
            run = []


def _space_function_names(root: Element) -> None:
    """TeX's spacing around operator names, which Chromium does not add around an <mi>.

    A thin space goes between a name and its argument ("sin x", but "sin(x)" and "sin\\Bigg(" get
    none) and between a preceding ordinary item and the name ("f(x) sin x").
    """
    scripts = ("msub", "msup", "msubsup", "munder", "mover", "munderover")
    for parent in list(root.iter()):
        if parent.tag not in _ROW_ELEMENTS:
            continue
        children = list(parent)
        after: set[int] = set()
        for index, child in enumerate(children):
            base = child[0] if child.tag in scripts and len(child) else child
            if base.get(_FUNCTION_MARK) != "1":
                continue
            if index > 0:
                previous = children[index - 1]
                closing = previous.tag == "mo" and (previous.text or "")[-1:] in _CLOSING
                if previous.tag not in ("mo", "mspace") or closing:
                    after.add(index - 1)
            if index + 1 < len(children):
                following = children[index + 1]
                first = _first_leaf(following)
                opening = first is not None and first.tag == "mo" and (first.text or "")[:1] in _OPENING
                if following.tag not in ("mo", "mspace") and not opening:
                    after.add(index)
        for index in sorted(after, reverse=True):
            parent.insert(index + 1, Element("mspace", {"width": "0.167em"}))


def _first_leaf(element: Element) -> Optional[Element]:
    node = element
    while len(node):
        node = node[0]
    return node


# Unicode Mathematical Alphanumeric Symbols: (capital A, small a, digit 0, capital Alpha, small alpha)
_VARIANT_BASES: dict[str, tuple[Optional[int], Optional[int], Optional[int], Optional[int], Optional[int]]] = {
    "bold": (0x1D400, 0x1D41A, 0x1D7CE, 0x1D6A8, 0x1D6C2),
    "italic": (0x1D434, 0x1D44E, None, 0x1D6E2, 0x1D6FC),
    "bold-italic": (0x1D468, 0x1D482, None, 0x1D71C, 0x1D736),
    "script": (0x1D49C, 0x1D4B6, None, None, None),
    "bold-script": (0x1D4D0, 0x1D4EA, None, None, None),
    "fraktur": (0x1D504, 0x1D51E, None, None, None),
    "double-struck": (0x1D538, 0x1D552, 0x1D7D8, None, None),
    "bold-fraktur": (0x1D56C, 0x1D586, None, None, None),
    "sans-serif": (0x1D5A0, 0x1D5BA, 0x1D7E2, None, None),
    "bold-sans-serif": (0x1D5D4, 0x1D5EE, 0x1D7EC, 0x1D756, 0x1D770),
    "sans-serif-italic": (0x1D608, 0x1D622, None, None, None),
    "sans-serif-bold-italic": (0x1D63C, 0x1D656, None, 0x1D790, 0x1D7AA),
    "monospace": (0x1D670, 0x1D68A, 0x1D7F6, None, None),
}
# Letters that were already in Unicode before the math block; their slots there are empty.
_VARIANT_HOLES = {
    ("italic", "h"): "\u210e",
    **{("script", k): v for k, v in zip("BEFHILMRego", "\u212c\u2130\u2131\u210b\u2110\u2112\u2133\u211b\u212f\u210a\u2134")},
    **{("fraktur", k): v for k, v in zip("CHIRZ", "\u212d\u210c\u2111\u211c\u2128")},
    **{("double-struck", k): v for k, v in zip("CHNPQRZ", "\u2102\u210d\u2115\u2119\u211a\u211d\u2124")},
}


def _styled_char(char: str, variant: str) -> str:
    if (variant, char) in _VARIANT_HOLES:
        return _VARIANT_HOLES[(variant, char)]
    bases = _VARIANT_BASES.get(variant)
    if bases is None:
        return char
    capital, small, digit, greek_capital, greek_small = bases
    code = ord(char)
    if "A" <= char <= "Z" and capital:
        return chr(capital + code - ord("A"))
    if "a" <= char <= "z" and small:
        return chr(small + code - ord("a"))
    if "0" <= char <= "9" and digit:
        return chr(digit + code - ord("0"))
    if 0x391 <= code <= 0x3A9 and code != 0x3A2 and greek_capital:
        return chr(greek_capital + code - 0x391)
    if 0x3B1 <= code <= 0x3C9 and greek_small:
        return chr(greek_small + code - 0x3B1)
    return char


# --------------------------------------------------------------------------------------------------
# Serialisation

def _escape_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _escape_attribute(text: str) -> str:
    return _escape_text(text).replace('"', "&quot;")


def _math_element(body: Element, tex: str, mode: str) -> Element:
    """<math> > <semantics> > (body as an <mrow>, the TeX annotation); child tags stay unqualified:
    in the serialised form the xmlns on <math> puts them in the MathML namespace."""
    math = Element("math", {"xmlns": MATHML_NS, "display": mode})
    semantics = SubElement(math, "semantics")
    semantics.append(body if body.tag == "mrow" else _wrap_row([body]))
    SubElement(semantics, "annotation", {"encoding": "application/x-tex"}).text = tex
    return math


# --------------------------------------------------------------------------------------------------
# Validation (used by tex_to_mathml, the tests and the build)

# The elements and attributes tex_to_mathml may emit (also the allow-list an HTML sanitiser needs
# to let this MathML through unchanged).
MATHML_ELEMENTS = frozenset(
    """math semantics annotation mrow mi mn mo mtext ms mspace msub msup msubsup munder mover
    munderover mmultiscripts mprescripts none mfrac msqrt mroot mstyle merror mpadded mphantom
    mtable mtr mtd menclose""".split()
)
_ARITY = {
    "msub": 2, "msup": 2, "mfrac": 2, "mroot": 2, "munder": 2, "mover": 2,
    "msubsup": 3, "munderover": 3,
}
MATHML_ATTRIBUTES = frozenset(
    """xmlns display encoding mathvariant mathcolor mathbackground mathsize displaystyle scriptlevel
    stretchy fence form separator symmetric largeop movablelimits accent accentunder lspace rspace
    minsize maxsize width height depth voffset linethickness columnalign rowspacing columnspacing
    rowlines columnlines notation class""".split()
)
_TEXT_ONLY_ELEMENTS = frozenset({"mi", "mn", "mo", "mtext", "ms", "annotation"})
_ONLY_CHILD = {"mtable": "mtr", "mtr": "mtd"}
_CLASSES = frozenset({"tex-align"})
_MENCLOSE_NOTATIONS = frozenset({"box", "updiagonalstrike", "downdiagonalstrike", "horizontalstrike"})


def validate_mathml(markup: str, expected_tex: Optional[str] = None) -> list[str]:
    """Problems that make `markup` unfit to ship (empty list: fine).

    Checks: well-formed XML; one <math> in the MathML namespace with display block|inline; every
    element a MathML element; token elements (mi, mn, mo, mtext, ms) hold text only; scripts and
    fractions have the right number of children; tables are mtable > mtr > mtd; only presentation
    attributes (no href, style, event handlers); a <semantics> whose annotation holds the TeX
    (equal to `expected_tex` when given).
    """
    try:
        root = ElementTree.fromstring(markup)
    except ElementTree.ParseError as error:
        return [f"not well-formed XML: {error}"]
    return _tree_problems(root, prefix=f"{{{MATHML_NS}}}", expected_tex=expected_tex)


# Characters that do not survive serialising and parsing unchanged: outside XML 1.0's Char
# production (a parse error) or a carriage return (which a parser turns into a line feed).
_NOT_XML_ROUND_TRIP = re.compile(r"[^\t\n\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _tree_problems(root: Element, prefix: str, expected_tex: Optional[str] = None) -> list[str]:
    """validate_mathml's checks on a tree whose MathML tags start with `prefix`: the namespace as
    ElementTree spells it for a parsed tree, "" for a tree we built (whose serialised <math> carries
    the xmlns). On a built tree the checks may be stricter than on its serialised form (a tail is
    not written; an xmlns below the root would be a namespace declaration there), never laxer."""
    problems: list[str] = []

    def local(element: Element) -> str:
        return element.tag[len(prefix) :] if element.tag.startswith(prefix) else element.tag

    if local(root) != "math" or not root.tag.startswith(prefix):
        problems.append(f"root is <{root.tag}>, not <math> in the MathML namespace")
    if root.get("display") not in ("block", "inline"):
        problems.append(f"math display is {root.get('display')!r}, not 'block' or 'inline'")
    # This loop runs for every element of every formula: it avoids per-element lists and calls.
    cut = len(prefix)
    for element in root.iter():
        tag = element.tag
        name = tag[cut:]
        if name not in MATHML_ELEMENTS or not tag.startswith(prefix):
            problems.append(f"<{tag}> is not a MathML element")
            continue
        attributes = element.attrib
        for attribute in attributes:
            if attribute not in MATHML_ATTRIBUTES or (attribute == "xmlns" and element is not root):
                problems.append(f"<{name}> has attribute {attribute!r}, which is not allowed")
        count = len(element)
        if name in _TEXT_ONLY_ELEMENTS:
            if count:
                children = ", ".join(local(child) for child in element)
                problems.append(f"<{name}> contains elements ({children}); it may hold text only")
        elif element.text and element.text.strip():
            problems.append(f"<{name}> holds bare text {element.text.strip()!r}; text belongs in mi/mn/mo/mtext")
        if count:
            for child in element:
                if child.tail and child.tail.strip():
                    problems.append(f"bare text {child.tail.strip()!r} after <{local(child)}>")
        if name in _ARITY and count != _ARITY[name]:
            problems.append(
                f"<{name}> has {count} children instead of {_ARITY[name]}: "
                "a fraction, root or script is missing an argument"
            )
        if name in _ONLY_CHILD and any(local(child) != _ONLY_CHILD[name] for child in element):
            problems.append(f"<{name}> may contain only <{_ONLY_CHILD[name]}>")
        if attributes:
            if "class" in attributes and attributes["class"] not in _CLASSES:
                problems.append(f"<{name} class={attributes['class']!r}> is not a class math.css styles")
            if name == "menclose" and not set(attributes.get("notation", "").split()) <= _MENCLOSE_NOTATIONS:
                problems.append(f"<menclose notation={attributes.get('notation')!r}> is not drawn by math.css")
        if name == "math" and element is not root:
            problems.append("nested <math>")
    semantics = root[0] if len(root) else None
    if len(root) != 1 or semantics is None or local(semantics) != "semantics":
        problems.append("<math> must contain exactly one <semantics>")
    elif len(semantics) != 2 or local(semantics[1]) != "annotation":
        problems.append("<semantics> must hold the presentation and one <annotation>")
    else:
        annotation = semantics[1]
        if annotation.get("encoding") != "application/x-tex":
            problems.append("annotation encoding is not application/x-tex")
        if expected_tex is not None and (annotation.text or "") != expected_tex:
            problems.append("annotation does not hold the original TeX")
    return problems


# --------------------------------------------------------------------------------------------------
# Serialisation, checked as it goes

# For each MathML element but <math> (which only the root may be): its tags, whether it holds text
# only, how many children it must have (-1: any number) and the one tag its children must have.
_ELEMENT_RULES: dict[str, tuple[str, str, bool, int, Optional[str]]] = {
    name: (f"<{name}>", f"</{name}>", name in _TEXT_ONLY_ELEMENTS, _ARITY.get(name, -1), _ONLY_CHILD.get(name))
    for name in MATHML_ELEMENTS - {"math"}
}


def _serialise_checked(math: Element) -> tuple[str, bool]:
    """`math` as XML text, and whether its tree passes _tree_problems' checks (False: it may not).

    Writing and checking in one walk over the elements saves a second one. The checks are never
    laxer than _tree_problems' on a built tree (prefix ""); tests/test_math.py compares the two.
    Tails are not written: nothing in a tree we build has one, and a tail with text fails the check.
    """
    out = [_checked_start_tag(math.tag, math.attrib)[0]]  # its xmlns is the root's: _outline_ok checks
    checked = _outline_ok(math)
    for child in math:
        checked = _write_element(child, out) and checked
        checked = checked and not (child.tail and child.tail.strip())
    out.append(f"</{math.tag}>")
    return "".join(out), checked


def _outline_ok(math: Element) -> bool:
    """_tree_problems' checks on <math> itself and its outline: one <semantics> holding the
    presentation and an <annotation> of the TeX."""
    semantics = math[0] if len(math) == 1 else None
    return (
        math.tag == "math"
        and set(math.attrib) <= {"xmlns", "display"}
        and math.get("display") in ("block", "inline")
        and not (math.text and math.text.strip())
        and semantics is not None
        and semantics.tag == "semantics"
        and len(semantics) == 2
        and semantics[1].tag == "annotation"
        and semantics[1].get("encoding") == "application/x-tex"
    )


def _write_element(element: Element, out: list[str]) -> bool:
    """Append `element`, below the root, as XML to `out`; False where it or an element inside it
    fails one of _tree_problems' checks. Explicit end tags: valid as XML and as HTML foreign content."""
    tag = element.tag
    rules = _ELEMENT_RULES.get(tag)
    checked = rules is not None  # a MathML element, and not a nested <math>
    start, end, text_only, arity, only_child = rules or (f"<{tag}>", f"</{tag}>", False, -1, None)
    attributes = element.attrib
    if attributes:
        start, attributes_ok = _checked_start_tag(tag, attributes)
        checked = checked and attributes_ok
    text = element.text
    if text:
        checked = checked and (text_only or not text.strip())
        start += _escape_text(text)
    count = len(element)
    if not count:  # most elements: a token element or a space
        out.append(start + end)
        return checked and arity < 0
    out.append(start)
    checked = checked and not text_only and (arity < 0 or count == arity)
    for child in element:
        checked = _write_element(child, out) and checked
        tail = child.tail
        if (tail and tail.strip()) or (only_child and child.tag != only_child):
            checked = False
    out.append(end)
    return checked


# (tag, *attributes) → (start tag, _attributes_ok): a formula's elements share a few dozen of them.
_START_TAGS: dict[tuple[str, ...], tuple[str, bool]] = {}
_START_TAGS_SIZE = 4096


def _checked_start_tag(tag: str, attributes: dict[str, str]) -> tuple[str, bool]:
    key = (tag, *attributes.items())
    known = _START_TAGS.get(key)
    if known is None:
        known = (_start_tag(tag, attributes), _attributes_ok(tag, attributes))
        if len(_START_TAGS) < _START_TAGS_SIZE:
            _START_TAGS[key] = known
    return known


def _start_tag(tag: str, attributes: dict[str, str]) -> str:
    written = "".join([f' {name}="{_escape_attribute(value)}"' for name, value in attributes.items()])
    return f"<{tag}{written}>"


def _attributes_ok(tag: str, attributes: dict[str, str]) -> bool:
    """_tree_problems' attribute checks on an element below the root (where xmlns is refused)."""
    if "xmlns" in attributes or not all(name in MATHML_ATTRIBUTES for name in attributes):
        return False
    if "class" in attributes and attributes["class"] not in _CLASSES:
        return False
    return tag != "menclose" or set(attributes.get("notation", "").split()) <= _MENCLOSE_NOTATIONS
