"""Repairs of benign defects in translation values (translate/repair.py), on our own fixtures in
the shapes real caches have: text after `</p>`, stray and unclosed tags, merged blocks, encoded
placeholders; and the per-block fallback when placeholders are lost."""
from __future__ import annotations

import json

import pytest

from labml_site.translate.catalog import Catalog, check_file
from labml_site.translate.repair import UNTRANSLATED_MARK, repair_html, review
from labml_site.render.localize import section_html
from labml_site.typeset.page import BlockData

PH = "<span translate=no>_^_{}_^_</span>"
TWO = "<p>First idea.</p>\n<p>Second idea with " + PH.format(0) + ".</p>\n"


def test_text_after_a_block_goes_into_it():
    value = "<p>第一。</p>。\n<p>第二" + PH.format(0) + "</p>。\n"
    r = review(TWO, value)
    assert r.html == "<p>第一。。</p>\n<p>第二" + PH.format(0) + "。</p>\n"
    assert {f.code for f in r.findings} == {"repaired"}
    assert all(f.severity == "warning" for f in r.findings)


def test_placeholder_after_the_closing_tag_goes_back_inside():
    key = "<p>We set " + PH.format(0) + " and " + PH.format(1) + "</p>\n"
    value = "<p>我们" + PH.format(0) + "提取</p>的" + PH.format(1) + "\n"
    assert repair_html(key, value) == "<p>我们" + PH.format(0) + "提取的" + PH.format(1) + "</p>\n"


def test_stray_and_unclosed_tags():
    key = '<h3><strong><a href="https://example.org/zh/">Chinese</a></strong></h3>\n'
    value = '</a><h3><strong><a href="https://example.org/zh/">中文</strong></h3>\n'
    r = review(key, value)
    assert r.html is not None and r.html.count("<a ") == 1 and "中文</a></strong>" in r.html
    assert r.repaired is not None and "</a><h3>" not in r.repaired


def test_merged_blocks_are_shown_with_a_warning():
    r = review(TWO, "<p>第一，第二" + PH.format(0) + "。</p>\n")
    assert r.html == "<p>第一，第二" + PH.format(0) + "。</p>\n"
    assert [(f.severity, f.code) for f in r.findings] == [("warning", "repaired")]
    assert "html-structure" in r.findings[0].message


def test_encoded_placeholders_are_decoded():
    value = "<p>一。</p>\n<p>二 <span translate=no>_%5e_0_%5e_</span>。</p>\n"
    r = review(TWO, value)
    assert r.html == "<p>一。</p>\n<p>二 " + PH.format(0) + "。</p>\n"
    assert r.repaired == r.html


def test_lost_placeholder_falls_back_for_its_block_only():
    key = "<p>Alpha " + PH.format(0) + "</p>\n<p>Beta</p>\n<p>Gamma " + PH.format(1) + "</p>\n"
    value = "<p>阿尔法</p>\n<p>贝塔</p>。\n<p>伽马 " + PH.format(1) + "</p>\n"
    r = review(key, value)
    assert r.partial and r.html is not None
    assert "贝塔。" in r.html and "伽马" in r.html and "阿尔法" not in r.html
    assert UNTRANSLATED_MARK in r.html and "Alpha " + PH.format(0) in r.html
    assert any(f.severity == "error" and f.code == "placeholder-missing" for f in r.findings)
    block = BlockData(key, ("<math>a</math>", "<math>b</math>"), 1)
    out = section_html((block,), (("translated", r.html),), "未翻译")
    assert "未翻译" in out and UNTRANSLATED_MARK not in out and "<math>a</math>" in out


def test_unsafe_values_are_never_repaired():
    for value in ('<p>一</p><script>alert(1)</script>', '<p>一</p>\n<img src="x onerror=alert(1)//',
                  '<p>一</p>\n<p><a href="javascript:alert(1)">二</a></p>'):
        assert review(TWO, value).html is None


def test_a_wrong_placeholder_in_a_one_block_key_is_refused():
    key = "<p>x " + PH.format(0) + "</p>\n"
    assert review(key, "<p>叉</p>。\n").html is None


def test_check_reports_repairs_with_file_and_line(tmp_path):
    path = tmp_path / "p.zh.json"
    path.write_text(json.dumps({"<p>Title</p>\n": "<p>标题</p>。\n"}, ensure_ascii=False, indent=4), "utf-8")
    (f,) = check_file(path, "zh")
    assert (f.severity, f.code, f.line, f.path) == ("warning", "repaired", 2, str(path))
    catalog = Catalog.load(path, "zh")
    assert catalog.verdict("<p>Title</p>\n").html == "<p>标题。</p>\n"


