"""sitemap.xml: every page in every language, with hreflang alternates; only with --site-url."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from labml_site.builder.site import BuildConfig, build
from labml_site.render.sitemap import sitemap_xml

from conftest import write_tree

NS = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9", "x": "http://www.w3.org/1999/xhtml"}
PAGE = '"""\n# A page\n\nSome prose.\n"""\n\nx = 1\n'


def test_sitemap_lists_each_language_with_all_alternates():
    xml = sitemap_xml("https://example.org/docs", ["index.html", "a b/π.html"], ("en", "zh"), "en")
    root = ET.fromstring(xml)
    urls = root.findall("s:url", NS)
    assert len(urls) == 4
    locs = [u.find("s:loc", NS).text for u in urls]
    assert "https://example.org/docs/zh/a%20b/%CF%80.html" in locs
    for url in urls:
        links = {l.get("hreflang"): l.get("href") for l in url.findall("x:link", NS)}
        assert links == {
            "en": links["x-default"],
            "zh": links["en"].replace("/docs/", "/docs/zh/"),
            "x-default": links["en"],
        }
        assert all(h.startswith("https://example.org/docs/") for h in links.values())


def test_sitemap_needs_a_site_url():
    with pytest.raises(ValueError, match="site-url"):
        sitemap_xml("", ["index.html"], ("en",), "en")


def test_build_writes_a_sitemap_only_with_a_site_url(tmp_path):
    src = write_tree(tmp_path / "src", {"t/p.py": PAGE, "t/q.py": PAGE})
    plain = build(BuildConfig(src, tmp_path / "tr", tmp_path / "plain")).out
    assert not (plain / "sitemap.xml").exists()
    site = build(BuildConfig(src, tmp_path / "tr", tmp_path / "site", site_url="https://example.org/")).out
    root = ET.fromstring((site / "sitemap.xml").read_text(encoding="utf-8"))
    locs = {u.find("s:loc", NS).text for u in root.findall("s:url", NS)}
    expected = {f"https://example.org/{p}{u}" for p in ("", "zh/", "ru/") for u in ("index.html", "t/index.html", "t/p.html", "t/q.html")}
    assert locs == expected  # no 404, search or status pages
