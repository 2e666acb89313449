"""The fast paths give what the strict ones give.

`html_outline.summarize_html` reads the small, regular HTML of translation keys and values with a regular
expression tokenizer and falls back to `html.parser` for anything it does not fully understand;
`search_index.prose_text` cuts prose into texts, tags and whole formulas and drives the text
extractor's state machine itself (a fixed text per token for nested prose, its steps in one loop
for the rest); `sanitize` uses one prebuilt nh3 cleaner. Each is compared here with its reference
(`summarize_html_strict`, `prose_text_strict`, a per-call `nh3.clean`) on random HTML (hypothesis),
on the XSS vectors, on fixtures in the key format and on the project's own prose and translations.
"""
from __future__ import annotations

import json
import re
import threading
import time
from html import unescape
from pathlib import Path

import nh3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labml_site.translate import checks
from labml_site.translate import html_outline
from labml_site.read import markup
from labml_site.translate import sanitize as sanitize_module
from labml_site.render import search_index
from labml_site.translate.html_outline import HtmlSummary, summarize_html, summarize_html_strict
from labml_site.typeset.math import tex_to_mathml
from labml_site.translate.sanitize import sanitize
from labml_site.render.search_index import prose_text, prose_text_strict

from xss_vectors import ENGLISH_IDS, ENGLISH_URLS, TEXT_ONLY, VECTORS, carriers

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --------------------------------------------------------------------------------------------
# Fixtures in the key format (written for these tests)

KEYS_AND_VALUES = [
    (
        "<h2>Multi-head attention</h2>\n<p>We split <span translate=no>_^_0_^_</span> into "
        "<span translate=no>_^_1_^_</span> heads.</p>\n",
        "<h2>多头注意力</h2>\n<p>我们把<span translate=no>_^_0_^_</span>分成"
        "<span translate=no>_^_1_^_</span>个头。</p>\n",
    ),
    (
        '<p>See <a href="https://arxiv.org/abs/1706.03762">the paper</a> &amp; '
        '<a href="softmax.html#scores">the scores</a>.</p>\n',
        '<p>见<a href="https://arxiv.org/abs/1706.03762">论文</a>和<a href="softmax.html#scores">分数</a>。</p>\n',
    ),
    (
        "<ul><li><span translate=no>_^_0_^_</span> is the query</li>\n"
        "<li><span translate=no>_^_1_^_</span> is the key</li>\n"
        "<p><em>Returns</em> the output.</p></ul>\n",
        "<ul><li><span translate=no>_^_0_^_</span> — запрос</li>\n"
        "<li><span translate=no>_^_1_^_</span> — ключ</li>\n"
        "<p><em>Возвращает</em> выход.</p></ul>\n",
    ),
    (
        "<p>Run this:</p>\n<span translate=no>_^_0_^_</span>\n<p>Then check &lt;shape&gt;.</p>\n",
        "<p>运行：</p>\n<span translate=no>_^_0_^_</span>\n<p>然后检查 &lt;shape&gt;。</p>\n",
    ),
    (
        '<p>As shown<sup id="fnref:1"><a class="footnote-ref" href="#fn:1">1</a></sup>.<br/>'
        "Next <strong>line</strong><br />and <code>x</code>.</p>\n",
        '<p>如图<sup id="fnref:1"><a class="footnote-ref" href="#fn:1">1</a></sup>。<br/>'
        "下一<strong>行</strong><br />和<code>x</code>。</p>\n",
    ),
    (
        '<table><thead><tr><th align="center">Shape</th><th align=right>Size</th></tr></thead>\n'
        "<tbody><tr><td>x</td><td>3</td></tr></tbody></table>\n",
        '<table><thead><tr><th align="center">形状</th><th align=right>大小</th></tr></thead>\n'
        "<tbody><tr><td>x</td><td>3</td></tr></tbody></table>\n",
    ),
    ("Scaled dot-product attention", "Масштабированное внимание"),
    ("", ""),
]

