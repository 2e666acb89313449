"""Issue 22, names that become links: a source file or folder whose name a browser would read as a
URL scheme (`javascript:…`), another host (`//…`) or a URL with a query or fragment (`a#b`, `q?x`)
is linked as the path it is, from every output that links to a page: pages, the pager, breadcrumbs,
folder cards, the translation status table, the search index, llms.txt, the sitemap, hreflang, the
"View source" pages, "View on GitHub" and "help translate" links. Every relative link must also
still reach the file it names. Names no URL can carry (control characters, bytes that are not
UTF-8) are refused with an error naming the file.

The oracle here is the WHATWG URL parser's own first steps (strip C0 controls and spaces, drop tabs
and newlines, `\\` is `/` for http(s) and file, a scheme is ASCII letters then `:`), written out
in this file, and Chromium's `new URL()` where Chromium is installed."""
from __future__ import annotations

import os
import posixpath
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from conftest import write_tree
from labml_site.builder.site import BuildConfig, build
from labml_site.read.structure import discover, relative_url
from labml_site.render.search_index import parse_index_js

SITE_URL = "https://example.org/docs/"
SOURCE_URL = "https://github.com/o/r/blob/main/src/"
EDIT_URL = "https://github.com/o/r/edit/main/tr/"
ALLOWED_ABSOLUTE = (SITE_URL, SOURCE_URL, EDIT_URL)

PAGE = '"""\n# {title}\n\nSome prose about {title}.\n"""\n\nx = 1\n'
# Names a browser reads as something else than a path when they start a relative URL, or that
# cut a URL short: schemes, other hosts, queries, fragments, percent signs, backslashes, spaces.
HOSTILE = [
    "javascript:alert(1).py",
    "JaVaScRiPt:alert(11).md",
    "data:text,x.py",
    "vbscript:x.py",
    "mailto:x.py",
    "a#b.py",
    "q?x=1.py",
    "%2F%2Fevil.example.py",
    "50%.py",
    "back\\slash.py",
    "sp ace.py",
    "paren(s).py",
    "quote'd.py",
    "amp&er.py",
    "plus+sign.py",
    "semi;colon.py",
    "braces{x}.py",
    "caret^.py",
    "tick`.py",
    "at@host.py",
    "中文.py",
]
HOSTILE_FOLDERS = [
    "javascript:alert(2)",  # a folder with an index page
    "data:text,y",  # a folder without one: a generated listing
    "https:evil.example",
]


def hostile_tree(root: Path) -> Path:
    files = {"__init__.py": PAGE.format(title="Home")}
    for name in HOSTILE:
        files[name] = PAGE.format(title=f"Page {name}").replace('"""', '"""', 1)
    files["javascript:alert(2)/__init__.py"] = PAGE.format(title="Folder two")
    files["javascript:alert(2)/inner:x.py"] = PAGE.format(title="Inner")
    files["data:text,y/page.py"] = PAGE.format(title="Y page")
    files["https:evil.example/p.py"] = PAGE.format(title="Evil folder page")
    return write_tree(root, files)


def browser_reads(url: str) -> str:
    """The first steps of the WHATWG URL parser: C0 controls and spaces stripped at both ends,
    tabs and newlines removed anywhere."""
    url = url.strip("".join(chr(c) for c in range(0x21)))
    return re.sub(r"[\t\n\r]", "", url)


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


def outside_reason(url: str) -> str | None:
    """Why a browser would not read `url` as a path of this site (None when it would)."""
    seen = browser_reads(url)
    if _SCHEME.match(seen):
        if seen.startswith(ALLOWED_ABSOLUTE):
            return None
        return f"scheme {seen.split(':', 1)[0]!r}"
    if seen.replace("\\", "/").startswith("//"):
        return "another host"
    return None


