"""Catalog loading and lookup (checked + sanitized translations), the sanitizer's placeholder
guarantee, path helpers and coverage statistics."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from labml_site.translate import catalog as translations
from labml_site.translate import repair
from labml_site.read.markup import PLACEHOLDER_RE
from labml_site.translate.sanitize import sanitize
from labml_site.translate.stats import coverage, render_json, render_text, totals
from labml_site.translate.catalog import (
    Catalog,
    catalog_path,
    fuzzy_path,
    is_sidecar,
    stale_path,
)

# The lead fills placeholders with exactly this regex; the sanitizer must keep it matching.
LEAD_REGEX = re.compile(r"<span translate=no>_\^_(\d+)_\^_</span>")

SOFTMAX_KEY = (
    "<h3>Softmax over keys</h3>\n"
    "<p>We take <span translate=no>_^_0_^_</span> along the last axis, so each row of "
    "<span translate=no>_^_1_^_</span> sums to one.</p>\n"
)
SOFTMAX_ZH = (
    "<h3>对键做 Softmax</h3>\n"
    "<p>我们沿最后一个轴计算<span translate=no>_^_0_^_</span>，使"
    "<span translate=no>_^_1_^_</span>的每一行之和为一。</p>\n"
)
SOFTMAX_RU = (
    "<h3>Softmax по ключам</h3>\n"
    "<p>Каждая строка <span translate=no>_^_1_^_</span> суммируется в единицу, потому что мы "
    "берём <span translate=no>_^_0_^_</span> по последней оси.</p>\n"
)
LINK_KEY = '<p>Based on <a href="https://arxiv.org/abs/1706.03762">the paper</a>.</p>\n'
LINK_ZH = '<p>基于<a href="https://arxiv.org/abs/1706.03762">论文</a>。</p>\n'
MASK_KEY = "<p>Apply the mask <span translate=no>_^_0_^_</span> </p>\n"
MASK_ZH_BROKEN = "<p>应用掩码</p>\n</a>"  # the placeholder lost: not repairable
MASK_ZH_STRAY = "<p>应用掩码<span translate=no>_^_0_^_</span></p>\n</a>"  # a stray tag: repaired
TITLE_KEY = "Attention scores & softmax"
TITLE_ZH = "注意力分数与 softmax"


def write(path: Path, data: dict | str | bytes) -> Path:
    if isinstance(data, dict):
        data = json.dumps(data, indent=1)  # the older real-world style: ASCII escapes, indent 1
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


@pytest.fixture
def zh(tmp_path) -> Catalog:
    path = write(
        tmp_path / "attention.zh.json",
        {SOFTMAX_KEY: SOFTMAX_ZH, LINK_KEY: LINK_ZH, MASK_KEY: MASK_ZH_BROKEN, TITLE_KEY: TITLE_ZH},
    )
    return Catalog.load(path, "zh")


def test_missing_file_is_an_empty_catalog(tmp_path):
    catalog = Catalog.load(tmp_path / "nothing.ru.json", "ru")
    assert (catalog.entries, catalog.fuzzy, catalog.findings) == ({}, {}, [])
    assert catalog.verdict(SOFTMAX_KEY).state == "untranslated"


def test_translated_lookup_keeps_placeholders_byte_for_byte(zh):
    result = zh.verdict(SOFTMAX_KEY)
    assert result.state == "translated" and result.shown
    assert result.html == SOFTMAX_ZH  # nothing to sanitize away in a clean translation
    assert LEAD_REGEX.findall(result.html) == ["0", "1"]


def test_reordered_placeholders_are_fine(tmp_path):
    catalog = Catalog.load(write(tmp_path / "a.ru.json", {SOFTMAX_KEY: SOFTMAX_RU}), "ru")
    result = catalog.verdict(SOFTMAX_KEY)
    assert result.state == "translated"
    assert LEAD_REGEX.findall(result.html) == ["1", "0"]


def test_links_get_rel_and_keep_their_target(zh):
    html = zh.verdict(LINK_KEY).html
    assert 'href="https://arxiv.org/abs/1706.03762"' in html and 'rel="noopener noreferrer"' in html


def test_invalid_entry_renders_nothing_and_says_why(zh):
    result = zh.verdict(MASK_KEY)
    assert (result.state, result.html) == ("invalid", None)
    error = result.findings[0]
    assert (error.severity, error.code) == ("error", "placeholder-missing")
    assert error.path == zh.path and error.line == 4 and error.key == MASK_KEY
    unbalanced = [f for f in result.findings if f.code == "html-unbalanced"]
    assert "</a>" in unbalanced[0].message


def test_a_stray_tag_is_repaired_and_reported(tmp_path):
    catalog = Catalog.load(write(tmp_path / "a.zh.json", {MASK_KEY: MASK_ZH_STRAY}), "zh")
    result = catalog.verdict(MASK_KEY)
    assert result.state == "repaired" and result.shown
    assert result.html == "<p>应用掩码<span translate=no>_^_0_^_</span></p>\n"
    (note,) = [f for f in result.findings if f.code == "repaired"]
    assert note.severity == "warning" and note.line == 2 and "</a>" in note.message


def test_key_line_numbers_are_recorded(zh):
    assert [zh.entries[k].line for k in (SOFTMAX_KEY, LINK_KEY, MASK_KEY, TITLE_KEY)] == [2, 3, 4, 5]


def test_plain_text_value_comes_back_as_html_text(zh):
    result = zh.verdict(TITLE_KEY)
    assert result.state == "translated" and result.html == TITLE_ZH
    catalog = Catalog.load(write(Path(zh.path), {TITLE_KEY: "注意力 & softmax"}), "zh")
    assert catalog.verdict(TITLE_KEY).html == "注意力 &amp; softmax"


def test_unknown_key_is_missing(zh):
    assert zh.verdict("<p>Something else</p>\n") == translations.UNTRANSLATED


def test_empty_value_is_missing_never_empty_html(tmp_path):
    catalog = Catalog.load(write(tmp_path / "a.zh.json", {SOFTMAX_KEY: "", LINK_KEY: "  \n"}), "zh")
    assert catalog.verdict(SOFTMAX_KEY).state == "untranslated"
    assert catalog.verdict(LINK_KEY).state == "untranslated"


def test_fuzzy_suggestions_load_and_never_render(tmp_path):
    main = write(tmp_path / "a.zh.json", {SOFTMAX_KEY: ""})
    old_key = SOFTMAX_KEY.replace("sums to one", "adds up to one")
    write(fuzzy_path(main), {SOFTMAX_KEY: {"suggestion": SOFTMAX_ZH, "from": old_key}})
    catalog = Catalog.load(main, "zh")
    assert catalog.fuzzy[SOFTMAX_KEY].value == SOFTMAX_ZH
    assert catalog.fuzzy[SOFTMAX_KEY].previous == old_key
    assert catalog.fuzzy[SOFTMAX_KEY].line == 2
    assert catalog.verdict(SOFTMAX_KEY) == translations.FUZZY
    # once a person writes the translation into the main file, it wins over the suggestion
    write(main, {SOFTMAX_KEY: SOFTMAX_ZH})
    assert Catalog.load(main, "zh").verdict(SOFTMAX_KEY).state == "translated"


def test_broken_json_means_nothing_is_used(tmp_path):
    path = write(tmp_path / "a.zh.json", '{\n "<p>x</p>": "<p>甲</p>",\n "<p>y</p>" "<p>乙</p>"\n}')
    catalog = Catalog.load(path, "zh")
    assert [f.code for f in catalog.findings] == ["json-syntax"]
    assert catalog.findings[0].line == 3
    assert catalog.entries == {} and catalog.verdict("<p>x</p>").state == "untranslated"


def test_non_object_file(tmp_path):
    catalog = Catalog.load(write(tmp_path / "a.zh.json", '"just a string"'), "zh")
    assert [f.code for f in catalog.findings] == ["not-an-object"] and catalog.entries == {}


def test_bom_is_reported_but_the_file_is_used(tmp_path):
    path = write(tmp_path / "a.zh.json", b"\xef\xbb\xbf" + json.dumps({TITLE_KEY: TITLE_ZH}).encode())
    catalog = Catalog.load(path, "zh")
    assert [f.code for f in catalog.findings] == ["bom"]
    assert catalog.verdict(TITLE_KEY).state == "translated"


def test_duplicate_keys_with_different_values_are_invalid(tmp_path):
    text = '{\n "<p>x</p>": "<p>甲</p>",\n "<p>x</p>": "<p>乙</p>",\n "<p>y</p>": "<p>丙</p>",\n "<p>y</p>": "<p>丙</p>"\n}'
    catalog = Catalog.load(write(tmp_path / "a.zh.json", text), "zh")
    assert [(f.severity, f.line) for f in catalog.findings] == [("error", 3), ("warning", 5)]
    x = catalog.verdict("<p>x</p>")
    assert x.state == "invalid" and x.findings[0].code == "duplicate-key"
    assert catalog.verdict("<p>y</p>").state == "translated"


def test_non_string_value_is_invalid_not_missing(tmp_path):
    catalog = Catalog.load(write(tmp_path / "a.zh.json", '{"<p>x</p>": 42, "<p>y</p>": null}'), "zh")
    assert catalog.verdict("<p>x</p>").state == "invalid"
    assert catalog.verdict("<p>y</p>").findings[0].code == "not-a-string"


def test_bad_bytes_spoil_only_their_entry(tmp_path):
    data = b'{\n "<p>x</p>": "<p>\xe7\x94\xb2</p>",\n "<p>y</p>": "<p>\xff</p>"\n}'
    catalog = Catalog.load(write(tmp_path / "a.zh.json", data), "zh")
    assert [(f.code, f.line) for f in catalog.findings] == [("not-utf8", 3)]
    assert catalog.verdict("<p>x</p>").html == "<p>甲</p>"
    assert catalog.verdict("<p>y</p>").state == "invalid"


def test_lookup_is_cached_and_checks_run_once_per_key(zh, monkeypatch):
    calls = []
    real = repair.run_entry_checks
    monkeypatch.setattr(repair, "run_entry_checks", lambda ctx: calls.append(ctx.key) or real(ctx))
    first = zh.verdict(SOFTMAX_KEY)
    assert zh.verdict(SOFTMAX_KEY) is first
    zh.verdict(MASK_KEY)
    seen = len(calls)
    zh.verdict(MASK_KEY)
    # a failing value is checked again once repaired, and never again after that
    assert calls[:2] == [SOFTMAX_KEY, MASK_KEY] and len(calls) == seen == 3


def test_sanitizer_damaging_placeholders_makes_the_entry_invalid(zh, monkeypatch):
    monkeypatch.setattr(repair, "sanitize", lambda html, **kw: PLACEHOLDER_RE.sub("", html))
    result = zh.verdict(SOFTMAX_KEY)
    assert result.state == "invalid" and result.findings[0].code == "sanitizer-changed"


def test_quoted_translate_attribute_is_normalised_for_the_lead(tmp_path):
    value = SOFTMAX_ZH.replace("translate=no", 'translate="no"')
    catalog = Catalog.load(write(tmp_path / "a.zh.json", {SOFTMAX_KEY: value}), "zh")
    assert catalog.verdict(SOFTMAX_KEY).html == SOFTMAX_ZH


def test_warnings_travel_with_translated_lookups(tmp_path):
    catalog = Catalog.load(write(tmp_path / "a.zh.json", {SOFTMAX_KEY: SOFTMAX_KEY}), "zh")
    result = catalog.verdict(SOFTMAX_KEY)
    assert result.state == "translated" and [f.code for f in result.findings] == ["untranslated"]


# --------------------------------------------------------------------------------------------
# sanitize()


def test_sanitizer_keeps_placeholders_exactly():
    fragment = "<p>a <span translate=no>_^_0_^_</span> b <span translate=no>_^_12_^_</span></p>"
    assert sanitize(fragment) == fragment
    assert LEAD_REGEX.findall(sanitize(fragment.replace("translate=no", "translate='no'"))) == [
        "0", "12"
    ]


def test_sanitizer_drops_links_and_ids_not_allowed():
    html = '<p><a href="https://a.example/" id="x">a</a><a href="https://b.example/" id="y">b</a></p>'
    out = sanitize(html, allowed_urls={"https://a.example/"}, allowed_ids={"x"})
    assert 'href="https://a.example/"' in out and 'id="x"' in out
    assert "b.example" not in out and 'id="y"' not in out


def test_sanitizer_keeps_the_prose_tags():
    html = (
        "<h4>t</h4><blockquote><p><em>e</em> <strong>s</strong> <code>c</code> <sub>1</sub>"
        "<sup>2</sup> <del>d</del><br></p></blockquote><hr><ol><li>i</li></ol>"
        "<table><thead><tr><th>h</th></tr></thead><tbody><tr><td>d</td></tr></tbody></table>"
    )
    assert sanitize(html) == html


# --------------------------------------------------------------------------------------------
# Paths


def test_paths(tmp_path):
    main = catalog_path(tmp_path, "annotated_attention/mha", "zh")
    assert main == tmp_path / "annotated_attention" / "mha.zh.json"
    assert fuzzy_path(main).name == "mha.zh.fuzzy.json" and stale_path(main).name == "mha.zh.stale.json"
    assert is_sidecar(fuzzy_path(main)) and is_sidecar(stale_path(main)) and not is_sidecar(main)


# --------------------------------------------------------------------------------------------
# Coverage


def test_coverage_counts_every_state(tmp_path):
    main = write(
        tmp_path / "mha.zh.json",
        {SOFTMAX_KEY: SOFTMAX_ZH, MASK_KEY: MASK_ZH_BROKEN, LINK_KEY: "", "<p>gone</p>\n": "<p>没了</p>\n",
         TITLE_KEY: "注意力", "<p>Stray</p>\n": "<p>多余</p>\n</a>"},
    )
    write(fuzzy_path(main), {LINK_KEY: {"suggestion": LINK_ZH, "from": "<p>old</p>\n"}})
    keys = {"mha": [SOFTMAX_KEY, MASK_KEY, LINK_KEY, TITLE_KEY, SOFTMAX_KEY, "<p>Stray</p>\n", "<p>New</p>\n"],
            "other": [TITLE_KEY]}
    stats = coverage(keys, {"mha": Catalog.load(main, "zh")})
    mha, other = stats
    assert (mha.page, mha.lang, mha.blocks, mha.translated, mha.repaired, mha.fuzzy, mha.untranslated, mha.invalid,
            mha.stale) == ("mha", "zh", 6, 2, 1, 1, 1, 1, 1)
    assert mha.shown == 3 and mha.percent == 50.0  # a repaired entry is shown
    assert (other.blocks, other.untranslated, other.translated) == (1, 1, 0)
    total = totals(stats)
    assert len(total) == 2 and sum(t.blocks for t in total) == 7  # "" lang for the catalog-less page


def test_stats_rendering(tmp_path):
    main = write(tmp_path / "mha.ru.json", {SOFTMAX_KEY: SOFTMAX_RU})
    stats = coverage({"mha": [SOFTMAX_KEY, LINK_KEY]}, {"mha": Catalog.load(main, "ru")})
    text = render_text(stats)
    lines = text.splitlines()
    assert lines[0].split() == ["page", "lang", "blocks", "translated", "repaired", "%", "fuzzy", "untranslated",
                                "invalid", "stale", "reviewed", "rejected"]
    assert lines[1].split() == ["mha", "ru", "2", "1", "0", "50", "0", "1", "0", "0", "0", "0"]
    assert lines[-1].split()[:4] == ["TOTAL", "ru", "2", "1"]
    data = json.loads(render_json(stats))
    assert data["pages"][0]["translated"] == 1 and data["pages"][0]["percent"] == 50.0
    assert data["totals"][0]["page"] == "TOTAL"


def test_sanitizer_keeps_only_known_cell_alignments():
    assert sanitize('<table><tr><td align="right">1</td></tr></table>') == (
        '<table><tbody><tr><td align="right">1</td></tr></tbody></table>'
    )
    assert "align" not in sanitize('<table><tr><td align="x" style="a">1</td></tr></table>')
