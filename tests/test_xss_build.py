"""Every known XSS vector, smuggled into translation files, through a full site build.

`test_xss.py` proves `Catalog.lookup` and the sanitizer refuse the vectors; this proves the
pages a reader gets contain none of them, whatever path the HTML takes through the build.
"""
from __future__ import annotations

import json

from bs4 import BeautifulSoup

from conftest import write_tree
from labml_site.builder.site import BuildConfig, build
from labml_site.typeset.page import analyse
from xss_vectors import VECTORS, unsafe_reasons


def test_no_vector_reaches_a_page(tmp_path):
    assert len(VECTORS) >= 50
    lines = []
    for i in range(len(VECTORS)):
        lines += [f"# Block {i} uses `x` here.", f"x{i} = {i}", ""]
    source = "\n".join(lines)
    write_tree(tmp_path / "src", {"p/page.py": source})
    keys = [b.key for s in analyse("p/page.py", "p/page.html", source).sections for b in s.blocks]
    assert len(keys) == len(VECTORS)
    translations = {}
    for i, (key, (_name, payload)) in enumerate(zip(keys, VECTORS)):
        # A correct translation with the payload riding along, once inside and once after the block.
        good = key.replace("Block", "块").replace(" uses ", " 使用 ").replace(" here.", "")
        translations[key] = good.replace("</p>", payload + "</p>") if i % 2 else good + payload
    tr = tmp_path / "tr/p/page.zh.json"
    tr.parent.mkdir(parents=True)
    tr.write_text(json.dumps(translations, ensure_ascii=False, indent=1), encoding="utf-8")

    result = build(BuildConfig(tmp_path / "src", tmp_path / "tr", tmp_path / "site", langs=("en", "zh")))
    page = BeautifulSoup((result.out / "zh/p/page.html").read_text(encoding="utf-8"), "html.parser")
    docs = page.select(".section .docs")
    assert len(docs) == len(VECTORS)
    for block, (name, payload) in zip(docs, VECTORS):
        assert unsafe_reasons(block.decode_contents()) == [], (name, payload)
        # Refused translations fall back to the English, visibly marked.
        assert block.select_one(".untranslated") is not None, name
    # The whole page: only the theme's own script, no handler attributes anywhere.
    for script in page.find_all("script"):
        assert script.get("src", "").startswith("../../") and not script.string, script
    for tag in page.find_all(True):
        assert not any(a.lower().startswith("on") for a in tag.attrs), tag
    # The build log names the file and line of each refused translation.
    bad = {f.line for f in result.report.findings if f.path.endswith("page.zh.json")}
    assert len(bad) == len(VECTORS)
