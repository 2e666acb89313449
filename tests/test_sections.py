"""Splitting commented Python and Markdown into prose/code sections (labml_site.read.sections)."""
from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labml_site.read.sections import (ParsedSource, Section, SourceError, parse_markdown, parse_python,
                                 parse_source)


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def prose_and_code(parsed: ParsedSource) -> list[tuple[str, tuple[str, ...]]]:
    return [(s.prose, s.code) for s in parsed.sections]


# --- comments -------------------------------------------------------------------------------


def test_comment_lines_give_text_after_hash_and_one_space():
    parsed = parse_python(src("""
        #   indented words stay indented by two
        #no space after the hash
        x = 1
    """))
    assert parsed.sections[0].prose == "  indented words stay indented by two\nno space after the hash\n"


def test_comment_after_code_starts_a_new_section():
    parsed = parse_python(src("""
        # Load the grid
        grid = load()
        # Count the cells
        n = count(grid)
    """))
    assert prose_and_code(parsed) == [
        ("Load the grid\n", ("grid = load()",)),
        ("Count the cells\n", ("n = count(grid)",)),
    ]


def test_blank_line_counts_as_code_so_the_next_comment_starts_a_section():
    parsed = parse_python("# first note\n\n# second note\nx = 1\n")
    assert [s.prose for s in parsed.sections] == ["first note\n", "second note\n"]
    # the first section's code is blank only, but it has prose, so it stays (code trimmed)
    assert parsed.sections[0].code == ()
    assert parsed.sections[0].code_start == 0


def test_indented_comments_are_comment_lines_too():
    parsed = parse_python(src("""
        def step(state):
            value = state + 1
                # deeper than the code around it
            return value
    """))
    assert [s.prose for s in parsed.sections] == ["", "deeper than the code around it\n"]
    assert parsed.sections[1].code == ("    return value",)


def test_trailing_comment_stays_in_the_code():
    parsed = parse_python("total = 0  # running sum\n# Add one\ntotal += 1\n")
    assert prose_and_code(parsed) == [
        ("", ("total = 0  # running sum",)),
        ("Add one\n", ("total += 1",)),
    ]


def test_hash_inside_strings_and_fstrings_is_code():
    parsed = parse_python(src('''
        label = "# not a comment"
        tag = f"{label} # still a string {'#'}"
        text = """
        # inside a multi-line string
        """
    '''))
    assert len(parsed.sections) == 1
    assert parsed.sections[0].prose == ""
    assert parsed.sections[0].code[3] == "# inside a multi-line string"


def test_triple_quotes_inside_strings_are_code():
    parsed = parse_python(src('''
        quote = '"""'
        # A note after the string
        other = "\\"\\"\\""
    '''))
    assert prose_and_code(parsed) == [
        ("", ("quote = '\"\"\"'",)),
        ("A note after the string\n", ('other = "\\"\\"\\""',)),
    ]


def test_comments_inside_brackets_are_comment_lines():
    parsed = parse_python(src("""
        settings = {
            # How wide the window is
            'width': 3,
        }
    """))
    assert [s.prose for s in parsed.sections] == ["", "How wide the window is\n"]
    assert parsed.sections[1].code == ("    'width': 3,", "}")


# --- docstrings -----------------------------------------------------------------------------


def test_module_docstring_is_section_zero_with_front_matter_as_meta():
    parsed = parse_python(src('''
        """
        ---
        title: Counting Sheep
        summary: >
          A short tale about
          counting before sleep.
        level: 3
        ---

        # Counting Sheep

        Some words.
        """
        import sys

        # Next part
        sys.exit(0)
    '''))
    assert parsed.meta == {"title": "Counting Sheep",
                           "summary": "A short tale about counting before sleep.", "level": "3"}
    first = parsed.sections[0]
    # the blank line after the front matter goes with it, as in the original key rule
    assert first.prose == "# Counting Sheep\n\nSome words."
    # the code after the module docstring joins section 0
    assert first.code == ("import sys",)
    assert first.prose_lines == (10, 11, 12)
    assert parsed.sections[1].prose == "Next part\n"


def test_module_docstring_without_front_matter():
    parsed = parse_python('"""Just one line."""\nvalue = 2\n')
    assert parsed.meta == {}
    assert prose_and_code(parsed) == [("Just one line.", ("value = 2",))]


def test_unclosed_front_matter_is_an_error_with_its_line():
    with pytest.raises(SourceError) as err:
        parse_python('"""\n---\ntitle: x\n"""\n', "open.py")
    assert err.value.line == 2
    assert str(err.value).startswith("open.py:2: ")


