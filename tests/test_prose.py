"""Section prose to translation keys (labml_site.read.prose)."""
from __future__ import annotations

import re
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labml_site.read import prose
from labml_site.read.rules import blockquotes, emphasis, links
from labml_site.read.prose import (MAX_KEY_CHARS, PLACEHOLDER_RE, Placeholder, fill, page_title,
                              placeholder, section_blocks)
from labml_site.read.sections import Section, parse_markdown, parse_python

P = placeholder  # P(0) == '<span translate=no>_^_0_^_</span>'


def md(text: str) -> Section:
    """A prose-only section from Markdown text (docstring-like, dedented)."""
    return parse_markdown(textwrap.dedent(text), "t.md").sections[0]


def keys(section: Section) -> list[str]:
    return [b.key for b in section_blocks(section)]


def key(text: str) -> str:
    (only,) = keys(md(text))
    return only


# --- placeholders -----------------------------------------------------------------------------


def test_placeholder_format_and_regex_round_trip():
    assert placeholder(12) == "<span translate=no>_^_12_^_</span>"
    assert [m.group(1) for m in PLACEHOLDER_RE.finditer(P(3) + " and " + P(0))] == ["3", "0"]


def test_each_inline_placeholder_kind_numbered_in_source_order():
    (block,) = section_blocks(md("Take `rows`, the sum $s_i$, then $$t = 2$$ and ![a cat](cat.png)."))
    assert block.key == f"<p>Take {P(0)}, the sum {P(1)}, then {P(2)} and {P(3)}.</p>\n"
    assert [(p.kind, p.text) for p in block.placeholders] == [
        ("code", "rows"), ("math", "s_i"), ("display_math", "t = 2"), ("image", "cat.png")]
    assert block.placeholders[3].alt == "a cat"


def test_math_may_span_lines_and_keeps_its_tex():
    (block,) = section_blocks(md("Sum\n$$a +\n b$$ done"))
    assert block.key == f"<p>Sum {P(0)} done</p>\n"
    assert block.placeholders[0].text == "a +\n b"


def test_dollar_inside_code_span_is_code():
    (block,) = section_blocks(md("Use `$HOME` here"))
    assert [(p.kind, p.text) for p in block.placeholders] == [("code", "$HOME")]


def test_fenced_code_block_is_a_block_placeholder_without_p():
    (block,) = section_blocks(md("Run this:\n\n```bash\necho hi\n\necho bye\n```\n\nDone."))
    assert block.key == f"<p>Run this:</p>\n{P(0)}<p>Done.</p>\n"
    code = block.placeholders[0]
    assert (code.kind, code.lang, code.text, code.block) == ("code_block", "bash", "echo hi\n\necho bye", True)


def test_latex_environment_is_a_block_placeholder_even_next_to_text():
    (block,) = section_blocks(md("### Steps\n\\begin{align}\na &= 1 \\\\\nb &= 2\n\\end{align}\n\nAfter $x$."))
    assert block.key == f"<h3>Steps</h3>\n{P(0)}<p>After {P(1)}.</p>\n"
    env = block.placeholders[0]
    assert env.kind == "env" and env.text.startswith("\\begin{align}") and env.text.endswith("\\end{align}")


def test_environment_with_blank_lines_and_nested_environment_stays_one_placeholder():
    text = "\\begin{align}\nA &= \\begin{pmatrix} 1 \\end{pmatrix}\n\nB &= 2\n\\end{align}\n"
    (block,) = section_blocks(md(text))
    # (the prose's last newline, after the environment, is the original's `<p> </p>`)
    assert block.key == P(0) + "<p> </p>\n"
    assert block.placeholders[0].text == text.rstrip("\n")


def test_display_math_alone_in_paragraph_is_marked_block():
    (block,) = section_blocks(md("Intro\n\n$$x^2$$\n\nOutro $$y$$"))
    assert block.key == f"<p>Intro</p>\n<p>{P(0)}</p>\n<p>Outro {P(1)}</p>\n"
    assert [p.block for p in block.placeholders] == [True, False]


