"""The glossary as data: parsing the translators' Markdown tables (and the JSON sibling), finding
terms in the English, the CJK-aware `glossary-term` check."""
from __future__ import annotations

import json

from conftest import ROOT
from labml_site.translate import glossary
from labml_site.translate.checks import check_entry, registered_checks

TABLE = """# Glossary

Some prose | with a bar that is not a table row

| English | 中文 | 说明 |
|---|---|---|
| attention | 注意力 | |
| query / queries | 查询 | 复数不另加“们” |
| layer normalization (layer norm) | 层归一化 | |
| block (a pair) | 屏蔽 | |
| head size (`d_k`) | 头大小 | |
| pre-norm / post-norm | 前置归一化（pre-norm）/ 后置归一化（post-norm） | |
| softmax | softmax | |
"""


def test_markdown_rows_become_terms():
    g = glossary.parse_markdown(TABLE, "zh")
    terms = {t.english: t for t in g.terms}
    assert terms[("attention",)].expected == ("注意力",)
    assert terms[("query", "queries")].note == "复数不另加“们”"
    assert ("layer normalization", "layer norm") in terms  # a parenthesis is an alias…
    assert terms[("block",)].ambiguous  # …unless it only says which sense
    assert ("head size",) in terms  # code in a parenthesis is not an alias
    assert terms[("pre-norm",)].expected == ("前置归一化（pre-norm）", "前置归一化")  # paired, gloss optional
    assert terms[("post-norm",)].expected == ("后置归一化（post-norm）", "后置归一化")
    assert terms[("softmax",)].expected == ("softmax",)  # kept in English: the English must stay


def test_json_sibling():
    g = glossary.parse_json(json.dumps({"attention": "注意力", "mask": ["掩码", "屏蔽"]}), "zh")
    assert {t.english: t.expected for t in g.terms} == {("attention",): ("注意力",), ("mask",): ("掩码", "屏蔽")}


def test_terms_in_english_longest_first_whole_words_plurals():
    g = glossary.parse_markdown(TABLE + "| multi-head attention | 多头注意力 | |\n| head | 头 | |\n", "zh")
    found = [m.found for m in glossary.terms_in(g, "Multi-head attention uses queries, not the headline; attention.")]
    assert found == ["Multi-head attention", "queries", "attention"]  # no "head" inside "headline"
    assert [m.found for m in glossary.terms_in(g, "Layer norm after the sub-layer")] == ["Layer norm"]


def test_matching_a_translation_is_cjk_aware_and_stems_elsewhere():
    assert glossary.has_term("zh", "每个查询向量", ("查询",))  # no word boundaries in Chinese
    assert glossary.has_term("ja", "注意力の重み", ("注意力",))
    assert not glossary.has_term("zh", "每个问题", ("查询",))
    assert glossary.has_term("ru", "Маски внимания", ("маска",))  # inflected
    assert glossary.has_term("ru", "многоголовым вниманием", ("многоголовое внимание",))
    assert not glossary.has_term("ru", "Фильтр", ("маска",))


def _project(tmp_path, table=TABLE):
    (tmp_path / "tr/tut").mkdir(parents=True)
    (tmp_path / "tr/glossary.zh.md").write_text(table, encoding="utf-8")
    return str(tmp_path / "tr/tut/page.zh.json")


def test_the_check_is_registered_and_warns_with_the_expected_term(tmp_path):
    assert any(c.name == "check_glossary" and c.codes == ("glossary-term",) for c in registered_checks("entry"))
    path = _project(tmp_path)
    key = "<p>The attention of each query.</p>\n"
    found = check_entry(key, "<p>每个问题的关注。</p>\n", path=path, lang="zh")
    assert [f.code for f in found] == ["glossary-term", "glossary-term"]
    assert all(f.severity == "warning" for f in found)
    assert "“注意力”" in found[0].message and "glossary.zh.md" in found[0].message
    assert check_entry(key, "<p>每个查询的注意力。</p>\n", path=path, lang="zh") == []
    # Ambiguous rows, placeholders and tags are not matched; other languages have no glossary here.
    assert check_entry("<p>A block of text.</p>\n", "<p>一段文字。</p>\n", path=path, lang="zh") == []
    assert check_entry(key, "<p>Внимание каждого запроса.</p>\n", path=path, lang="ru") == []
    assert check_entry(key, "<p>每个问题的关注。</p>\n", lang="zh") == []  # no file: no glossary


def test_a_json_glossary_wins_and_a_change_is_seen(tmp_path):
    path = _project(tmp_path)
    key = "<p>The attention.</p>\n"
    assert [f.code for f in check_entry(key, "<p>关注。</p>\n", path=path, lang="zh")] == ["glossary-term"]
    (tmp_path / "tr/glossary.zh.json").write_text(json.dumps({"attention": ["关注", "注意力"]}), encoding="utf-8")
    assert check_entry(key, "<p>关注。</p>\n", path=path, lang="zh") == []


def test_the_tutorials_glossaries_parse():
    for lang in ("zh", "ru"):
        g = glossary.load(ROOT / "translations" / f"glossary.{lang}.md", lang)
        assert g is not None and len(g.terms) > 50
        english = {e for t in g.terms for e in t.english}
        assert {"attention", "query", "mask", "causal mask"} <= english