def test_def_docstring_is_prose_of_the_header_section_and_a_new_section_follows():
    parsed = parse_python(src('''
        x = 0


        def grow(size):
            """
            ### Grow

            Doubles the size.
            """
            return size * 2
    '''))
    assert prose_and_code(parsed) == [
        ("", ("x = 0",)),
        ("\n### Grow\n\nDoubles the size.", ("def grow(size):",)),
        ("", ("    return size * 2",)),
    ]


def test_multi_line_header_keeps_its_docstring():
    parsed = parse_python(src('''
        class Basket(
                Container):
            """Holds fruit."""
            apples: int
    '''))
    # a one-line docstring ends with a newline, as in the original key rule
    assert prose_and_code(parsed)[0] == ("Holds fruit.\n", ("class Basket(", "        Container):"))


def test_comment_directly_above_def_stays_and_docstring_is_appended():
    parsed = parse_python(src('''
        y = 1
        # The helper below
        def helper():
            """
            Does little.
            """
            pass
    '''))
    assert prose_and_code(parsed)[1] == ("The helper below\n\nDoes little.", ("def helper():",))


def test_docstring_text_rule():
    # rest of the opening line, body with the opening indentation removed (extra indentation
    # kept), closing-line text before the quotes; every line right-stripped
    parsed = parse_python(src('''
        def f():
            """Opening words   
            second line
               indented more
            closing words"""
    '''))
    assert parsed.sections[0].prose == "Opening words\nsecond line\n   indented more\nclosing words"


def test_docstring_starting_on_next_line_begins_with_newline_and_has_no_trailing_one():
    parsed = parse_python('def f():\n    """\n    Body text.\n    """\n')
    assert parsed.sections[0].prose == "\nBody text."
    assert parsed.sections[0].prose_lines == (2, 3)


def test_raw_docstring_prefix_is_removed():
    parsed = parse_python('def f():\n    r"""Uses $\\alpha$."""\n')
    assert parsed.sections[0].prose == "Uses $\\alpha$.\n"  # one line: ends with a newline


def test_a_string_statement_later_in_a_body_is_code():
    parsed = parse_python('def f():\n    x = 1\n    """not a docstring"""\n')
    assert parsed.sections[0].prose == ""
    assert parsed.sections[0].code[-1] == '    """not a docstring"""'


# --- decorators, def and class --------------------------------------------------------------


def test_decorator_def_and_class_start_sections_when_the_current_one_has_code():
    parsed = parse_python(src("""
        import functools


        @functools.cache
        @staticmethod
        def cached():
            return 3


        class Box:
            size = 1
    """))
    codes = [s.code for s in parsed.sections]
    assert codes == [
        ("import functools",),
        ("@functools.cache", "@staticmethod", "def cached():", "    return 3"),
        ("class Box:", "    size = 1"),
    ]


def test_methods_start_sections_inside_a_class():
    parsed = parse_python(src('''
        class Counter:
            """
            ## Counter
            """

            def up(self):
                return 1

            async def down(self):
                return -1
    '''))
    assert [s.code[0] for s in parsed.sections if s.code] == ["class Counter:", "    def up(self):",
                                                              "    async def down(self):"]


# --- trimming, dropping, spans ----------------------------------------------------------------


def test_sections_without_prose_and_only_blank_code_are_dropped_and_code_is_trimmed():
    parsed = parse_python(src('''
        def a():
            """Doc."""


        # Note

        b = 2

    '''))
    # the blank lines after the docstring form a dropped section; its lines join the previous span
    assert prose_and_code(parsed) == [("Doc.\n", ("def a():",)), ("Note\n", ("b = 2",))]
    assert [s.span for s in parsed.sections] == [(1, 4), (5, 8)]
    assert parsed.sections[1].code_start == 7


def test_code_start_points_at_first_code_line():
    parsed = parse_python("# Title\n\n\nvalue = 3\n")
    assert parsed.sections[0].code_start == 4


def test_empty_file_has_no_sections():
    assert parse_python("").sections == ()
    assert parse_python("\n\n").sections == ()


# --- markdown and dispatch --------------------------------------------------------------------


def test_markdown_file_is_one_prose_only_section():
    parsed = parse_markdown("# Notes   \n\nA line.  \nAnother line.\n", "notes.md")
    (section,) = parsed.sections
    assert section.prose == "# Notes\n\nA line.\nAnother line.\n"
    assert section.code == () and section.code_start == 0
    assert section.span == (1, 4)
    assert section.prose_lines == (1, 2, 3, 4)


