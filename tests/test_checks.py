"""The translation checks: file-level (encoding, JSON, keys) and entry-level (placeholders, HTML,
unsafe content, warnings), and the check registry."""
from __future__ import annotations

import json

import pytest

from labml_site.translate import checks
from labml_site.translate import html_outline
from labml_site.translate.checks import (
    check_entry,
    entry_check,
    registered_checks,
    unregister,
)
from labml_site.translate.files import parse_translation_bytes
from labml_site.findings import Finding
from labml_site.translate.catalog import check_file

# Fixtures written for these tests (an attention tutorial's blocks, in the real key format).
HEADING_KEY = (
    "<h2>Scaled dot-product attention</h2>\n"
    "<p>Each query is compared with every key by <span translate=no>_^_0_^_</span> and divided "
    "by <span translate=no>_^_1_^_</span>.</p>\n"
)
HEADING_ZH = (
    "<h2>缩放点积注意力</h2>\n"
    "<p>每个查询通过<span translate=no>_^_0_^_</span>与所有键比较，再除以"
    "<span translate=no>_^_1_^_</span>。</p>\n"
)
HEADING_RU_REORDERED = (
    "<h2>Масштабированное скалярное внимание</h2>\n"
    "<p>Делим на <span translate=no>_^_1_^_</span> результат <span translate=no>_^_0_^_</span> "
    "для каждого запроса.</p>\n"
)
LINK_KEY = (
    '<p>Read <a href="https://arxiv.org/abs/1706.03762">the paper</a> or the '
    '<a href="softmax.html">softmax notes</a>.</p>\n'
)
LINK_ZH = (
    '<p>阅读<a href="https://arxiv.org/abs/1706.03762">论文</a>或'
    '<a href="softmax.html">softmax 笔记</a>。</p>\n'
)
ANCHOR_KEY = '<p> <a id="heads"></a></p>\n<h3>Splitting into heads</h3>\n'
ANCHOR_ZH = '<p><a id="heads"></a></p>\n<h3>拆分为多个头</h3>\n'
TITLE_KEY = "Annotated multi-head attention"
TITLE_ZH = "多头注意力详解"
LIST_KEY = (
    "<ul><li><span translate=no>_^_0_^_</span> is the batch size.</li>\n"
    "<li><span translate=no>_^_1_^_</span> is the number of heads.</li></ul>\n"
)
LIST_ZH = (
    "<ul><li><span translate=no>_^_0_^_</span>是批大小。</li>\n"
    "<li><span translate=no>_^_1_^_</span>是头的数量。</li></ul>\n"
)


def codes(findings: list[Finding], severity: str | None = None) -> list[str]:
    return [f.code for f in findings if severity is None or f.severity == severity]


def errors(key: str, value: str) -> list[str]:
    return codes(check_entry(key, value), "error")


def warnings(key: str, value: str) -> list[str]:
    return codes(check_entry(key, value), "warning")


# --------------------------------------------------------------------------------------------
# Good translations pass


@pytest.mark.parametrize(
    "key, value",
    [
        (HEADING_KEY, HEADING_ZH),
        (HEADING_KEY, HEADING_RU_REORDERED),  # placeholders may be reordered
        (LINK_KEY, LINK_ZH),
        (ANCHOR_KEY, ANCHOR_ZH),
        (TITLE_KEY, TITLE_ZH),
        (LIST_KEY, LIST_ZH),
        ("<p>Dropout </p>\n", "<p>Dropout</p>\n"),  # one word may legitimately stay English
        # quoted attribute: equivalent HTML, which machine translation tends to produce
        (HEADING_KEY, HEADING_ZH.replace("translate=no", 'translate="no"')),
    ],
)
def test_valid_translations_have_no_findings(key, value):
    assert check_entry(key, value) == []


# --------------------------------------------------------------------------------------------
# Placeholders