def test_placeholder_lines_come_from_prose_lines():
    parsed = parse_python('x = 1\n# Start\n# then $y$\nz = 2\n')
    (block,) = section_blocks(parsed.sections[1])
    assert block.line == 2
    assert block.placeholders[0].line == 3


# --- blocks -------------------------------------------------------------------------------------


def test_runs_of_spaces_collapse_but_a_newline_plus_indent_gives_two():
    assert key("a   few    spaces") == "<p>a few spaces</p>\n"
    assert key("ends here\n and goes on") == "<p>ends here  and goes on</p>\n"


def test_headings():
    assert key("# One\n## Two\n###### Six") == "<h1>One</h1>\n<h2>Two</h2>\n<h6>Six</h6>\n"
    assert key("#  Extra space ##") == "<h1>Extra space</h1>\n"


def test_paragraph_before_heading_does_not_keep_the_newline():
    assert key("\n<a id=\"top\"></a>\n## Title\ntext") == \
        '<p> <a id="top"></a></p>\n<h2>Title</h2>\n<p>text</p>\n'


def test_leading_newline_of_a_docstring_becomes_a_leading_space():
    parsed = parse_python('def f():\n    """\n    Adds two.\n    """\n')
    assert keys(parsed.sections[0]) == ["<p> Adds two.</p>\n"]


def test_comment_paragraph_ends_with_a_space():
    parsed = parse_python("x = 0\n# Apply the rule\n# twice\nx += 2\n")
    assert keys(parsed.sections[1]) == ["<p>Apply the rule twice </p>\n"]


def test_hash_alone_gives_a_space_paragraph():
    parsed = parse_python("x = 0\n#\nx += 2\n")
    assert keys(parsed.sections[1]) == ["<p> </p>\n"]


def test_list_at_block_start_items_end_with_space_except_last():
    assert key("* first item\n- second\n  continues\n+ third") == \
        "<ul><li>first item </li>\n<li>second  continues </li>\n<li>third</li></ul>\n"


def test_list_after_heading_and_after_leading_blank_line():
    assert key("## Parts\n* wheel\n* axle") == "<h2>Parts</h2>\n<ul><li>wheel </li>\n<li>axle</li></ul>\n"
    assert key("\n* alone") == "<ul><li>alone</li></ul>\n"


def test_star_line_inside_a_paragraph_is_text():
    assert key("We need:\n* not a list") == "<p>We need: * not a list</p>\n"


def test_nested_item_becomes_a_sibling_keeping_extra_indentation():
    assert key("* outer\n    * inner\n* last") == \
        "<ul><li>outer  </li>\n<li>inner </li>\n<li>last</li></ul>\n"


def test_ordered_list_at_block_start():
    assert key("1. first\n2. second\n\nText 1. stays text") == \
        "<ol><li>first </li>\n<li>second</li></ol>\n<p>Text 1. stays text</p>\n"


def test_blockquote_holds_its_own_blocks():
    assert key("Asked:\n\n> Why $x$?\n>\n> Really.\n\nDone.") == (
        f"<p>Asked:</p>\n<blockquote>\n<p>Why {P(0)}?</p>\n<p>Really.</p>\n</blockquote>\n<p>Done.</p>\n")


def test_blocks_are_separated_by_blank_lines():
    assert key("one\ntwo\n\nthree") == "<p>one two</p>\n<p>three</p>\n"


def test_param_and_return_lines():
    assert key("### Push\n\n:param name: is the queue\n:param item: is the value\n:return: the size") == (
        f"<h3>Push</h3>\n<ul><li>{P(0)}  is the queue </li>\n<li>{P(1)}  is the value </li>\n"
        "<p><em>Returns</em>  the size</p></ul>\n")
    (block,) = section_blocks(md(":param rows: the `grid` rows"))
    assert [(p.kind, p.text) for p in block.placeholders] == [("code", "rows"), ("code", "grid")]