def test_parse_source_dispatches_on_suffix():
    assert parse_source("# Title\n", "a/readme.md").sections[0].prose == "# Title\n"
    assert parse_source("# Title\n", "a/code.py").sections[0].prose == "Title\n"
    with pytest.raises(SourceError):
        parse_source("x", "a/data.txt")


# --- errors -----------------------------------------------------------------------------------


def test_untokenizable_file_raises_source_error_with_line():
    with pytest.raises(SourceError) as err:
        parse_python('x = 1\ny = """never closed\n\n', "broken.py")
    assert err.value.path == "broken.py"
    assert err.value.line == 2
    assert str(err.value) == f"broken.py:2: {err.value.message}"


def test_bad_dedent_raises_source_error_with_line():
    with pytest.raises(SourceError) as err:
        parse_python("if x:\n        a = 1\n    b = 2\n", "dedent.py")
    assert err.value.line == 3


# --- property: spans partition the file ---------------------------------------------------------

_WORDS = st.text(alphabet="abcdefgh #'\"$`*_", min_size=0, max_size=12)
_NAMES = st.sampled_from(["a", "b", "value", "grid", "x1"])


@st.composite
def _statement(draw, indent: str) -> list[str]:
    kind = draw(st.sampled_from(["assign", "comment", "blank", "trailing", "string", "fstring",
                                 "multistring", "dict"]))
    name = draw(_NAMES)
    words = draw(_WORDS).replace("\\", "")
    if kind == "assign":
        return [f"{indent}{name} = 1"]
    if kind == "comment":
        return [f"{indent}#{words}"]
    if kind == "blank":
        return [""]
    if kind == "trailing":
        return [f"{indent}{name} = 2  # {words}"]
    if kind == "string":
        return [f"{indent}{name} = {words!r}"]
    if kind == "fstring":
        return [f"{indent}{name} = f'# {{{name}}} \"\"\"'"]
    if kind == "multistring":
        return [f'{indent}{name} = """', f"# {words.replace(chr(34), '')}", '"""']
    return [f"{indent}{name} = {{", f"{indent}    # {words}", f"{indent}    'k': 1,", f"{indent}}}"]


@st.composite
def _block(draw, indent: str, depth: int) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        if depth < 2 and draw(st.booleans()):
            if draw(st.booleans()):
                lines.append(f"{indent}@decorate")
            header = draw(st.sampled_from(["def f(x):", "class C:", "async def g():"]))
            lines.append(f"{indent}{header}")
            inner = indent + "    "
            if draw(st.booleans()):
                doc = draw(_WORDS).replace('"', "").replace("\\", "")
                if draw(st.booleans()):
                    lines.append(f'{inner}"""{doc}"""')
                else:
                    lines += [f'{inner}"""', f"{inner}{doc}", f'{inner}"""']
            lines += draw(_block(inner, depth + 1))
            lines.append(f"{inner}pass")
        else:
            lines += draw(_statement(indent))
    return lines


@st.composite
def _program(draw) -> str:
    lines: list[str] = []
    if draw(st.booleans()):
        lines += ['"""', "---", "title: T", "---", "", "# Heading", '"""']
    lines += draw(_block("", 0))
    return "\n".join(lines) + ("\n" if draw(st.booleans()) else "")


@settings(max_examples=150, deadline=None)
@given(_program())
def test_property_spans_partition_the_file_and_code_matches_source(text):
    parsed = parse_python(text, "gen.py")
    n_lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    lines = text.split("\n")
    sections: tuple[Section, ...] = parsed.sections
    if not sections:
        assert all(not line.strip() for line in lines)
        return
    assert sections[0].span[0] == 1
    assert sections[-1].span[1] == n_lines
    for before, after in zip(sections, sections[1:]):
        assert after.span[0] == before.span[1] + 1
    for s in sections:
        lo, hi = s.span
        assert lo <= hi
        if s.code:
            assert lo <= s.code_start <= hi
            assert s.code_start + len(s.code) - 1 <= hi
            assert list(s.code) == lines[s.code_start - 1:s.code_start - 1 + len(s.code)]
            assert s.code[0].strip() and s.code[-1].strip()
        else:
            assert s.code_start == 0
        assert list(s.prose_lines) == sorted(set(s.prose_lines))
        assert all(lo <= ln <= hi for ln in s.prose_lines)
        assert s.prose or s.code
