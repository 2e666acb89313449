"""The tokenize-based Python highlighter must produce exactly what Pygments' PythonLexer does."""
import io
import token
import tokenize
from pathlib import Path

import pytest

from labml_site.typeset import highlight
from labml_site.read import sections
from labml_site.typeset.highlight import highlight_python_lines
from labml_site.read.sections import parse_python

ROOT = Path(__file__).resolve().parent.parent
PROJECT_FILES = sorted(p for folder in ("source", "labml_site") for p in (ROOT / folder).rglob("*.py"))


def tokens_of(text: str) -> list[tokenize.TokenInfo]:
    return list(tokenize.generate_tokens(io.StringIO(text).readline))


def token_lines(text: str) -> list[str]:
    """The tokenizer path alone: a fallback to Pygments would hide a difference, so fail on it."""
    lines = highlight._lines_from_tokens(text, tokens_of(text))
    assert lines is not None, "the classifier fell back to Pygments"
    return lines


def assert_same_as_pygments(text: str) -> list[str]:
    lines = token_lines(text)
    expected = highlight._pygments_lines(text)
    for number, (got, want) in enumerate(zip(lines, expected), 1):
        assert got == want, f"line {number}: {text.splitlines()[number - 1]!r}"
    assert len(lines) == len(expected) == text.count("\n") + 1
    return lines


CONSTRUCTS = r'''#!/usr/bin/env python
"""Module docstring with <html> & "quotes", and × in prose."""
from __future__ import annotations
import os.path as osp, sys
from . import sibling
from ..pkg.mod import (first, second as other)

# A comment with <tags> & ×
@torch.no_grad()
@functools.lru_cache(maxsize=None)
async def fetch(self, cls, *args: int, **kw) -> None:
    """Docstring
    spanning lines."""
    await other()
    async for x in aiter(y):
        yield from gen()
    async with lock:
        pass


class Model(nn.Module, metaclass=Meta):
    def __init__(self, d_model: int = 512):
        super().__init__()
        self.label = f"{d_model!r:>{width}} {{literal}} {self.x['k']} {len(self.items)}"
        self.block = f"""
first {value}
    second {other:.2f}
"""
        self.path = rb'\d+' + b'\x00' + u'ü' + r"raw \\" + 'it\'s' + "say \"hi\""
        self.fmt = '%s and %(name)d %%' % x + "{0} {name}".format(1, name=2) + '\N{BULLET}\t'
        text = """
not at line start
    # not a comment
"""
        doc = (
            """starts its line inside brackets"""
        )
        total = 1_000 + 0x1F + 0o17 + 0b101 + 1.5e-3 + 2j + 1.5j + .5 + 1. + 1e5j
        x **= 2; y //= 3; z = a @ b; w = a@b; v != u; t == s; r <<= 1; q >>= 2; (n := 10)
        print(len(x), type(x), isinstance(x, int), x.print, x.__class__, __name__, ...)
        if not a and b or c is not None and d not in e:
            raise ValueError("bad") from None
        raise KeyError from err
        return lambda: (True, False, None, Ellipsis, NotImplemented)

    def __repr__(self) -> str:
        return repr(self)


value = 1 + \
    2
match command.split():
    case [action]:
        pass
    case _:
        pass
match = re.match(r"x", s)
case = 1
global g; nonlocal h; del x; assert y, "message"
try:
    pass
except (KeyError, Exception) as e:
    pass
finally:
    pass
with open(p) as f: data = {k: v for k, v in f}; items = {*a}; call(*a, **k)
empty = '' + "" + """"""
''' + "\n\ndef tabs():\n\tif x:\n\t\treturn [i for i in range(3)]  # tabs are kept\n"


def test_constructs_match_pygments():
    assert_same_as_pygments(CONSTRUCTS)


