"""The fast path of the repair's fragment readers (`translate/fast_html.py`) against html5lib:
where it answers, `units`, `top_blocks` and the key's top level are what html5lib gives; where
the HTML5 parser would change what is written, it does not answer."""
from __future__ import annotations

import pytest

from labml_site.translate import fast_html, repair

PH = "<span translate=no>_^_0_^_</span>"
PH1 = "<span translate=no>_^_1_^_</span>"

# Clean fragments: the fast path must answer, and agree with html5lib.
CLEAN = [
    "<p>Hello</p>\n",
    f"<p>With {PH} math</p>\n",
    f"{PH}\n<p>after a display formula</p>\n",
    "<h3>Title</h3>\n<p>text <a href=\"https://x.org/?a=1&amp;b=2\">link</a> more</p>\n",
    "<ul><li>one</li>\n<li>two <code>x</code></li></ul>\n",
    "<ol start=\"3\"><li><p>para</p><ul><li>nested</li></ul></li></ol>\n",
    "<p>a &gt; b &amp; c &lt; d, raw > too, \"quotes\" and 'single'</p>",
    "<p>non-breaking\xa0space, 中文, русский</p>",
    "<blockquote><p>quoted</p><p>two</p></blockquote>",
    "<div><p>in a div</p> text in the div</div>",
    "<p>line<br>break <img src=\"a.png\" alt=\"A\"> <em><strong>both</strong></em></p>",
    "<p>a</p>trailing text after a block",
    "leading text<p>then a block</p>",
    "plain text only",
    "<p><span translate=\"no\">_^_3_^_</span> quoted form</p>",
    "<p>x</p><hr><p>y</p>",
    "<p  class=\"a\"   id=\"b\" >spaced attributes</p>",
    f"<p>{PH}{PH1}</p>\n\n<p>two</p>\n",
    "<ul>\n<li>a</li>\n</ul>",
    "<p><a href=\"#x\"><code>code in a link</code></a></p>",
    "<h2>Heading <sub>1</sub><sup>2</sup></h2>",
]

# Fragments html5lib changes (or might): the fast path must fall back.
FALL_BACK = [
    "<p>a<p>b</p>",  # a paragraph in a paragraph is closed
    "<em><p>x</p></em>",  # a block inside an inline element
    "<p><a href=\"#\">a <a href=\"#\">b</a></a></p>",  # an <a> inside an <a>
    "<li>outside a list</li>",
    "<ul>text<li>x</li></ul>",
    "<p>&nbsp;entity</p>",
    "<p>&quot;entity&quot;</p>",
    "<p>AT&T</p>",
    "<p>a < b</p>",
    "<p>self-closing<br/></p>",
    "<P>upper case</P>",
    "<p id=\"a\" id=\"b\">duplicate</p>",
    "<p>carriage\r\nreturn</p>",
    "<pre>\ncode</pre>",
    "<table><tr><td>x</td></tr></table>",
    "<p>unclosed",
    "</p>stray end",
    "<p>x</em></p>",
    "<p>nul\x00</p>",
    "<p><!-- comment --></p>",
    "<p title='single'>quotes</p>",
    "<p title=\"a&b\">raw ampersand in an attribute</p>",
    "<p><math><mi>x</mi></math></p>",
    "<br></br>",
    "<p>\ud800 surrogate</p>",
]


def _slow(fragment: str, monkeypatch: pytest.MonkeyPatch):
    with monkeypatch.context() as m:
        m.setattr(fast_html, "tree", lambda _f: None)
        return repair.units(fragment), repair.top_blocks(fragment), repair._key_top_level(fragment)


@pytest.mark.parametrize("fragment", CLEAN)
def test_clean_fragments_take_the_fast_path_and_agree(fragment: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert fast_html.tree(fragment) is not None
    fast = repair.units(fragment), repair.top_blocks(fragment), repair._key_top_level(fragment)
    assert fast == _slow(fragment, monkeypatch)


@pytest.mark.parametrize("fragment", FALL_BACK)
def test_fragments_the_parser_changes_fall_back(fragment: str) -> None:
    assert fast_html.tree(fragment) is None


def test_the_shipped_translations_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "translations"
    taken = 0
    for path in sorted(root.rglob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for key, value in data.items():
            for fragment in (key, value):
                if not isinstance(fragment, str) or "<" not in fragment or fast_html.tree(fragment) is None:
                    continue
                taken += 1
                fast = repair.units(fragment), repair.top_blocks(fragment), repair._key_top_level(fragment)
                assert fast == _slow(fragment, monkeypatch), fragment
    assert taken > 50


def test_unit_pairs_and_repair_read_the_same_through_either_path(monkeypatch: pytest.MonkeyPatch) -> None:
    key = f"<p>One {PH}.</p>\n<ul><li>a</li>\n<li>b</li></ul>\n"
    value = f"<p>Один {PH}.</p>\n<ul><li>а</li>\n<li>б</li></ul>\n"
    fast = repair.unit_pairs(key, value), repair.repair_html(key, value + "<p>x</p>。")
    with monkeypatch.context() as m:
        m.setattr(fast_html, "tree", lambda _f: None)
        slow = repair.unit_pairs(key, value), repair.repair_html(key, value + "<p>x</p>。")
    assert fast == slow
    assert ("<li>a</li>", "<li>а</li>") in fast[0]
