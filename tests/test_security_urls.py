"""Issue 22, URLs taken from front matter and options, read as a browser reads them: C0 controls
and spaces at the ends dropped, tabs and newlines dropped anywhere, `\\` read as `/`, `//` (and its
backslash spellings) another host, a scheme wherever letters end in `:`. Only what passes is
written: a `redirect:` that fails is an error with file:line and no redirect page, an option that
fails is one `error:` line (exit 2) before anything is built."""
from __future__ import annotations

import pytest

from conftest import write_tree
from labml_site.builder.site import BuildConfig, build
from labml_site.errors import UserError
from labml_site.typeset.page import analyse

# Each of these is read by a browser as a script URL, another scheme or another host, although
# a check that looks at the text as written could take it for a relative path or an http URL.
HOSTILE_TARGETS = [
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    "\x01javascript:alert(1)",
    "\x00javascript:alert(1)",
    " javascript:alert(1)",
    "\x1fjavascript:alert(1)",
    "java\tscript:alert(1)",
    "java\nscript:alert(1)",
    "java\rscript:alert(1)",
    "\tjavascript:alert(1)",
    "vbscript:msgbox(1)",
    "data:text/html,<script>alert(1)</script>",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "file:///etc/passwd",
    "ftp://evil.example/",
    "//evil.example/",
    "\\\\evil.example/",
    "/\\evil.example/",
    "\\/evil.example/",
    "/\t/evil.example/",
    "/\n/evil.example/",
    " //evil.example/",
    "\x01//evil.example/",
    "https:evil.example",  # https: without // is another host from an http(s) page
    "http:\\\\evil.example/",
    "https:/\\evil.example/",
    "https:\\/evil.example/",
    "https://",
    "https:///evil.example",
    "https://user:pass@evil.example/",  # another host hidden behind a lookalike one
    "https://good.example@evil.example/",
    "https://evil.example\\@good.example/",
    "a\\b.html",
    "x\x00.html",
    "&#106;avascript:alert(1)",
    "jav&#x09;ascript:alert(1)",
    "\"><script>alert(1)</script>",
    "' onmouseover='alert(1)",
    "<javascript:alert(1)>",
]
GOOD_TARGETS = [
    "https://example.org/new/page.html",
    "http://example.org:8080/x?y=1#z",
    "../other/page.html",
    "page.html",
    "./a:b.html",
    "/absolute/path.html",
    "page.html#section",
    "https://例え.jp/ページ",
]


def _redirect_page(target: str) -> str:
    escaped = target.replace("\\", "\\\\").replace('"', '\\"')
    escaped = "".join(c if c.isprintable() or c == " " else f"\\x{ord(c):02x}" for c in escaped)
    return f'"""\n---\ntitle: Moved\nredirect: "{escaped}"\n---\n"""\n'


@pytest.mark.parametrize("target", HOSTILE_TARGETS)
def test_a_hostile_redirect_is_refused_with_file_and_line(target):
    page = analyse("old.py", "old.html", _redirect_page(target))
    assert page.redirect == ""
    found = [f for f in page.findings if f.code == "redirect-url"]
    assert len(found) == 1 and found[0].severity == "error", page.findings
    assert found[0].path == "old.py" and found[0].line == 4  # the line of `redirect:`


@pytest.mark.parametrize("target", GOOD_TARGETS)
def test_a_good_redirect_is_kept(target):
    page = analyse("old.py", "old.html", _redirect_page(target))
    assert page.redirect == target, page.findings
    assert not [f for f in page.findings if f.severity == "error"]


def test_a_refused_redirect_writes_no_redirect_page_and_the_rest_builds(tmp_path):
    src = write_tree(tmp_path / "src", {
        "__init__.py": '"""\n# Home\n"""\n',
        "ok.py": '"""\n# Ok\n\nText.\n"""\nx = 1\n',
        "moved.py": _redirect_page("\x01javascript:alert(document.domain)"),
        "away.py": _redirect_page("/\\evil.example/"),
        "fine.py": _redirect_page("https://example.org/fine.html"),
    })
    (tmp_path / "tr").mkdir()
    result = build(BuildConfig(src, tmp_path / "tr", tmp_path / "site", langs=("en",), jobs=1))
    out = result.out
    assert (out / "ok.html").is_file()
    assert not (out / "moved.html").exists() and not (out / "away.html").exists()
    assert 'url=https://example.org/fine.html"' in (out / "fine.html").read_text(encoding="utf-8")
    site = "".join(p.read_text(encoding="utf-8", errors="replace") for p in out.rglob("*.html"))
    assert "javascript:" not in site.lower() and "evil.example" not in site
    bad = {(f.path, f.line) for f in result.report.findings if f.code == "redirect-url"}
    assert bad == {("moved.py", 4), ("away.py", 4)}


OPTION_VECTORS = [
    "javascript:alert(1)//", "\x01javascript:alert(1)", " https://example.org/", "https://example.org/\n",
    "//evil.example/", "\\\\evil.example/", "https:evil.example", "https:\\\\evil.example/",
    "https://user@evil.example/", "data:text/html,x", "https://exa mple.org/", "https://example.org/\"><script>",
    "ftp://example.org/", "example.org", "https://",
]


@pytest.mark.parametrize("option", ["site_url", "source_url", "edit_url"])
@pytest.mark.parametrize("value", OPTION_VECTORS)
def test_url_options_are_checked_as_a_browser_reads_them(tmp_path, option, value):
    with pytest.raises(UserError) as caught:
        BuildConfig(tmp_path, tmp_path, tmp_path / "site", **{option: value})
    assert "--" + option.replace("_", "-") in str(caught.value)


@pytest.mark.parametrize("option", ["site_url", "source_url", "edit_url"])
def test_good_url_options_are_kept(tmp_path, option):
    for value in ("https://example.org/", "https://example.org/docs", "http://localhost:8000/x/"):
        config = BuildConfig(tmp_path, tmp_path, tmp_path / "site", **{option: value})
        assert getattr(config, option) == value


def test_cli_refuses_a_hostile_option_in_one_line(tmp_path, capsys):
    from labml_site.cli.main import main

    src = write_tree(tmp_path / "src", {"__init__.py": '"""\n# Home\n"""\n'})
    code = main(["build", "--source", str(src), "--out", str(tmp_path / "site"), "--langs", "en",
                 "--site-url", "\x01javascript:alert(1)//"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and "--site-url" in err
    assert not (tmp_path / "site").exists()


@pytest.mark.parametrize("src", [
    "\x01https://evil.example/x.png", "https:evil.example/x.png", "https:\\\\evil.example/x.png",
    "//evil.example/x.png", "\\\\evil.example/x.png", "ftp://evil.example/x.png", "file:///etc/x.png",
    "https://user@evil.example/x.png", "javascript:alert(1)", "data:image/svg+xml,<svg onload=alert(1)>",
])
def test_an_outside_image_becomes_a_link_only_to_an_http_url_written_plainly(src):
    page = analyse("p.py", "p.html", f'r"""\n# P\n\n![a picture]({src})\n"""\n')
    placeholders = "".join(p for s in page.sections for b in s.blocks for p in b.placeholders)
    assert "<img" not in placeholders and "href" not in placeholders, placeholders


def test_an_outside_image_with_a_plain_https_url_is_a_link():
    page = analyse("p.py", "p.html", '"""\n# P\n\n![badge](https://img.shields.io/x.svg)\n"""\n')
    placeholders = "".join(p for s in page.sections for b in s.blocks for p in b.placeholders)
    assert 'href="https://img.shields.io/x.svg"' in placeholders
