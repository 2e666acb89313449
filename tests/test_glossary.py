"""The glossary as data: parsing the translators' Markdown tables (and the JSON sibling), finding
terms in the English, the CJK-aware `glossary-term` check."""
from __future__ import annotations

import json

from conftest import ROOT
from labml_site.translate import glossary, glossary_check
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
    found = [m.found for m in glossary_check.terms_in(g, "Multi-head attention uses queries, not the headline; attention.")]
    assert found == ["Multi-head attention", "queries", "attention"]  # no "head" inside "headline"
    assert [m.found for m in glossary_check.terms_in(g, "Layer norm after the sub-layer")] == ["Layer norm"]


def test_matching_a_translation_is_cjk_aware_and_stems_elsewhere():
    assert glossary_check.has_term("zh", "每个查询向量", ("查询",))  # no word boundaries in Chinese
    assert glossary_check.has_term("ja", "注意力の重み", ("注意力",))
    assert not glossary_check.has_term("zh", "每个问题", ("查询",))
    assert glossary_check.has_term("ru", "Маски внимания", ("маска",))  # inflected
    assert glossary_check.has_term("ru", "многоголовым вниманием", ("многоголовое внимание",))
    assert not glossary_check.has_term("ru", "Фильтр", ("маска",))


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


# --------------------------------------------------------------------------------------------
# Word forms, parts of speech, phrases: the false alarms the shipped tutorial used to raise

import subprocess  # noqa: E402
import sys  # noqa: E402
import shutil  # noqa: E402

from labml_site.translate import english_words, inflection  # noqa: E402
from conftest import write_json, write_tree  # noqa: E402

ZH = """| English | 中文 | 说明 |
|---|---|---|
| mean (noun) | 均值；平均 | |
| mean square | 均方 | |
| weighted average / weighted sum | 加权平均 / 加权和 | |
| matrix multiplication / matrix product | 矩阵乘法；矩阵乘积 | |
| rank (noun) | 进程编号（rank） | |
| sample (verb / noun) | 采样 / 样例文本 | |
| scaled scores | 缩放后的分数 | |
| value / values (not: the value derived) | 值 | |
| attention | 注意力 | |
| transformer | Transformer | |
| head size (`d_k`) | 头大小 | |
| multi-head attention (MHA) | 多头注意力 | |
| stack (of layers) | 多层 | |
"""


def _missing(table: str, lang: str, english: str, translation: str) -> list[str]:
    g = glossary.parse_markdown(table, lang)
    return [m.found for m in glossary_check.missing_terms(g, lang, f"<p>{english}</p>\n", f"<p>{translation}</p>\n")]


def test_a_noun_row_does_not_match_the_verb():
    assert _missing(ZH, "zh", "0 means the default.", "0 表示默认值。") == []
    assert _missing(ZH, "zh", "<span translate=no>_^_0_^_</span> means CUDA.", "<span translate=no>_^_0_^_</span> 表示 CUDA。") == []
    assert _missing(ZH, "zh", "“Position-wise” means that nothing crosses.", "“逐位置”是指没有交叉。") == []
    # …and still matches the noun, in any of its forms and synonyms
    assert _missing(ZH, "zh", "Sum, not mean, of the losses.", "求和而不是求平均。") == []
    assert _missing(ZH, "zh", "The running mean of the loss.", "损失的滑动值。") == ["mean"]
    assert _missing(ZH, "zh", "The means of two rows.", "两行的方差。") == ["means"]


def test_phrases_win_over_their_words_and_pairs_follow_the_columns():
    assert _missing(ZH, "zh", "A mean square of 1/2.", "均方值为 1/2。") == []
    assert _missing(ZH, "zh", "The weighted sum of values.", "值的加权和。") == []
    assert _missing(ZH, "zh", "The weighted sum of values.", "值的加权平均。") == ["weighted sum"]
    assert _missing(ZH, "zh", "Every row sums to 1.", "每行之和为 1。") == []  # a verb, and no glossary term
    assert _missing(ZH, "zh", "Matrix products run in bfloat16.", "矩阵乘法以 bfloat16 运行。") == []


def test_parts_of_speech_pair_with_the_translations():
    assert _missing(ZH, "zh", "We sample the next character.", "我们采样下一个字符。") == []
    assert _missing(ZH, "zh", "We sample the next character.", "我们样例文本下一个字符。") == ["sample"]
    assert _missing(ZH, "zh", "The sample at step 100.", "第 100 步的样例文本。") == []
    assert _missing(ZH, "zh", "Take the logits and sample the next one.", "取 logits 并采样下一个。") == []
    assert _missing(ZH, "zh", "Sampling text.", "生成文本。") == ["Sampling"]  # a gerund is the verb


def test_the_english_kept_a_sense_note_an_exclusion_and_an_idiom():
    assert _missing(ZH, "zh", "Only rank 0 prints.", "只有 rank 0 打印。") == []  # kept in English
    assert _missing(ZH, "zh", "Only rank 0 prints.", "只有第一个进程打印。") == ["rank"]
    assert _missing(ZH, "zh", "Transformer layers.", "变压器层。") == ["Transformer"]  # a row kept in English is checked
    assert _missing(ZH, "zh", "Transformer layers.", "Transformer 层。") == []
    assert _missing(ZH, "zh", "Stack them.", "把它们拼起来。") == []  # `(of layers)` names a sense: not checked
    assert _missing(ZH, "zh", "Close to x, the value derived above.", "接近上文推出的 x。") == []
    assert _missing(ZH, "zh", "The values.", "那些数。") == ["values"]
    assert _missing(ZH, "zh", "Pay attention to the shapes.", "注意形状。") == []  # the idiom
    g = glossary.parse_markdown(ZH, "zh")
    english = {e for t in g.terms for e in t.english}
    assert {"multi-head attention", "mha", "head size"} <= english  # initials are an alias, code is not