# --- inline HTML --------------------------------------------------------------------------------


def test_text_is_escaped_with_quotes():
    assert key("It's \"fine\" & 1 < 2") == "<p>It&#x27;s &quot;fine&quot; &amp; 1 &lt; 2</p>\n"


def test_raw_html_and_entities_pass_through():
    assert key('<a id="here"></a> keep &nbsp; as is') == '<p><a id="here"></a> keep &nbsp; as is</p>\n'


def test_links_bold_and_italic_are_html_not_placeholders():
    assert key("See [the *guide*](docs/a.html) and **this**.") == \
        '<p>See <a href="docs/a.html">the <em>guide</em></a> and <strong>this</strong>.</p>\n'
    assert key("[`code` link](x(1).html)") == f'<p><a href="x(1).html">{P(0)} link</a></p>\n'


def test_lone_stars_and_snake_case_are_text():
    assert key("a * b * c and snake_case_name") == "<p>a * b * c and snake_case_name</p>\n"


def test_image_inside_link():
    assert key("[![Badge](b.svg)](https://example.org/run)") == \
        f'<p><a href="https://example.org/run">{P(0)}</a></p>\n'


def test_anchor_left_open_around_a_heading_is_closed():
    assert key('\n<a id="part">\n## Part\n</a>\n\nBody') == \
        '<p> <a id="part"></a></p>\n<h2>Part</h2>\n<p>Body</p>\n'


# --- one key per section, split when long -------------------------------------------------------


def test_one_key_per_section():
    assert keys(md("# A\n\nFirst $x$.\n\nSecond $y$.")) == \
        [f"<h1>A</h1>\n<p>First {P(0)}.</p>\n<p>Second {P(1)}.</p>\n"]


def test_no_prose_gives_no_keys():
    assert section_blocks(Section("", (), ("x = 1",), 1, (1, 1))) == []


def test_long_key_splits_into_one_key_per_block_with_numbering_restarting():
    filler = "word " * 200
    text = "\n\n".join(f"Part {i} uses ${i}$ and `c{i}`. {filler}" for i in range(6))
    blocks = section_blocks(md(text))
    assert len(blocks) == 6
    for i, block in enumerate(blocks):
        assert len(block.key) < MAX_KEY_CHARS
        assert block.key.startswith(f"<p>Part {i} uses {P(0)} and {P(1)}.")
        assert [p.text for p in block.placeholders] == [str(i), f"c{i}"]
    assert [b.line for b in blocks] == [1, 3, 5, 7, 9, 11]


def test_key_at_the_limit_is_not_split():
    body = "x" * (MAX_KEY_CHARS - len("<p></p>\n"))
    assert keys(md(body)) == [f"<p>{body}</p>\n"]
    assert len(keys(md(body + "x"))) == 1  # one element cannot be split further


# --- page title, summary, fill ------------------------------------------------------------------


def test_page_title_prefers_front_matter_then_first_h1_then_file_name():
    parsed = parse_python('"""\n---\ntitle: From Meta\nsummary: Short.\n---\n# Heading\n"""\n')
    assert page_title(parsed.meta, parsed.sections, "a/b.py") == "From Meta"
    assert parsed.meta["summary"] == "Short."
    readme = parse_markdown("## Not this\n# [Linked *Title*](https://x.org) `v2`\n", "r.md")
    assert page_title(readme.meta, readme.sections, "r.md") == "Linked Title v2"
    bare = parse_python("x = 1\n")
    assert page_title(bare.meta, bare.sections, "pkg/tool.py") == "tool.py"


def test_fill_puts_rendered_html_back_by_number_even_when_reordered():
    translated = f"<p>{P(1)} before {P(0)}</p>\n"
    assert fill(translated, ["<code>a</code>", "<math>b</math>"]) == \
        "<p><math>b</math> before <code>a</code></p>\n"