@pytest.mark.parametrize("path", PROJECT_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_project_files_match_pygments(path: Path):
    assert_same_as_pygments(path.read_text(encoding="utf-8").replace("\r\n", "\n"))


def test_classes_and_structure():
    lines = token_lines(CONSTRUCTS)
    source = CONSTRUCTS.split("\n")

    def line(prefix: str) -> str:
        return next(html for text, html in zip(source, lines) if text.strip().startswith(prefix))

    assert lines[0] == '<span class="ch">#!/usr/bin/env python</span>'
    assert line("import os.path") == (
        '<span class="kn">import</span> <span class="nn">os</span><span class="nn">.</span>'
        '<span class="nn">path</span> <span class="k">as</span> <span class="nn">osp</span>'
        '<span class="o">,</span> <span class="nn">sys</span>')
    assert line("@torch").startswith('<span class="nd">@torch</span><span class="o">.</span>')
    assert '<span class="k">def</span> <span class="nf">fetch</span>' in line("async def fetch")
    assert '<span class="fm">__init__</span>' in line("def __init__")
    printed = line("print(len(x)")
    assert '<span class="nb">print</span>' in printed and '<span class="nb">len</span>' in printed
    assert '<span class="o">.</span><span class="n">print</span>' in printed  # an attribute, not the builtin
    assert '<span class="vm">__class__</span>' in printed
    assert '<span class="k">match</span>' in line("match command")
    assert '<span class="n">match</span>' in line("match = ")
    assert '<span class="k">_</span>' in line("case _:")
    assert '<span class="si">{</span><span class="n">d_model</span>' in line("self.label")
    # A multi-line string: every line has its own closed span, the count of lines is the file's.
    assert 'class="s2"' in line("# not a comment") and 'class="c1"' not in line("# not a comment")
    assert all(html.count("<span") == html.count("</span>") for html in lines)
    assert len(lines) == CONSTRUCTS.count("\n") + 1
    # Escaping, and tabs kept as plain text.
    assert "&lt;html&gt; &amp;" in lines[1] and "<html>" not in "".join(lines)
    assert line("if x:").startswith("\t<span")


def test_character_python_lacks_in_code():
    text = "size = batch × seq\n"
    try:
        tokens = tokens_of(text)
    except (SyntaxError, tokenize.TokenError):
        pytest.skip("this Python's tokenize rejects the character")
    lines = highlight._lines_from_tokens(text, tokens)
    assert lines == highlight._pygments_lines(text)
    assert "×" in lines[0] and 'class="err"' not in lines[0]


def test_parsed_tokens_feed_the_highlighter_even_for_crlf_files():
    text = 'def f(x):\r\n    """Doc."""\r\n    return x  # done\r\n'
    parsed = parse_python(text)
    assert parsed.tokens and parsed.tokens.items[0][3] == "def"
    assert highlight._lines_from_tokens(text.replace("\r\n", "\n"), parsed.tokens) is not None
    assert highlight_python_lines(text, parsed.tokens) == highlight_python_lines(text)


@pytest.mark.parametrize("text", [
    "match x:\n    case (a, _):\n        pass\n",  # Pygments re-lexes the pattern before `_` apart
    "x = 1\ry = 2\n",  # Pygments reads a lone CR as a line break
    "\ufeffx = 1\n",  # and drops a byte-order mark
])
def test_unsupported_input_falls_back_to_pygments(text: str):
    tokens = tokens_of(text)
    assert highlight._lines_from_tokens(text, tokens) is None
    assert highlight_python_lines(text, tokens) == highlight._pygments_lines(text)


def test_tokens_of_another_text_fall_back():
    assert highlight._lines_from_tokens("y = 2\n", tokens_of("x = 1\n")) is None


def test_split_fstring_tokens_are_read_as_one_string(monkeypatch):
    # Python 3.12+ reports an f-string as FSTRING_START, its parts and FSTRING_END; 3.11 as one
    # STRING. Run the 3.12 shape here whatever this interpreter is.
    start = getattr(token, "FSTRING_START", 1001)
    middle = getattr(token, "FSTRING_MIDDLE", 1002)
    end = getattr(token, "FSTRING_END", 1003)
    monkeypatch.setattr(sections, "_FSTRING_START", start)
    monkeypatch.setattr(sections, "_FSTRING_END", end)
    text = 'x = f"a{b}c"\n'
    parts = [(token.NAME, "x", 0), (token.OP, "=", 2), (start, 'f"', 4), (middle, "a", 6),
             (token.OP, "{", 7), (token.NAME, "b", 8), (token.OP, "}", 9), (middle, "c", 10),
             (end, '"', 11), (token.NEWLINE, "\n", 12)]
    tokens = [tokenize.TokenInfo(kind, string, (1, col), (1, col + len(string)), text)
              for kind, string, col in parts]
    tokens.append(tokenize.TokenInfo(token.ENDMARKER, "", (2, 0), (2, 0), ""))
    lines = highlight._lines_from_tokens(text, tokens)
    assert lines == highlight._pygments_lines(text)
    assert lines[0].endswith('<span class="sa">f</span><span class="s2">"</span><span class="s2">a</span>'
                             '<span class="si">{</span><span class="n">b</span><span class="si">}</span>'
                             '<span class="s2">c</span><span class="s2">"</span>')
