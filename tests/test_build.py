"""End-to-end builds of small trees: pages, languages, fallbacks, failures."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from labml_site.builder.site import BuildConfig, build
from labml_site.cli.main import main
from labml_site.read.prose import placeholder

from conftest import TOY_PAGE, write_json, write_tree

INDEX = '''"""
---
title: Toy tutorial
summary: A tiny tutorial used by the tests.
---

# Toy tutorial

Read [the page](page.html) first.
"""
'''

PAGE = TOY_PAGE

BROKEN = 'x = """never closed\n'


def tree(tmp_path: Path) -> tuple[Path, Path]:
    src = write_tree(tmp_path / "src", {"toy/__init__.py": INDEX, "toy/page.py": PAGE, "toy/fig.svg": "<svg xmlns='http://www.w3.org/2000/svg'/>"})
    tr = tmp_path / "tr"
    write_json(tr / "toy/page.zh.json", {
        "Scaled scores": "缩放分数",
        "<h1>Scaled scores</h1>\n<p>We divide by " + placeholder(0) + " before the softmax.</p>\n": "<h1>缩放分数</h1>\n<p>在 softmax 之前除以" + placeholder(0) + "。</p>\n",
        # Wrong placeholder: must not be used.
        "<p>Divide once </p>\n": "<p>除一次 " + placeholder(3) + "</p>\n",
    })
    return src, tr


def cfg(src: Path, tr: Path, out: Path, **kw) -> BuildConfig:
    return BuildConfig(src, tr, out, **kw)


def soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def test_pages_per_language_with_metadata(tmp_path):
    src, tr = tree(tmp_path)
    result = build(cfg(src, tr, tmp_path / "site"))
    site = result.out
    for prefix in ("", "zh/", "ru/"):
        for rel in ("toy/index.html", "toy/page.html", "index.html", "404.html", "translation-status.html"):
            assert (site / prefix / rel).is_file(), prefix + rel
    page = soup(site / "toy/page.html")
    assert page.html["lang"] == "en"
    assert page.title.string.startswith("Scaled scores")
    assert page.find("meta", attrs={"name": "description"})["content"] == "How scores are scaled."
    assert {l["hreflang"] for l in page.find_all("link", rel="alternate")} == {"en", "zh", "ru"}
    # Every internal link on the page resolves to a file of the built site.
    for a in page.find_all("a", href=True):
        href = a["href"].split("#")[0]
        if href and not re.match(r"^[a-z]+:", href):
            assert (site / "toy" / href).resolve().exists(), href
    # Math is MathML with its TeX kept; code keeps real line numbers.
    math = page.find("math")
    assert math is not None and "\\sqrt{d_k}" in math.find("annotation").text
    assert page.find("span", attrs={"data-line": "20"}) is not None
    # The source file is published beside the page for "View source".
    assert (site / "toy/page.py").read_text() == PAGE


def test_translation_used_reordered_and_invalid_falls_back(tmp_path):
    src, tr = tree(tmp_path)
    result = build(cfg(src, tr, tmp_path / "site"))
    zh = soup(result.out / "zh/toy/page.html")
    assert zh.html["lang"] == "zh"
    assert zh.title.string.startswith("缩放分数")
    text = zh.get_text()
    assert "在 softmax 之前除以" in text
    # The translation's placeholder was filled with the English's MathML.
    assert zh.find("h1").find_next("math") is not None
    # The block with a bad placeholder shows English, marked, in the reader's language.
    marked = zh.find_all(class_="untranslated")
    assert any("Divide once" in m.get_text() for m in marked)
    assert all("尚未翻译" in m.get_text() for m in marked)
    assert "除一次" not in text
    # The build log names the file and the key.
    bad = [f for f in result.report.findings if f.key.startswith("<p>Divide once")]
    assert bad and bad[0].path.endswith("toy/page.zh.json") and bad[0].line > 0
    # Partly translated pages say how much is translated and which file to edit.
    notice = zh.find(class_="translation-notice")
    assert notice is not None and "toy/page.zh.json" in notice.get_text()


def test_language_switcher_lands_on_the_same_page(tmp_path):
    src, tr = tree(tmp_path)
    site = build(cfg(src, tr, tmp_path / "site")).out
    ru = soup(site / "ru/toy/page.html")
    links = {a["hreflang"]: a["href"] for a in ru.select(".languages a")}
    assert (site / "ru/toy" / links["en"]).resolve() == (site / "toy/page.html").resolve()
    assert (site / "ru/toy" / links["zh"]).resolve() == (site / "zh/toy/page.html").resolve()
    names = [a.get_text() for a in ru.select(".languages a")] + [s.get_text() for s in ru.select(".languages span")]
    assert {"English", "中文", "Русский"} == set(names)


def test_index_lists_pages_with_titles_and_summaries(tmp_path):
    src, tr = tree(tmp_path)
    site = build(cfg(src, tr, tmp_path / "site")).out
    index = soup(site / "toy/index.html")
    children = index.select(".children li")
    assert [c.a.get_text() for c in children] == ["Scaled scores"]
    assert "How scores are scaled." in children[0].get_text()
    home = soup(site / "index.html")
    assert [a.get_text() for a in home.select(".children li a")] == ["Toy tutorial"]
    # In Chinese the listing uses the translated title.
    assert [c.a.get_text() for c in soup(site / "zh/toy/index.html").select(".children li")] == ["缩放分数"]


def test_a_broken_file_is_reported_and_the_rest_still_builds(tmp_path):
    src, tr = tree(tmp_path)
    (src / "toy/broken.py").write_text(BROKEN)
    result = build(cfg(src, tr, tmp_path / "site"))
    assert not result.ok
    errs = [f for f in result.report.errors if f.path == "toy/broken.py"]
    assert errs and errs[0].line == 1
    assert (result.out / "toy/page.html").exists()
    assert not (result.out / "toy/broken.html").exists()
    # The CLI's exit status says so.
    assert main(["--source", str(src), "--translations", str(tr), "--out", str(tmp_path / "site2"), "-q"]) == 1


def test_failed_build_leaves_previous_site_intact(tmp_path):
    src, tr = tree(tmp_path)
    out = tmp_path / "site"
    build(cfg(src, tr, out))
    before = (out / "toy/page.html").read_text()
    theme = tmp_path / "theme"
    import shutil

    from labml_site.builder.theme import DEFAULT_TEMPLATES

    shutil.copytree(DEFAULT_TEMPLATES, theme)
    (theme / "page.html").write_text("{% extends 'base.html' %}{% block main %}{{ no_such_variable }}{% endblock %}")
    with pytest.raises(Exception):
        build(cfg(src, tr, out, templates=theme))
    assert (out / "toy/page.html").read_text() == before
    assert not list(tmp_path.glob(".site-new-*")), "temporary build folder left behind"


def test_cli_builds_with_explicit_folders_and_languages(tmp_path, capsys):
    src, tr = tree(tmp_path)
    out = tmp_path / "out"
    assert main(["--source", str(src), "--translations", str(tr), "--out", str(out), "--langs", "en,zh,ru,ja", "-q"]) == 0
    ja = soup(out / "ja/toy/page.html")
    assert ja.html["lang"] == "ja"
    # No Japanese translations yet: every block falls back to English, visibly.
    assert ja.find(class_="untranslated") is not None