def test_url_encoded_placeholder_is_an_error_naming_the_fix():
    for encoded in ("_%5e_0_%5e_", "_%5E_0_%5E_", "_&#94;_0_&#94;_"):
        value = HEADING_ZH.replace("_^_0_^_", encoded)
        found = check_entry(HEADING_KEY, value)
        assert codes(found, "error") == ["placeholder-encoded"], encoded
        assert "<span translate=no>_^_0_^_</span>" in found[0].message


@pytest.mark.parametrize(
    "damage",
    [
        "<span translate=no>_^_ 0 _^_</span>",  # spaces inside
        "_^_0_^_",  # taken out of its span
        "<span>_^_0_^_</span>",  # span attribute dropped
        "<span translate=no>＿＾＿0＿＾＿</span>",  # full-width characters from an IME
    ],
)
def test_altered_placeholder_is_an_error(damage):
    value = HEADING_ZH.replace("<span translate=no>_^_0_^_</span>", damage)
    assert errors(HEADING_KEY, value) == ["placeholder-altered"]


def test_emptied_placeholder_span_is_altered_and_names_the_missing_one():
    value = HEADING_ZH.replace("_^_0_^_", "")
    found = check_entry(HEADING_KEY, value)
    assert codes(found) == ["placeholder-altered", "placeholder-missing"]
    assert "placeholder 0" in found[1].message


def test_missing_duplicated_and_extra_placeholders():
    p0, p1 = "<span translate=no>_^_0_^_</span>", "<span translate=no>_^_1_^_</span>"
    assert errors(HEADING_KEY, HEADING_ZH.replace(p1, "")) == ["placeholder-missing"]
    assert errors(HEADING_KEY, HEADING_ZH.replace(p1, p0)) == [
        "placeholder-missing", "placeholder-duplicated"
    ]
    extra = HEADING_ZH.replace("。</p>", "<span translate=no>_^_7_^_</span>。</p>")
    found = check_entry(HEADING_KEY, extra)
    assert codes(found) == ["placeholder-extra"]
    assert "7" in found[0].message


def test_caret_arithmetic_in_prose_is_not_a_placeholder():
    assert check_entry("<p>Powers like 2^3^4 grow fast.</p>\n", "<p>像 2^3^4 这样的幂增长很快。</p>\n") == []


# --------------------------------------------------------------------------------------------
# HTML shape


def test_stray_end_tag_is_an_error_with_its_position():
    value = HEADING_ZH.replace("<p>", "</a><p>")
    found = check_entry(HEADING_KEY, value)
    assert codes(found) == ["html-unbalanced"]
    assert "</a>" in found[0].message and "line 2" in found[0].message


def test_unclosed_and_misnested_tags():
    assert errors(LINK_KEY, LINK_ZH.replace("论文</a>", "论文")) == ["html-unbalanced"]
    key = "<p>This is <em>very <strong>important</strong></em>.</p>\n"
    assert errors(key, "<p>这<em>非常<strong>重要</em></strong>。</p>\n") == [
        "html-unbalanced", "html-unbalanced"
    ]


def test_unbalanced_english_does_not_make_translation_invalid():
    key = "<p>Broken <em>English</p>\n"
    assert "html-unbalanced" not in errors(key, "<p>损坏的<em>英文</p>\n")


def test_block_structure_must_match_english():
    merged = "<p>缩放点积注意力。每个查询通过<span translate=no>_^_0_^_</span>与所有键比较，再除以<span translate=no>_^_1_^_</span>。</p>\n"
    found = check_entry(HEADING_KEY, merged)
    assert codes(found) == ["html-structure"]
    assert "h2 p" in found[0].message
    swapped = HEADING_ZH.replace("<h2>", "<h3>").replace("</h2>", "</h3>")
    assert errors(HEADING_KEY, swapped) == ["html-structure"]


def test_text_outside_blocks_is_an_error_only_when_english_has_none():
    assert errors(HEADING_KEY, HEADING_ZH + "多余的文字") == ["html-outside-block"]
    key = "<p>First</p>\nloose English text"
    assert "html-outside-block" not in errors(key, "<p>第一</p>\n松散的文字")


