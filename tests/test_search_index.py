"""The search index: plain text from prose, one index script per language, loadable without fetch."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from labml_site.builder.site import BuildConfig, build
from labml_site.render.localize import localize
from labml_site.typeset.page import analyse
from labml_site.read.prose import placeholder
from labml_site.render import search_index
from labml_site.render.search_index import Entry, entries, index_js, parse_index_js, prose_text, prose_text_strict, rows

from conftest import write_json, write_tree

PAGE = '''"""
---
title: Scaled scores
summary: How scores are scaled.
---

# Scaled scores

We divide by $\\sqrt{d_k}$ before the softmax.
"""

import math


def scale(scores, d_k):
    """
    ## Scaling

    Divide `scores` once.

    $$y = \\frac{x}{\\sqrt{d_k}}$$
    """
    return scores / math.sqrt(d_k)
'''


def test_prose_text_keeps_words_code_and_inline_math_as_text_and_drops_markers():
    html = (
        '<div class="untranslated" lang="en"><span class="untranslated-marker">尚未翻译</span>'
        "<h2>Heading <code>x</code></h2><p>Divide by <math display=\"inline\"><semantics><mi>d</mi>"
        '<annotation encoding="application/x-tex">\\sqrt{d_k}</annotation></semantics></math> now.<br/>Next'
        '<math display="block"><mi>y</mi><annotation encoding="application/x-tex">y = x</annotation></math>'
        '</p><img src="f.svg" alt="A figure"><mspace width="1em"/><p>after</p></div>'
    )
    heading, text = prose_text(html)
    assert heading == "Heading x"
    assert "尚未翻译" not in text
    assert "Divide by √dₖ now." in text  # inline math as readable text, never TeX
    assert "y = x" not in text and "…" in text  # display math is not indexed
    assert "A figure" in text and text.endswith("after")


def test_index_text_of_a_page_with_math_has_readable_math_and_no_tex_or_mathml():
    page = localize(analyse("toy/page.py", "toy/page.html", PAGE), "en", None, "Not yet translated")
    assert all("<math" in s.prose_html and "<mrow>" in s.prose_html for s in page.sections if s.has_prose)
    found = entries({"toy/page.py": page}, {"toy/page.py": "toy/page.html"})
    texts = {e.section: e.text for e in found}
    assert texts["scaled-scores"] == "We divide by √dₖ before the softmax."
    assert texts["scale"] == "Divide scores once. …"  # display math: a gap, not its letters
    names = re.compile(r"\b(?:math|semantics|annotation|mrow|mi|mo|mn|msub|msup|msqrt|mfrac)\b")
    for entry in found:
        assert "<" not in entry.text and not names.search(entry.text), entry.text
        assert "MathML" not in entry.text and "x-tex" not in entry.text


def test_stray_end_tags_do_not_lose_text():
    assert prose_text("<p>one</span> two</p></div><p>three</p>")[1] == "one two three"


@pytest.mark.parametrize("html, expected", [
    # The heading is the first one with text; a display formula is not part of it, inline TeX is.
    ('<h2></h2><p>a</p><h3>Real <math xmlns="http://www.w3.org/1998/Math/MathML" display="inline">'
     '<semantics><mi>α</mi><annotation encoding="application/x-tex">\\alpha</annotation></semantics>'
     "</math></h3><h2>Later</h2>", ("Real α", "a Real α Later")),
    # An end tag that closes the heading's parent closes the heading too.
    ("<div><h2>Title</div>more</h2> text", ("Title", "Title more text")),
    ("<h2>Open heading <p>never closed", ("", "Open heading never closed")),
    ("<h2>A<br>B</h2>", ("AB", "A B")),  # a line break parts the words of the text only
    ('<div class="untranslated"><span class="untranslated-marker">Not yet</span><h2>Head</h2>'
     "<p>Body</p></div>", ("Head", "Head Body")),
    ("<ul><li>a<li>b</ul>c", ("", "a b c")),
    ("<p>x &amp; y &lt;z&gt;</p>", ("", "x & y <z>")),
    ('<p>see <img src="a.png" alt="a plot"> here</p>', ("", "see a plot here")),
    ('<p><span class="section-link"><img alt="skipped"> gone</span>kept</p>', ("", "kept")),
])
def test_prose_text_reads_headings_blocks_and_skipped_content(html, expected):
    assert prose_text(html) == expected
    assert prose_text_strict(html) == expected  # the parser-driven reference agrees


def test_index_js_assigns_a_global_and_round_trips():
    entries = [
        Entry("Title", "a/b.html", "", "", "summary"),
        Entry("Title", "a/b.html", "sec", "Heading", "text </script><script>alert(1)</script> \u2028", ("f",)),
    ]
    js = index_js("zh", entries)
    assert js.startswith("window.labmlSearchIndex=") and "</script>" not in js and "\u2028" not in js
    data = parse_index_js(js)
    assert data["lang"] == "zh" and data["titles"] == ["Title"]  # titles stored once
    assert data["entries"][1] == [0, "a/b.html", "sec", "Heading", "text </script><script>alert(1)</script> \u2028", ["f"]]


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node to evaluate the script")
def test_index_js_is_a_script_that_defines_the_index():
    js = index_js("ru", [Entry("Ёлка", "x.html", "s", "Заголовок", 'кавычки " и \\ обратная', ("f",))])
    out = subprocess.run(
        ["node", "-e", "global.window = {};" + js + "process.stdout.write(JSON.stringify(window.labmlSearchIndex))"],
        capture_output=True, text=True, check=True, timeout=30,
    )
    assert json.loads(out.stdout)["entries"][0][4] == 'кавычки " и \\ обратная'


def test_build_writes_an_index_per_language_in_that_language(tmp_path):
    src = write_tree(tmp_path / "src", {"toy/page.py": PAGE})
    tr = tmp_path / "tr"
    write_json(tr / "toy/page.zh.json", {
        "Scaled scores": "缩放分数",
        "<h1>Scaled scores</h1>\n<p>We divide by " + placeholder(0) + " before the softmax.</p>\n":
            "<h1>缩放分数</h1>\n<p>在 softmax 之前除以" + placeholder(0) + "。</p>\n",
    })
    site = build(BuildConfig(src, tr, tmp_path / "site")).out
    en = parse_index_js((site / "search-index.js").read_text(encoding="utf-8"))
    zh = parse_index_js((site / "zh/search-index.js").read_text(encoding="utf-8"))
    assert en["lang"] == "en" and zh["lang"] == "zh"
    assert "Scaled scores" in en["titles"] and "缩放分数" in zh["titles"]
    en_rows = {(r[1], r[2]): r for r in en["entries"]}
    zh_rows = {(r[1], r[2]): r for r in zh["entries"]}
    # URLs are relative to the language root and the same in every language.
    assert set(en_rows) == set(zh_rows)
    first = next(k for k in en_rows if k[1] and k[0] == "toy/page.html")
    assert "before the softmax" in en_rows[first][4]
    assert "在 softmax 之前除以" in zh_rows[first][4] and "√dₖ" in zh_rows[first][4] and "\\sqrt" not in zh_rows[first][4]
    scaling = next(r for r in en["entries"] if r[3] == "Scaling")
    assert scaling[5] == ["scale"] and "Divide scores once." in scaling[4]
    assert not scaling[4].startswith("Scaling")  # the heading is the title, not repeated in text
    # Untranslated sections are indexed in English in the Chinese index (that is what the page shows).
    assert any(r[3] == "Scaling" for r in zh["entries"])
    # The search page exists in each language, works without fetch, and says JS is needed without it.
    for prefix in ("", "zh/", "ru/"):
        html = (site / prefix / "search.html").read_text(encoding="utf-8")
        assert 'id="search-page-results"' in html and "<noscript>" in html
    assert "搜索需要 JavaScript" in (site / "zh/search.html").read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------------
# rows: the JSON of each entry, written with the string encoder json.dumps uses


def _reference_rows(entries: list[Entry]) -> str:
    return ",".join("[\x00," + search_index._inert_json([e.url, e.section, e.heading, e.text, list(e.names)])[1:] for e in entries)


ROW_TEXT = st.lists(st.sampled_from(list("ab <>/\"\\&\n\t\u2028\u2029\x00\x1f中é😀") + ["</", "</script>"]), max_size=12).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.builds(Entry, ROW_TEXT, ROW_TEXT, ROW_TEXT, ROW_TEXT, ROW_TEXT, st.lists(ROW_TEXT, max_size=3).map(tuple)), max_size=4))
def test_rows_are_the_json_of_each_entry(entries):
    assert rows(entries) == _reference_rows(entries)


def test_rows_of_entries_with_fields_that_are_not_strings_are_still_json():
    entries = [Entry("t", "u.html", "s", None, "text", ("f",))]  # type: ignore[arg-type]
    assert rows(entries) == _reference_rows(entries)
    assert json.loads("[" + rows(entries).replace("\x00", "0") + "]")[0][3] is None