def test_fix_file_writes_repairs_back_and_keeps_the_rest(tmp_path):
    from labml_site.translate.extract import dumps
    from labml_site.translate.extract import fix_file
    path = tmp_path / "p.zh.json"
    data = {"<p>Title</p>\n": "<p>标题</p>。\n", "<p>Other</p>\n": "<p>其他</p>\n", "Name": ""}
    path.write_text(dumps(data), "utf-8")
    assert fix_file(path, "zh") == 1
    assert path.read_text("utf-8") == dumps({**data, "<p>Title</p>\n": "<p>标题。</p>\n"})
    assert check_file(path, "zh") == [] or all(f.code != "repaired" for f in check_file(path, "zh"))
    assert fix_file(path, "zh") == 0


def test_blocks_whose_english_did_not_change_keep_their_translation(tmp_path):
    old = ('<h1>Optimizers</h1>\n<ul><li><a href="adam.html">Adam</a> </li>\n'
           '<li><a href="noam.html">Noam</a> </li></ul>\n')
    new = ('<h1>Optimizers</h1>\n<ul><li><a href="adam.html">Adam</a> </li>\n'
           '<li><a href="noam.html">Noam</a> </li>\n<li><a href="sophia.html">Sophia</a> </li></ul>\n')
    value = ('<h1>优化器</h1>\n<ul><li><a href="adam.html">亚当</a> </li>\n'
             '<li><a href="noam.html">诺姆</a> </li></ul>\n')
    path = tmp_path / "readme.zh.json"
    path.write_text(json.dumps({old: value}, ensure_ascii=False, indent=2), "utf-8")
    result = Catalog.load(path, "zh").verdict(new)
    assert result.state == "repaired"  # shown, but made from another entry: the file should be updated
    assert "<h1>优化器</h1>" in result.html and "亚当" in result.html and "诺姆" in result.html
    assert 'class="untranslated"' in result.html and "Sophia" in result.html
    (note,) = result.findings
    assert (note.severity, note.code, note.line) == ("warning", "partly-translated", 2)


def test_an_entry_of_one_block_translates_that_block_of_a_longer_key(tmp_path):
    # an older source had the heading alone; today's has a paragraph after it
    path = tmp_path / "experiment.ja.json"
    path.write_text(json.dumps({"<h3>VGG model</h3>\n": "<h3>VGG モデル</h3>\n", "<p> </p>\n": "<p></p>\n"},
                               ensure_ascii=False, indent=2), "utf-8")
    catalog = Catalog.load(path, "ja")
    result = catalog.verdict("<h3>VGG model</h3>\n<p>This derives from it.</p>\n")
    assert result.state == "repaired" and result.html.startswith("<h3>VGG モデル</h3>\n")
    assert 'class="untranslated"' in result.html and "This derives from it." in result.html
    assert result.findings[0].code == "partly-translated"
    # a known block without words (`<p> </p>`) translates nothing: the key stays missing
    assert catalog.verdict("<p>New text.</p>\n<p> </p>\n").state == "untranslated"


def test_a_changed_key_takes_its_blocks_from_what_the_reviews_made_without_parsing_again(tmp_path, monkeypatch):
    """The blocks of entries that other keys reuse come from the entries' reviews: as written
    when the review found only warnings, as repaired when it repaired; the same blocks as from
    repairing the value again with html5lib, which is not asked."""
    from labml_site.translate import catalog as catalog_module

    warned, repaired = "<h1>A</h1>\n<p>B</p>\n", "<h2>C</h2>\n<p>D</p>\n"
    path = tmp_path / "p.zh.json"
    path.write_text(json.dumps({warned: "<h1>甲</h1>\n<p>乙</p>", repaired: "<h2>丙</h2>\n<p>丁</p>。\n"},
                               ensure_ascii=False), "utf-8")
    catalog = Catalog.load(path, "zh")
    assert (catalog.verdict(warned).state, [f.code for f in catalog.verdict(warned).findings]) == ("translated", ["whitespace-differs"])
    assert catalog.verdict(repaired).state == "repaired" and catalog.verdict(repaired).repaired is not None
    changed = "<h1>A</h1>\n<h2>C</h2>\n<p>B, changed</p>\n<p>D</p>\n"
    with monkeypatch.context() as m:  # what repairing every reused value again gives
        m.setattr(catalog_module, "_as_reviewed", lambda key, value, verdict: repair_html(key, value))
        expected = Catalog.load(path, "zh").verdict(changed)
    monkeypatch.setattr(catalog_module, "repair_html", lambda *a: pytest.fail("parsed again"))
    found = Catalog.load(path, "zh").verdict(changed)
    assert found == expected and found.state == "repaired"
    assert "<h1>甲</h1>" in found.html and "<h2>丙</h2>" in found.html and "<p>丁。</p>" in found.html