def test_plain_text_keys_must_stay_plain():
    assert sorted(errors(TITLE_KEY, "<b>多头注意力</b>")) == ["html-in-plain-text", "unsafe-tag"]
    assert errors(TITLE_KEY, "<em>多头注意力</em>") == ["html-in-plain-text"]


# --------------------------------------------------------------------------------------------
# Unsafe content


def test_tags_outside_allowlist():
    value = HEADING_ZH.replace("</p>", "<iframe src=x></iframe></p>")
    found = check_entry(HEADING_KEY, value)
    assert "unsafe-tag" in codes(found)
    assert "<iframe>" in [f for f in found if f.code == "unsafe-tag"][0].message


@pytest.mark.parametrize("attr", ["onclick=alert(1)", 'style="color:red"', "class=x", "ONLOAD=x"])
def test_attributes_outside_allowlist(attr):
    value = HEADING_ZH.replace("<p>", f"<p {attr}>")
    assert errors(HEADING_KEY, value) == ["unsafe-attribute"]


def test_span_translate_other_than_no_is_not_allowed():
    value = HEADING_ZH.replace("再除以", '再<span translate="yes">除以</span>')
    assert errors(HEADING_KEY, value) == ["unsafe-attribute"]


@pytest.mark.parametrize(
    "href",
    ["javascript:alert(1)", "JaVaScRiPt:alert(1)", "&#106;avascript:alert(1)",
     "java&#x09;script:alert(1)", " \x01javascript:alert(1)", "vbscript:x", "data:text/html,x",
     "ftp://example.org/"],
)
def test_dangerous_url_schemes(href):
    value = LINK_ZH.replace("softmax.html", href)
    found = errors(LINK_KEY, value)
    assert "unsafe-url" in found and "link-changed" in found


def test_changed_or_added_links_are_errors_missing_ones_warnings():
    assert errors(LINK_KEY, LINK_ZH.replace("softmax.html", "https://evil.example/")) == [
        "link-changed"
    ]
    dropped = '<p>阅读<a href="https://arxiv.org/abs/1706.03762">论文</a>或 softmax 笔记。</p>\n'
    assert check_entry(LINK_KEY, dropped) and errors(LINK_KEY, dropped) == []
    assert warnings(LINK_KEY, dropped) == ["link-missing"]
    # entity-encoded but identical target: fine
    assert errors(LINK_KEY, LINK_ZH.replace("softmax.html", "softmax&#46;html")) == []


def test_adding_an_anchor_element_is_an_error():
    value = LINK_ZH.replace("。</p>", '<a title="x">。</a></p>')
    assert errors(LINK_KEY, value) == ["link-added"]


def test_markup_inside_an_allowed_attribute_is_an_error():
    value = LINK_ZH.replace('<a href="softmax.html">', '<a href="softmax.html" title="<img>">')
    assert errors(LINK_KEY, value) == ["unsafe-attribute"]


def test_ids_must_be_the_englishs():
    assert errors(ANCHOR_KEY, ANCHOR_ZH.replace("heads", "toString")) == ["id-changed"]
    assert warnings(ANCHOR_KEY, "<p></p>\n<h3>拆分为多个头</h3>\n") == ["id-missing"]


def test_comments_and_declarations_are_errors():
    for markup in ("<!-- note -->", "<!DOCTYPE html>", "<?php echo 1 ?>"):
        value = HEADING_ZH.replace("。</p>", f"。{markup}</p>")
        assert errors(HEADING_KEY, value) == ["unsafe-markup"], markup


# --------------------------------------------------------------------------------------------
# Warnings


def test_value_identical_to_english_warns_for_real_text_only():
    assert warnings(HEADING_KEY, HEADING_KEY) == ["untranslated"]
    assert warnings("<p>PyTorch</p>\n", "<p>PyTorch</p>\n") == []
    assert errors(HEADING_KEY, HEADING_KEY) == []