def test_fill_raises_for_a_number_without_rendering():
    with pytest.raises(IndexError):
        fill(P(2), ["only one"])


def _fill_by_scan(html_: str, rendered: list[str]) -> str:
    """`fill` as it was written first, match by match and character by character: the reference
    its one-split form is checked against."""
    out, last = [], 0
    for m in PLACEHOLDER_RE.finditer(html_):
        n = int(m.group(1))
        if n >= len(rendered):
            raise IndexError(f"placeholder {n} has no rendering (only {len(rendered)} given)")
        out.append(html_[last:m.start()])
        last = stop = m.end()
        while stop < len(html_) and html_[stop] in prose._CLOSING_PUNCTUATION:
            stop += 1
        if stop > last and rendered[n].startswith("<math") and 'display="inline"' in rendered[n][:120]:
            out.append(f'<span class="nowrap">{rendered[n]}{html_[last:stop]}</span>')
            last = stop
        else:
            out.append(rendered[n])
    out.append(html_[last:])
    return "".join(out)


_INLINE = '<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline"><mi>x</mi></math>'
_BLOCK = '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block"><mi>y</mi></math>'


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from([P(0), P(1), P(2), P(3), ".", "。", "…", ")", ",", "x", " ", "<p>", "</p>", "_^_", "\n",
                                 "<span translate=no>_^_9_^_</span>", "<span translate=no>_^_", "％", "%"]), max_size=12))
def test_fill_equals_the_scan_it_replaces(parts):
    text = "".join(parts)
    rendered = [_INLINE, "<code>c</code>", _BLOCK, _INLINE + "."]
    try:
        expected = _fill_by_scan(text, rendered)
    except IndexError as e:
        with pytest.raises(IndexError, match=re.escape(str(e))):
            fill(text, rendered)
        return
    assert fill(text, rendered) == expected


def test_fill_keeps_inline_math_and_the_punctuation_after_it_together():
    assert fill(f"<p>{P(0)}.)。 and {P(1)}.</p>", [_INLINE, _BLOCK]) == \
        f'<p><span class="nowrap">{_INLINE}.)。</span> and {_BLOCK}.</p>'


def test_placeholder_block_property():
    assert Placeholder("code_block", "x").block and Placeholder("env", "x").block
    assert not Placeholder("math", "x").block and not Placeholder("code", "x").block
    assert not Placeholder("image", "a.png").block


# --- shortcuts: a substitution is skipped when its pattern needs a character the text lacks ----


def test_each_inline_construct_still_converts_on_its_own():
    # each input exercises one skip test alone: `&` without `<`, `\\` and `<` without `*`,
    # `_` without `*`, two spaces
    assert key("AT&T &copy; 2024") == "<p>AT&amp;T &copy; 2024</p>\n"
    assert key(r"\*literal\* and <https://a.b/c> \[x\]") == \
        '<p>*literal* and <a href="https://a.b/c">https://a.b/c</a> [x]</p>\n'
    assert key("__bold__ and _em_ but snake_case") == \
        "<p><strong>bold</strong> and <em>em</em> but snake_case</p>\n"
    assert key("a  b\n  c") == "<p>a b  c</p>\n"
    assert key("> quoted\n> more\n\nplain > not") == \
        "<blockquote>\n<p>quoted more</p>\n</blockquote>\n<p>plain &gt; not</p>\n"


def test_links_match_nested_brackets_and_parentheses():
    assert key("[a [nested] label](u(1)) and [open(x)") == \
        '<p><a href="u(1)">a [nested] label</a> and [open(x)</p>\n'