def test_nothing_in_common_stays_missing(tmp_path):
    path = tmp_path / "p.zh.json"
    path.write_text(json.dumps({"<h1>A</h1>\n<p>B</p>\n": "<h1>甲</h1>\n<p>乙</p>\n"}, ensure_ascii=False), "utf-8")
    assert Catalog.load(path, "zh").verdict("<h1>C</h1>\n<p>D</p>\n").state == "untranslated"


def test_check_fix_from_the_command_line(tmp_path):
    from labml_site.cli.main import main
    from labml_site.translate.extract import dumps
    src = tmp_path / "src"
    src.mkdir()
    (src / "page.py").write_text('"""\n# Title\n\nFirst idea.\n"""\nx = 1\n', "utf-8")
    tr = tmp_path / "tr"
    tr.mkdir()
    key = "<h1>Title</h1>\n<p>First idea.</p>\n"
    (tr / "page.zh.json").write_text(dumps({"Title": "标题", key: "<h1>标题</h1>\n<p>第一</p>。\n"}), "utf-8")
    assert main(["check", "--source", str(src), "--translations", str(tr), "--langs", "zh", "--fix"]) == 0
    assert json.loads((tr / "page.zh.json").read_text("utf-8"))[key] == "<h1>标题</h1>\n<p>第一。</p>\n"


def test_formulas_between_blocks_are_kept_and_never_marked():
    ph = PH.format(0)
    old = "<h1>A</h1>\n<p>B</p>\n" + ph + "<p>C</p>\n"
    new = "<h1>A</h1>\n<p>B</p>\n" + ph + "<p>C changed</p>\n"
    from labml_site.translate.repair import compose_from_units, unit_pairs
    known = dict(unit_pairs(old, "<h1>甲</h1>\n<p>乙</p>\n" + ph + "<p>丙</p>\n"))
    html = compose_from_units(new, known, lambda en, tr: tr)
    assert html.startswith("<h1>甲</h1>\n<p>乙</p>\n" + ph + "\n<div class=\"untranslated\"")


def test_text_after_a_block_moves_in_but_top_level_formulas_stay():
    ph0, ph1 = PH.format(0), PH.format(1)
    key = "<p>Init like this</p>\n" + ph0 + "<p>Groups with " + ph1 + " here</p>\n"
    value = "<p>这样初始化</p>。\n" + ph0 + "<p>组</p>的" + ph1 + "。\n"
    assert repair_html(key, value) == "<p>这样初始化。</p>\n" + ph0 + "<p>组的" + ph1 + "。</p>\n"


def test_text_after_a_top_level_formula_goes_into_the_next_block():
    ph0, ph1 = PH.format(0), PH.format(1)
    key = "<p>Since A</p>\n" + ph0 + "<p>Since " + ph1 + " B</p>\n"
    value = "<p>因为甲</p>\n" + ph0 + "由<p>于" + ph1 + "乙</p>\n"
    r = review(key, value)
    assert r.html == "<p>因为甲</p>\n" + ph0 + "<p>由于" + ph1 + "乙</p>\n"
    tail = "<p>甲</p>\n" + ph0 + "尾\n"
    assert repair_html("<p>A</p>\n" + ph0 + "\n", tail) == "<p>甲尾</p>\n" + ph0 + "\n"


def test_a_translation_written_for_the_original_numbered_list_key_is_used(tmp_path):
    from labml_site.translate.repair import legacy_key
    ours = "<p>We do:</p>\n<ol><li>Apply it </li>\n<li>Stack them</li></ol>\n"
    original = "<p>We do:</p>\n<p>1. Apply it 2. Stack them</p>\n"
    assert legacy_key(ours) == original and legacy_key("<p>x</p>\n") is None
    path = tmp_path / "game.zh.json"
    path.write_text(json.dumps({original: "<p>我们做：</p>\n<p>1. 应用 2. 堆叠</p>\n"}, ensure_ascii=False), "utf-8")
    result = Catalog.load(path, "zh").verdict(ours)
    # the translation keeps the numbers: shown as the list our page has
    assert result.state == "translated" and result.html == "<p>我们做：</p>\n<ol><li>应用</li>\n<li>堆叠</li></ol>\n"