PLAIN_NAMES = ["p", "P", "span", "a", "A", "br", "BR", "h1", "h2", "li", "ul", "em", "strong",
               "code", "sup", "div", "table", "td", "hr", "img", "math", "kbd", "details"]
RAW_NAMES = ["script", "style", "textarea", "title", "xmp", "iframe", "noscript", "plaintext",
             "SCRIPT", "Style"]
ODD_NAMES = ["x-y", "a:b", "svg", "p1"]
ATTR_NAMES = ["href", "translate", "id", "class", "onclick", "title", "align", "data-x", "HREF",
              "xlink:href", "alt", "display"]
PLAIN_VALUES = ['"x"', "'x'", "x", '"a&amp;b"', '"no"', "no", '"javascript:alert(1)"', '""',
                "''", '"it\'s"', "'say \"hi\"'", '"line\nbreak"', '"&#60;b&#62;"', "center",
                '"https://arxiv.org/abs/1706.03762"', '"#fn:1"', "a.b-c_d:e"]
ODD_VALUES = ['"<b>"', '">"', "x/", "=", "'<'", '"a', "a'b", "`x`", "&amp;", '"\x00"']
PLAIN_SPACES = [" ", "  ", "\t", "\n", "\r\n", "\f"]
ODD_SPACES = ["\x0b", "\xa0", "\u3000", "\u2028", ""]
TEXTS = ["Scores ", "多头注意力", "Внимание", " ", "\n", "\u3000", "\xa0", "&amp;", "&lt;", "&#60;",
         "&#x3c;", "&", "&nbsp;", "&notanentity;", "&#0;", "&amp", "x > y", "a&b", "_^_0_^_",
         "<span translate=no>_^_0_^_</span>", "\u202e", "\t"]
ODD_MARKUP = ["<!-- c -->", "<!---->", "<!doctype html>", "<?pi x?>", "<![CDATA[x]]>", "<", "< p>",
              "</>", "<a", "<p/x>", "</p x>", "</ p>", "<!", "<a href='x'title=y>", "</br>",
              "<p//>", "<br/ >", "&lt;p&gt;", "<p\n>", "</p\n>", "<a href = \"x\" >"]


@st.composite
def start_tag(draw, names, values, spaces, plain) -> str:
    name = draw(st.sampled_from(names))
    attrs = "".join(
        draw(st.sampled_from(spaces)) + draw(st.sampled_from(ATTR_NAMES))
        + draw(st.sampled_from(["", "=" + draw(st.sampled_from(values)),
                                draw(st.sampled_from(spaces)) + "=" + draw(st.sampled_from(spaces))
                                + draw(st.sampled_from(values))]))
        for _ in range(draw(st.integers(0, 3)))
    )
    space, slash = draw(st.sampled_from(["", *spaces])), draw(st.sampled_from(["", "/"]))
    if plain and slash and not space and attrs and not attrs.endswith(("'", '"')):
        space = " "  # `<a href=x/>`: html.parser reads the slash into the value; not plain
    return f"<{name}{attrs}{space}{slash}>"


@st.composite
def end_tag(draw, names, spaces) -> str:
    return f"</{draw(st.sampled_from(names))}{draw(st.sampled_from(['', *spaces]))}>"


def fragments(plain_only: bool) -> st.SearchStrategy[str]:
    names = PLAIN_NAMES if plain_only else PLAIN_NAMES + RAW_NAMES + ODD_NAMES
    values = PLAIN_VALUES if plain_only else PLAIN_VALUES + ODD_VALUES
    spaces = PLAIN_SPACES if plain_only else PLAIN_SPACES + ODD_SPACES
    piece = st.one_of(
        st.sampled_from(TEXTS),
        st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="<"), max_size=8),
        start_tag(names, values, spaces, plain_only),
        end_tag(names, spaces),
        *([] if plain_only else [st.sampled_from(ODD_MARKUP), st.text(max_size=6)]),
    )
    return st.lists(piece, max_size=14).map("".join)