# (pattern, characters of which it needs at least one): the guards in prose.py skip the pattern
# when the text has none of them, which is only safe while this holds
_NEEDS = [
    (prose._ESCAPE_RE, ["\\"]),
    (prose._AUTOLINK_RE, ["<"]),
    (prose._HTML_RE, ["<", "&"]),
    (emphasis._STRONG_EM_RE, ["*"]),
    (emphasis._STRONG_RE, ["*"]),
    (emphasis._EM_RE, ["*"]),
    (emphasis._SMART_STRONG_RE, ["_"]),
    (emphasis._SMART_EM_RE, ["_"]),
    (prose._SPACES_RE, ["  "]),
    (prose._KEEP_RE, [prose._KEEP_MARK]),
    (prose._PH_MARK_RE, [prose._PH_MARK]),
    (prose._FENCE_RE, ["```", "~~~"]),
    (prose._BEGIN_RE, ["\\begin{"]),
    (blockquotes._QUOTE_RE, [">"]),
    (prose._A_OPEN_RE, ["<a"]),
]
_PIECES = ["*", "**", "_", "__", "[", "]", "(", ")", "<", ">", "\\", "`", "```", "~~~", "$", "!",
           "&", ";", "#", "a", "Z", "7", " ", "  ", "\t", "\n", "-", "<a ", "<a>", "<!--", "-->",
           "&amp;", "http://x.y", "\\begin{align}", prose._KEEP_MARK, prose._KEEP_END,
           prose._PH_MARK, prose._PH_END]
_prose_text = st.lists(st.sampled_from(_PIECES), max_size=30).map("".join)


@settings(max_examples=400, deadline=None)
@given(_prose_text)
def test_skipped_patterns_cannot_match_without_their_character(text):
    for pattern, needs in _NEEDS:
        if pattern.search(text):
            assert any(n in text for n in needs), (pattern.pattern, text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["(", ")", "[", "]", "a", " "]), max_size=20).map("".join),
       st.sampled_from(["()", "[]"]))
def test_closing_finds_the_first_balanced_closer(tail, pair):
    opener, closer = pair
    text = opener + tail
    j = links._closing(text, 0, links._PARENS_RE if pair == "()" else links._BRACKETS_RE)
    depths = []  # openers minus closers in text[:k + 1]
    for c in text:
        depths.append((depths[-1] if depths else 0) + (c == opener) - (c == closer))
    first_zero = depths.index(0) if 0 in depths else -1
    assert j == first_zero
    if j >= 0:
        assert text[j] == closer


_MARKUP = ["*", "**", "_", "__", "[", "](", ")", "<", ">", "\\", "`", "$", "$$", "![", "&",
           "<a id=x>", "</a>", "<https://a.b>", "&nbsp;", "a", "b c", "  ", "\n", "\n\n", "# ",
           "* ", "> ", "```", "\\begin{align}", "\\end{align}", ":param x:", ":return:"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_MARKUP), min_size=1, max_size=40).map("".join))
def test_keys_number_their_placeholders_in_order_and_leave_no_marks(text):
    lines = tuple(range(1, text.count("\n") + 2))
    for block in section_blocks(Section(text, lines, (), 0, (1, lines[-1]))):
        numbers = [int(m.group(1)) for m in PLACEHOLDER_RE.finditer(block.key)]
        assert numbers == list(range(len(block.placeholders)))
        # a mark left unrestored (a skipped restoring substitution) would show up here
        assert not any("\ue000" <= c <= "\ue011" for c in block.key), block.key


@pytest.mark.parametrize("text", ['<b c<https://a.b>> ', 'x <span title="\\*">y</span>', '<i a="\\_<https://x.y>">z</i>'])
def test_pieces_kept_inside_kept_tags_are_restored(text):
    """An autolink or an escape inside a raw tag is kept inside a kept piece (found by hypothesis:
    the inner mark was left in the key)."""
    lines = tuple(range(1, text.count("\n") + 2))
    for block in section_blocks(Section(text, lines, (), 0, (1, lines[-1]))):
        assert not any("\ue000" <= c <= "\ue011" for c in block.key), block.key
