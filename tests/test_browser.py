"""The reader's experience, checked in a real browser (Debian's Chromium through Playwright).

The project's own site is built once (`built_site`) and served on a loopback port by a thread
in this process; one browser serves every test. Screenshots for people to look at go to
`artifacts/screenshots/` (git-ignored).
"""
from __future__ import annotations

import base64
import functools
import json
import http.server
import posixpath
import re
import threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urljoin, urlparse

import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS, ROOT, chromium_available

pytestmark = pytest.mark.browser

LANGS = ("en", "zh", "ru")
PREFIX = {"en": "", "zh": "zh/", "ru": "ru/"}
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
UTILITY_PAGES = {"404.html", "search.html", "translation-status.html"}


# ---------------------------------------------------------------------------------------------
# Fixtures: a quiet loopback server, pages listed from the built tree


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site; a missing file gets the site's 404 page, as a real host would."""

    def log_message(self, format, *args):  # noqa: A002
        pass

    def send_error(self, code, message=None, explain=None):
        not_found = Path(self.directory) / "404.html"
        if code == 404 and not_found.is_file():
            body = not_found.read_bytes()
            self.send_response(404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
            return
        super().send_error(code, message, explain)


@pytest.fixture(scope="module")
def base_url(built_site):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(built_site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()


def html_pages(site: Path, lang: str) -> list[str]:
    """Every HTML page of one language, as site-relative URLs."""
    root = site / PREFIX[lang] if PREFIX[lang] else site
    found = []
    for path in sorted(root.rglob("*.html")):
        rel = path.relative_to(site).as_posix()
        if lang == "en" and rel.split("/")[0] in ("zh", "ru"):
            continue
        found.append(rel)
    return found


def content_pages(site: Path, lang: str) -> list[str]:
    """Pages with annotated sections (prose beside code)."""
    pages = []
    for rel in html_pages(site, lang):
        if posixpath.basename(rel) in UTILITY_PAGES:
            continue
        if 'class="section' in (site / rel).read_text(encoding="utf-8"):
            pages.append(rel)
    return pages


class Recorder:
    """Collects console errors, page errors and every request a page makes."""

    def __init__(self, page):
        self.errors: list[str] = []
        self.requests: list[str] = []
        page.on("console", lambda m: self.errors.append(f"{page.url}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(f"{page.url}: {e}"))
        page.on("request", lambda r: self.requests.append(r.url))

    def outside(self, base: str) -> list[str]:
        return [u for u in self.requests if not (u.startswith(base) or u.startswith(("data:", "blob:", "about:")))]


def new_page(browser, viewport=DESKTOP, scheme="light", **kwargs):
    context = browser.new_context(viewport=viewport, color_scheme=scheme, **kwargs)
    page = context.new_page()
    return context, page, Recorder(page)


# ---------------------------------------------------------------------------------------------
# Layout: side by side on a desktop, stacked on a phone; math laid out; code highlighted

LAYOUT_JS = """() => {
  const box = e => { const r = e.getBoundingClientRect(); return {top: r.top + scrollY, left: r.left, right: r.right, bottom: r.bottom + scrollY, width: r.width, height: r.height}; };
  // (a page that is almost all prose reads as one column: test_index_page_reads_as_one_column…)
  const sections = [...document.querySelectorAll('.section')].filter(s => !s.closest('.prose-page') && s.querySelector(':scope > .code') && s.querySelector(':scope > .docs').textContent.trim());
  return {
    sections: sections.map(s => ({id: s.id, docs: box(s.querySelector(':scope > .docs')), code: box(s.querySelector(':scope > .code')),
      firstText: (() => { const d = s.querySelector(':scope > .docs'); const first = [...d.children].find(c => !c.classList.contains('section-link')); return first ? box(first) : null; })(),
      firstLine: box(s.querySelector(':scope > .code .line'))})),
    prosePage: !!document.querySelector('.page.prose-page'),
    // (the English originals of a translated page are hidden until the reader asks for them)
    math: [...document.querySelectorAll('math')].filter(m => !m.closest('.original')).map(m => { const r = m.getBoundingClientRect(); return [r.width, r.height]; }),
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: innerWidth,
  };
}"""

COLOURS_JS = """() => {
  const code = document.querySelector('.section .code code');
  const keyword = document.querySelector('.section .code .k, .section .code .kn');
  if (!code || !keyword) return null;
  return {plain: getComputedStyle(code).color, keyword: getComputedStyle(keyword).color};
}"""


@pytest.mark.parametrize("lang", LANGS)
def test_desktop_prose_beside_code_math_laid_out_code_highlighted(built_site, browser, base_url, lang):
    context, page, rec = new_page(browser, DESKTOP)
    problems: list[str] = []
    pages = content_pages(built_site, lang)
    assert pages, f"no content pages for {lang}"
    for rel in pages:
        page.goto(base_url + rel)
        layout = page.evaluate(LAYOUT_JS)
        if not layout["sections"] and not layout["prosePage"]:
            problems.append(f"{rel}: no section with prose and code")
        for s in layout["sections"]:
            docs, code = s["docs"], s["code"]
            if not docs["right"] <= code["left"] + 1:
                problems.append(f"{rel}#{s['id']}: prose ({docs['left']:.0f}–{docs['right']:.0f}) is not left of code ({code['left']:.0f})")
            if abs(docs["top"] - code["top"]) > 3:
                problems.append(f"{rel}#{s['id']}: prose starts at {docs['top']:.0f}, code at {code['top']:.0f}")
            if s["firstText"] and abs(s["firstText"]["top"] - s["firstLine"]["top"]) > 24:
                problems.append(f"{rel}#{s['id']}: first prose line at {s['firstText']['top']:.0f}, first code line at {s['firstLine']['top']:.0f}")
        bad_math = [size for size in layout["math"] if not (size[0] > 0 and size[1] > 0)]
        if bad_math:
            problems.append(f"{rel}: {len(bad_math)} of {len(layout['math'])} <math> elements have no size")
        if layout["scrollWidth"] > layout["innerWidth"]:
            problems.append(f"{rel}: scrolls sideways at 1280 px ({layout['scrollWidth']} > {layout['innerWidth']})")
        colours = page.evaluate(COLOURS_JS)
        if colours and colours["plain"] == colours["keyword"]:
            problems.append(f"{rel}: keywords are not highlighted ({colours})")
    assert not problems, "\n".join(problems)
    assert not rec.errors, rec.errors
    assert not rec.outside(base_url), rec.outside(base_url)
    context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_phone_stacks_sections_and_never_scrolls_sideways(built_site, browser, base_url, lang):
    context, page, rec = new_page(browser, PHONE, has_touch=True, is_mobile=True)
    problems: list[str] = []
    for rel in html_pages(built_site, lang):
        page.goto(base_url + rel)
        layout = page.evaluate(LAYOUT_JS)
        if layout["scrollWidth"] > layout["innerWidth"]:
            problems.append(f"{rel}: scrolls sideways ({layout['scrollWidth']} > {layout['innerWidth']})")
        for s in layout["sections"]:
            if s["code"]["top"] < s["docs"]["bottom"] - 1:
                problems.append(f"{rel}#{s['id']}: code is beside the prose, not below it")
            if s["code"]["width"] < PHONE["width"] * 0.9:
                problems.append(f"{rel}#{s['id']}: code is {s['code']['width']:.0f} px wide on a {PHONE['width']} px screen")
    assert not problems, "\n".join(problems)
    assert not rec.errors, rec.errors
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_code_keywords_have_their_own_colour_in_both_themes(browser, base_url, scheme):
    context, page, _ = new_page(browser, DESKTOP, scheme)
    page.goto(base_url + "annotated_attention/mha.html")
    colours = page.evaluate(COLOURS_JS)
    assert colours and colours["plain"] != colours["keyword"], colours
    context.close()


# ---------------------------------------------------------------------------------------------
# Navigation: anchors, language switcher, crawl


def test_section_anchors_scroll_their_section_into_view(built_site, browser, base_url):
    context, page, rec = new_page(browser, DESKTOP)
    rel = "annotated_attention/mha.html"
    ids = page.goto(base_url + rel) and page.eval_on_selector_all(".section", "els => els.map(e => e.id)")
    assert len(ids) > 3
    for section_id in (ids[len(ids) // 2], ids[-2], ids[-1]):
        page.goto(f"{base_url}{rel}#{section_id}")
        top, bottom, height = page.evaluate(
            "id => { const r = document.getElementById(id).getBoundingClientRect(); return [r.top, r.bottom, innerHeight]; }", section_id
        )
        assert bottom > 0 and top < height, f"#{section_id} is not in the viewport ({top:.0f}..{bottom:.0f}, height {height})"
        assert page.evaluate("location.hash") == f"#{section_id}"
    assert not rec.errors, rec.errors
    context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_language_switcher_lands_on_the_same_page_and_section(built_site, browser, base_url, lang):
    context, page, rec = new_page(browser, DESKTOP)
    rel = "annotated_attention/mha.html"
    section = "MultiHeadAttention"
    for other in LANGS:
        if other == lang:
            continue
        page.goto(f"{base_url}{PREFIX[lang]}{rel}#{section}")
        assert page.evaluate("document.documentElement.lang") == lang
        with page.expect_navigation():
            page.click(f".languages a[hreflang={other}]")
        assert page.url == f"{base_url}{PREFIX[other]}{rel}#{section}"
        assert page.evaluate("document.documentElement.lang") == other
        current = page.text_content(".languages [aria-current]")
        assert page.get_attribute(".languages [aria-current]", "lang") == other, current
    assert not rec.errors, rec.errors
    context.close()


class _Refs(HTMLParser):
    """Every URL a page refers to (links, alternates, assets, form actions) and its element ids."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        for name in ("href", "src", "action"):
            if a.get(name) and tag in ("a", "link", "script", "img", "source", "form"):
                self.urls.append(a[name])


def _refs(path: Path) -> _Refs:
    parser = _Refs()
    parser.feed(path.read_text(encoding="utf-8"))
    parser.close()
    return parser


def test_crawl_from_each_home_page_reaches_everything_without_broken_links(built_site):
    """Follow every internal URL from the three home pages: each target exists, each #fragment
    names an element of its target, and every built page is reached."""
    parsed_pages: dict[Path, _Refs] = {}

    def refs(path: Path) -> _Refs:
        if path not in parsed_pages:
            parsed_pages[path] = _refs(path)
        return parsed_pages[path]

    seen: set[str] = set()
    queue = [PREFIX[lang] + "index.html" for lang in LANGS]
    broken: list[str] = []
    while queue:
        rel = queue.pop()
        if rel in seen:
            continue
        seen.add(rel)
        path = built_site / rel
        if not rel.endswith(".html"):
            continue
        for url in refs(path).urls:
            parsed = urlparse(url)
            if parsed.scheme in ("http", "https", "mailto") or url.startswith("//"):
                continue  # outside links are navigation only; no request leaves the site by itself
            target_url, fragment = urldefrag(urljoin("/" + rel, url))
            target = unquote(urlparse(target_url).path).lstrip("/")
            target_path = built_site / target
            if target_path.is_dir():
                target, target_path = posixpath.join(target, "index.html"), target_path / "index.html"
            if not target_path.is_file():
                broken.append(f"{rel}: {url} → {target} does not exist")
                continue
            if fragment and target.endswith(".html") and unquote(fragment) not in refs(target_path).ids:
                broken.append(f"{rel}: {url} → no element with id {fragment!r} in {target}")
            queue.append(target)
    assert not broken, "\n".join(broken[:50])
    built = {p.relative_to(built_site).as_posix() for p in built_site.rglob("*.html")}
    # A server shows 404.html for missing addresses; nothing links to it on purpose.
    unreachable = sorted(p for p in built - seen if posixpath.basename(p) != "404.html")
    assert not unreachable, unreachable
    for extra in ("annotated_attention/mha.py", "annotated_attention/mha.ipynb"):
        assert extra in seen, f"{extra} is not linked from any page"


# ---------------------------------------------------------------------------------------------
# Linked code


def test_defined_names_link_to_their_definition_and_clicks_mark_uses(browser, base_url):
    context, page, rec = new_page(browser, DESKTOP)
    page.goto(base_url + "annotated_attention/transformer.html")
    link = page.locator(".code a.def-link", has_text=re.compile(r"^MultiHeadAttention$")).first
    assert link.count() == 1, "MultiHeadAttention is not linked on the transformer page"
    with page.expect_navigation():
        link.click()
    assert page.url == base_url + "annotated_attention/mha.html#MultiHeadAttention"
    top = page.evaluate("document.getElementById('MultiHeadAttention').getBoundingClientRect().top")
    assert -1 < top < DESKTOP["height"] / 2, top  # (the scroll may land a sub-pixel above the top)

    # Clicking a plain name marks every use of that name on the page, and only those.
    name = page.evaluate("""() => {
      const counts = {};
      document.querySelectorAll('.code .n').forEach(e => counts[e.textContent] = (counts[e.textContent] || 0) + 1);
      return Object.keys(counts).find(k => counts[k] >= 3 && k.length > 2);
    }""")
    assert name
    page.locator(".code .n", has_text=re.compile(f"^{re.escape(name)}$")).first.click()
    marked = page.eval_on_selector_all(".use-highlight", "els => els.map(e => e.textContent)")
    total = page.evaluate("n => [...document.querySelectorAll('.code .n')].filter(e => e.textContent === n).length", name)
    assert len(marked) >= total >= 3 and set(marked) == {name}, (name, marked, total)
    page.keyboard.press("Escape")
    assert page.locator(".use-highlight").count() == 0
    assert not rec.errors, rec.errors
    context.close()


# ---------------------------------------------------------------------------------------------
# Search


def _cjk_sample(built_site: Path) -> str | None:
    """Two Chinese characters that occur in the Chinese index, or None when nothing is translated."""
    from labml_site.render.search_index import parse_index_js

    data = parse_index_js((built_site / "zh/search-index.js").read_text(encoding="utf-8"))
    for row in data["entries"]:
        m = re.search(r"[\u4e00-\u9fff]{4}", row[4])
        if m:
            return m.group(0)[1:3]  # from inside a word run, so it is not a word boundary trick
    return None


def test_search_box_is_keyboard_driven(browser, base_url):
    context, page, rec = new_page(browser, DESKTOP)
    page.goto(base_url + "annotated_attention/feed_forward.html")
    page.keyboard.press("Tab")  # skip link
    page.focus("#search-input")
    page.keyboard.type("softmax")
    page.wait_for_selector("#search-results:not([hidden]) [role=option]")
    options = page.locator("#search-results [role=option]")
    assert options.count() >= 1
    assert page.get_attribute("#search-input", "aria-expanded") == "true"
    page.keyboard.press("ArrowDown")
    first = options.nth(0)
    assert first.get_attribute("aria-selected") == "true"
    assert page.get_attribute("#search-input", "aria-activedescendant") == first.get_attribute("id")
    if options.count() > 1:
        page.keyboard.press("ArrowDown")
        page.keyboard.press("ArrowUp")
        assert first.get_attribute("aria-selected") == "true"
    target = first.get_attribute("href")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.url == urljoin(base_url + "annotated_attention/feed_forward.html", target)
    assert "softmax" in page.content().lower()

    page.focus("#search-input")
    page.keyboard.type("attention")
    page.wait_for_selector("#search-results:not([hidden])")
    page.keyboard.press("Escape")
    assert page.locator("#search-results").is_hidden()
    assert page.get_attribute("#search-input", "aria-expanded") == "false"
    page.keyboard.press("Escape")
    assert page.input_value("#search-input") == ""
    assert not rec.errors, rec.errors
    context.close()


@pytest.mark.parametrize("viewport,rel", [(DESKTOP, "ru/annotated_attention/mha.html"), (DESKTOP, "index.html"), (PHONE, "zh/annotated_attention/mha.html")])
def test_search_suggestions_stay_on_screen(browser, base_url, viewport, rel):
    """The list opens toward the side with room, whether the header put the box left or right."""
    context, page, rec = new_page(browser, viewport)
    page.goto(base_url + rel)
    page.fill("#search-input", "attention")
    page.wait_for_selector("#search-results [role=option]")
    left, right, width = page.evaluate("(() => { const r = document.getElementById('search-results').getBoundingClientRect(); return [r.left, r.right, innerWidth]; })()")
    assert 0 <= left and right <= width, (left, right, width)
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    assert not rec.errors, rec.errors
    context.close()


def test_search_finds_chinese_text_by_substring(built_site, browser, base_url):
    sample = _cjk_sample(built_site)
    if sample is None:
        pytest.skip("the Chinese index has no Chinese text yet (no zh translations)")
    context, page, rec = new_page(browser, DESKTOP)
    page.goto(base_url + "zh/index.html")
    page.fill("#search-input", sample)
    page.wait_for_selector("#search-results [role=option]")
    marks = page.eval_on_selector_all("#search-results mark", "els => els.map(e => e.textContent)")
    assert sample in marks, (sample, marks)
    assert not rec.errors, rec.errors
    context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_search_page_lists_results_for_the_query(browser, base_url, lang):
    context, page, rec = new_page(browser, DESKTOP)
    page.goto(f"{base_url}{PREFIX[lang]}search.html?q=MultiHeadAttention")
    page.wait_for_selector("#search-page-results li a")
    hrefs = page.eval_on_selector_all("#search-page-results li a", "els => els.map(e => e.href)")
    assert any(h.startswith(f"{base_url}{PREFIX[lang]}annotated_attention/mha.html") for h in hrefs), hrefs
    assert page.input_value("#search-page-input") == "MultiHeadAttention"
    page.fill("#search-page-input", "zzzz-nothing-matches")
    page.wait_for_function("document.querySelectorAll('#search-page-results li').length === 0")
    assert page.text_content("#search-page-status").strip()
    assert not rec.errors, rec.errors
    context.close()


def test_search_page_without_javascript_says_so(browser, base_url):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(base_url + "ru/search.html?q=x")
    message = page.locator(".search-noscript")
    assert message.is_visible()
    assert "JavaScript" in message.text_content()
    assert page.locator("#search-page-results li").count() == 0
    context.close()


def test_pages_work_without_javascript(browser, base_url):
    """Layout, math, highlighting and definition links need no script; scripts only add to them."""
    context = browser.new_context(java_script_enabled=False, viewport=DESKTOP)
    page = context.new_page()
    page.goto(base_url + "zh/annotated_attention/transformer.html")
    layout = page.evaluate(LAYOUT_JS)
    assert layout["sections"] and all(s["docs"]["right"] <= s["code"]["left"] + 1 for s in layout["sections"])
    assert all(w > 0 and h > 0 for w, h in layout["math"])
    assert page.locator(".copy-button").count() == 0  # added by site.js, so absent here
    with page.expect_navigation():
        page.locator(".code a.def-link", has_text=re.compile(r"^FeedForward$")).first.click()
    assert page.url == base_url + "zh/annotated_attention/feed_forward.html#FeedForward"
    context.close()


def test_site_works_from_file_urls_with_search(built_site, browser):
    """Opened from disk: the page, its math font and the search index load, nothing else."""
    context, page, rec = new_page(browser, DESKTOP)
    page.goto((built_site / "ru/annotated_attention/mha.html").as_uri())
    page.fill("#search-input", "softmax")
    page.wait_for_selector("#search-results [role=option]")
    assert page.evaluate("typeof window.labmlSearchIndex") == "object"
    assert page.evaluate("window.labmlSearchIndex.lang") == "ru"
    outside = [u for u in rec.requests if not u.startswith("file://")]
    assert not outside, outside
    assert not rec.errors, rec.errors
    context.close()


# ---------------------------------------------------------------------------------------------
# Run it yourself: copy button, source and notebook links


def test_copy_button_is_reachable_by_keyboard_and_copies_the_code(built_site, browser, base_url):
    context, page, rec = new_page(browser, DESKTOP)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url.rstrip("/"))
    page.goto(base_url + "annotated_attention/mha.html")
    for _ in range(80):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('copy-button')"):
            break
    else:
        pytest.fail("Tab never reached a copy button")
    assert page.evaluate("getComputedStyle(document.activeElement).opacity") == "1"
    lines = page.evaluate("document.activeElement.closest('.code').dataset.lines")
    page.keyboard.press("Enter")
    page.wait_for_function("document.activeElement.textContent !== document.documentElement.dataset.copy")
    copied = page.evaluate("navigator.clipboard.readText()")
    start, end = (int(n) for n in lines.split("-"))
    source = (built_site / "annotated_attention/mha.py").read_text(encoding="utf-8").split("\n")
    assert copied == "\n".join(source[start - 1 : end])
    assert not rec.errors, rec.errors
    context.close()


def test_page_links_to_its_source_and_notebook(built_site, browser, base_url):
    context, page, _ = new_page(browser, DESKTOP)
    page.goto(base_url + "zh/annotated_attention/mha.html")
    for suffix in (".py.html", ".ipynb"):
        href = page.get_attribute(f".page-tools a[href$='{suffix}']", "href")
        assert href, f"no {suffix} link"
        response = page.request.get(urljoin(page.url, href))
        assert response.ok, href
    english = json.loads(page.request.get(urljoin(page.url, page.get_attribute(".page-tools a[href$='.ipynb']", "href"))).text())
    # The zh notebook is made from the page on click: the English cells, the page's prose.
    with page.expect_download() as info:
        page.click(".page-tools a[href$='.ipynb']")
    download = info.value
    assert download.suggested_filename == "mha.ipynb"
    notebook = json.loads(Path(download.path()).read_text(encoding="utf-8"))
    assert notebook["metadata"]["title"] == page.text_content("title").split(" · ")[0]
    assert [c["cell_type"] for c in notebook["cells"]] == [c["cell_type"] for c in english["cells"]]
    assert [c["source"] for c in notebook["cells"] if c["cell_type"] == "code"] == [c["source"] for c in english["cells"] if c["cell_type"] == "code"]
    markdown = "".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown")
    assert re.search("[\u4e00-\u9fff]", markdown) and "$" in markdown and not re.search(r"</?(math|span|p|div|code|a)\b", markdown)
    import nbformat
    nbformat.validate(nbformat.from_dict(notebook))
    # Its figures are embedded as the zh page shows them (labels translated), in the cells that
    # show them: no relative link is left to break once the file is downloaded.
    embedded = {name: bundle for c in notebook["cells"] for name, bundle in c.get("attachments", {}).items()}
    assert set(embedded) == {"causal_mask.svg", "padding_mask.svg"}
    for name, bundle in embedded.items():
        published = page.request.get(urljoin(page.url, "figures/" + name)).body()
        assert base64.b64decode(bundle["image/svg+xml"]) == published
    assert "(attachment:causal_mask.svg)" in markdown and "(figures/" not in markdown
    # "View source" opens a page: the whole file, highlighted, line-numbered, with a download link
    # (one page for every language: the code is the same).
    with page.expect_navigation():
        page.click(".page-tools a[href$='.py.html']")
    assert page.url == base_url + "annotated_attention/mha.py.html"
    lines = page.eval_on_selector_all(".source-view .line", "els => els.map(e => e.textContent)")
    source = (built_site / "annotated_attention/mha.py").read_text(encoding="utf-8").rstrip("\n").split("\n")
    assert [l if l != " " else "" for l in lines] == source
    assert page.eval_on_selector_all(".source-view .kn, .source-view .k", "els => els.length") > 10  # highlighted
    download = page.get_attribute("a[download]", "href")
    assert download.endswith("mha.py") and page.request.get(urljoin(page.url, download)).text().rstrip("\n").split("\n") == source
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    context.close()


# ---------------------------------------------------------------------------------------------
# Accessibility: skip link, axe-core (WCAG AA contrast and the rest), print, 404, metadata


def test_skip_link_is_first_and_moves_focus_to_the_content(browser, base_url):
    context, page, _ = new_page(browser, DESKTOP)
    page.goto(base_url + "annotated_attention/mha.html")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip-link"
    top = page.evaluate("document.activeElement.getBoundingClientRect().top")
    assert top >= 0, "the focused skip link is off screen"
    page.keyboard.press("Enter")
    assert page.evaluate("location.hash") == "#main"
    assert page.evaluate("document.activeElement.id") == "main"
    context.close()


def _axe_pages(lang: str) -> list[str]:
    p = PREFIX[lang]
    return [
        f"{p}annotated_attention/mha.html",  # a tutorial page
        f"{p}annotated_attention/index.html",  # a folder listing
        f"{p}index.html",  # the home page
        f"{p}translation-status.html",
        f"{p}search.html?q=attention",
        f"{p}does-not-exist.html",  # the 404 page, as a server shows it
    ] + (["annotated_attention/mha.py.html"] if lang == "en" else [])  # "View source", one for all


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("lang", LANGS)
def test_axe_finds_no_serious_or_critical_violations(browser, base_url, lang, scheme):
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: run `npm ci` at the repository root")
    failures: list[str] = []
    # Every kind of page on a desktop, and the tutorial page on a phone too (wide formulas and
    # code scroll in their own boxes there).
    runs = [(DESKTOP, rel) for rel in _axe_pages(lang)] + [(PHONE, _axe_pages(lang)[0])]
    context, page, _ = new_page(browser, DESKTOP, scheme)
    for viewport, rel in runs:
        page.set_viewport_size(viewport)
        page.goto(base_url + rel)
        if "search.html" in rel:
            page.wait_for_selector("#search-page-results li")
        page.add_script_tag(path=str(AXE))
        result = page.evaluate("""() => axe.run(document, {
            runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']},
            resultTypes: ['violations'],
        })""")
        for v in result["violations"]:
            if v["impact"] in ("serious", "critical"):
                targets = [" ".join(map(str, n["target"])) for n in v["nodes"][:5]]
                failures.append(f"{rel} [{scheme}, {viewport['width']} px] {v['id']} ({v['impact']}, {len(v['nodes'])} nodes): {v['help']} {targets}")
    assert not failures, "\n".join(failures)
    context.close()


def test_print_stylesheet_hides_chrome_and_stacks_code_under_prose(browser, base_url):
    context, page, _ = new_page(browser, DESKTOP)
    page.goto(base_url + "annotated_attention/mha.html")
    page.emulate_media(media="print")
    for selector in (".site-header", ".page-tools", ".site-footer", ".copy-button"):
        assert page.locator(selector).first.is_hidden(), f"{selector} is printed"
    layout = page.evaluate(LAYOUT_JS)
    assert layout["sections"]
    for s in layout["sections"]:
        assert s["code"]["top"] >= s["docs"]["bottom"] - 1, f"#{s['id']}: code beside prose in print"
    wraps = page.evaluate("getComputedStyle(document.querySelector('pre.code')).whiteSpace")
    assert wraps == "pre-wrap", "long code lines would be cut off on paper"
    context.close()


def test_404_page_is_styled_at_any_depth_and_leads_home(browser, base_url):
    context, page, _ = new_page(browser, DESKTOP)
    response = page.goto(base_url + "annotated_attention/deep/missing/page.html")
    assert response.status == 404
    assert page.evaluate("getComputedStyle(document.querySelector('.site-header')).display") == "flex", "stylesheet not applied"
    assert page.locator("meta[name=robots][content=noindex]").count() == 1
    with page.expect_navigation():
        page.click("main a[href$='index.html']")
    assert page.url == base_url + "index.html"
    context.close()


def test_metadata_favicon_and_open_graph(built_site, browser, base_url):
    context, page, rec = new_page(browser, DESKTOP)
    page.goto(base_url + "ru/annotated_attention/mha.html")
    meta = page.evaluate("""() => Object.fromEntries([...document.querySelectorAll('meta[property^="og:"]')].map(m => [m.getAttribute('property'), m.content]))""")
    title = page.text_content("main h1").strip()
    assert meta["og:title"] == title and meta["og:locale"] == "ru" and meta.get("og:description")
    icon = page.get_attribute("link[rel=icon]", "href")
    assert page.request.get(urljoin(page.url, icon)).ok
    alternates = page.eval_on_selector_all("link[rel=alternate]", "els => els.map(e => e.hreflang)")
    assert set(alternates) >= set(LANGS)
    context.close()


# ---------------------------------------------------------------------------------------------
# Reading in order: previous/next, table of contents, prose pages, code and math that fit


def _walk_by_next(page, base_url: str, start: str) -> list[str]:
    seen = []
    page.goto(base_url + start)
    while True:
        seen.append(page.url[len(base_url):].split("#")[0])
        assert len(seen) < 60, seen
        nxt = page.query_selector(".pager-bottom a[rel=next]")
        if nxt is None:
            return seen
        # The bottom link is below the page's last section, the top one above its first.
        boxes = page.evaluate("""() => {
          const r = e => e ? e.getBoundingClientRect().top + scrollY : null;
          const secs = document.querySelectorAll('.page > .section, .children');
          return {top: r(document.querySelector('.pager-top')), bottom: r(document.querySelector('.pager-bottom')),
                  first: secs.length ? r(secs[0]) : null, last: secs.length ? secs[secs.length - 1].getBoundingClientRect().bottom + scrollY : null};
        }""")
        if boxes["first"] is not None:
            assert boxes["top"] < boxes["first"] and boxes["bottom"] >= boxes["last"] - 1, (seen[-1], boxes)
        with page.expect_navigation():
            nxt.click()


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_next_alone_walks_the_tutorial_in_its_reading_order(built_site, browser, base_url, lang, viewport):
    context, page, rec = new_page(browser, viewport, "dark" if viewport is PHONE else "light")
    seen = _walk_by_next(page, base_url, f"{PREFIX[lang]}index.html")
    # The folder page's own list gives the order: its links, in the order its prose has them.
    listed = page.goto(f"{base_url}{PREFIX[lang]}annotated_attention/index.html") and page.eval_on_selector_all(
        ".page .section a[href$='.html']", "els => els.map(a => a.getAttribute('href')).filter(h => !h.includes('/') && h !== 'index.html')")
    listed = list(dict.fromkeys(listed))
    tutorial = [u.rsplit("/", 1)[1] for u in seen if "/annotated_attention/" in "/" + u and not u.endswith("index.html")]
    assert tutorial[: len(listed)] == listed, (tutorial, listed)
    published = {p.rsplit("/", 1)[1] for p in content_pages(built_site, lang) if "annotated_attention/" in p and not p.endswith("index.html")}
    assert set(tutorial) == published
    cards = page.eval_on_selector_all(".children li > a", "els => els.map(a => a.getAttribute('href'))")
    assert cards == tutorial
    assert not rec.errors, rec.errors
    context.close()


def test_table_of_contents_is_a_sticky_panel_that_marks_the_section_in_view(browser, base_url):
    context, page, rec = new_page(browser, DESKTOP)
    page.goto(base_url + "annotated_attention/mha.html")
    toc, article = page.evaluate("() => [document.querySelector('.toc'), document.querySelector('.page')].map(e => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top}; })")
    assert toc["right"] <= article["left"] + 1, (toc, article)
    assert page.evaluate("document.querySelector('.toc details').open")
    targets = page.eval_on_selector_all(".toc a", "els => els.map(a => a.getAttribute('href').slice(1))")
    assert len(targets) > 5
    for target in (targets[len(targets) // 3], targets[len(targets) // 2]):
        page.evaluate("id => document.getElementById(id).scrollIntoView()", target)
        page.wait_for_timeout(150)
        state = page.evaluate("""() => { const t = document.querySelector('.toc').getBoundingClientRect();
            const header = document.querySelector('.site-header').getBoundingClientRect();
            const cur = document.querySelector('.toc a[aria-current=location]');
            return {top: t.top - header.bottom, headerTop: header.top, bottom: t.bottom, current: cur && cur.getAttribute('href').slice(1),
                    curTop: cur && cur.getBoundingClientRect().top, height: innerHeight}; }""")
        assert -1 <= state["top"] < 5 and state["headerTop"] == 0, state  # sticky: under the sticky header
        assert state["current"] == target, state
        assert 0 <= state["curTop"] < state["height"], state  # the marked entry is visible
    assert not rec.errors, rec.errors
    context.close()


def test_table_of_contents_folds_on_phones(browser, base_url):
    context, page, rec = new_page(browser, PHONE)
    page.goto(base_url + "zh/annotated_attention/mha.html")
    closed = page.evaluate("() => document.querySelector('.toc').getBoundingClientRect().height")
    assert not page.evaluate("document.querySelector('.toc details').open") and closed < 60, closed
    page.keyboard.press("Tab")
    page.focus(".toc summary")
    page.keyboard.press("Enter")
    opened = page.evaluate("() => document.querySelector('.toc').getBoundingClientRect().height")
    assert opened > closed + 100
    page.click(".toc li:nth-child(3) a")
    page.wait_for_timeout(150)
    assert not page.evaluate("document.querySelector('.toc details').open")  # folds again after a jump
    assert not rec.errors, rec.errors
    context.close()


def test_index_page_reads_as_one_column_without_an_empty_code_column(browser, base_url):
    context, page, _ = new_page(browser, DESKTOP)
    page.goto(base_url + "annotated_attention/index.html")
    boxes = page.evaluate("""() => [...document.querySelectorAll('.page > .section')].map(s => {
        const d = s.querySelector(':scope > .docs').getBoundingClientRect(); const c = s.querySelector(':scope > .code');
        const cb = c && c.getBoundingClientRect(); return {docs: [d.left, d.right, d.bottom], code: cb && [cb.left, cb.top, cb.height]}; })""")
    for box in boxes:
        if box["code"]:
            assert box["code"][1] >= box["docs"][2] - 1, box  # under its prose, not beside it
            assert box["code"][2] < 80, box  # as tall as its code, not as the section
    context.close()


CODE_FIT_JS = """() => {
  const out = {overflow: [], wrapped: 0, marked: 0, covered: []};
  document.querySelectorAll('.section > .code').forEach(block => {
    const pre = block.querySelector('pre.code');
    if (pre.scrollWidth > pre.clientWidth + 1) out.overflow.push(block.parentElement.id);
    const lh = parseFloat(getComputedStyle(pre).lineHeight);
    pre.querySelectorAll('.line').forEach(line => {
      if (line.getBoundingClientRect().height > lh * 1.5) {
        out.wrapped++;
        if (getComputedStyle(line).backgroundImage.includes('gradient')) out.marked++;
      }
    });
    const button = block.querySelector('.copy-button');
    if (button) {
      button.style.opacity = '1';
      const b = button.getBoundingClientRect();
      pre.querySelectorAll('.line').forEach(line => {
        const range = document.createRange(); range.selectNodeContents(line);
        for (const r of range.getClientRects()) {
          if (r.width && r.right > b.left && r.left < b.right && r.bottom > b.top && r.top < b.bottom) { out.covered.push(line.dataset.line); }
        }
      });
    }
  });
  return out;
}"""


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_long_code_lines_wrap_with_a_marker_and_copy_never_covers_code(built_site, browser, base_url, viewport):
    context, page, _ = new_page(browser, viewport)
    wrapped = 0
    for rel in content_pages(built_site, "en"):
        page.goto(base_url + rel)
        fit = page.evaluate(CODE_FIT_JS)
        assert not fit["overflow"], (rel, fit["overflow"])  # nothing cut at the right edge
        assert fit["marked"] == fit["wrapped"], (rel, fit)  # every wrapped line shows its marker
        assert not fit["covered"], (rel, fit["covered"])
        wrapped += fit["wrapped"]
    assert wrapped > 0  # the tutorial has long lines: they did wrap
    context.close()


def test_header_stays_on_one_line_at_desktop_width(built_site, browser, base_url):
    context, page, _ = new_page(browser, DESKTOP)
    for lang in LANGS:
        for rel in html_pages(built_site, lang):
            page.goto(base_url + rel)
            rows = page.evaluate("""() => { const h = document.querySelector('.site-header');
                const boxes = [...h.querySelectorAll('.breadcrumbs li, .search, .languages li')].map(e => e.getBoundingClientRect()).filter(r => r.height);
                const top = Math.max(...boxes.map(r => r.top)), bottom = Math.min(...boxes.map(r => r.bottom));
                return {shared: top < bottom, height: h.getBoundingClientRect().height}; }""")
            assert rows["shared"] and rows["height"] < 60, (rel, rows)  # one row: every item overlaps every other
    context.close()


def test_wide_formulas_on_phones_show_that_they_scroll(built_site, browser, base_url):
    context, page, _ = new_page(browser, PHONE)
    found = 0
    for rel in content_pages(built_site, "en"):
        page.goto(base_url + rel)
        page.wait_for_timeout(100)
        for box in page.evaluate("""() => [...document.querySelectorAll('.docs math[display=block]')]
              .filter(m => m.scrollWidth > m.clientWidth + 1)
              .map(m => ({cls: m.className.baseVal === undefined ? m.getAttribute('class') : m.className.baseVal, tab: m.getAttribute('tabindex'),
                          bg: getComputedStyle(m).backgroundImage, border: getComputedStyle(m).borderBottomStyle}))"""):
            found += 1
            assert "scrolls" in (box["cls"] or "") and box["tab"] == "0" and "gradient" in box["bg"] and box["border"] == "dotted", (rel, box)
    if not found:
        pytest.skip("no display formula is wider than a phone")
    context.close()


TEX = re.compile(r"\\[A-Za-z]{2,}|\^\{|_\{")


@pytest.mark.parametrize("lang,query", [("en", "softmax"), ("en", "mask"), ("zh", "注意力"), ("ru", "внимание")])
def test_search_results_show_math_as_text_never_tex(built_site, browser, base_url, lang, query):
    from labml_site.render.search_index import parse_index_js

    data = json.dumps(parse_index_js((built_site / PREFIX[lang] / "search-index.js").read_text(encoding="utf-8")), ensure_ascii=False)
    texts = [t for t in re.findall(r'"((?:[^"\\]|\\.)*)"', data)]
    assert not [t for t in texts if TEX.search(json.loads(f'"{t}"'))], [t for t in texts if TEX.search(json.loads(f'"{t}"'))][:3]
    context, page, rec = new_page(browser, DESKTOP)
    page.goto(f"{base_url}{PREFIX[lang]}search.html?q={query}")
    try:
        page.wait_for_selector("#search-page-results li", timeout=3000)
    except Exception:
        if lang == "en":
            raise
        pytest.skip(f"no {lang} result for {query}")
    snippets = page.eval_on_selector_all("#search-page-results li", "els => els.map(e => e.textContent)")
    assert snippets and not any(TEX.search(s) for s in snippets), [s for s in snippets if TEX.search(s)][:3]
    assert not rec.errors, rec.errors
    context.close()


def test_language_switcher_keeps_the_section_in_view_without_a_fragment(browser, base_url):
    context, page, rec = new_page(browser, DESKTOP)
    rel = "annotated_attention/mha.html"
    page.goto(base_url + rel)
    # A tall section past the middle of the page, its top just under the (sticky) header.
    target = page.eval_on_selector_all(".page > .section", "els => els.slice(Math.floor(els.length / 2)).find(e => e.getBoundingClientRect().height > 300).id")
    page.evaluate("id => window.scrollTo(0, document.getElementById(id).getBoundingClientRect().top + scrollY - document.querySelector('.site-header').offsetHeight - 10)", target)
    page.wait_for_timeout(100)
    assert page.evaluate("location.hash") == ""
    with page.expect_navigation():
        page.click(".languages a[hreflang=zh]")
    assert page.url.endswith(f"zh/{rel}#{target}")
    top = page.evaluate("id => document.getElementById(id).getBoundingClientRect().top", target)
    assert 0 <= top < 200, top
    assert not rec.errors, rec.errors
    context.close()


def test_bilingual_toggle_shows_the_english_under_translations_and_is_remembered(browser, base_url):
    context, page, rec = new_page(browser, DESKTOP)
    page.goto(base_url + "zh/annotated_attention/mha.html")
    # English shown for a missing translation keeps lang="en"; the originals are not loaded
    # until the reader asks for them (one script per page, shared by every translation).
    assert page.eval_on_selector_all(".untranslated", "els => els.every(e => e.lang === 'en')")
    assert page.query_selector(".original") is None
    toggle = page.locator(".bilingual-toggle")
    assert toggle.get_attribute("data-on") == "false"
    toggle.focus()
    page.keyboard.press("Enter")  # keyboard: a real button
    assert toggle.get_attribute("data-on") == "true"
    page.wait_for_selector(".original")
    marked = page.eval_on_selector_all(".section[data-original]", "els => els.length")
    assert marked and page.eval_on_selector_all(".original", "els => els.length && els.every(e => e.lang === 'en')") == True
    # (each translated block's English under it: at least one per marked section)
    assert page.eval_on_selector_all(".section[data-original]", "els => els.filter(s => s.querySelector('.original')).length") >= marked * 0.9
    shown = page.evaluate("""() => { const o = document.querySelector('.original'); const d = o.parentElement;
        const r = o.getBoundingClientRect(), t = d.getBoundingClientRect();
        const translated = [...d.children].find(c => !c.classList.contains('section-link') && !c.classList.contains('original'));
        return {height: r.height, inside: r.left >= t.left - 1 && r.right <= t.right + 1, under: r.top >= translated.getBoundingClientRect().bottom - 1}; }""")
    assert shown["height"] > 20 and shown["inside"] and shown["under"], shown
    # Remembered on the next page, and in the other language.
    page.click(".pager-bottom a[rel=next]")
    page.wait_for_load_state()
    assert page.evaluate("document.documentElement.classList.contains('show-original')")
    page.wait_for_selector(".original")
    page.goto(base_url + "ru/annotated_attention/mha.html")
    assert page.get_attribute(".bilingual-toggle", "data-on") == "true"
    page.wait_for_selector(".original")
    page.click(".bilingual-toggle")
    assert not page.evaluate("document.querySelector('.original').offsetHeight")  # hidden again
    page.goto(base_url + "zh/annotated_attention/mha.html")
    assert page.get_attribute(".bilingual-toggle", "data-on") == "false"
    assert page.query_selector(".original") is None
    page.goto(base_url + "annotated_attention/mha.html")
    assert page.query_selector(".bilingual-toggle") is None  # nothing to compare in English
    assert not rec.errors, rec.errors
    context.close()


@pytest.mark.parametrize("lang", LANGS)
def test_page_markdown_and_llms_txt_for_machines(built_site, browser, base_url, lang):
    context, page, _ = new_page(browser, DESKTOP)
    response = page.request.get(f"{base_url}{PREFIX[lang]}llms.txt")
    assert response.ok
    listed = re.findall(r"\]\(([^)]+\.md)\)", response.text())
    assert listed and listed[0].endswith("index.html.md")
    for rel in listed:
        md = page.request.get(f"{base_url}{PREFIX[lang]}{rel}")
        assert md.ok, rel
        text = md.text()
        assert text.startswith("# ") and "<math" not in text and "<span" not in text, rel
    mha = page.request.get(f"{base_url}{PREFIX[lang]}annotated_attention/mha.html.md").text()
    assert "```python" in mha and "$" in mha and "\\sqrt" in mha  # code fenced, math as TeX
    context.close()


FIGURE_LUMA_JS = """async () => {
  const out = [];
  for (const img of [...document.querySelectorAll('.docs img[src$=".svg"]')].filter(i => !i.closest('.original'))) {
    img.loading = 'eager'; img.scrollIntoView();
    await Promise.race([img.decode().catch(() => null), new Promise(r => setTimeout(r, 3000))]);
    await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
    const c = document.createElement('canvas'); c.width = img.naturalWidth; c.height = img.naturalHeight;
    const g = c.getContext('2d'); g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data; let sum = 0;
    for (let i = 0; i < d.length; i += 4) sum += (0.2126 * d[i] + 0.7152 * d[i + 1] + 0.0722 * d[i + 2]) / 255;
    const r = img.getBoundingClientRect();
    out.push({src: img.getAttribute('src'), alt: img.alt, luma: sum / (d.length / 4), width: r.width, fits: r.right <= innerWidth});
  }
  return out;
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_figures_follow_the_theme(browser, base_url, scheme, viewport):
    context, page, rec = new_page(browser, viewport, scheme)
    for lang in LANGS:
        page.goto(f"{base_url}{PREFIX[lang]}annotated_attention/mha.html")
        figures = page.evaluate(FIGURE_LUMA_JS)
        assert figures, "no SVG figure on the page"
        for figure in figures:
            # The page's own background: white paper in light mode, the dark theme's in dark mode.
            assert (figure["luma"] > 0.6) if scheme == "light" else (figure["luma"] < 0.35), (lang, figure)
            assert figure["fits"] and figure["width"] > 200, figure
            assert figure["alt"], figure
    assert not rec.errors, rec.errors
    context.close()


# ---------------------------------------------------------------------------------------------
# Screenshots for people


def test_screenshots_for_review(browser, base_url):
    """Desktop and phone, light and dark, each language: written for people to look at."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    written = []
    shots = [(lang, f"{PREFIX[lang]}annotated_attention/mha.html", "mha") for lang in LANGS]
    shots += [(lang, f"{PREFIX[lang]}annotated_attention/mha.html#causal_mask", "figure") for lang in LANGS]
    shots += [(lang, f"{PREFIX[lang]}annotated_attention/index.html", "index") for lang in LANGS]
    shots += [("en", "annotated_attention/mha.py.html", "source")]
    shots += [("en", "index.html", "home"), ("zh", "zh/search.html?q=attention", "search"), ("ru", "ru/annotated_attention/transformer.html#TransformerLayer", "transformer")]
    for size_name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        for scheme in ("light", "dark"):
            context, page, _ = new_page(browser, viewport, scheme)
            for lang, rel, name in shots:
                page.goto(base_url + rel)
                if "search.html" in rel:
                    page.wait_for_selector("#search-page-results li")
                path = SCREENSHOTS / f"{name}-{lang}-{size_name}-{scheme}.png"
                page.screenshot(path=str(path))
                written.append(path)
            context.close()
    assert all(p.stat().st_size > 5000 for p in written)