def test_empty_value_is_untranslated_never_an_error(tmp_path):
    """An empty value is "not translated yet" for every tool (its verdict: untranslated); `check`
    lists it as a warning and nothing else, also right after `extract` wrote it."""
    from labml_site.translate.verdict import judge

    for empty in ("", "  \n"):
        assert judge(HEADING_KEY, empty).state == "untranslated" and judge(HEADING_KEY, empty).findings == ()
        path = tmp_path / "p.zh.json"
        path.write_text(json.dumps({HEADING_KEY: empty, TITLE_KEY: ""}), "utf-8")
        assert [(f.severity, f.code) for f in check_file(path, "zh", {HEADING_KEY, TITLE_KEY})] == [("warning", "empty-value")] * 2


def test_edge_whitespace_and_control_characters_warn():
    assert warnings(HEADING_KEY, HEADING_ZH.rstrip("\n")) == ["whitespace-differs"]
    assert warnings(TITLE_KEY, " " + TITLE_ZH) == ["whitespace-differs"]
    found = check_entry(TITLE_KEY, TITLE_ZH.replace("注意", "注\u202e意"))
    assert codes(found) == ["control-chars"] and "U+202E" in found[0].message
    # a control character the English has too is not the translator's doing
    assert check_entry("A\x07B title", "甲\x07乙 标题") == []


def test_lone_surrogate_is_an_error():
    assert errors(TITLE_KEY, "多头\udcff注意力") == ["bad-characters"]


# --------------------------------------------------------------------------------------------
# File checks


def test_syntax_error_points_at_line_and_column():
    text = '{\n "a": "甲",\n "b" "乙"\n}\n'
    parsed = parse_translation_bytes(text.encode(), "t.zh.json")
    assert parsed.syntax_error is not None
    message, line, col = parsed.syntax_error
    assert (line, col) == (3, 6) and "':'" in message


@pytest.mark.parametrize(
    "text, where",
    [
        ('{\n "a": "x" \n "b": "y"\n}', (3, 2)),  # missing comma
        ('{\n "a": "say "hi""\n}', (2, 13)),  # unescaped quote
        ('{\n "a": "x",\n}', (3, 1)),  # trailing comma
        ('{"a": "x"} {}', (1, 12)),  # extra data
        ("", (1, 1)),  # empty file
    ],
)
def test_syntax_errors(tmp_path, text, where):
    path = tmp_path / "p.zh.json"
    path.write_text(text, encoding="utf-8")
    found = check_file(path, "zh")
    assert codes(found) == ["json-syntax"]
    assert (found[0].line, found[0].col) == where
    assert found[0].path == str(path)


def test_key_lines_are_tracked_in_both_styles():
    ascii_indent_1 = json.dumps({"a": "甲", "b\nc": "乙", "d": "丙"}, indent=1)
    parsed = parse_translation_bytes(ascii_indent_1.encode())
    assert [(p.key, p.line) for p in parsed.pairs] == [("a", 2), ("b\nc", 3), ("d", 4)]
    compact = '{"a": "甲",\n\n  "d": "丙"}'
    assert [(p.key, p.line, p.col) for p in parse_translation_bytes(compact.encode()).pairs] == [
        ("a", 1, 2), ("d", 3, 3)
    ]


def test_bom_is_an_error_but_content_is_read(tmp_path):
    path = tmp_path / "p.zh.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({TITLE_KEY: TITLE_ZH}).encode())
    assert codes(check_file(path, "zh")) == ["bom"]
    assert parse_translation_bytes(path.read_bytes()).pairs[0].value == TITLE_ZH


def test_non_utf8_bytes_are_located(tmp_path):
    path = tmp_path / "p.zh.json"
    path.write_bytes(b'{\n "a": "ok",\n "b": "caf\xe9"\n}\n')
    found = check_file(path, "zh")
    assert codes(found) == ["bad-characters", "not-utf8"]  # sorted by line, then column
    assert (found[1].line, found[1].col) == (3, 11)
    assert found[0].key == "b"
    utf16 = tmp_path / "q.zh.json"
    utf16.write_bytes('{"a": "b"}'.encode("utf-16"))
    assert "not-utf8" in codes(check_file(utf16, "zh"))


def test_top_level_must_be_an_object(tmp_path):
    path = tmp_path / "p.zh.json"
    path.write_text('["a", "b"]', encoding="utf-8")
    found = check_file(path, "zh")
    assert codes(found) == ["not-an-object"] and "list" in found[0].message


