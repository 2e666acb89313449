"""The fast Python tokenizer in `sections` must read exactly what `tokenize` reads.

Every check compares it with the reference path, `tokenize.generate_tokens` turned into
`PythonTokens` by `_from_tokenize`: the tokens themselves, and what the section splitter and the
highlighter make of them (including the `SourceError` of a file that cannot be tokenized).
"""
import io
import sys
import sysconfig
import tokenize
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labml_site.typeset import highlight
from labml_site.read import sections
from labml_site.read.sections import SourceError, parse_python

ROOT = Path(__file__).resolve().parent.parent
TUTORIAL = sorted((ROOT / "source").rglob("*.py"))
STDLIB = Path(sysconfig.get_paths()["stdlib"])
# Every 25th module of the standard library (about 30 files of all shapes), in a fixed order.
STDLIB_SAMPLE = sorted(p for p in STDLIB.glob("*.py"))[::25] + sorted(STDLIB.glob("*/*.py"))[::25]

needs_fast = pytest.mark.skipif(not sections._FAST_TOKENIZER, reason="the fast tokenizer mirrors tokenize before 3.12")


def reference_tokens(text: str) -> sections.PythonTokens:
    return sections._from_tokenize(text, tokenize.generate_tokens(io.StringIO(text).readline))


def fast_tokens(text: str) -> sections.PythonTokens | None:
    """The fast reader's tokens, or None where it gives up (and tokenize reads the file)."""
    try:
        return sections._fast_tokens(text)
    except sections._GiveUp:
        return None


def outcome(text: str) -> tuple:
    """What parse_python and the highlighter make of `text`, or the SourceError it raises."""
    try:
        parsed = parse_python(text, "t.py")
    except SourceError as e:
        return ("error", str(e), e.line)
    return parsed.meta, parsed.sections, highlight.highlight_python_lines(text, parsed.tokens)


def assert_same_as_tokenize(text: str) -> bool:
    """Asserts the fast reader agrees with tokenize on `text`; returns whether it read it."""
    text = text.replace("\r\n", "\n")
    fast = fast_tokens(text)
    if fast is not None:
        assert fast == reference_tokens(text)
    got = outcome(text)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(sections, "_FAST_TOKENIZER", False)
        assert got == outcome(text)
    return fast is not None


@needs_fast
@pytest.mark.parametrize("path", TUTORIAL, ids=lambda p: str(p.relative_to(ROOT)))
def test_tutorial_files(path: Path):
    assert assert_same_as_tokenize(path.read_text(encoding="utf-8")), "the fast reader gave up"


@needs_fast
@pytest.mark.parametrize("path", STDLIB_SAMPLE, ids=lambda p: str(p.relative_to(STDLIB)))
def test_standard_library_sample(path: Path):
    assert_same_as_tokenize(path.read_text(encoding="utf-8"))


def test_standard_library_sample_is_mostly_read_fast():
    if not sections._FAST_TOKENIZER:
        pytest.skip("the fast tokenizer mirrors tokenize before 3.12")
    texts = [p.read_text(encoding="utf-8") for p in STDLIB_SAMPLE]
    assert len(texts) >= 20
    assert sum(fast_tokens(t) is not None for t in texts) >= 0.8 * len(texts)