class _Links(HTMLParser):
    URL_ATTRS = {"href", "src", "action", "data-index", "data-src", "poster", "formaction"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[tuple[str, str, str]] = []  # (tag, attribute, value)
        self.root = None

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value is None:
                continue
            if name in self.URL_ATTRS:
                self.links.append((tag, name, value))
            if name == "data-root":
                self.root = value
            if tag == "meta" and name == "content" and ("http-equiv", "refresh") in attrs:
                self.links.append((tag, "refresh", value.split("url=", 1)[-1]))

    handle_startendtag = handle_starttag


def _resolves(out: Path, page_rel: str, url: str) -> bool:
    """Whether a relative URL written in `page_rel` names a file of the site (as a server or
    file:// reads it: the path percent-decoded)."""
    parts = urlsplit(url)
    if not parts.path:
        return True  # a fragment of the page itself
    path = unquote(parts.path)
    site_path = urlsplit(SITE_URL).path
    if path.startswith("/"):  # the 404 page's links start from the site's path (--site-url)
        assert path.startswith(site_path), url
        page_rel, path = "x", path[len(site_path):]
    target = posixpath.normpath(posixpath.join(posixpath.dirname(page_rel), path))
    path = out / target
    return path.is_file() or (path.is_dir() and (path / "index.html").is_file())


def _all_links(out: Path) -> list[tuple[str, str, str]]:
    """(file, where, url) of every URL the site writes: HTML attributes, the search indexes (from
    their language's root), llms.txt and page.md links, the sitemap."""
    found = []
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out).as_posix()
        if not path.is_file() or rel.startswith("static/"):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if rel.endswith(".html"):
            parser = _Links()
            parser.feed(text)
            found += [(rel, f"<{tag} {attr}>", value) for tag, attr, value in parser.links]
        elif rel.endswith("search-index.js"):
            root = posixpath.dirname(rel)
            for entry in parse_index_js(text)["entries"]:
                found.append((posixpath.join(root, "search.html"), "search index", entry[1]))
        elif rel.endswith(("llms.txt", ".md")):
            found += [(rel, "markdown link", m) for m in re.findall(r"\]\(([^)\s]*)\)", text)]
        elif rel == "sitemap.xml":
            found += [(rel, "sitemap", m) for m in re.findall(r'(?:<loc>|href=")([^<"]*)', text)]
    return found


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("names")
    src = hostile_tree(tmp / "src")
    (tmp / "tr").mkdir()
    config = BuildConfig(src, tmp / "tr", tmp / "site", langs=("en", "zh"), jobs=1, markdown=True,
                         site_url=SITE_URL, source_url=SOURCE_URL, edit_url=EDIT_URL)
    result = build(config)
    return result


def test_every_page_with_a_hostile_name_is_published(hostile_site):
    out = hostile_site.out
    for name in HOSTILE:
        html_name = name.rsplit(".", 1)[0] + ".html"
        assert (out / html_name).is_file(), name
        assert (out / "zh" / html_name).is_file(), name
    assert (out / "javascript:alert(2)/inner:x.html").is_file()
    assert (out / "data:text,y/index.html").is_file()  # the generated listing


def test_every_url_the_site_writes_is_read_as_a_path(hostile_site):
    links = _all_links(hostile_site.out)
    assert len(links) > 500
    kinds = {where for _, where, _ in links}
    assert {"search index", "markdown link", "sitemap", "<a href>", "<link href>"} <= kinds
    bad = [(rel, where, url, outside_reason(url)) for rel, where, url in links if outside_reason(url)]
    assert not bad, bad[:20]


def test_every_relative_url_reaches_its_file(hostile_site):
    out = hostile_site.out
    broken = []
    for rel, where, url in _all_links(out):
        if _SCHEME.match(browser_reads(url)):
            continue
        base = rel
        if where == "search index":  # search.js joins the language root and the entry's URL
            base = posixpath.join(posixpath.dirname(rel), "x")
        if not _resolves(out, base, url):
            broken.append((rel, where, url))
    assert not broken, broken[:20]


