"""A translation may fold its answers as the English does (`details`/`summary` are in the one
vocabulary's ALLOWED_TAGS), and what a translator adds to them beyond the bare tags is removed."""
from __future__ import annotations

import json
from pathlib import Path

from labml_site.read.markup import ALLOWED_TAGS
from labml_site.translate.catalog import Catalog
from labml_site.translate.sanitize import sanitize

KEY = ("<h2>Exercises</h2>\n<ol><li>Break it. </li></ol>\n<details><summary>Expected answers</summary>\n"
       "<ol><li>The test <span translate=no>_^_0_^_</span> fails.</li></ol>\n</details>\n")
ZH = ("<h2>练习</h2>\n<ol><li>弄坏它。</li></ol>\n<details><summary>参考答案</summary>\n"
      "<ol><li>测试 <span translate=no>_^_0_^_</span> 失败。</li></ol>\n</details>\n")


def _catalog(tmp_path: Path, value: str) -> Catalog:
    path = tmp_path / "page.zh.json"
    path.write_text(json.dumps({KEY: value}, ensure_ascii=False), encoding="utf-8")
    return Catalog.load(path, "zh")


def test_details_and_summary_are_allowed_and_a_folded_translation_is_accepted(tmp_path):
    assert {"details", "summary"} <= ALLOWED_TAGS
    verdict = _catalog(tmp_path, ZH).verdict(KEY)
    assert verdict.state == "translated", verdict.findings
    assert "<details><summary>参考答案</summary>" in verdict.html


def test_attributes_on_details_and_summary_are_sanitised_away(tmp_path):
    hostile = ZH.replace("<details>", '<details open ontoggle="alert(1)">').replace(
        "<summary>", '<summary onclick="alert(2)" style="color:red">')
    out = sanitize(hostile)
    assert "<details><summary>参考答案</summary>" in out
    assert "alert" not in out and "open" not in out and "style" not in out
    # and the lookup does not serve the hostile version as it is
    verdict = _catalog(tmp_path, hostile).verdict(KEY)
    assert verdict.html is None or "alert" not in verdict.html