def test_cjk_matching_ignores_particles_dots_and_inflection():
    assert glossary_check.has_term("zh", "其缩放后分数的方差", ("缩放后的分数",))
    assert glossary_check.has_term("zh", "新词元的 id", ("词元 id",))
    assert glossary_check.has_term("ja", "マルチヘッド・アテンション", ("マルチヘッドアテンション",))
    assert glossary_check.has_term("ja", "レイヤ正規化", ("レイヤー正規化",))
    assert glossary_check.has_term("ja", "トークンが埋め込まれたテンソル", ("埋め込み",))
    assert not glossary_check.has_term("ja", "キャッシュ", ("キー",))  # a short loan word keeps its long vowel
    assert not glossary_check.has_term("ja", "重い", ("重み",))


def test_russian_forms_are_one_word():
    for text, wanted in [
        ("транслируется по оси батча", "транслироваться"),
        ("для булевых масок", "маска"),
        ("число голов", "голова"),
        ("идентификаторы токенов", "идентификатор токена"),
        ("на явном пути", "явный путь"),
        ("часто смотрят на один ключ", "смотреть на"),
        ("каждый этап возобновляется", "возобновить"),
        ("по последней оси", "ось"),
        ("сэмплируем следующий символ", "сэмплировать"),
    ]:
        assert glossary_check.has_term("ru", text, (wanted,)), (text, wanted)
    for text, wanted in [("Фильтр", "маска"), ("слова", "слой"), ("токенизатор", "токен"), ("голосование", "голова")]:
        assert not glossary_check.has_term("ru", text, (wanted,)), (text, wanted)
    assert inflection.primary("pt-BR") == "pt" and inflection.stem("de", "Masken") == inflection.stem("de", "Maske")


def test_part_of_speech_rules():
    def pos(text: str, word: str) -> str:
        toks = english_words.tokens(text)
        i = next(n for n, t in enumerate(toks) if t.lower == word)
        form = dict(english_words.base_words(word)).get(word.rstrip("s"), "") if word.endswith("s") else ""
        return english_words.part_of_speech(toks, i, i + 1, "s" if word.endswith("s") else form)

    assert pos("the mask broadcasts over the queries", "broadcasts") == "verb"
    assert pos("the keys and values", "keys") == "noun"
    assert pos("we sample the next token", "sample") == "verb"
    assert pos("to sample with", "sample") == "verb"
    assert pos("attend to keys and values", "keys") == "noun"
    assert pos("these are samples from the model", "samples") == "noun"
    assert pos("Samples Generating text", "samples") == "noun"  # a title-case list
    assert [t.text for t in english_words.tokens("multi-head attention")] == ["multi", "head", "attention"]
    assert english_words.tokens("multi-head")[1].joined


def test_check_on_a_fresh_tree_warns_only_where_the_glossary_is_not_followed(tmp_path):
    """The user's path: a tree with a glossary, `check` run as a command."""
    src = write_tree(tmp_path / "src", {"tut/page.py": '"""\n# Page\n\n0 means no limit.\n"""\nx = 1\n'})
    write_tree(tmp_path / "tr", {"glossary.zh.md": ZH})
    key_ok = "<h1>Page</h1>\n<p>0 means no limit.</p>\n"
    write_json(tmp_path / "tr/tut/page.zh.json", {key_ok: "<h1>页面</h1>\n<p>0 表示不限。</p>\n", "Page": "页面"})
    run = subprocess.run([sys.executable, "-m", "labml_site", "check", "--source", str(src), "--translations",
                          str(tmp_path / "tr")], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "glossary-term" not in run.stdout + run.stderr
    src.joinpath("tut/page.py").write_text('"""\n# Page\n\nThe mean is 0.\n"""\nx = 1\n', encoding="utf-8")
    write_json(tmp_path / "tr/tut/page.zh.json", {"<h1>Page</h1>\n<p>The mean is 0.</p>\n": "<h1>页面</h1>\n<p>中间值是 0。</p>\n", "Page": "页面"})
    run = subprocess.run([sys.executable, "-m", "labml_site", "check", "--source", str(src), "--translations",
                          str(tmp_path / "tr")], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    out = run.stdout + run.stderr
    assert out.count("[glossary-term]") == 1 and "“mean”" in out and "“均值”" in out, out


def test_the_shipped_tutorial_has_no_glossary_warning(tmp_path):
    """`check` on a fresh copy of the shipped tutorial and its translations."""
    shutil.copytree(ROOT / "source", tmp_path / "source")
    shutil.copytree(ROOT / "translations", tmp_path / "translations")
    run = subprocess.run([sys.executable, "-m", "labml_site", "check"], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    assert "[glossary-term]" not in run.stdout + run.stderr, run.stdout[-3000:]
