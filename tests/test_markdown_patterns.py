"""render/markdown.py's quicker forms of its patterns (a "<" at a time, not a character at a time;
str.replace for runs of line breaks) read exactly what the patterns they replace read, on random
HTML made of the pieces those patterns react to."""
from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from labml_site.render import markdown

SMALL = settings(max_examples=600, deadline=None, derandomize=True)

_OLD_LIST = re.compile(r"<(ul|ol)\b[^>]*>((?:(?!<(?:ul|ol)\b).)*?)</\1>", re.S)
_OLD_LI = re.compile(r"<li\b[^>]*>(.*?)(?=<li\b|$)", re.S)
_OLD_BLANKS = re.compile(r"\n{3,}")

LIST_UNITS = ["<ul>", "<ol>", "</ul>", "</ol>", "<li>", "</li>", "<ul class=\"x\">", "<ulx>", "<ol\n>", "</ul", "<u", "l>",
              "<", "/", ">", "x", " ", "\n", "<p>", "</p>", "中"]
ITEM_UNITS = ["<li>", "<li class=x>", "<lix>", "<l", "i>", "<li\n>", "<", ">", "x", " ", "\n", "\n\n", "<p>", "</p>", "中"]


@SMALL
@given(st.lists(st.sampled_from(LIST_UNITS), max_size=14))
@example(["<ul>", "<li>", "<ol>", "<li>", "x", "</ol>", "</ul>"])  # nested: the inner list first
@example(["<ul>", "x", "</ol>", "</ul>"])  # another list's end tag is content
def test_lists_are_found_as_the_old_pattern_finds_them(parts):
    text = "".join(parts)
    found = [(m.span(), m.groups()) for m in markdown._LIST.finditer(text)]
    assert found == [(m.span(), m.groups()) for m in _OLD_LIST.finditer(text)]


@SMALL
@given(st.lists(st.sampled_from(ITEM_UNITS), max_size=12))
@example(["<li>", "x", "\n"])  # `$` stops before a last line break; the item is stripped anyway
@example(["<li>", "x", " ", "\n", "<li>", "y"])
def test_items_are_those_of_the_old_pattern_once_stripped(parts):
    text = "".join(parts)
    assert [i.strip() for i in markdown._LI.findall(text)] == [i.strip() for i in _OLD_LI.findall(text)]


@SMALL
@given(st.lists(st.sampled_from(["\n", "\n\n", "\n\n\n", "x", " ", "\r"]), max_size=16))
def test_runs_of_line_breaks_are_cut_to_two_as_the_pattern_cuts_them(parts):
    text = "".join(parts)
    assert markdown._blank_lines(text) == _OLD_BLANKS.sub("\n\n", text)


def test_a_code_span_holding_a_placeholder_gets_its_markdown():
    """Tokens inside kept text (a placeholder in a code span) are put back too."""
    unit = "<p>See <code>a <span translate=no>_^_0_^_</span></code> and <span translate=no>_^_1_^_</span>.</p>"
    assert markdown.html_to_markdown(unit, ["`x`", "$y$"]) == "See `a `x`` and $y$."