def test_absolute_urls_carry_the_name_percent_encoded(hostile_site):
    out = hostile_site.out
    sitemap = (out / "sitemap.xml").read_text(encoding="utf-8")
    assert f"{SITE_URL}javascript%3Aalert%281%29.html" in sitemap or f"{SITE_URL}javascript%3Aalert(1).html" in sitemap
    page = (out / "a#b.html").read_text(encoding="utf-8")
    assert f'href="{SOURCE_URL}a%23b.py"' in page  # "View on GitHub": the file, not a fragment
    zh = (out / "zh/q?x=1.html").read_text(encoding="utf-8")
    assert f'{EDIT_URL}q%3Fx%3D1.zh.json' in zh or f"{EDIT_URL}q%3Fx=1.zh.json" in zh


def test_the_status_table_and_pager_link_paths(hostile_site):
    status = (hostile_site.out / "translation-status.html").read_text(encoding="utf-8")
    parser = _Links()
    parser.feed(status)
    hrefs = [v for tag, attr, v in parser.links if tag == "a"]
    assert any("javascript" in h for h in hrefs)
    assert not [h for h in hrefs if outside_reason(h)]


@pytest.mark.parametrize("to", ["javascript:alert(1).html", "a:b/c.html", "x#y.html", "q?x.html", "sp ace.html", "%41.html"])
def test_relative_url_is_a_path_that_names_the_file(to):
    for here in ("index.html", "deep/er/page.html", "zh/index.html"):
        url = relative_url(here, to)
        assert outside_reason(url) is None, url
        assert "#" not in url and "?" not in url and " " not in url
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(here), unquote(url)))
        assert joined == to, (here, url)


def test_names_no_url_can_carry_are_refused_with_the_file(tmp_path):
    src = write_tree(tmp_path / "src", {"__init__.py": PAGE.format(title="Home"), "ok.py": PAGE.format(title="Ok")})
    (src / "new\nline.py").write_text(PAGE.format(title="NL"), encoding="utf-8")
    (src / "tab\tname.py").write_text(PAGE.format(title="Tab"), encoding="utf-8")
    (src / "bell\x07.png").write_bytes(b"x")
    os.mkdir(src / "ctl\x1bfolder")
    (src / "ctl\x1bfolder" / "p.py").write_text(PAGE.format(title="In a bad folder"), encoding="utf-8")
    with open(os.path.join(os.fsencode(src), b"latin1-\xe9.py"), "w", encoding="utf-8") as f:
        f.write(PAGE.format(title="Not UTF-8"))
    files = discover(src)
    assert {p.rel for p in files.pages} == {"__init__.py", "ok.py"}
    refused = [f for f in files.findings if f.code == "source-name"]
    assert len(refused) == 5, files.findings
    assert all(f.severity == "error" and f.path for f in refused)
    assert any("latin1-" in f.path for f in refused)
    (tmp_path / "tr").mkdir()
    result = build(BuildConfig(src, tmp_path / "tr", tmp_path / "site", langs=("en",), jobs=1))
    assert (result.out / "ok.html").is_file()
    assert "source-name" in {f.code for f in result.report.findings}


def test_chromium_reads_every_written_url_as_a_path_of_the_site(hostile_site, browser):
    """Chromium's own URL parser, over every URL the site writes, from the page it is in."""
    out = hostile_site.out
    links = _all_links(out)
    pairs = []
    for rel, where, url in links:
        base = rel if where != "search index" else posixpath.join(posixpath.dirname(rel), "x")
        pairs.append(((out / base).as_uri(), url))
    page = browser.new_page()
    try:
        resolved = page.evaluate(
            "pairs => pairs.map(([base, url]) => { try { const u = new URL(url, base); return [u.protocol, u.host]; }"
            " catch (e) { return ['error', String(e)]; } })",
            pairs,
        )
    finally:
        page.close()
    allowed_hosts = {urlsplit(u).netloc for u in ALLOWED_ABSOLUTE}
    bad = [(links[i], r) for i, r in enumerate(resolved)
           if not (r == ["file:", ""] or (r[0] == "https:" and r[1] in allowed_hosts))]
    assert not bad, bad[:10]
