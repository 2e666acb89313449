"""The tutorial ships fully translated: every prose block, title and summary in zh and ru."""
from __future__ import annotations

import pytest

from conftest import ROOT
from labml_site.builder.site import analyse_pages
from labml_site.translate.catalog import check_file
from labml_site.read.structure import discover
from labml_site.translate.catalog import translation_path
from labml_site.translate.catalog import Catalog

LANGS = ("zh", "ru")


@pytest.fixture(scope="module")
def tutorial_pages():
    files = discover(ROOT / "source")
    pages = analyse_pages(files.pages)
    return [(f, pages[f.rel]) for f in files.pages]


@pytest.mark.parametrize("lang", LANGS)
def test_every_block_is_translated_and_valid(tutorial_pages, lang):
    problems = []
    for file, page in tutorial_pages:
        catalog = Catalog.load(translation_path(ROOT / "translations", file, lang), lang)
        for key in page.keys:
            status = catalog.verdict(key).state
            if status != "translated":
                problems.append(f"{file.base}.{lang}.json: {status}: {key[:70]!r}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lang", LANGS)
def test_translation_files_pass_check(tutorial_pages, lang):
    findings = []
    for file, page in tutorial_pages:
        path = translation_path(ROOT / "translations", file, lang)
        findings += [f.format() for f in check_file(path, lang, set(page.keys)) if f.severity == "error" or f.code == "stale-key"]
    assert not findings, "\n".join(findings)


@pytest.mark.parametrize("lang", LANGS)
def test_glossary_exists(lang):
    glossary = ROOT / "translations" / f"glossary.{lang}.md"
    text = glossary.read_text(encoding="utf-8")
    for term in ("attention", "query", "key", "value", "head", "mask", "softmax"):
        assert term in text.lower(), f"{glossary} lacks {term}"