def test_a_numbered_paragraph_translation_is_made_a_list_only_where_its_numbers_are_found(tmp_path):
    from labml_site.translate.repair import legacy_key
    ours = "<ol><li>Apply it (4, 84) </li>\n<li>Stack <a href=\"s.html\">them</a> </li>\n<li>Log it</li></ol>\n"
    values = {
        # machine-translated numbers with a full stop of the language, a link, a number in the text
        "<p>1.应用它 (4, 84) 2。堆叠<a href=\"s.html\">它们 3. 次</a> 3．记录</p>\n":
            '<ol><li>应用它 (4, 84)</li>\n<li>堆叠<a href="s.html" rel="noopener noreferrer">它们 3. 次</a></li>\n<li>记录</li></ol>\n',
        # a number lost in the translation: the paragraph, as the original showed it
        "<p>1. 应用 2 堆叠 3. 记录</p>\n": "<p>1. 应用 2 堆叠 3. 记录</p>\n",
        # text before the first number: the paragraph
        "<p>先 1. 应用 2. 堆叠 3. 记录</p>\n": "<p>先 1. 应用 2. 堆叠 3. 记录</p>\n",
    }
    for value, shown in values.items():
        path = tmp_path / "game.zh.json"
        path.write_text(json.dumps({legacy_key(ours): value}, ensure_ascii=False), "utf-8")
        assert Catalog.load(path, "zh").verdict(ours).html == shown


def test_a_translation_written_for_the_original_link_of_a_bare_bracket_is_used_without_the_link(tmp_path):
    from labml_site.translate.repair import legacy_key
    ours = f"<p>{PH.format(0)} has shape [rows, cols] and [1...2] </p>\n"
    original = (f'<p>{PH.format(0)} has shape <a href="rows, cols">rows, cols</a> and '
                '<a href="1...2">1...2</a> </p>\n')
    assert legacy_key(ours) == original
    # a real link, brackets inside a tag or around a placeholder are the same in both rules
    assert legacy_key('<p>[a](b.html) <a title="[x]">y</a> [' + PH.format(0) + ']</p>\n') is None
    path = tmp_path / "shape.zh.json"
    path.write_text(json.dumps({original: f'<p>{PH.format(0)}的形状为<a href="rows, cols">行、列</a>，'
                                          '<a href="1...2">1...2</a></p>\n'}, ensure_ascii=False), "utf-8")
    result = Catalog.load(path, "zh").verdict(ours)
    assert result.state == "translated"
    assert result.html == f"<p>{PH.format(0)}的形状为[行、列]，[1...2]</p>\n"  # no link that goes nowhere


def test_a_title_translated_for_the_original_key_with_the_spaces_after_the_hash_is_used(tmp_path):
    from labml_site.translate.repair import legacy_key
    # `#  [Patches](https://x.example/)`: the original's title key keeps the second space
    assert legacy_key("Patches") == " Patches" and legacy_key(" Patches") is None
    path = tmp_path / "readme.zh.json"
    path.write_text(json.dumps({" Patches": " 补丁"}, ensure_ascii=False), "utf-8")
    catalog = Catalog.load(path, "zh")
    assert catalog.verdict("Patches").html == "补丁"
    assert catalog.verdict(" Patches").html == " 补丁"  # (its own key: as written)


def test_a_block_whose_links_moved_keeps_its_translation_with_the_new_targets(tmp_path):
    old = '<p>Device to use. <a href="https://docs.example/device.html">DeviceConfigs</a> picks one.</p>\n'
    new = '<p>Device to use. <a href="../device.html">DeviceConfigs</a> picks one.</p>\n'
    path = tmp_path / "e.zh.json"
    path.write_text(json.dumps({old: '<p>设备。<a href="https://docs.example/device.html">DeviceConfigs</a> 选一个。</p>\n'},
                               ensure_ascii=False), "utf-8")
    result = Catalog.load(path, "zh").verdict(new)
    assert result.state == "repaired" and 'href="../device.html"' in result.html and "设备" in result.html
    assert result.findings[0].code == "links-moved"
    assert Catalog.load(path, "zh").verdict(new.replace("picks one", "picks two")).state == "untranslated"


def test_an_english_key_s_blocks_are_read_once_and_shared_unchanged():
    from labml_site.translate import repair

    keys = [
        "<h2>Title</h2>\n<p>One <span translate=no>_^_0_^_</span> two.</p>\n<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n",
        "<p>Only one block</p>\n",
        "text outside any block <p>then a block</p>",  # None: content outside blocks
        "<p>" + "long " * 2000 + "</p>\n",  # over the remembered length: read each time
    ]
    for key in keys:
        plain = repair.units(key)
        shared = repair.key_units(key)
        if plain is None:
            assert shared is None
            continue
        assert [(t, h, None if i is None else list(i)) for t, h, i in shared] == plain
        # every caller gets the same answer (immutable), so none can change it for the next
        assert isinstance(shared, tuple) or len(key) > repair._REMEMBERED_KEY_CHARS
        if len(key) <= repair._REMEMBERED_KEY_CHARS:
            assert repair.key_units(key) is shared
            assert all(i is None or isinstance(i, tuple) for _, _, i in shared)
        else:
            assert repair.key_units(key) is not shared