def test_duplicate_keys(tmp_path):
    path = tmp_path / "p.zh.json"
    path.write_text('{\n "a": "x",\n "b": "y",\n "a": "x",\n "b": "z"\n}', encoding="utf-8")
    found = check_file(path, "zh")
    assert [(f.severity, f.code, f.line) for f in found] == [
        ("warning", "duplicate-key", 4),
        ("error", "duplicate-key", 5),
    ]
    assert "line 3" in found[1].message


def test_non_string_values(tmp_path):
    path = tmp_path / "p.zh.json"
    path.write_text('{\n "a": null,\n "b": 3,\n "c": ["x"],\n "d": "ok"\n}', encoding="utf-8")
    found = check_file(path, "zh")
    assert [(f.code, f.line) for f in found] == [
        ("not-a-string", 2), ("not-a-string", 3), ("not-a-string", 4)
    ]


def test_check_file_runs_entry_checks_with_file_lines(tmp_path):
    path = tmp_path / "p.zh.json"
    data = {HEADING_KEY: HEADING_ZH, LINK_KEY: LINK_ZH.replace("softmax.html", "//evil.example")}
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    found = check_file(path, "zh")
    assert [(f.severity, f.code, f.line) for f in found] == [
        ("error", "link-changed", 3), ("warning", "link-missing", 3)
    ]
    assert found[0].key == LINK_KEY
    text = found[0].format()
    assert text.startswith(f"{path}:3: error:") and "key: <p>Read <a href=" in text


def test_stale_keys_warn_and_are_not_checked_further(tmp_path):
    path = tmp_path / "p.zh.json"
    gone = "<p>An old paragraph</p>\n"
    path.write_text(json.dumps({gone: "<p>坏的</a></p>\n", TITLE_KEY: TITLE_ZH}, indent=1), "utf-8")
    found = check_file(path, "zh", english_keys={TITLE_KEY})
    assert [(f.severity, f.code, f.line) for f in found] == [("warning", "stale-key", 2)]
    assert "extract --lang zh" in found[0].message
    # without the key set nothing is stale, and the broken value is reported
    assert codes(check_file(path, "zh")) == ["repaired"]  # a stray tag: repaired, with a warning


def test_missing_file_has_no_findings(tmp_path):
    assert check_file(tmp_path / "nope.zh.json", "zh") == []


def test_malformed_fuzzy_sidecar_is_reported(tmp_path):
    (tmp_path / "p.zh.json").write_text("{}", encoding="utf-8")
    (tmp_path / "p.zh.fuzzy.json").write_text('{"k": "not an object"}', encoding="utf-8")
    found = check_file(tmp_path / "p.zh.json", "zh")
    assert codes(found) == ["fuzzy-malformed"]
    assert found[0].path.endswith("p.zh.fuzzy.json")


# --------------------------------------------------------------------------------------------
# Registry


def test_a_new_check_is_one_decorated_function():
    @entry_check("no-exclamation")
    def check_no_exclamation(ctx):
        if "!" in ctx.value:
            yield ctx.warning("no-exclamation", "avoid exclamation marks")

    try:
        assert "check_no_exclamation" in [c.name for c in registered_checks("entry")]
        assert codes(check_entry(TITLE_KEY, TITLE_ZH + "!")) == ["no-exclamation"]
        assert check_entry(TITLE_KEY, TITLE_ZH) == []
    finally:
        unregister("check_no_exclamation")
    assert check_entry(TITLE_KEY, TITLE_ZH + "!") == []


def test_registry_covers_the_documented_checks():
    # ("empty-value" and "stale-key" are no checks of a value: they name the verdict's state)
    emitted = {code for c in registered_checks() for code in c.codes}
    required = {
        "json-syntax", "duplicate-key", "bom", "not-utf8", "not-a-string", "not-an-object",
        "placeholder-missing", "placeholder-duplicated", "placeholder-extra",
        "placeholder-altered", "placeholder-encoded", "html-unbalanced", "html-structure",
        "html-outside-block", "unsafe-tag", "unsafe-attribute", "unsafe-url", "link-changed",
        "untranslated", "whitespace-differs", "control-chars",
    }
    assert required <= emitted
    assert all(c.scope in ("file", "entry") for c in registered_checks())