# --------------------------------------------------------------------------------------------
# summarize_html


def assert_same_summary(fragment: str) -> HtmlSummary | None:
    strict = summarize_html_strict(fragment)
    fast = html_outline._fast_summary(fragment)
    if fast is not None:
        assert fast == strict, fragment
    assert summarize_html(fragment) == strict, fragment
    assert html_outline.summarize_key(fragment) == strict, fragment
    return fast


@SETTINGS
@given(fragments(plain_only=False))
def test_fast_summary_equals_the_parser_on_any_html(fragment):
    assert_same_summary(fragment)


@SETTINGS
@given(fragments(plain_only=True))
def test_fast_summary_accepts_plain_html_and_equals_the_parser(fragment):
    # Without the raw-text names, the odd values, spaces and markup, every "<" starts a plain tag:
    # the fast path must take these (or this file would be comparing the parser with itself).
    assert assert_same_summary(fragment) is not None, fragment


@pytest.mark.parametrize("key, value", KEYS_AND_VALUES)
def test_fixtures_in_the_key_format_take_the_fast_path(key, value):
    for fragment in (key, value):
        summary = assert_same_summary(fragment)
        assert summary is not None or "<" not in fragment
    assert checks.check_entry(key, value) == [] or key == ""


def test_what_the_fast_path_refuses():
    for fragment in (
        "<p>a<!-- c --></p>", "<p><![CDATA[x]]></p>", "<!doctype html><p>x</p>", "<?php x ?>",
        "<p>a < b</p>", '<a href="<b>">x</a>', "<a href='>'>x</a>", "<p\x0bclass=x>y</p>",
        "<p\xa0class=x>y</p>", '<a href="x"title="y">z</a>', "<a href=x/>y", "</ p>", "</p x>",
        "<script>alert(1)</script>", "<StYlE>p{}</style>", "<textarea><p></textarea>",
        "<title>x</title>", "<a href=`x`>y</a>", "<p x=>y</p>",
    ):
        assert html_outline._fast_summary(fragment) is None, fragment
        assert summarize_html(fragment) == summarize_html_strict(fragment)


def test_positions_count_lines_like_the_parser():
    fragment = '<p>one\ntwo</p>\n<p>three <a\nhref="x">four</a>\n</div>\n  <em>five'
    fast = html_outline._fast_summary(fragment)
    assert fast is not None and fast == summarize_html_strict(fragment)
    assert fast.stray_end == [("div", 5, 1)] and fast.unclosed == [("p", 3, 1), ("em", 6, 3)]


def _xss_fragments() -> list[str]:
    found = []
    for _, payload in VECTORS + TEXT_ONLY:
        found.append(payload)
        for _, key, value in carriers(payload):
            found += [key, value]
    return found


def test_xss_vectors_give_the_same_summary():
    fast = [assert_same_summary(fragment) for fragment in _xss_fragments()]
    # the carriers themselves are plain: the fast path is exercised, not just bypassed
    assert sum(f is not None for f in fast) > len(fast) // 4


def test_the_projects_translations_give_the_same_summary():
    files = sorted((ROOT / "translations").rglob("*.json"))
    fragments_seen = 0
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            continue
        for key, value in data.items():
            for fragment in (key, value):
                if isinstance(fragment, str):
                    assert_same_summary(fragment)
                    fragments_seen += 1
    if not files:
        pytest.skip("no translations in this checkout")
    assert fragments_seen > 0


def test_shared_key_summaries_cannot_leak_between_languages():
    key = KEYS_AND_VALUES[0][0]
    first = html_outline.summarize_key(key)
    first.tags.clear()
    first.top_blocks.append("evil")
    second = html_outline.summarize_key(key)
    assert second == summarize_html_strict(key)


