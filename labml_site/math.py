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

Each formula costs CPU in every build, so the TeX is tokenised once (latex2mathml would do it again)
and the passes skip cheaply what they cannot apply to.
"""

from __future__ import annotations

import functools
import re
from typing import Iterable, Optional
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
        markup = _serialise(math)
    except RecursionError as error:  # the serialiser recurses once per level, like the converter
        raise MathError(_TOO_DEEP) from error
    # Checking the tree we built is much cheaper than parsing `markup` again. It is exact wherever
    # `markup` parses back to that same tree; elsewhere (and to word the messages) the string decides.
    if _tree_problems(math, prefix="") or _NOT_XML_ROUND_TRIP.search(markup):
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
# work. Those are internals (walker._walk, Converter._convert_group, the tokenizer's PATTERN and
# UNITS), which is acceptable because pyproject pins latex2mathml to >=3.81.1,<3.82; the differential
# tests in tests/test_math.py fail if a release changes what they rely on.

# Regex groups that match one whole token on their own, which latex2mathml yields unchanged.
_SINGLE_TOKEN_GROUPS = frozenset({"letter", "number", "escaped", "command", "char"})


def _tokenize(tex: str) -> list[str]:
    """Exactly the tokens of latex2mathml's ``tokenizer.tokenize(tex)``, as a list, for less CPU.

    latex2mathml filters all twenty-odd groups of every regex match through a lambda; most matches
    are a single group that is the token itself, so only the others take its per-group rules.
    """
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
    """``Converter(display=mode).convert_to_element(tex)`` for the tokens of `tex`, without tokenising again."""
    converter = l2m_converter.Converter(display=mode)
    math = Element("math", {"xmlns": converter.xmlns, "display": mode})
    row = SubElement(math, "mrow")
    nodes = l2m_walker._walk(iter(tokens), block=mode == "block", macros=converter.macros)
    converter._convert_group(iter(nodes), row)
    return math


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
    _decode_entities(body)
    _fix_big_delimiters(body)
    _check_leftover_commands(body, tex)
    _fix_mathvariants(body)
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


def _decode_entities(root: Element) -> None:
    # latex2mathml writes characters as "&#x…;" strings in the tree and relies on un-escaping the
    # serialised output; we serialise ourselves, so decode them into characters.
    for element in root.iter():
        if element.text and "&#x" in element.text:
            element.text = _decoded(element.text)


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


def _fix_big_delimiters(root: Element) -> None:
    r"""\Big\vert and friends leave the command as text, \Bigg. leaves a dot; minsize needs stretchy."""
    for element in root.iter("mo"):
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


def _check_leftover_commands(root: Element, tex: str) -> None:
    # Backstop for _check_tokens: latex2mathml passes any command it does not know through as text.
    for element in root.iter():
        if element.tag in ("mi", "mo", "mn") and element.text and "\\" in element.text:
            match = _COMMAND.search(element.text)
            if match:
                raise MathError(
                    f"unknown command {match.group(0)}: use a supported command or write a name with "
                    r"\operatorname{…}",
                    _column_of(tex, match.group(0)),
                )


def _fix_text(root: Element) -> None:
    for element in root.iter("mtext"):
        if element.text:
            element.text = _TEXT_ESCAPES.sub(lambda m: m.group(1), element.text).replace("\u00a0", " ")
            # Keep spaces at the edges visible: HTML would collapse them.
            element.text = re.sub(r"^ | $", "\u00a0", element.text)


def _fix_mathvariants(root: Element) -> None:
    """Chromium only honours mathvariant="normal"; other variants become Unicode math letters."""
    for element in root.iter():
        if element.tag not in ("mi", "mn"):
            continue
        variant = element.get("mathvariant")
        if not variant or variant == "normal":
            continue
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

_ATTRIBUTE_ORDER = ("display",)


def _escape_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _escape_attribute(text: str) -> str:
    return _escape_text(text).replace('"', "&quot;")


def _serialise(element: Element) -> str:
    """`element` as XML text; tails are not written (nothing in a MathML tree we build has one)."""
    out: list[str] = []
    _serialise_into(element, out)
    return "".join(out)


def _serialise_into(element: Element, out: list[str]) -> None:
    out.append(f"<{element.tag}")
    for name, value in element.attrib.items():
        out.append(f' {name}="{_escape_attribute(value)}"')
    out.append(">")
    if element.text:
        out.append(_escape_text(element.text))
    for child in element:
        _serialise_into(child, out)
    out.append(f"</{element.tag}>")  # explicit end tags: valid as XML and as HTML foreign content


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