def test_findings_name_path_line_and_key():
    found = check_entry(HEADING_KEY, HEADING_ZH.replace("<p>", "</a><p>"), path="t/x.zh.json", line=7)
    assert (found[0].path, found[0].line, found[0].key) == ("t/x.zh.json", 7, HEADING_KEY)


def test_unicode_edge_whitespace_counts_as_whitespace():
    # the ideographic space a Chinese IME types, and a no-break space
    assert warnings(HEADING_KEY, "\u3000" + HEADING_ZH) == ["whitespace-differs"]
    assert warnings(TITLE_KEY, TITLE_ZH + "\xa0") == ["whitespace-differs"]
    assert warnings(HEADING_KEY, HEADING_ZH) == []


def test_a_key_checked_again_gives_the_same_findings():
    # key summaries are remembered across entries (each key comes back in every language)
    bad = HEADING_ZH.replace("<p>", "<p><!-- x -->")
    first = check_entry(HEADING_KEY, bad)
    assert codes(first) == ["unsafe-markup"]
    assert check_entry(HEADING_KEY, HEADING_ZH) == []
    assert check_entry(HEADING_KEY, bad) == first


def test_parser_never_raises_on_garbage():
    for data in (b"\x00\xff{", b"{" * 50, b'{"a": {"b": [1, 2, {"c": nul', b"\xef\xbb\xbf", b"}"):
        parsed = parse_translation_bytes(data)
        assert not parsed.usable or parsed.pairs == []
    assert html_outline.summarize_html("<a <b <<p>>").failed == ""


# --------------------------------------------------------------------------------------------
# Markup the prose format (or raw HTML in the source) puts in the English


def test_block_placeholders_between_paragraphs_keep_their_place():
    key = "<p>Run this:</p>\n<span translate=no>_^_0_^_</span>\n<p>Then check the shape.</p>\n"
    good = "<p>运行：</p>\n<span translate=no>_^_0_^_</span>\n<p>然后检查形状。</p>\n"
    assert check_entry(key, good) == []
    moved = "<p>运行：<span translate=no>_^_0_^_</span></p>\n<p>然后检查形状。</p>\n"
    assert errors(key, moved) == ["html-structure"]
    assert errors(key, good + "多余") == ["html-outside-block"]


def test_harmless_markup_copied_from_the_english_is_not_the_translators_fault():
    key = '<p>As shown<sup id="fnref:1"><a class="footnote-ref" href="#fn:1">1</a></sup>.</p>\n'
    value = '<p>如图所示<sup id="fnref:1"><a class="footnote-ref" href="#fn:1">1</a></sup>。</p>\n'
    assert check_entry(key, value) == []
    assert errors(key, value.replace("footnote-ref", "evil")) == ["unsafe-attribute"]
    kbd_key = "<p>Press <kbd>Ctrl</kbd> to stop.</p>\n"
    assert codes(check_entry(kbd_key, "<p>按<kbd>Ctrl</kbd>停止。</p>\n")) == ["markup-dropped"]
    # dangerous markup stays an error even when the English has it
    img_key = '<p>See <img src="a.png"> here.</p>\n'
    assert errors(img_key, '<p>见<img src="a.png">。</p>\n') == ["unsafe-tag", "unsafe-attribute"]
    handler_key = '<p onclick="x">Hi there, reader.</p>\n'
    assert errors(handler_key, '<p onclick="x">读者你好。</p>\n') == ["unsafe-attribute"]


def test_table_cell_alignment_is_allowed():
    key = '<table><thead><tr><th align="center">Shape</th></tr></thead></table>\n'
    assert check_entry(key, key.replace("Shape", "形状")) == []
    assert errors(key, key.replace('"center"', '"justify"').replace("Shape", "形状")) == [
        "unsafe-attribute"
    ]