# Hand-written cases: (text, whether the fast reader reads it rather than giving up)
EDGE_CASES = {
    "hash in strings": ("x = '# not a comment'  # a comment\ny = \"#\" + '\"\"\"'\n", True),
    "nested f-strings": ("x = f\"{a!r:>{width}} {f'{b}'} {{c}}\"\ny = rf'{x}\\d' + F\"\"\"{\n1}\"\"\"\n", True),
    "prefixes and names": ("bar = rb'x' + Rb\"y\" + u'z' + br'''w''' + f'' + rf'{q}'\nfunc, rx, u_ = 1, 2, 3\n", True),
    "numbers and dots": ("x = .5 + 1. + 1e5j + 0x_1F + 1_000 + 0o7 + 0b1\ny = a...b; z = x.real; w = ...\n"
                         "v = 1if x else 2\nu = 09\n", True),
    "operators": ("a **= 2; b //= 3; c @= d; e -> f; g := 1; h != i; j <<= 2; k >>= 1; l ~ m ^ n\n", True),
    "backslash continuation": ("x = 1 + \\\n    2\nif a and \\\n        b:\n    pass\n", True),
    "continuation at line start": ("def f():\n    \\\n    x = 1\n    return x\n", True),
    "continuation then comment": ("x = 1 + \\\n# a comment\ny = 2\n", True),
    "continuation at EOF": ("x = 1 + \\\n", False),
    "string continued with backslash": ("x = 'abc\\\ndef'\n", False),
    "unterminated string": ("x = 'abc\ny = 2\n", False),
    "unterminated triple string": ('x = 1\ny = """never closed\n\n', False),
    "unterminated prefixed triple string": ("x = rb'''abc'\n", False),
    "triple string escapes": ("x = '''a\\''' b\\\n''' + \"\"\"\\\"\"\"\" + ''''' '''\n", True),
    "docstrings": ('"""Module."""\n\ndef f():\n    """Doc\n    body."""\n    return 1\n\n\nclass C:\n    r\'\'\'Raw.\'\'\'\n', True),
    "brackets over lines": ("x = [\n    1,  # one\n\n    2,\n]\ny = {'a': (1,\n  2)}\n", True),
    "unclosed bracket": ("x = [1,\n", False),
    "unbalanced closer": ("x = 1)\ny = 2\n", False),
    "tabs": ("def f():\n\tif x:\n\t\treturn 1\n\treturn 2\n", True),
    "tabs and spaces": ("if x:\n        a = 1\n\tb = 2\n    \tc = 3\n", True),
    "bad dedent": ("if x:\n        a = 1\n    b = 2\n", False),
    "indented comments and blanks": ("def f():\n    x = 1\n        # deeper comment\n\n  # shallower\n    return x\n", True),
    "CRLF": ("def f(x):\r\n    \"\"\"Doc.\"\"\"\r\n    return x  # done\r\n", True),
    "lone CR": ("x = 1\ry = 2\n", False),
    "BOM": ("\ufeffx = 1\n", False),
    "form feed": ("x = 1\n\f\ndef f():\n    pass\n", False),
    "form feed in a comment": ("x = 1  # page\f break\n", True),
    "character Python lacks": ("size = batch × seq\n", False),
    "unicode names": ("é = 1\nλ_2 = é\n", True),
    "word that is no name": ("x = ²\n", False),
    "no final newline": ("x = 1", True),
    "comment without final newline": ("x = 1\n# end", True),
    "string closing on a comment-like last line": ("x = '''a\n# b'''", True),
    "trailing whitespace at EOF": ("x = 1\n   ", False),
    "empty": ("", True),
    "only blank lines": ("\n\n  \n", True),
    "async and decorators": ("@dec\nasync def f():\n    '''Doc.'''\n    await g()\n@a.b(1)\nclass C: pass\n", True),
    "semicolons and one-line bodies": ("if x: y = 1; z = 2\nelse: pass\n", True),
}


@needs_fast
@pytest.mark.parametrize("name", EDGE_CASES)
def test_edge_cases(name: str):
    text, read_fast = EDGE_CASES[name]
    assert assert_same_as_tokenize(text) == read_fast


def test_untokenizable_files_raise_tokenizes_errors():
    with pytest.raises(SourceError) as err:
        parse_python('x = 1\ny = """never closed\n\n', "broken.py")
    assert err.value.line == 2 and "unterminated triple-quoted string" in err.value.message
    with pytest.raises(SourceError) as err:
        parse_python("x = [1,\n", "open.py")
    assert "was never closed" in err.value.message
    with pytest.raises(SourceError) as err:
        parse_python("if x:\n        a = 1\n    b = 2\n", "dedent.py")
    assert err.value.line == 3 and "unindent" in err.value.message


def test_items_positions_and_logical_lines():
    text = "def f(a):\n    '''Doc.'''  # note\n    return [a,\n            1]\n"
    tokens = sections._tokenize(text, "t.py")
    strings = [item[3] for item in tokens.items]
    assert strings == ["def", "f", "(", "a", ")", ":", "'''Doc.'''", "# note", "return", "[", "a", ",", "1", "]"]
    for kind, start, end, string, line_start, row in tokens.items:
        assert text[start:end] == string
        assert text.split("\n")[row - 1].startswith(text[line_start:start])
    assert [item[5] for item in tokens.items][-2:] == [4, 4]
    # (first item, end, indented): the docstring line is indented; its comment is in the line
    assert tokens.logical_lines == [(0, 6, False), (6, 8, True), (8, 14, False)]
    assert tokens.comments == [7]


def test_highlighter_refuses_tokens_of_another_text():
    tokens = sections._tokenize("x = 1\n", "t.py")
    assert highlight._lines_from_tokens("y = 2\n", tokens) is None
    assert highlight.highlight_python_lines("y = 2\n", tokens) == highlight._pygments_lines("y = 2\n")


# Random programs from fragments chosen to meet at awkward places: strings next to names,
# continuations, brackets across lines, indentation of spaces and tabs, comments everywhere. The
# fragments that make the fast reader give up come last and rarer, so most programs exercise it.
_FRAGMENTS = ["x", "rb", "f", "bar", "u", "_", "1", ".5", "1.", "0x1f", "1e3", "j", "...", ".", "=", "==",
              "**=", "->", "(", ")", "[", "]", "{", "}", ",", ":", "@", "'a'", '"b"', "'''c'''", '"""d\ne"""',
              "'#'", "f'{x}'", "rb'\\''", "'\\\\'", "#", "# c", " ", "  ", "\t", "\\\n", "\n",
              "\n    ", "\n\t", "\n  ", "def", "class", "async", "é"] * 4
_FRAGMENTS += ["'''", "'", "×", "\f", "\r", "²"]


@needs_fast
@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=30))
def test_random_fragments(parts):
    assert_same_as_tokenize("".join(parts))


@pytest.mark.skipif(sys.version_info < (3, 12), reason="3.12+ only")
def test_newer_pythons_use_tokenize():
    assert not sections._FAST_TOKENIZER
