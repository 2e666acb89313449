"""The vocabulary of prose markup (`read/markup.py`): the placeholder and its pattern, the block
tags and how a key is cut into blocks, what a translation may hold, and the generated
`markup.js` the workbench's JavaScript reads, which must be what the module makes."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from labml_site.read import markup
from labml_site.read.markup import (
    BLOCK_TAGS,
    PLACEHOLDER_RE,
    canonical_placeholders,
    placeholder,
    placeholder_numbers,
    unit_kind,
)
from labml_site.translate import repair
from labml_site.translate.html_outline import summarize_html
from labml_site.translate.sanitize import sanitize

KEY = (
    "<h2>Scores</h2>\n<p>Divide " + placeholder(0) + " by " + placeholder(1) + ".</p>\n"
    + placeholder(2) + "<ul><li>one</li>\n<li>two</li></ul>\n"
)


def test_the_placeholder_is_the_key_format_byte_for_byte():
    assert placeholder(12) == "<span translate=no>_^_12_^_</span>"
    assert placeholder_numbers(KEY) == [0, 1, 2]
    assert [m.group(1) for m in PLACEHOLDER_RE.finditer(KEY)] == ["0", "1", "2"]
    # serialisers quote the attribute; the canonical form is the bare one every key has
    assert canonical_placeholders('<span translate="no">_^_3_^_</span>') == placeholder(3)
    assert markup.PLACEHOLDER_LENIENT_RE.fullmatch("<span  translate = 'no' >_^_4_^_</span >").group(1) == "4"


def test_a_key_is_cut_into_blocks_and_placeholders_between_them():
    assert unit_kind("p", []) == "block" and unit_kind("h3", []) == "block" and unit_kind("ul", []) == "block"
    assert unit_kind("span", [("translate", "no")]) == "placeholder"
    assert unit_kind("em", []) is None and unit_kind("span", []) is None
    # the checks' summary and the repair's units cut by the same rule
    assert summarize_html(KEY).top_blocks == ["h2", "p", "placeholder", "ul"]
    assert [u[0] for u in repair.units(KEY)] == ["h2", "p", "placeholder", "ul"]
    for tag in sorted(BLOCK_TAGS - {"hr"}):
        inner = "<tr><td>x</td></tr>" if tag == "table" else "x"  # text in a table moves out of it
        fragment = f"<{tag}>{inner}</{tag}>\n<p>y</p>\n"
        assert summarize_html(fragment).top_blocks == [tag, "p"], tag
        assert [u[0] for u in repair.units(fragment)] == [tag, "p"], tag


def test_checker_and_repairer_agree_on_every_block_tag():
    """They disagreed before there was one definition: a top-level <figure> was a block to the
    checks and content outside blocks to the repair, which then moved it into the block before."""
    key = "<p>a</p>\n<figure>b</figure>\n"
    assert summarize_html(key).top_blocks == ["p", "figure"] and not summarize_html(key).outside_content
    assert repair.top_blocks(key) == [("p", "<p>a</p>"), ("figure", "<figure>b</figure>")]


def test_the_sanitiser_keeps_exactly_the_allowed_tags():
    table = "<table><thead><tr><th>x</th></tr></thead><tbody><tr><td>x</td></tr></tbody></table>"
    for tag in sorted(markup.ALLOWED_TAGS - markup.VOID_TAGS):
        fragment = table if tag in ("table", "thead", "tbody", "tr", "th", "td") else f"<{tag}>x</{tag}>"
        assert f"<{tag}" in sanitize(fragment), tag
    for tag in ("div", "pre", "img", "figure", "section"):
        assert f"<{tag}" not in sanitize(f"<{tag}>x</{tag}>"), tag
    assert sanitize(placeholder(0)) == placeholder(0)


def test_generated_javascript_is_served_to_the_editor(tmp_path):
    """The workbench serves markup.js made from the module on each request: there is no copy of
    the vocabulary to go stale. Its pages load it before the editor."""
    from labml_site.workbench import server

    assert server._static("markup.js") == markup.javascript().encode("utf-8")
    page = server._with_editor(b"<html><head></head><body></body></html>", "t", "a.html").decode()
    assert page.index("static/markup.js") < page.index("static/editor.js")
    editor = server._static("editor.js").decode("utf-8")
    assert "labmlMarkup" in editor and "_^_" not in editor


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_generated_javascript_means_what_the_module_does(tmp_path):
    script = tmp_path / "check.js"
    text = "ok " + placeholder(0) + " and " + placeholder(17) + " but not <span translate=no>_^_x_^_</span>"
    script.write_text(
        "var window = {};\n" + markup.javascript()
        + "var m = window.labmlMarkup, found = [], r = m.placeholder.regExp(), x;\n"
        + f"while ((x = r.exec({json.dumps(text)})) !== null) found.push(+x[1]);\n"
        + "console.log(JSON.stringify({make: m.placeholder.make(5), found: found, blocks: m.blockTags, frozen: Object.isFrozen(m)}));\n",
        encoding="utf-8",
    )
    out = json.loads(subprocess.run(["node", str(script)], capture_output=True, text=True, check=True, timeout=60).stdout)
    assert out == {"make": placeholder(5), "found": placeholder_numbers(text), "blocks": sorted(BLOCK_TAGS), "frozen": True}
