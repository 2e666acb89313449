"""Markdown link targets that run script are never written: the label shows, with an error at
the link's line (issue: every URL the builder writes is validated as a browser reads it)."""
from __future__ import annotations

import pytest

from html.parser import HTMLParser

from labml_site.read.urls import script_scheme
from labml_site.typeset.page import analyse


def _hrefs(html: str) -> list[str]:
    """The link targets a browser takes from `html` (attribute values decoded)."""
    found: list[str] = []

    class Links(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.extend(v or "" for k, v in attrs if k == "href")

    Links(convert_charrefs=True).feed(html)
    return found

_PAGE = '''"""
# Links

A harmless [page](other.html) and a [web page](https://example.org/a).

Line four holds [a trap]({target}) in its middle.
"""
x = 1
'''


@pytest.mark.parametrize("target", [
    "javascript:alert(1)", "JavaScript:alert(1)", "java&#115;cript:alert(1)", "&#106;avascript:alert(1)",
    "vbscript:msgbox(1)", "data:text/html,<b>x</b>", "<javascript:alert(1)>", " javascript:alert(1)",
])
def test_a_script_link_is_shown_as_its_label_with_an_error_at_its_line(target):
    page = analyse("links.py", "links.html", _PAGE.format(target=target))
    html = "".join(block.key for section in page.sections for block in section.blocks) if hasattr(page.sections[0], "blocks") else repr(page)
    assert "a trap" in html
    hrefs = _hrefs(html)
    assert not [h for h in hrefs if script_scheme(h)], hrefs
    assert "other.html" in hrefs and "https://example.org/a" in hrefs
    refused = [f for f in page.findings if f.code == "refused-link"]
    assert len(refused) == 1 and refused[0].line == 6 and refused[0].severity == "error", page.findings


def test_ordinary_links_raise_nothing():
    page = analyse("links.py", "links.html", _PAGE.format(target="#section"))
    assert not [f for f in page.findings if f.code in {"refused-link", "script-in-source"}]
