"""Outputs as a registry of kinds (render/outputs/): the page-sections JSON, a kind added as one
module plus its registration, is cached and incremental like every other output."""
from __future__ import annotations

import json
import re

from labml_site.builder.site import BuildConfig, build
from labml_site.render import outputs

PAGE = '''"""
# {title}

The first section's prose, with $x^2$.
"""

import math


def scale(x):
    """
    ## Scaling

    Multiply by the root of the width.
    """
    return x * math.sqrt(2)
'''


def _site(tmp_path, n=3):
    src, tr = tmp_path / "src", tmp_path / "tr"
    src.mkdir()
    tr.mkdir()
    for i in range(n):
        (src / f"p{i}.py").write_text(PAGE.format(title=f"Page {i}"), encoding="utf-8")
    return src, tr


def _config(tmp_path, src, tr, **extra):
    return BuildConfig(src, tr, tmp_path / "site", langs=("en", "zh"), jobs=1, markdown=True, **extra)


def test_the_sections_kind_is_registered_per_language():
    assert outputs.PageSections in set(outputs.kinds(per_language=True))
    assert outputs.PageSections not in set(outputs.kinds(per_language=False))


def test_each_page_has_its_sections_as_json_matching_its_html(tmp_path, monkeypatch):
    monkeypatch.setenv("LABML_SITE_CACHE_DIR", str(tmp_path / "cache"))
    src, tr = _site(tmp_path)
    result = build(_config(tmp_path, src, tr))
    assert result.ok
    for lang, prefix in (("en", ""), ("zh", "zh/")):
        found = json.loads((result.out / f"{prefix}p1.sections.json").read_text(encoding="utf-8"))
        html = (result.out / f"{prefix}p1.html").read_text(encoding="utf-8")
        assert found["page"] == "p1.html" and found["lang"] == lang and found["title"] == "Page 1"
        ids = [s["id"] for s in found["sections"]]
        assert ids and all(f'id="{i}"' in html for i in ids)
        prose = " ".join(s["prose"] for s in found["sections"])
        assert "Multiply by the root of the width." in prose and "<" not in prose
        assert any(s["lines"] for s in found["sections"])
        assert all(s["translated"] is (lang == "en") for s in found["sections"] if s["prose"])


def test_the_sections_json_is_reused_and_only_a_changed_page_is_made_again(tmp_path, monkeypatch):
    monkeypatch.setenv("LABML_SITE_CACHE_DIR", str(tmp_path / "cache"))
    src, tr = _site(tmp_path)
    first = build(_config(tmp_path, src, tr))
    files = {p: (first.out / p).stat().st_ino for p in ("p0.sections.json", "p1.sections.json", "zh/p1.sections.json")}
    # A translation of one page, in one language: only that page's JSON (and HTML) in that language.
    blocks = [b for s in first.pages["p1.py"].sections for b in s.blocks]
    key = next(b.key for b in blocks if "Multiply" in b.key)
    (tr / "p1.zh.json").write_text(json.dumps({key: "乘以宽度的平方根。"}, ensure_ascii=False), encoding="utf-8")
    second = build(_config(tmp_path, src, tr))
    assert second.ok and second.stats.render_reused > 0
    assert (second.out / "p0.sections.json").stat().st_ino == files["p0.sections.json"]
    assert (second.out / "p1.sections.json").stat().st_ino == files["p1.sections.json"]
    changed = json.loads((second.out / "zh/p1.sections.json").read_text(encoding="utf-8"))
    assert "乘以宽度的平方根。" in " ".join(s["prose"] for s in changed["sections"])
    assert any(s["translated"] for s in changed["sections"])


def test_linking_elsewhere_does_not_make_the_sections_again(tmp_path, monkeypatch):
    """Known by the page's text alone: a new definition on another page changes this page's
    linked code (its HTML), never its sections."""
    monkeypatch.setenv("LABML_SITE_CACHE_DIR", str(tmp_path / "cache"))
    src, tr = _site(tmp_path, n=2)
    first = build(_config(tmp_path, src, tr))
    before = (first.out / "p0.sections.json").stat().st_ino
    (src / "p1.py").write_text(PAGE.format(title="Page 1") + "\n\ndef sqrt(x):\n    return x\n", encoding="utf-8")
    second = build(_config(tmp_path, src, tr))
    assert second.ok and (second.out / "p0.sections.json").stat().st_ino == before
    assert re.search(r"sections", (second.out / "p1.sections.json").read_text(encoding="utf-8"))
