"""The project's own site: a full build of source/ in every language, and a real-browser smoke test."""
from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

pytestmark = pytest.mark.slow


def test_full_build_of_source_in_three_languages(built_site):
    # (not the "View source" pages, `x.py.html`: the file itself, no sections)
    pages = sorted(p.relative_to(built_site).as_posix() for p in built_site.glob("annotated_attention/*.html") if not p.name.endswith(".py.html"))
    assert "annotated_attention/index.html" in pages and "annotated_attention/mha.html" in pages
    for prefix in ("", "zh/", "ru/"):
        for rel in pages:
            html = (built_site / prefix / rel).read_text(encoding="utf-8")
            soup = BeautifulSoup(html, "html.parser")
            assert soup.html["lang"] == (prefix.rstrip("/") or "en")
            assert soup.select(".section"), f"{prefix}{rel} has no sections"


def test_site_makes_no_outside_requests_in_markup(built_site):
    # No CDN, analytics, fonts or badges: no src/href attribute that loads from elsewhere.
    for path in built_site.rglob("*.html"):
        soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
        for tag in soup.find_all(["script", "link", "img", "iframe", "source", "video", "audio"]):
            for attr in ("src", "href"):
                value = tag.get(attr, "")
                if tag.name == "link" and tag.get("rel") == ["alternate"]:
                    continue  # hreflang alternates are navigation, not requests
                assert not value.startswith(("http:", "https:", "//")), f"{path}: {tag}"
    for css in built_site.rglob("*.css"):
        assert "url(http" not in css.read_text() and "url(//" not in css.read_text(), css


@pytest.mark.browser
def test_browser_smoke_mathml_laid_out_and_no_outside_requests(built_site, browser):
    page = browser.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto((built_site / "annotated_attention/mha.html").as_uri())
    page.wait_for_load_state("load")
    sizes = page.eval_on_selector_all("math", "els => els.map(e => { const r = e.getBoundingClientRect(); return [r.width, r.height]; })")
    assert sizes, "no MathML on the page"
    assert all(w > 0 and h > 0 for w, h in sizes), sizes
    outside = [u for u in requests if not u.startswith("file://")]
    assert not outside, outside
    assert not errors, errors
    page.close()