def test_adversarial_input_takes_linear_time():
    # Each of these took minutes (or forever) with a tokenizer that retried at every position or
    # a pattern that could split a text run many ways; the scan must stop at the first bad "<".
    n = 200_000
    started = time.perf_counter()
    for fragment in ("a" * n + "< b", "<p>" + "a" * n, "<p" + " a=b" * (n // 4), "<p" + " " * n + "x",
                     "<math>" + "x" * n, "<p><math><mi>" + "x" * 60 + "</p>" * 3):
        assert summarize_html(fragment) == summarize_html_strict(fragment)
        assert prose_text(fragment) == prose_text_strict(fragment)
    assert time.perf_counter() - started < 20  # linear: well under a second on a slow machine


# --------------------------------------------------------------------------------------------
# Other equivalent shortcuts in checks.py

WS_TEXT = st.text(alphabet=st.sampled_from([" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x85",
                                            "\xa0", "\u2028", "\u3000", "\u200b", "a", "中", "_"]),
                  max_size=12)


@SETTINGS
@given(WS_TEXT)
def test_edge_whitespace_equals_the_regular_expressions(text):
    assert checks._leading_ws(text) == re.search(r"^\s*", text).group(0)
    assert checks._trailing_ws(text) == re.search(r"\s*$", text).group(0)


@SETTINGS
@given(WS_TEXT, WS_TEXT)
def test_same_words_equals_comparing_the_collapsed_texts(a, b):
    # check_identical compares first words before splitting the whole of both texts
    for x, y in ((a, b), (a, a), (a, " " + a.replace(" ", "\n") + "\t")):
        assert checks._same_words(x, y) == (" ".join(x.split()) == " ".join(y.split()))


@SETTINGS
@given(st.text(alphabet=st.sampled_from(["\t", "\n", "\r", " ", "\x00", "\x1f", "\x7f", "\x0b", "/", "a",
                                         ":", "\u3000"]), max_size=10))
def test_normalise_url_equals_the_regular_expression(url):
    expected = re.sub(r"[\t\n\r]", "", url).strip("".join(chr(c) for c in range(0x21)))
    assert sanitize_module.normalise_url(url) == expected


CARET_TEXT = st.lists(
    st.sampled_from(["_", "＿", "%5f", "^", "＾", "%5e", "%5E", "&#94;", "&#x5e;", "&Hat;", "0", "12",
                     " ", "\n", "x", "<span translate=no>", "</span>", "&#", "%5", "Hat"]),
    max_size=12,
).map("".join)


@SETTINGS
@given(CARET_TEXT)
def test_text_without_a_caret_form_holds_no_damaged_placeholder(text):
    # scan_placeholders skips the slow search when _may_hold_caret says no
    if not markup.may_hold_caret(text):
        assert markup.LOOSE_IN_SPAN_RE.search(text) is None


def test_casefold_finds_every_spelling_the_case_blind_pattern_takes_for_translate():
    every_character = "".join(map(chr, range(0x110000)))
    for letter in set("translate"):
        taken = re.findall(letter, every_character, re.IGNORECASE)
        assert len(taken) >= 2 and all(c.casefold() == letter for c in taken), letter


TRANSLATE_TEXT = st.lists(
    st.sampled_from(["translate", "TRANSLATE", "Tranſlate", "tran", "slate", "=", " = ", "\n", "no",
                     "NO", '"', "'", "x", "<span ", ">", "_^_0_^_", "ſ", "K"]),
    max_size=10,
).map("".join)


@SETTINGS
@given(TRANSLATE_TEXT)
def test_text_that_cannot_hold_translate_no_has_no_match(text):
    # scan_placeholders skips the case-blind search when _may_hold_translate_no says no
    if not html_outline._may_hold_translate_no(text):
        assert markup.TRANSLATE_NO_RE.search(text) is None


def test_one_search_finds_the_characters_of_both_character_checks():
    every_character = "".join(map(chr, range(0x110000)))
    either = set(checks._LONE_SURROGATE.findall(every_character)) | set(
        checks._SUSPICIOUS_CHARS.findall(every_character))
    assert set(checks._UNUSUAL_CHARS.findall(every_character)) == either
    assert "\ud800" in either and "\x00" in either and "\u202e" in either


# --------------------------------------------------------------------------------------------
# prose_text

MATHML = [tex_to_mathml(tex, display) for tex, display in (
    (r"\sqrt{d_k}", False), (r"\frac{a}{b} < c \& x", False), (r"x^2", True),
    (r"\operatorname{softmax}\Big(Q K^\top\Big)", False), (r"\sum_{i=1}^{N} x_i", True),
    (r"a \, b", False),
)]
PROSE_PIECES = MATHML + [
    "<p>", "</p>", "<h2>", "</h2>", "<h1>Title</h1>", "<ul><li>", "</li></ul>", "<br/>", "<br>",
    '<div class="untranslated" lang="en" data-status="missing">', "</div>",
    '<span class="untranslated-marker" role="note">Not yet translated</span>',
    '<code class="highlight"><span class="n">x</span><span class="o">=</span></code>',
    '<img src="f.svg" alt="A figure" loading="lazy">', "<mspace width=\"1em\"/>", "<mi>x</mi>",
    "<MATH>x</MATH>", '<math display="block">', "<math>", "</math>", "<annotation>t</annotation>",
    "</ annotation>", "<!-- <math>x</math> -->", "<script>", "</script>", '<a title="<math>">',
    "Divide by ", " now.", "&amp; ", "&lt;math&gt;", "\n", "尚未翻译", "<semantics>", "<mark>",
    '<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline"><semantics><mi>d</mi>'
    '<annotation encoding="application/x-tex">a</annotation><annotation>b</annotation></semantics></math>',
    '<math display="inline"><mrow><mi title="a>b">x</mi></mrow></math>',
    '<math display="inline"><mi>x</mi></math>',
]


@SETTINGS
@given(st.lists(st.sampled_from(PROSE_PIECES), max_size=12).map("".join))
def test_prose_text_equals_the_parser(html):
    assert prose_text(html) == prose_text_strict(html), html


@SETTINGS
@given(fragments(plain_only=False))
def test_prose_text_equals_the_parser_on_any_html(html):
    assert prose_text(html) == prose_text_strict(html), html


# Prose shaped to reach every branch of the loop that replays the parser's steps: headings (empty,
# nested, never closed, closed by an outer end tag), skipped content (with math and images inside),
# stray and implicit end tags, void and self-closed tags, entities.
WALK_PIECES = MATHML + [
    "<h1>", "</h1>", "<h2>", "</h2>", "<H3>", "</h3>", "<h2></h2>", "<h2/>", "<div>", "</div>",
    "<p>", "</p>", "<P>", "<li>", "</li>", "<ul>", "</ul>", "<span>", "</span>", "<em>", "</em>",
    '<span class="untranslated-marker">', '<div class="section-link x">', '<p class="">',
    '<span class="a untranslated-marker">', "<br>", "<br/>", "</br>", "<hr>", "<p/>",
    '<img alt="A figure">', '<img alt="x"/>', "<img alt>", '<img alt="a &amp; b">',
    '<code class="highlight"><span class="n">x</span></code>', "Title", " words ", "\n", "&amp;",
    "&lt;b&gt;", "中文", "",
]


HEADING_PIECES = ["<h2>", "</h2>", "<h3>", "</h3>", "<h2></h2>", "<h3> </h3>", "</div>"]


@SETTINGS
@given(st.lists(st.one_of(st.sampled_from(WALK_PIECES), st.sampled_from(HEADING_PIECES)), max_size=16)
       .map("".join))
def test_both_fast_routes_equal_the_parser(html):
    fast = search_index._fast_prose_text(html)
    assert fast is not None, html  # all of these pieces are of the plain form
    assert fast == prose_text_strict(html), html
    # The general loop must also agree on nested prose, which normally takes the fixed-text route.
    assert search_index._walk(*_texts_and_tokens(html)) == fast, html


def _texts_and_tokens(html: str) -> tuple[list[str], list]:
    pieces = search_index._cut(html)
    tokens = [search_index._token(source) for source in pieces[1::2]]
    texts = [unescape(text) for text in pieces[::2]]
    return texts, tokens


def test_a_formula_is_one_token_with_its_tex():
    inline, display = search_index._formula(MATHML[1]), search_index._formula(MATHML[2])
    assert inline.kind == search_index._TEX and inline.tex == "a/b < c&x"  # readable text, not the TeX
    assert display.kind == search_index._EMPTY and display.out == " … "
    html = "<p>Divide by " + MATHML[1] + " and " + MATHML[2] + "</p>"
    assert search_index._cut(html)[1::2] == ["<p>", MATHML[1], MATHML[2], "</p>"]
    assert prose_text(html) == prose_text_strict(html) == ("", "Divide by a/b < c&x and …")


@pytest.mark.parametrize("odd", [
    '<math display="inline"><mi title="a>b">x</mi></math>',  # not as tex_to_mathml writes it
    MATHML[0].replace("</annotation>", "</annotation><annotation>b</annotation>"),  # two annotations
    MATHML[0].replace("<mi>", "<p>", 1),  # a block inside: its space would be kept
    MATHML[0].replace("<mi>", "<math>", 1),  # a formula inside a formula
    MATHML[0].replace("<mi>", "<!-- </math> -->", 1),
    MATHML[0].replace('display="inline"', "display='inline'"),
    MATHML[0][:-len("</math>")],  # never closed
])
def test_a_formula_not_of_that_form_is_left_to_the_parser(odd):
    html = f"<p>a {odd} b</p>"
    assert search_index._fast_prose_text(html) is None
    assert prose_text(html) == prose_text_strict(html)


def test_mathml_outside_a_formula_is_read_by_the_parser(monkeypatch):
    # The stray `</mrow>` inside the formula closes the `<mrow>` opened before it, and the math
    # with it, so "z" is text; reading the formula as its TeX would drop it. The tag outside must
    # send this to the parser.
    html = ('<p><mrow>a <math display="inline"><semantics><annotation encoding="application/x-tex">'
            "x</annotation></mrow><mi>z</mi></semantics></math> b</mrow></p>")
    strict_calls = []
    monkeypatch.setattr(search_index, "prose_text_strict",
                        lambda h: strict_calls.append(h) or prose_text_strict(h))
    assert prose_text(html) == prose_text_strict(html) == ("", "a xz b")
    assert strict_calls == [html]
    plain_math = "<p>Divide by " + MATHML[1] + "</p>"
    assert prose_text(plain_math) == prose_text_strict(plain_math) and strict_calls == [html]


def test_the_projects_prose_gives_the_same_text():
    from labml_site.render.localize import localize
    from labml_site.typeset.page import analyse
    from labml_site.translate.catalog import Catalog

    sources = sorted((ROOT / "source").rglob("*.py"))
    if not sources:
        pytest.skip("no tutorial source in this checkout")
    langs = {p.name.split(".")[-2] for p in (ROOT / "translations").rglob("*.json")
             if not p.name.endswith((".fuzzy.json", ".stale.json"))}
    assert langs, "the tutorial has translations"
    formulas = fast = 0
    for path in sources:
        rel = path.relative_to(ROOT / "source").as_posix()
        data = analyse(rel, rel, path.read_text(encoding="utf-8"))
        for lang in ["en", *sorted(langs)]:
            catalog_path = ROOT / "translations" / f"{rel[:-3]}.{lang}.json"
            catalog = Catalog.load(catalog_path, lang) if lang != "en" else None
            for section in localize(data, lang, catalog, "Not yet translated").sections:
                html = section.prose_html
                strict = prose_text_strict(html)
                assert prose_text(html) == strict
                if search_index._fast_prose_text(html) is not None:
                    fast += 1
                    assert search_index._walk(*_texts_and_tokens(html)) == strict
                    formulas += html.count("<math")
    assert fast > 0 and formulas > 0  # the fast path was taken, formulas and all


# --------------------------------------------------------------------------------------------
# sanitize: one prebuilt cleaner equals a fresh nh3.clean per call


def reference_sanitize(html, *, allowed_urls=None, allowed_ids=None):
    """The sanitizer as it was written before the cleaner was prebuilt: nh3.clean per call."""
    s = sanitize_module
    urls = None if allowed_urls is None else {s.normalise_url(u) for u in allowed_urls}
    ids = None if allowed_ids is None else set(allowed_ids)

    def keep(tag, attr, value):
        if "<" in value or ">" in value:
            return None
        if attr in s.URL_ATTRIBUTES:
            if s.is_protocol_relative(value):
                return None
            if urls is not None and s.normalise_url(value) not in urls:
                return None
        if attr == "id" and ids is not None and value not in ids:
            return None
        return value

    cleaned = nh3.clean(
        s._C0.sub("", html),
        tags=set(s.ALLOWED_TAGS),
        clean_content_tags=set(s.DROP_WITH_CONTENT),
        attributes={tag: set(attrs) for tag, attrs in s.ALLOWED_ATTRIBUTES.items()},
        tag_attribute_values={
            "span": {"translate": set(s.SPAN_TRANSLATE_VALUES)},
            "th": {"align": set(s.CELL_ALIGN_VALUES)},
            "td": {"align": set(s.CELL_ALIGN_VALUES)},
        },
        url_schemes=set(s.URL_SCHEMES),
        attribute_filter=keep,
        strip_comments=True,
        link_rel="noopener noreferrer",
    )
    return cleaned.replace('<span translate="no">', "<span translate=no>")


def _assert_same_sanitized(html: str) -> None:
    for kwargs in ({}, {"allowed_urls": ENGLISH_URLS, "allowed_ids": ENGLISH_IDS},
                   {"allowed_urls": [], "allowed_ids": []}):
        assert sanitize(html, **kwargs) == reference_sanitize(html, **kwargs), (html, kwargs)


def test_sanitize_equals_a_fresh_cleaner_on_the_xss_vectors_and_fixtures():
    for fragment in _xss_fragments() + [v for pair in KEYS_AND_VALUES for v in pair]:
        _assert_same_sanitized(fragment)


def test_sanitize_without_a_prebuilt_cleaner_is_the_same(monkeypatch):
    # nh3 releases without `Cleaner`: nh3.clean per call, with the same options
    monkeypatch.setattr(sanitize_module, "_CLEANER", None)
    for fragment in _xss_fragments()[::5]:
        _assert_same_sanitized(fragment)


@SETTINGS
@given(fragments(plain_only=False))
def test_sanitize_equals_a_fresh_cleaner_on_any_html(html):
    _assert_same_sanitized(html)


def test_sanitize_keeps_each_threads_allowed_links_apart():
    results: dict[int, set[str]] = {}

    def work(n: int) -> None:
        mine = f"https://example.org/{n}"
        html = "".join(f'<a href="https://example.org/{i}">{i}</a>' for i in range(4))
        seen = set()
        for _ in range(200):
            seen.add(sanitize(html, allowed_urls=[mine]))
        results[n] = seen

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for n, outputs in results.items():
        assert len(outputs) == 1
        (out,) = outputs
        assert re.findall(r'href="([^"]+)"', out) == [f"https://example.org/{n}"]


# --------------------------------------------------------------------------------------------
# Entry checks on outlines: the built-in checks read `HtmlOutline`s (no positions, shared between
# fragments with the same tags, made by `_shape` from the regular expression tokenizer). The
# reference runs every check on outlines made from `html.parser`'s summaries instead.


class _StrictContext(checks.EntryContext):
    """Key and value read by `html.parser` alone."""

    @property
    def key_outline(self) -> html_outline.HtmlOutline:
        return html_outline._outline(summarize_html_strict(self.key))

    @property
    def value_outline(self) -> html_outline.HtmlOutline:
        return html_outline._outline(summarize_html_strict(self.value))

    @property
    def key_html(self) -> HtmlSummary:
        return summarize_html_strict(self.key)

    @property
    def value_html(self) -> HtmlSummary:
        return summarize_html_strict(self.value)


def assert_same_findings(key: str, value: str) -> list:
    found = checks.run_entry_checks(checks.EntryContext(key, value, "t.zh.json", 3, "zh"))
    assert found == checks.run_entry_checks(_StrictContext(key, value, "t.zh.json", 3, "zh")), (key, value)
    assert html_outline.outline_html(value) == html_outline._outline(summarize_html_strict(value)), value
    return found


@st.composite
def retranslated(draw, key_strategy) -> tuple[str, str]:
    """A key and a value with the key's tags (as a translation nearly always is), new texts in
    between, and now and then one tag added, dropped or changed."""
    key = draw(key_strategy)
    pieces = re.split(r"(<[^<>]*>)", key)
    for i in range(0, len(pieces), 2):
        pieces[i] = draw(st.sampled_from([pieces[i], *TEXTS, "翻译", " 译文 ", ""]))
    if draw(st.booleans()) and len(pieces) > 1:
        i = draw(st.integers(0, len(pieces) - 1))
        pieces[i] = draw(st.one_of(st.sampled_from(ODD_MARKUP + TEXTS + ["", "<p>", "</p>", "</a>"]),
                                   start_tag(PLAIN_NAMES, PLAIN_VALUES, PLAIN_SPACES, True)))
    return key, "".join(pieces)


@SETTINGS
@given(st.one_of(retranslated(fragments(plain_only=True)), retranslated(fragments(plain_only=False)),
                 st.tuples(fragments(plain_only=False), fragments(plain_only=False))))
def test_checks_on_outlines_equal_the_checks_on_summaries(pair):
    assert_same_findings(*pair)


def test_checks_on_outlines_find_the_same_in_fixtures_and_xss_vectors():
    found = []
    for key, value in KEYS_AND_VALUES:
        found += assert_same_findings(key, value)
    for _, payload in VECTORS + TEXT_ONLY:
        for _, key, value in carriers(payload):
            found += assert_same_findings(key, value)
    # the comparison covers findings of every kind, not just clean entries
    assert {"unsafe-tag", "unsafe-attribute", "unsafe-url", "link-changed"} <= {f.code for f in found}
    # a repeated attribute: reported once per occurrence by some checks, once in all by others
    evil = '<a href="javascript:alert(1)" onclick=x title="<b>">'
    repeated = assert_same_findings('<p><a href="x" title="<b>">a</a></p>', f"<p>{evil}a</a>{evil}b</a></p>")
    assert [f.code for f in repeated].count("unsafe-url") == 2
    assert [f.code for f in repeated].count("unsafe-attribute") == 1  # onclick, once for both


def test_checks_on_outlines_find_the_same_in_the_projects_translations():
    pairs = 0
    for path in sorted((ROOT / "translations").rglob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            continue
        for key, value in data.items():
            if isinstance(value, str):
                assert_same_findings(key, value)
                # a translation with the key's tags, and one with a tag changed
                assert_same_findings(key, key.replace("<p>", "<p>译", 1))
                assert_same_findings(key, key.replace("<p>", "<div>", 1))
                pairs += 1
    if pairs == 0:
        pytest.skip("no translations in this checkout")


def test_a_check_cannot_change_the_outline_another_language_shares():
    key, value = KEYS_AND_VALUES[1]
    first = checks.EntryContext(key, value, lang="zh")
    assert first.key_outline is checks.EntryContext(key, value, lang="ru").key_outline  # shared...
    with pytest.raises(AttributeError):
        first.key_outline.urls.append("https://evil.example")  # ...so immutable
    first.key_urls.append("https://evil.example")  # a plugin's own copy
    assert checks.EntryContext(key, value, lang="ru").key_urls == [
        "https://arxiv.org/abs/1706.03762", "softmax.html#scores"]
